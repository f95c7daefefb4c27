// The control core's side of the workers' CDR rings (worker::cdr_out, SP/SC rte_rings of
// sbc::call_record elements): dequeues them in bounded bursts into the CDR writer. Control core
// only (the single consumer of every worker's ring); also the cps benchmark's main lcore.
#pragma once

#include <array>

#include <rte_ring.h>

#include "common/call_record.h"
#include "control/cdr_writer.h"

namespace sbc::control {

constexpr unsigned cdr_burst = 64;             ///< records per dequeue
constexpr unsigned cdr_bursts_per_poll = 16;   ///< at most 1024 records per ring per loop iteration

/// Moves up to cdr_burst * max_bursts records from `ring` into `w` (w.flush() writes them);
/// returns how many. A null ring (CDRs off) gives 0.
inline unsigned drain_cdr_ring(rte_ring* ring, cdr_writer& w, unsigned max_bursts = cdr_bursts_per_poll)
{
    if (ring == nullptr) return 0;
    std::array<call_record, cdr_burst> recs;
    unsigned total = 0;
    for (unsigned b = 0; b < max_bursts; ++b) {
        const unsigned n = rte_ring_sc_dequeue_burst_elem(ring, recs.data(), sizeof(call_record), cdr_burst, nullptr);
        for (unsigned i = 0; i < n; ++i) w.add(recs[i]);
        total += n;
        if (n < cdr_burst) break;
    }
    return total;
}

}  // namespace sbc::control
