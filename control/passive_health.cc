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
    set_bit(id, sip::peer_state::down, down);
}

void passive_health::set_bit(uint32_t id, uint32_t bit, bool on)
{
    // Relaxed: a worker that sees the flip one call late only picks another first choice.
    // Load and store, not fetch_or: the control core is the word's only writer.
    auto& w = words_.word[id];
    const uint32_t old = w.load(std::memory_order_relaxed);
    w.store(on ? (old | bit) : (old & ~bit), std::memory_order_relaxed);
}

void passive_health::mark_suspect(uint32_t id, const std::string& name, uint64_t now_ms)
{
    peer_state& s = state_[id];
    if (s.v.suspect || (words_.word[id].load(std::memory_order_relaxed) & sip::peer_state::down) != 0) return;
    s.v.suspect = true;
    s.suspect_since = now_ms;
    ++s.v.suspect_marks;
    set_bit(id, sip::peer_state::suspect, true);
    log_("peer " + name + " suspect: " + s.v.why + " (no new calls while another peer of its region is up)");
    if (on_suspect_) on_suspect_(id);
}

bool passive_health::heard_from(uint32_t id, const std::string& what, const std::string& name)
{
    if (id >= state_.size() || !state_[id].v.suspect) return false;
    state_[id].v.suspect = false;
    set_bit(id, sip::peer_state::suspect, false);
    log_("peer " + name + " no longer suspect: " + what);
    return true;
}

bool passive_health::on_event(const sip::peer_event& e, const std::string& name, uint64_t now_ms)
{
    if (e.peer_id >= state_.size()) return false;
    peer_state& s = state_[e.peer_id];
    if (e.kind != sip::peer_event_kind::failed) {
        // Any kind but failed (answered, and kinds this file does not know, such as a
        // provisional response) means the peer is alive.
        if (s.v.suspect) heard_from(e.peer_id, "answered " + std::to_string(e.code), name);
        if (e.kind != sip::peer_event_kind::answered) return false;
        s.v.consecutive = 0;
        if (s.v.down && !s.probed) {
            s.v.down = s.v.trial = false;
            set_down(e.peer_id, false);
            ++s.v.changes;
            log_("peer " + name + " up: answered a call (" + std::to_string(e.code) + ")");
        }
        return false;
    }
    // A final response, even 503, is an answer: the peer is alive (failed, but not suspect).
    if (e.cause == sip::failure_cause::code && s.v.suspect)
        heard_from(e.peer_id, "answered " + std::to_string(e.code), name);
    ++s.v.failures;
    ++s.v.consecutive;
    s.v.why = cause_text(e);
    const bool silent = e.cause == sip::failure_cause::timeout || e.cause == sip::failure_cause::icmp;
    if (s.probed) {
        // At the threshold the caller's probe state machine takes it down: no suspect then.
        if (s.v.consecutive == policy_.down_after) return true;
        if (silent) mark_suspect(e.peer_id, name, now_ms);
        return false;
    }
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
    if (silent) mark_suspect(e.peer_id, name, now_ms);  // not when down: that says more
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
        if (s.v.suspect && (words_.word[id].load(std::memory_order_relaxed) & sip::peer_state::down) != 0) {
            // Down (by calls, probes or its connection) says more than suspect, and it comes
            // back only by answering or through a trial: the mark goes with the down line.
            s.v.suspect = false;
            set_bit(id, sip::peer_state::suspect, false);
        } else if (s.v.suspect && now_ms >= s.suspect_since + policy_.retest_ms) {
            // Nothing heard for a retest interval (a peer that does not answer OPTIONS): calls
            // may try it again; its next silence marks it again.
            s.v.suspect = false;
            set_bit(id, sip::peer_state::suspect, false);
            log_("peer " + name_of(id) + " no longer suspect: nothing heard for " +
                 std::to_string(policy_.retest_ms / 1000) + " s, calls may try it again");
        }
        if (s.probed || !s.v.down || s.v.trial || now_ms < s.down_since + policy_.retest_ms) continue;
        s.v.trial = true;
        set_down(id, false);
        ++s.v.changes;
        log_("peer " + name_of(id) + ": trial calls after " + std::to_string(policy_.retest_ms / 1000) + " s down");
    }
}

}  // namespace sbc::control
