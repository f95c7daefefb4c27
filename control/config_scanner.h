// `[scanner]` and `[overload]` of sbc.toml: scanner signatures (the shipped list on or off, the
// operator's own patterns on User-Agent, From and To, what happens to a match) and when a
// worker counts as overloaded and sheds new requests. Read by control/config_scanner.cc, which
// refuses a pattern Hyperscan cannot compile with its file, line, key and Hyperscan's message;
// built into the proxy tables by control/proxy_build.cc (the policies are the proxy's own
// structs, one set of defaults). Control core only (also sbcctl and tests).
#pragma once

#include <string>
#include <vector>

#include "sip-fastpath/overload_shed.h"
#include "sip-fastpath/scanner_match.h"

namespace sbc::control {

/// One pattern of [scanner] user_agent, from or to, with where it was written.
struct scanner_pattern_config {
    sip::scanner_field field = sip::scanner_field::user_agent;
    std::string pattern;  ///< Hyperscan expression (checked to compile), matched without regard to case
    int line = 0;
};

/// `[scanner]`: absent, the shipped list applies with every default (docs/config.md).
struct scanner_config {
    bool defaults = true;                         ///< the shipped list (sip::default_scanner_signatures)
    std::vector<scanner_pattern_config> patterns; ///< the operator's, in file order (user_agent, from, to)
    sip::scanner_policy policy;                   ///< action, respond_code, deny
    int line = 0;                                 ///< of the [scanner] table (0: absent)

    /// What the matcher compiles: the shipped list when `defaults`, then `patterns`.
    [[nodiscard]] std::vector<sip::scanner_pattern> compiled() const;
};

/// `[overload]`: absent, every default applies.
struct overload_config : sip::overload_policy {
    int line = 0;  ///< of the [overload] table (0: absent)
};

}  // namespace sbc::control
