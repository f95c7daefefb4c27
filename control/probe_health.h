// Health state machine of peers probed with OPTIONS (region probe = "options"): a peer goes
// down after `down_after` consecutive failed probes (no reply before the next probe, or a
// reply whose code is not in `accepted_codes`) and comes back after `up_after` consecutive
// good ones. A reply after the probe's timeout but before the next probe is late: counted,
// and judged by its code as any other (control/probe.h). Passive detection (control/passive_health.h: N failed calls in a row) can also take a
// probed peer down; it comes back the same way, after `up_after` good probes counted from
// then, never through trial calls: for a probed peer the probes have the last word.
// Pure (no EAL, no atomics): it returns the changes, and the control loop writes them to the
// peer's health word and logs them. Control core only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sbc::control {

struct probe_policy {
    unsigned down_after = 2;                    ///< consecutive failed probes
    unsigned up_after = 2;                      ///< consecutive good probes
    std::vector<uint16_t> accepted_codes{200};  ///< replies that count as good
};

/// A flip of one peer, to be written to its health word and logged once.
struct health_change {
    uint32_t id = 0;
    bool down = false;  ///< the new state
    std::string why;    ///< "probe timeout", "code 503", "passive: 503", "2 probes answered"
};

class probe_health {
public:
    explicit probe_health(probe_policy p);

    void set_policy(probe_policy p) { policy_ = std::move(p); }
    /// Forgets `id` (a peer id given to another peer, or no longer probed): up, no history.
    void reset(uint32_t id);

    /// A reply with `code` to the outstanding probe of `id`, `rtt_us` after it was sent;
    /// `late`: after its timeout (counted in probes_late, judged the same).
    std::optional<health_change> on_reply(uint32_t id, uint16_t code, uint64_t rtt_us, bool late = false);
    /// The outstanding probe of `id` got no reply before the next probe.
    std::optional<health_change> on_timeout(uint32_t id);
    /// The outstanding probe of `id` met ICMP destination unreachable (nothing listens there).
    std::optional<health_change> on_unreachable(uint32_t id);
    /// Passive detection reached its threshold on `id` (`why`: the last failure, e.g. "503").
    std::optional<health_change> on_passive_down(uint32_t id, const std::string& why);

    struct view {
        bool down = false;
        unsigned failures_in_row = 0;   ///< consecutive failed probes
        unsigned successes_in_row = 0;  ///< consecutive good probes
        std::string why;                ///< reason of the last change ("" before the first)
        std::string last_failure;       ///< reason of the last failed probe ("" none yet)
        int64_t last_rtt_us = -1;       ///< RTT of the last answered probe; -1: none answered
        uint16_t last_code = 0;         ///< code of the last answered probe
        uint64_t probes_failed = 0;     ///< timeouts and unaccepted codes, in total
        uint64_t probes_late = 0;       ///< replies after the timeout, before the next probe
        uint64_t changes = 0;           ///< up/down flips, in total
    };
    /// The state of `id` (up and empty for an id never seen).
    [[nodiscard]] const view& of(uint32_t id) const;

private:
    [[nodiscard]] bool accepted(uint16_t code) const noexcept;
    std::optional<health_change> failed(uint32_t id, std::string why);
    view& at(uint32_t id);

    probe_policy policy_;
    std::vector<view> state_;  ///< by peer id, grown on demand
};

}  // namespace sbc::control
