// What the control core reports about header and number rules: each rule's owner, direction,
// name and kind with its hits and failures summed over workers; as a JSON field of the sip
// report, Prometheus families and rows of `sbcctl stats`. Builder: control core (reads the
// workers' counters, sip::proxy_stats::rule_hits and rule_failures, by rule index of the
// published tables). Renderers: sbcctl and /metrics (pure functions).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sbc::control {

struct rule_report {
    std::string owner;      ///< "trunk:NAME" or "region:NAME"
    std::string direction;  ///< "in" or "out"
    std::string name;       ///< the rule's name, else its position among its owner's rules of that direction (1..)
    std::string kind;       ///< "header_add", "header_remove", "header_replace", "number"
    uint64_t hits = 0;      ///< times it applied (a header added, removed or replaced; a number matched)
    uint64_t failures = 0;  ///< times it could not (a result too long, the match limit)
};

/// [{owner, direction, name, kind, hits, failures}] in rule order.
nlohmann::json to_json(const std::vector<rule_report>& r);
/// sbc_rule_hits_total and sbc_rule_failures_total, labelled owner, direction, rule.
void rules_prometheus(const std::vector<rule_report>& r, std::string& out);
/// Rows of `sbcctl stats` from the sip report's "rules" array (none when absent or empty).
std::vector<std::vector<std::string>> rule_rows(const nlohmann::json& rules);

}  // namespace sbc::control
