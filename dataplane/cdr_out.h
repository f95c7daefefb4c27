// Call records leaving a worker: the proxy's cdr_sink over the worker's single-producer ring
// to the control core (worker::cdr_out, elements of sizeof(sbc::call_record)), which drains
// it and writes the records (control/cdr_writer.*). A full ring (the writer fell behind) loses
// the record and counts it (cdr_dropped); every record handed over counts cdr_records.
// Worker only: one enqueue per ended call, no system call, lock, heap or logging.
#pragma once

#include <rte_ring.h>

#include "common/call_record.h"
#include "dataplane/counters.h"
#include "sip-fastpath/cdr_sink.h"

namespace sbc::dataplane {

class cdr_ring_sink final : public sip::cdr_sink {
public:
    /// Control core, at start: the worker's ring and counters.
    void attach(rte_ring* ring, worker_counters* counters) noexcept
    {
        ring_ = ring;
        counters_ = counters;
    }
    void call_ended(const sbc::call_record& r) noexcept override;

private:
    rte_ring* ring_ = nullptr;
    worker_counters* counters_ = nullptr;
};

struct worker;

/// Worker only, after its loop ended (before its lcore function returns): the calls it still
/// holds go into its ring as ended by the drain, for the control core to drain after
/// stop_dataplane. Nothing when the worker has no ring.
void cdr_drain_worker(worker& w) noexcept;

}  // namespace sbc::dataplane
