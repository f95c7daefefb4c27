// Overload shedding of new requests: the policy ([overload] in sbc.toml, held read-only in the
// proxy tables), the reduction a worker asks for from how busy it is and how full its rings
// are, and the credit counter that turns a reduction into "refuse this request or not".
// The worker measures (dataplane/overload_monitor.cc) and hands the reduction to its proxy
// (proxy::set_overload), which refuses that share of new INVITEs and other out-of-dialog
// requests with 503 and Retry-After (sip-fastpath/stage_guard.cc); RFC 7339 `oc` stamping
// reads the same number (proxy::overload()). Any thread for the pure functions; shed_credit is
// worker only. No heap.
#pragma once

#include <cstdint>

namespace sbc::sip {

/// What the config says ([overload]); read-only in the proxy tables.
struct overload_policy {
    static constexpr uint8_t default_busy_percent = 90;
    static constexpr uint8_t default_ring_percent = 75;
    static constexpr uint32_t default_retry_after_s = 5;
    static constexpr uint32_t default_window_ms = 200;

    bool enabled = true;              ///< false: never overloaded (nothing measured, nothing shed)
    uint8_t busy_percent = default_busy_percent;  ///< busy share over the window above this: overloaded (100: never)
    uint8_t ring_percent = default_ring_percent;  ///< a handoff, stream or event ring fuller than this: overloaded
    uint32_t retry_after_s = default_retry_after_s;  ///< Retry-After of the 503 sent to a shed request
    uint32_t window_ms = default_window_ms;          ///< the busy share is measured over this much time
};

/// The share of new requests to refuse, in percent (0: not overloaded): how far the busy share
/// (`busy_permille`, 0..1000, over the window) is past busy_percent, scaled so that a fully
/// busy worker refuses all; likewise how far the fullest ring (`ring_percent`, 0..100) is past
/// ring_percent, a full ring refusing all. The larger of the two; at least 1 once either is
/// strictly past its threshold.
constexpr uint8_t overload_reduction(const overload_policy& p, uint32_t busy_permille, uint32_t ring_fill) noexcept
{
    if (!p.enabled) return 0;
    auto over = [](uint32_t value, uint32_t threshold, uint32_t full) -> uint32_t {
        if (threshold >= full || value <= threshold) return 0;
        if (value >= full) return 100;
        const uint32_t r = ((value - threshold) * 100 + (full - threshold) - 1) / (full - threshold);  // rounded up
        return r > 100 ? 100 : r;
    };
    const uint32_t by_busy = over(busy_permille, uint32_t{p.busy_percent} * 10, 1000);
    const uint32_t by_ring = over(ring_fill, p.ring_percent, 100);
    return static_cast<uint8_t>(by_busy > by_ring ? by_busy : by_ring);
}

/// How a worker's reduction is split by trust: untrusted sources (allowed by a trunk not marked
/// trusted, or unknown) are refused at twice the reduction, trusted ones (peers, trusted
/// trunks) only at what is left past 50 %: at 50 % every new request of an untrusted source
/// and none of a trusted one is refused, at 100 % all are. A flood of new calls from an
/// untrusted source that overloads a worker is then shed before the carrier's own calls.
struct shed_share {
    uint8_t untrusted = 0;
    uint8_t trusted = 0;
};
constexpr shed_share shed_shares(uint8_t reduction) noexcept
{
    const uint32_t r = reduction > 100 ? 100u : reduction;
    return shed_share{static_cast<uint8_t>(r * 2 > 100 ? 100 : r * 2), static_cast<uint8_t>(r > 50 ? r * 2 - 100 : 0)};
}

/// Turns a reduction into decisions, evenly: each candidate adds the reduction to a credit,
/// and every time the credit reaches 100 one candidate is refused (a reduction of 30 refuses 3
/// of every 10 new requests, 100 refuses all). Worker only.
struct shed_credit {
    uint32_t credit = 0;

    /// Whether the next candidate is refused under `reduction` percent.
    bool refuse(uint8_t reduction) noexcept
    {
        if (reduction == 0) {
            credit = 0;
            return false;
        }
        credit += reduction > 100 ? 100u : reduction;
        if (credit < 100) return false;
        credit -= 100;
        return true;
    }
};

}  // namespace sbc::sip
