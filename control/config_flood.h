// `[flood]` of sbc.toml: flood protection before SIP parsing (per-source rates by trust, the
// unknown sources' aggregate rate, denial after malformed messages, how long a denial lasts).
// Read by control/config_flood.cc; the limits are the dataplane's own struct
// (dataplane/source_guard.h, one set of defaults), published to workers with the deny list.
// Control core only (also sbcctl and tests).
#pragma once

#include "dataplane/source_guard.h"

namespace sbc::control {

constexpr unsigned default_deny_s = 300;

/// `[flood]`: absent, every default applies (docs/config.md).
struct flood_config : dataplane::flood_limits {
    bool enabled = true;               ///< false: no screening, no deny list (everything reaches the parser)
    unsigned deny_s = default_deny_s;  ///< how long a reported source stays denied, 1..604800
    int line = 0;                      ///< of the [flood] table (0: absent)
};

}  // namespace sbc::control
