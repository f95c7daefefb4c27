// Passive peer health (see passive_health.h). Control core only.
#include "control/passive_health.h"

namespace sbc::control {

namespace {
std::string cause_text(const sip::peer_event& e)
{
    switch (e.cause) {
    case sip::failure_cause::code: return std::to_string(e.code);
    case sip::failure_cause::timeout: return "timeout";
    case sip::failure_cause::icmp: return "icmp unreachable";
    case sip::failure_cause::none: break;
    }
    return "unknown";
}
}  // namespace

void passive_health::set_down(uint32_t id, bool down)
{
    // Relaxed: a worker that sees the flip one call late only picks another first choice.
    auto& w = words_.word[id];
    const uint32_t old = w.load(std::memory_order_relaxed);
    w.store(down ? (old | sip::peer_state::down) : (old & ~sip::peer_state::down), std::memory_order_relaxed);
}

bool passive_health::on_event(const sip::peer_event& e, const std::string& name, uint64_t now_ms)
{
    if (e.peer_id >= state_.size()) return false;
    peer_state& s = state_[e.peer_id];
    if (e.kind == sip::peer_event_kind::answered) {
        s.v.consecutive = 0;
        if (s.v.down && !s.probed) {
            s.v.down = s.v.trial = false;
            set_down(e.peer_id, false);
            ++s.v.changes;
            log_("peer " + name + " up: answered a call (" + std::to_string(e.code) + ")");
        }
        return false;
    }
    ++s.v.failures;
    ++s.v.consecutive;
    s.v.why = cause_text(e);
    if (s.probed) return s.v.consecutive == policy_.down_after;
    if (s.v.trial) {
        // The trial failed: down again for another interval.
        s.v.trial = false;
        s.down_since = now_ms;
        set_down(e.peer_id, true);
        ++s.v.changes;
        log_("peer " + name + " still down: trial call failed (" + s.v.why + ")");
        return false;
    }
    if (!s.v.down && s.v.consecutive >= policy_.down_after) {
        s.v.down = true;
        s.down_since = now_ms;
        set_down(e.peer_id, true);
        ++s.v.changes;
        log_("peer " + name + " down: " + std::to_string(s.v.consecutive) + " failures in a row (last: " + s.v.why + ")");
    }
    return false;
}

bool passive_health::on_connection_failed(uint32_t id, const std::string& why, const std::string& name,
                                          uint64_t now_ms)
{
    if (id >= state_.size()) return false;
    peer_state& s = state_[id];
    s.v.why = why;
    if (s.probed) return true;
    s.v.trial = false;
    s.down_since = now_ms;
    if (!s.v.down) {
        s.v.down = true;
        set_down(id, true);
        ++s.v.changes;
        log_("peer " + name + " down: " + why);
    }
    return false;
}

void passive_health::on_connection_up(uint32_t id, const std::string& name)
{
    if (id >= state_.size()) return;
    peer_state& s = state_[id];
    if (s.probed || !s.v.down) return;
    s.v.down = s.v.trial = false;
    s.v.consecutive = 0;
    set_down(id, false);
    ++s.v.changes;
    log_("peer " + name + " up: connection up");
}

void passive_health::tick(uint64_t now_ms, const std::function<std::string(uint32_t)>& name_of)
{
    for (uint32_t id = 0; id < state_.size(); ++id) {
        peer_state& s = state_[id];
        if (s.probed || !s.v.down || s.v.trial || now_ms < s.down_since + policy_.retest_ms) continue;
        s.v.trial = true;
        set_down(id, false);
        ++s.v.changes;
        log_("peer " + name_of(id) + ": trial calls after " + std::to_string(policy_.retest_ms / 1000) + " s down");
    }
}

}  // namespace sbc::control
