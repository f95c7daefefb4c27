// `[overload_control]` of sbc.toml: RFC 7339 SIP overload control, as a client (advertise
// `oc` in our Via toward peers and honour their feedback) and as a server (stamp this worker's
// reduction into the Via of responses to clients that advertised `oc`). When sbcd counts as
// overloaded, and by how much, is `[overload]` (control/config_scanner.h). Read by
// control/config_oc.cc; built into the proxy tables by control/proxy_build.cc (the policy is
// the proxy's own struct, sip::oc_policy: one set of defaults). Control core only (also sbcctl
// and tests).
#pragma once

#include "sip-fastpath/overload_control.h"

namespace sbc::control {

/// `[overload_control]`: absent, every default applies (docs/config.md).
struct oc_config : sip::oc_policy {
    int line = 0;  ///< of the [overload_control] table (0: absent)
};

}  // namespace sbc::control
