// The dataplane's side of SIP over TCP and TLS: what crosses the rings between the workers
// and the stream thread (transport/stream_thread.cc), which owns every kernel socket.
//
//   worker --kernel_out--> stream thread: TCP frames for our addresses from allowed sources,
//                                        L2 header without VLAN tag, for the exception port
//   stream thread --kernel_in--> worker: frames the kernel sent, with their final L2 header
//                                        (m->port set): the worker transmits them
//   stream thread --stream_in--> worker: a complete SIP message, or a lost connection, as a
//                                        sip_handoff in the headroom (dataplane/sip_path.h)
//   worker --stream_out--> stream thread: a SIP message for a TCP/TLS leg, stream_send in the
//                                        headroom, the bytes as the mbuf's data
// Every ring is single-producer, single-consumer, one of each kind per worker. Nothing waits:
// a full ring drops and counts. The control core sends its OPTIONS probes to stream peers the
// same way through its own `control_out` ring.
// The stream thread reaches these rings, and the little else of the dataplane it reads, only
// through `stream_rings` below: transport/ knows nothing of the worker or the proxy.
#pragma once

#include <cstdint>
#include <vector>

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "common/address.h"

namespace sbc::dataplane {

struct snapshot_slot;
class neighbour_table;

/// One worker's ends of the rings above, as the stream thread sees them (the same rings as
/// the worker's members of those names).
struct stream_worker_rings {
    rte_ring* kernel_out = nullptr;  ///< the stream thread dequeues (single consumer)
    rte_ring* kernel_in = nullptr;   ///< the stream thread enqueues (single producer)
    rte_ring* stream_in = nullptr;   ///< the stream thread enqueues (single producer)
    rte_ring* stream_out = nullptr;  ///< the stream thread dequeues (single consumer)
};

/// Every endpoint of the dataplane that the stream thread uses, built once by the control core
/// before the thread starts (dataplane/runtime.h stream_rings_of) and never changed while it
/// runs. Indexed by worker id: `workers.size()` is the runtime's worker count.
struct stream_rings {
    std::vector<stream_worker_rings> workers;
    rte_ring* control_out = nullptr;          ///< the control core's probes (the stream thread consumes)
    rte_ring* events = nullptr;               ///< to the control core (multi-producer: workers post too)
    rte_mempool* pool = nullptr;              ///< stream message buffers, shared with the workers
    const snapshot_slot* snap = nullptr;      ///< the published snapshot, read under RCU (rcu.h)
    const neighbour_table* neighbours = nullptr;  ///< next hops' MACs (control core writes)
};

/// Header of a SIP message going out on a stream. `dst.conn` != 0: that connection (a reply,
/// or a request toward a UA that connected to us); 0: a connection to the endpoint `dst`
/// (a peer's persistent connection, opened when there is none).
struct stream_send {
    endpoint src;           ///< our endpoint on the trunk (Via's sent-by)
    endpoint dst;
    uint32_t len = 0;       ///< bytes of the message (the mbuf's data)
    uint8_t worker = 0;     ///< who sent it: a lost connection is reported back to it
    uint8_t from_control = 0;  ///< 1: the control core's probe (no worker to tell)
};
static_assert(sizeof(stream_send) <= RTE_PKTMBUF_HEADROOM, "the header lives in the mbuf's headroom");

inline stream_send* stream_send_of(rte_mbuf* m) noexcept { return static_cast<stream_send*>(m->buf_addr); }

}  // namespace sbc::dataplane
