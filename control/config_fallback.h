// A `[[route]]`'s fallback on failure classes in sbc.toml: `fallback_group` and
// `fallback_codes` (docs/config.md, "Route fallback"). Read and checked by
// control/config_fallback.cc; carried into sip::route_fallback by control/proxy_build.cc.
// Control core only (also sbcctl and tests).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sbc::control {

/// One entry of fallback_codes: a single code ("404", 404) or a class ("5xx": 500..599).
struct fallback_code {
    uint16_t first = 0;
    uint16_t last = 0;   ///< == first for a single code
    int line = 0;        ///< for errors found after [retry] is read
    unsigned index = 0;  ///< its place in the array, likewise
    [[nodiscard]] bool is_class() const { return first != last; }
};

/// A route's fallback; group empty: none.
struct route_fallback_config {
    std::string group;                  ///< name of a [[peer_group]], not the route's own
    std::vector<fallback_code> codes;   ///< in file order, no overlaps
    [[nodiscard]] bool covers(uint16_t code) const
    {
        for (const fallback_code& c : codes)
            if (code >= c.first && code <= c.last) return true;
        return false;
    }
};

}  // namespace sbc::control
