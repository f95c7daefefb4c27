// The contract between threads: every object the control core shares with the workers, every
// object workers share with each other or with the stream and capture threads, and every ring
// between them, each with its one writer, its readers and the memory order that makes it safe.
// The objects themselves are defined in the headers named here; `shared_state`, the one
// instance of the node-wide ones, is defined below. A new shared object is added to this list
// first (docs/architecture.md, "The control/data contract", is the same list in prose).
//
// "control" is the control core (EAL main lcore, control/control_loop.cc), "owner" the worker
// that owns a call or a port, "stream" the stream thread (transport/stream_thread.cc),
// "capture" the capture thread (control/capture_service.cc).
//
// Published under RCU (immutable once published: the writer builds a fresh object and
// rcu::exchange publishes it, release; readers rcu::dereference it once per burst, between
// two quiescent states; the old one is freed by call_rcu after a grace period, dataplane/rcu.h):
//   shared_state::snap      dataplane/snapshot.h     control (start, reload, canary)     workers, per burst
//     interfaces (with dscp_sip, dscp_rtp), proxy tables (sip-fastpath/proxy_tables.h: trunks,
//     peers, routes, rules and their compiled patterns, admission limits), media egress
//     (rtp/media_egress.h: how media leaves each media address, its TOS)
//   shared_state::flood     dataplane/flood_policy.h control (reload, deny, expiry)      workers, per burst
//   shared_state::capture   dataplane/capture_filter.h  capture service (start; stop from
//                           the capture thread)      workers, per SIP input and outbox flush
//
// Atomic words, relaxed (each value stands alone; nothing else is published through them):
//   shared_state::peer_health  sip-fastpath/proxy_tables.h  control    workers (peer selection)
//     health words, node word (draining, overloaded), RFC 7339 reduction per peer
//   shared_state::admission    sip-fastpath/admission.h     every worker (compare-and-swap,
//                              fetch_sub: many writers, by design)  control (reports)
//   shared_state::stop         below                        control    workers, once per loop
//   worker::max_loop_gap_epoch dataplane/worker.h           control    the worker
//   worker::max_loop_gap       dataplane/worker.h           the worker control
//   counters (worker_counters, sip::proxy_stats, rtp::relay_counters, capture_counters,
//     rtp::flow_stats, stream counters, the media pools' gauges)  common/counter.h   one writer
//                              each (sbc::single_writer: a load and a store, no locked
//                              instruction)                 control, HTTP render
//
// Sequence lock per slot (release/acquire on the sequence word, relaxed fields):
//   shared_state::neighbours   dataplane/neighbour.h        control (from worker events)  workers, control
//   shared_state::path_mtu     dataplane/neighbour.h        control (Packet Too Big events)  workers, control
//
// Owner-written, read by any worker:
//   shared_state::media_flows  rtp/flow_table.h  index and stream records: the owner of the
//     call; a flow's latch and counters: the worker its packets arrive on (RSS: one per
//     direction). Readers: every worker's relay, control views. Fields others read are
//     atomic; the index entry is stored with release and loaded with acquire (a stream found
//     is seen whole); a freed port waits beyond any grace period before reuse.
//   shared_state::media_env    rtp/relay.h       set once by control before the workers start
//                                                (dataplane/rtp_stage.cc start_media); read-only after
//
// Rings (rte_ring: the enqueue is a release, the dequeue an acquire, so what a producer wrote
// into an mbuf or its headroom before the enqueue is seen whole; a full ring drops and counts,
// nothing ever waits):
//   worker::events        dataplane/events.h      MP: every worker, the stream thread  SC: control
//   worker::inject        dataplane/worker.h      SP: control                SC: the worker
//   worker::cdr_out       dataplane/cdr_out.h     SP: the worker             SC: control
//   worker::handoff_out/in dataplane/sip_path.h   SP: worker i               SC: worker j
//   worker::kernel_out    dataplane/stream_ring.h SP: the worker             SC: stream
//   worker::kernel_in     dataplane/stream_ring.h SP: stream                 SC: the worker
//   worker::stream_in     dataplane/stream_ring.h SP: stream                 SC: the worker
//   worker::stream_out    dataplane/stream_ring.h SP: the worker             SC: stream
//   dataplane_runtime::control_out  dataplane/stream_ring.h  SP: control     SC: stream
//   worker::capture_out   dataplane/capture_filter.h  SP: the worker         SC: capture
//   mempools (worker::pool, stream_pool, the capture pool): rte_mempool, any thread, lock-free
//
// Not shared: everything else in `worker` (its proxy, outbox, media sessions, source guard,
// held packets) belongs to the owner alone.
#pragma once

#include <atomic>
#include <memory>

#include "dataplane/capture_filter.h"
#include "dataplane/flood_policy.h"
#include "dataplane/neighbour.h"
#include "dataplane/snapshot.h"
#include "rtp/flow_table.h"
#include "rtp/relay.h"
#include "sip-fastpath/admission.h"
#include "sip-fastpath/proxy_tables.h"

namespace sbc::dataplane {

/// The node-wide objects of the contract above: one instance, created by start_dataplane on
/// the control core, pointed to by every worker (worker::shared).
struct shared_state {
    snapshot_slot snap;             ///< RCU; writer control
    neighbour_table neighbours;     ///< seqlock per slot; writer control
    path_mtu_table path_mtu;        ///< seqlock per slot; writer control (IPv6 Packet Too Big)
    sip::peer_health peer_health;   ///< relaxed words by peer id; writer control
    /// Call admission counts of the whole node: every worker's proxy takes and gives back with
    /// atomic read-modify-writes (many writers, by design); the control core reads them.
    sip::admission admission;
    std::atomic<bool> stop{false};  ///< relaxed; writer control; workers leave their loop
    /// Media flows of every worker (null without [media]); allocated by control at start.
    std::unique_ptr<rtp::flow_table> media_flows;
    rtp::relay_env media_env;       ///< the relay's read-only context, set with media_flows before workers start
    flood_policy_slot flood;        ///< RCU; writer control: [flood] limits and denied sources
    capture_filter_slot capture;    ///< RCU; writer the capture service: the running capture's filter (null: none)
};

}  // namespace sbc::dataplane
