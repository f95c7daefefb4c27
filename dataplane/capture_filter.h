// What a running SIP capture (`sbcctl capture start`) tells every worker, and what a worker
// hands back. The control core's capture service (control/capture_service.cc) compiles the
// filter and publishes it under RCU (as the flood policy: a small object of its own, not a new
// snapshot); workers read it once per SIP input and once per outbox flush. A null slot means no
// capture: a worker then pays one load of the slot and nothing else.
//   writer   the capture service: publish at start (control core), unpublish at stop (its
//            capture thread, which then waits for a grace period, drains the rings and frees
//            the filter itself; the pool lives until the control core reaps the capture);
//   readers  workers, between two quiescent states, with rcu::dereference.
// Each worker copies the frames it selects into an mbuf of the filter's pool, stamps it with
// its TSC (capture_meta, in the mbuf's private area) and enqueues it on its own SP/SC ring
// (worker::capture_out) to the capture thread; a full ring or an empty pool drops the copy,
// counted in worker::capture_stats, never waited on.
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "common/counter.h"
#include "dataplane/rcu.h"
#include "sip-fastpath/capture_match.h"

namespace sbc::dataplane {

/// Entries of every worker's ring to the capture thread (a power of two).
constexpr unsigned capture_ring_size = 4096;

struct capture_filter {
    rcu_head rcu{};  ///< first member (freed from it)
    /// The patterns; null: every SIP message.
    std::shared_ptr<const sip::capture_matcher> matcher;
    /// Where copies come from; created at start, freed by the control core after the rings are
    /// drained (owned by the capture service, not by this object).
    rte_mempool* pool = nullptr;
};
static_assert(std::is_standard_layout_v<capture_filter>, "capture_filter is freed from its rcu_head, the first member");

/// shared_state::capture. Owns the last filter when the runtime goes down with one published.
struct capture_filter_slot {
    capture_filter* current = nullptr;

    capture_filter_slot() = default;
    capture_filter_slot(const capture_filter_slot&) = delete;
    capture_filter_slot& operator=(const capture_filter_slot&) = delete;
    ~capture_filter_slot() { delete current; }
};

/// What one worker did for the capture. Single writer (the worker), any reader (relaxed:
/// each counter stands alone, common/counter.h). Cumulative over every capture.
struct capture_counters {
    single_writer<uint64_t> copied;     ///< frames copied and enqueued
    single_writer<uint64_t> ring_full;  ///< copies dropped: the ring to the capture thread was full
    single_writer<uint64_t> no_buffer;  ///< frames not copied: the capture pool was empty
};

/// Stamped on each copy (in the mbuf's private area: the pool is created with room for it).
struct capture_meta {
    uint64_t tsc;  ///< the worker's rte_rdtsc() when it copied the frame
};
constexpr uint16_t capture_priv_size = RTE_ALIGN(sizeof(capture_meta), RTE_MBUF_PRIV_ALIGN);

inline capture_meta* capture_meta_of(rte_mbuf* m) noexcept { return static_cast<capture_meta*>(rte_mbuf_to_priv(m)); }

}  // namespace sbc::dataplane
