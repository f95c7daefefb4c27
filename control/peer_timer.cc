// The peers' adaptive no-answer timers (see peer_timer.h). Control core only.
#include "control/peer_timer.h"

#include <algorithm>

namespace sbc::control {

namespace {
const peer_timer::view never_seen{};

std::string ms_text(uint64_t us)
{
    // Whole ms read best in a log line; below 10 ms one decimal says more than "0 ms".
    if (us >= 10'000) return std::to_string((us + 500) / 1000) + " ms";
    return std::to_string(us / 1000) + "." + std::to_string(us % 1000 / 100) + " ms";
}
}  // namespace

peer_timer::peer_timer(sip::peer_health& words, timer_bounds b, log_fn log)
    : words_(words), bounds_(b), log_(std::move(log)), state_(sip::max_peers)
{
}

const peer_timer::view& peer_timer::of(uint32_t id) const
{
    return id < state_.size() ? state_[id].v : never_seen;
}

uint32_t peer_timer::in_force(uint32_t id) const
{
    const uint32_t t = of(id).timer_ms;
    return t != 0 ? t : bounds_.max_ms;
}

uint32_t peer_timer::computed_ms(const view& v) const noexcept
{
    const uint64_t rto_ms = (v.srtt_us + 4 * v.rttvar_us + 999) / 1000;
    return static_cast<uint32_t>(std::clamp<uint64_t>(rto_ms, bounds_.min_ms, bounds_.max_ms));
}

void peer_timer::publish(uint32_t id, uint32_t ms, const char* why, const name_fn* name_of)
{
    peer_state& s = state_[id];
    if (ms == s.v.timer_ms) return;
    s.v.timer_ms = ms;
    // Relaxed: the value stands alone; a worker that arms one more attempt with the previous
    // timer only fails over a little sooner or later, once.
    words_.no_response_ms[id].store(ms, std::memory_order_relaxed);
    if (ms == 0 || name_of == nullptr) return;
    // Logged once per state change: the first timer learned, then only moves by more than a
    // quarter of the one last logged (not every sample's small drift).
    const uint32_t last = s.logged_ms;
    const uint32_t moved = ms > last ? ms - last : last - ms;
    if (last != 0 && uint64_t{moved} * 4 <= last) return;
    s.logged_ms = ms;
    ++s.v.changes;
    std::string line = "peer " + (*name_of)(id) + ": no-answer timer ";
    line += last == 0 ? std::to_string(ms) + " ms learned" : std::to_string(last) + " -> " + std::to_string(ms) + " ms";
    line += std::string(" (") + why + ")";
    log_(line);
}

void peer_timer::set_bounds(timer_bounds b, const name_fn& name_of)
{
    if (b.min_ms == bounds_.min_ms && b.max_ms == bounds_.max_ms) return;
    bounds_ = b;
    for (uint32_t id = 0; id < state_.size(); ++id)
        if (state_[id].v.learned) publish(id, computed_ms(state_[id].v), "retry bounds changed", &name_of);
}

void peer_timer::reset(uint32_t id)
{
    if (id >= state_.size()) return;
    state_[id] = peer_state{};
    words_.no_response_ms[id].store(0, std::memory_order_relaxed);  // relaxed: as in publish
}

void peer_timer::on_sample(uint32_t id, uint64_t rtt_us, const name_fn& name_of)
{
    if (id >= state_.size()) return;
    view& v = state_[id].v;
    ++v.samples;
    if (!v.learned) {
        // RFC 6298 2.2: the first measurement.
        v.learned = true;
        v.srtt_us = rtt_us;
        v.rttvar_us = rtt_us / 2;
    } else {
        // RFC 6298 2.3 with alpha = 1/8, beta = 1/4; rttvar from the old srtt.
        const uint64_t err = v.srtt_us > rtt_us ? v.srtt_us - rtt_us : rtt_us - v.srtt_us;
        v.rttvar_us = (3 * v.rttvar_us + err) / 4;
        v.srtt_us = (7 * v.srtt_us + rtt_us) / 8;
    }
    const std::string why = "response time " + ms_text(v.srtt_us) + ", variation " + ms_text(v.rttvar_us);
    publish(id, computed_ms(v), why.c_str(), &name_of);
}

void peer_timer::on_silence(uint32_t id, const name_fn& name_of)
{
    if (id >= state_.size()) return;
    view& v = state_[id].v;
    if (!v.learned) return;
    ++v.silences;
    const uint32_t backed_off = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{v.timer_ms} * 2, bounds_.max_ms));
    publish(id, backed_off, "backed off: silent past its timer", &name_of);
}

}  // namespace sbc::control
