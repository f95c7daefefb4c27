// A route's fallback on failure classes: the peer group a call moves to, once, when an attempt
// in the route's own group gets a final response in its fallback codes and nothing but 100
// Trying was heard (docs/sip-engine.md, "Route fallback"). Built by the control core
// (control/proxy_build.cc) into each sip::route of the proxy tables; read by workers under RCU
// (fall_back in sip-fastpath/call_events.cc). Immutable once published.
#pragma once

#include <bitset>
#include <cstdint>

namespace sbc::sip {

/// No fallback group: the route has none, or a call already fell back.
constexpr uint16_t no_fallback = 0xffff;

struct route_fallback {
    uint16_t group = no_fallback;  ///< index into proxy_tables::groups; no_fallback: none
    /// Final responses that move the call: the route's fallback_codes less the [retry] codes
    /// (those retry within the group as before, so a class such as 5xx leaves 503 to retry).
    std::bitset<700> codes;

    [[nodiscard]] bool applies(uint16_t code) const noexcept
    {
        return group != no_fallback && code < codes.size() && codes.test(code);
    }
};

}  // namespace sbc::sip
