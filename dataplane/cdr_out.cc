// Call records leaving a worker (see cdr_out.h). Worker only.
#include "dataplane/cdr_out.h"

#include <rte_cycles.h>

#include "dataplane/sip_path.h"
#include "dataplane/worker.h"

namespace sbc::dataplane {

void cdr_ring_sink::call_ended(const sbc::call_record& r) noexcept
{
    // DPDK 22.11 takes the source as void*: it only reads it.
    if (ring_ != nullptr && rte_ring_sp_enqueue_elem(ring_, const_cast<sbc::call_record*>(&r), sizeof(r)) == 0)
        counters_->cdr_records.add(1);
    else
        counters_->cdr_dropped.add(1);
}

void cdr_drain_worker(worker& w) noexcept
{
    if (w.cdr_out == nullptr || !w.proxy) return;
    w.proxy->cdr_drain(now_ms_of(w, rte_rdtsc()));  // the clock the proxy runs on
}

}  // namespace sbc::dataplane
