// Header and number rules in sbc.toml: the `[[trunk.rule]]` and `[[region.rule]]` tables
// (docs/config.md, "Header and number rules"), read and checked by control/config_rules.cc
// (each rule compiled once at load, so that a bad one is refused with file, line and key) and
// compiled into the snapshot's sip::rule_tables by build_rule_tables(). Control core only
// (also sbcctl, sbc-sipcheck and tests).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sip-fastpath/sip_rules.h"

namespace sbc::control {

/// One `[[trunk.rule]]` or `[[region.rule]]`, in file order.
struct rule_config {
    sip::rule_spec spec;   ///< kind, header, value, field, match, replace, user_phone; name ("" : its position)
    bool outbound = false; ///< direction = "out"
    int line = 0;          ///< of the rule's table
};

struct config;

/// The compiled rules of `cfg` (trunk rules by trunk, then region rules by region; each
/// owner's inbound rules, then its outbound ones), or nullptr when there are none or on error
/// (then `error` is "FILE:LINE: KEY: what"; only the rule count can fail here, the loader
/// checked each rule). Control core only.
std::shared_ptr<const sip::rule_tables> build_rule_tables(const config& cfg, std::string& error);

/// The label of rule `r` for counters: "<trunk|region>:<owner name>:<in|out>:<rule name>".
std::string rule_label(const sip::rule& r);

}  // namespace sbc::control
