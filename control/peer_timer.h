// The adaptive no-answer timer of each peer: its response time learned from the first response
// to every INVITE attempt and from OPTIONS round trips, smoothed as TCP's RTO (RFC 6298: srtt
// and rttvar), and the timer clamp(srtt + 4 * rttvar, [retry] min_no_response_ms,
// no_response_ms) published to `peer_health::no_response_ms[id]`, where every worker arms its
// next attempt's no-response failover from it. A peer with no history publishes 0 (the workers
// then use no_response_ms).
//
// A silence (an attempt failed on its timer) backs the timer off as RFC 6298 5.5 does: doubled,
// at most no_response_ms, until the next sample recomputes it from srtt and rttvar, which the
// silence leaves alone (5.7). Without it a peer whose response time grew past its learned timer
// would never be heard again: each attempt fails over before its answer comes, no sample is
// taken, and passive health keeps the peer down, its trial calls failing the same way. The cost
// is longer waits on a peer that is really dead, but that one is suspect after one silence and
// down after a few (control/passive_health.h), so few calls meet it.
//
// Samples are in microseconds; the workers measure in ms (their clock), OPTIONS in TSC. A
// timer moving by more than a quarter, and the first one learned, are logged once each.
// Pure (no EAL): single writer of `no_response_ms`. Control core only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sip-fastpath/proxy_tables.h"

namespace sbc::control {

/// The range a learned timer is clamped to: [retry] min_no_response_ms and no_response_ms.
struct timer_bounds {
    uint32_t min_ms = 200;
    uint32_t max_ms = 1000;
};

class peer_timer {
public:
    using log_fn = std::function<void(const std::string&)>;
    using name_fn = std::function<std::string(uint32_t)>;

    peer_timer(sip::peer_health& words, timer_bounds b, log_fn log);

    /// New bounds (a reload): every learned timer is computed again from its srtt and rttvar
    /// (a back-off is dropped), clamped to them and published when it changed.
    void set_bounds(timer_bounds b, const name_fn& name_of);
    /// Forgets the history of `id` (a peer id given to another peer, or freed): publishes 0.
    void reset(uint32_t id);
    /// A response time of `id`: `rtt_us` from sending a request (an INVITE attempt, an OPTIONS
    /// probe) to its first response, whatever the code. `name_of` is called only to log.
    void on_sample(uint32_t id, uint64_t rtt_us, const name_fn& name_of);
    /// `id` stayed silent past its timer: the timer is backed off (see above). Nothing for a
    /// peer with no history: it already has the longest timer.
    void on_silence(uint32_t id, const name_fn& name_of);

    struct view {
        bool learned = false;   ///< at least one sample since the id was (re)assigned
        uint64_t srtt_us = 0;
        uint64_t rttvar_us = 0;
        uint32_t timer_ms = 0;  ///< published: 0 while nothing is learned
        uint64_t samples = 0;   ///< response times taken
        uint64_t silences = 0;  ///< back-offs
        uint64_t changes = 0;   ///< timers logged (the first learned, then moves by more than a quarter)
    };
    [[nodiscard]] const view& of(uint32_t id) const;
    /// The timer the workers use for `id` now, in ms: learned, else no_response_ms.
    [[nodiscard]] uint32_t in_force(uint32_t id) const;

private:
    struct peer_state {
        view v;
        uint32_t logged_ms = 0;  ///< the timer last logged; 0: none yet
    };
    /// clamp(srtt + 4 * rttvar) in ms, rounded up.
    [[nodiscard]] uint32_t computed_ms(const view& v) const noexcept;
    /// Publishes `ms` as the timer of `id` and logs it when it moved enough (`why`).
    void publish(uint32_t id, uint32_t ms, const char* why, const name_fn* name_of);

    sip::peer_health& words_;
    timer_bounds bounds_;
    log_fn log_;
    std::vector<peer_state> state_;  ///< by peer id
};

}  // namespace sbc::control
