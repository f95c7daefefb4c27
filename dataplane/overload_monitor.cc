// Per-worker overload detection (see overload.h). overload_poll: worker `w` only, no heap,
// locks, system calls or logging. overload_of: any thread.
#include <rte_ring.h>

#include "common/counter.h"
#include "dataplane/overload.h"
#include "dataplane/sip_path.h"
#include "dataplane/worker.h"
#include "sip-fastpath/overload_shed.h"

namespace sbc::dataplane {

namespace {

/// One worker's measuring state (its own) and what it publishes (read by anyone, relaxed).
struct alignas(64) overload_state {
    busy_window window;
    uint64_t next_tsc = 0;
    sbc::single_writer<uint8_t> reduction;
    sbc::single_writer<uint16_t> busy_permille;
    sbc::single_writer<uint8_t> ring_percent;
};

std::array<overload_state, max_workers> states;

uint32_t fill_percent(const rte_ring* r) noexcept
{
    if (r == nullptr) return 0;
    const unsigned cap = rte_ring_get_capacity(r);
    return cap == 0 ? 0 : rte_ring_count(r) * 100 / cap;
}

/// The fullest ring into `w`: what it has yet to take from other workers and the stream
/// thread, and the events it gives the control core (shared by every worker: a control core
/// that falls behind makes every worker shed).
uint32_t fullest_ring(const worker& w) noexcept
{
    uint32_t most = fill_percent(w.events);
    if (const uint32_t s = fill_percent(w.stream_in); s > most) most = s;
    for (unsigned i = 0; i < w.handoff_span; ++i)
        if (const uint32_t f = fill_percent(w.handoff_in[i]); f > most) most = f;
    return most;
}

}  // namespace

void overload_poll(worker& w, const snapshot& snap, uint64_t now_tsc) noexcept
{
    if (!snap.proxy || !w.proxy || w.id >= states.size()) return;
    overload_state& st = states[w.id];
    const sip::overload_policy& p = snap.proxy->overload;
    const uint64_t period = w.tsc_per_ms * p.window_ms / busy_window::slots;
    // Not due yet; a due time more than a period ahead was set by an earlier runtime's clock.
    if (now_tsc < st.next_tsc && st.next_tsc - now_tsc <= period) return;
    st.next_tsc = now_tsc + (period != 0 ? period : 1);
    // The share of time on SIP work, not the loop's whole busy share: a flood dropped before
    // parsing keeps a worker busy, and refusing calls would not relieve it (flood protection
    // does); SIP work over the threshold is what shedding new requests relieves.
    const uint32_t busy = st.window.push(sip_state(w.id).sip_cycles, now_tsc);
    const uint32_t ring = fullest_ring(w);
    const uint8_t reduction = sip::overload_reduction(p, busy, ring);
    if (reduction != w.proxy->overload()) w.proxy->set_overload(reduction);
    st.reduction.set(reduction);
    st.busy_permille.set(static_cast<uint16_t>(busy));
    st.ring_percent.set(static_cast<uint8_t>(ring > 100 ? 100 : ring));
}

overload_view overload_of(unsigned worker) noexcept
{
    if (worker >= states.size()) return {};
    const overload_state& st = states[worker];
    return {st.reduction.get(), st.busy_permille.get(), st.ring_percent.get()};
}

}  // namespace sbc::dataplane
