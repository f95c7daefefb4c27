// The probed peers' health state machine (see probe_health.h). Control core only.
#include "control/probe_health.h"

#include <algorithm>

namespace sbc::control {

namespace {
const probe_health::view never_seen{};
}

probe_health::probe_health(probe_policy p) : policy_(std::move(p)) {}

probe_health::view& probe_health::at(uint32_t id)
{
    if (id >= state_.size()) state_.resize(id + 1);
    return state_[id];
}

const probe_health::view& probe_health::of(uint32_t id) const
{
    return id < state_.size() ? state_[id] : never_seen;
}

void probe_health::reset(uint32_t id)
{
    if (id < state_.size()) state_[id] = view{};
}

bool probe_health::accepted(uint16_t code) const noexcept
{
    return std::find(policy_.accepted_codes.begin(), policy_.accepted_codes.end(), code) != policy_.accepted_codes.end();
}

std::optional<health_change> probe_health::on_reply(uint32_t id, uint16_t code, uint64_t rtt_us, bool late)
{
    view& v = at(id);
    if (late) ++v.probes_late;
    v.last_rtt_us = static_cast<int64_t>(rtt_us);
    v.last_code = code;
    if (!accepted(code)) return failed(id, "code " + std::to_string(code));
    v.failures_in_row = 0;
    ++v.successes_in_row;
    if (!v.down || v.successes_in_row < policy_.up_after) return std::nullopt;
    v.down = false;
    ++v.changes;
    v.why = std::to_string(v.successes_in_row) + (v.successes_in_row == 1 ? " probe" : " probes") + " answered " +
            std::to_string(code);
    return health_change{id, false, v.why};
}

std::optional<health_change> probe_health::on_timeout(uint32_t id)
{
    return failed(id, "probe timeout");
}

std::optional<health_change> probe_health::on_unreachable(uint32_t id)
{
    return failed(id, "icmp unreachable");
}

std::optional<health_change> probe_health::failed(uint32_t id, std::string why)
{
    view& v = at(id);
    ++v.probes_failed;
    v.successes_in_row = 0;
    ++v.failures_in_row;
    v.last_failure = why;
    if (v.down || v.failures_in_row < policy_.down_after) return std::nullopt;
    v.down = true;
    ++v.changes;
    v.why = std::move(why);
    if (v.failures_in_row > 1) v.why += " x" + std::to_string(v.failures_in_row);
    return health_change{id, true, v.why};
}

std::optional<health_change> probe_health::on_passive_down(uint32_t id, const std::string& why)
{
    view& v = at(id);
    if (v.down) {
        // Down already (its probes timed out first): the reason now known says more, e.g. the
        // certificate its connection was refused for; good probes must start over.
        v.successes_in_row = 0;
        v.why = "passive: " + why;
        return std::nullopt;
    }
    v.down = true;
    v.successes_in_row = 0;  // back only after up_after good probes from now on
    ++v.changes;
    v.why = "passive: " + why;
    return health_change{id, true, v.why};
}

}  // namespace sbc::control
