// A worker lcore's context and its polling loop. Everything here belongs to one worker
// (worker only), except the rings, the loop-gap words and the counters, which other threads
// use as dataplane/contract.h says (the node-wide shared objects, shared_state, are there too).
#pragma once

#include <array>
#include <memory>
#include <atomic>
#include <cstdint>
#include <span>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip_frag.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "common/counter.h"
#include "common/limits.h"
#include "dataplane/capture_filter.h"
#include "dataplane/cdr_out.h"
#include "dataplane/contract.h"
#include "dataplane/counters.h"
#include "dataplane/flood_policy.h"
#include "dataplane/neighbour.h"
#include "dataplane/neighbour_hold.h"
#include "dataplane/rcu.h"
#include "dataplane/snapshot.h"
#include "rtp/media.h"
#include "rtp/relay.h"
#include "sip-fastpath/proxy.h"

namespace sbc::dataplane {

// common/limits.h; named here too, so that sbc::dataplane::burst_size keeps working.
using sbc::burst_size;
using sbc::max_ports;

/// A sub-burst: the packets one stage takes, with the interface each arrived on.
struct sub_burst {
    std::array<rte_mbuf*, burst_size> pkts;
    std::array<uint16_t, burst_size> iface;
    uint16_t n = 0;

    void push(rte_mbuf* m, uint16_t ifc) noexcept
    {
        pkts[n] = m;
        iface[n] = ifc;
        ++n;
    }
};

struct worker {
    unsigned id = 0;                ///< 0..workers-1, also the RX and TX queue index on every port
    unsigned lcore = 0;
    uint16_t n_ports = 0;
    std::array<uint16_t, max_ports> ports{};
    std::array<rte_eth_dev_tx_buffer*, max_ports> tx{};  ///< indexed by port id
    shared_state* shared = nullptr;  ///< the node-wide objects (dataplane/contract.h)
    rte_ring* events = nullptr;     ///< to the control core (multi-producer)
    rte_ring* inject = nullptr;     ///< from the control core: finished frames to send (SP/SC)
    /// Call records to the control core (SP/SC, elements of sizeof(sbc::call_record);
    /// dataplane/cdr_out.h); null: no call records (port_options::cdr_ring 0).
    rte_ring* cdr_out = nullptr;
    cdr_ring_sink cdr_sink;         ///< the proxy's sink over cdr_out, set when cdr_out is
    rte_mempool* pool = nullptr;
    rte_ip_frag_tbl* frag_table = nullptr;
    rte_ip_frag_death_row death_row{};
    std::unique_ptr<sip::proxy> proxy;  ///< this worker's calls (dataplane/sip_dispatch.cc)
    std::unique_ptr<sip::outbox> outbox;
    std::unique_ptr<rtp::media_sessions> media;  ///< this worker's calls with media (null: no [media])
    rtp::relay_counters media_counters;          ///< what this worker relayed and dropped
    std::array<rte_ring*, max_workers> handoff_in{};   ///< from worker i to this one (SP/SC), null for itself
    std::array<rte_ring*, max_workers> handoff_out{};  ///< from this one to worker i
    /// Entries of handoff_in/out in use: the runtime's worker count. The per-iteration poll
    /// looks at these only (max_workers slots would be a loop of 64 null checks every iteration).
    uint16_t handoff_span = 0;
    // SIP over TCP and TLS (dataplane/stream_ring.h); all null when no trunk or peer uses a stream.
    rte_ring* kernel_out = nullptr;  ///< TCP frames for the kernel (to the stream thread)
    rte_ring* kernel_in = nullptr;   ///< frames the kernel sent, to transmit (from the stream thread)
    rte_ring* stream_in = nullptr;   ///< SIP messages and lost connections (from the stream thread)
    rte_ring* stream_out = nullptr;  ///< SIP messages for TCP/TLS legs (to the stream thread)
    rte_mempool* stream_pool = nullptr;  ///< buffers of stream messages (shared with the stream thread)
    rte_ring* capture_out = nullptr;     ///< copies of SIP frames to the capture thread (SP/SC; dataplane/capture_filter.h)
    capture_counters capture_stats;      ///< what this worker copied for the capture and dropped
    uint64_t tsc_per_ms = 1;
    uint32_t ipv6_fragment_id = 0;  ///< identification of the next datagram this worker fragments over IPv6
    /// The token bucket of the ICMPv6 errors this worker sends (dataplane/icmp6.cc): tokens in
    /// thousandths, refilled from the TSC.
    uint64_t icmp6_error_millitokens = 0;
    uint64_t icmp6_error_tsc = 0;
    /// Next hops the neighbour table does not know yet (dataplane/neighbour_wait.cc): the MACs
    /// this worker saw its senders use, and the packets it holds while the control core resolves.
    learned_neighbours learned;
    learned_neighbours6 learned6;
    basic_neighbour_hold<rte_mbuf*> held;
    /// Per-source token buckets and malformed tallies (dataplane/source_screen.cc); null: no screening.
    std::unique_ptr<source_guard> guard;
    worker_counters counters;
    // Per-loop tallies, plain fields of the owner, folded into `counters` by tx_flush.
    uint64_t pending_tx_packets = 0;
    uint64_t pending_tx_bytes = 0;
    uint64_t pending_tx_dropped = 0;  ///< set by the TX buffer's error callback
    /// Longest time between the starts of two loop iterations, in TSC cycles: how long the
    /// worker was away from its queues (a stall behind the control core, a preemption). Written
    /// by the owner every 64 iterations (relaxed: a value stands alone); the window starts at
    /// the loop's start or when a reader bumps max_loop_gap_epoch (relaxed: a window that starts
    /// a few iterations late is still a window).
    sbc::single_writer<uint64_t> max_loop_gap;
    sbc::single_writer<uint32_t> max_loop_gap_epoch;
};

/// Worker only: queues `m` for transmission on `port` (flushed at the end of the loop).
inline void tx_enqueue(worker& w, uint16_t port, rte_mbuf* m) noexcept
{
    ++w.pending_tx_packets;
    w.pending_tx_bytes += rte_pktmbuf_pkt_len(m);
    rte_eth_tx_buffer(port, static_cast<uint16_t>(w.id), w.tx[port], m);
}

/// Worker only: sends every buffered packet; returns how many were flushed.
uint16_t tx_flush(worker& w) noexcept;

/// Worker only: gives back received mbufs that the worker drops. A direct, single-segment mbuf
/// holding one reference goes straight back to its pool, as a NIC's fast-free transmit does
/// (RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE): DPDK keeps `next` null on such an mbuf, so its second
/// cache line, which rte_pktmbuf_free reads and another core may have written last, is never
/// touched. Any other mbuf goes through rte_pktmbuf_free.
void free_dropped(rte_mbuf* const* pkts, unsigned n) noexcept;

/// Worker only: sends the frames the control core and the stream thread (the kernel's) queued.
uint16_t drain_inject(worker& w) noexcept;

/// Worker only: pushes an event to the control core; a full ring is counted, never waited on.
void post_event(worker& w, const struct event& e) noexcept;

/// The polling loop. `process.burst(worker&, const snapshot&, uint16_t port, rte_mbuf** pkts,
/// uint16_t n)` handles one received burst; `process.poll(worker&, const snapshot&, uint64_t
/// now_tsc)` runs once per iteration for work that does not arrive on a port (handoff rings,
/// timers) and returns how much it did. A template parameter, so that benchmarks run the same
/// loop around other stages without a branch or an indirect call in the production binary.
template <class Process>
void run_loop(worker& w, Process&& process) noexcept
{
    rcu::register_thread();
    std::array<rte_mbuf*, burst_size> pkts;
    // Busy time is measured from the start of an iteration that found work to its end, not
    // from the previous iteration's end: on a shared CPU, a preemption between two iterations
    // would otherwise be charged to the packets that queued up meanwhile.
    uint64_t folded = rte_rdtsc();
    uint64_t loops = 0, busy_loops = 0, busy_cycles = 0;
    uint64_t prev_start = folded, gap_max = 0;
    uint32_t gap_epoch = w.max_loop_gap_epoch.get();
    auto fold = [&](uint64_t now) {
        w.counters.loops.add(loops);
        w.counters.busy_loops.add(busy_loops);
        w.counters.busy_cycles.add(busy_cycles);
        w.counters.total_cycles.add(now - folded);
        const uint32_t epoch = w.max_loop_gap_epoch.get();
        const uint64_t kept = epoch != gap_epoch ? 0 : w.max_loop_gap.get();
        w.max_loop_gap.set(kept > gap_max ? kept : gap_max);
        gap_epoch = epoch;
        folded = now;
        loops = busy_loops = busy_cycles = gap_max = 0;
    };
    while (!w.shared->stop.load(std::memory_order_relaxed)) {
        const uint64_t start = rte_rdtsc();
        if (start - prev_start > gap_max) gap_max = start - prev_start;
        prev_start = start;
        const snapshot* snap = rcu::dereference(w.shared->snap.current);
        uint32_t work = 0;
        for (uint16_t i = 0; i < w.n_ports; ++i) {
            const uint16_t port = w.ports[i];
            const uint16_t n = rte_eth_rx_burst(port, static_cast<uint16_t>(w.id), pkts.data(), burst_size);
            if (n == 0) continue;
            work += n;
            process.burst(w, *snap, port, pkts.data(), n);
        }
        work += process.poll(w, *snap, start);
        work += drain_inject(w);
        work += tx_flush(w);
        if (w.frag_table != nullptr && w.death_row.cnt != 0) rte_ip_frag_free_death_row(&w.death_row, 3);
        rcu::quiescent_state();
        ++loops;
        if (work != 0) {
            ++busy_loops;
            busy_cycles += rte_rdtsc() - start;
        }
        // Counters are folded in every 64 iterations: cheap, and fresh enough for a 1 s view.
        if ((loops & 63) == 0) fold(rte_rdtsc());
    }
    fold(rte_rdtsc());
    tx_flush(w);
    rcu::thread_offline();
    rcu::unregister_thread();
}

}  // namespace sbc::dataplane
