// What the control core reports about call admission: each trunk's calls now, its limits and
// its refusals, the node's calls and limit, each peer's limit and how often it was passed
// over full; as JSON fields of the sip report, Prometheus families and rows of `sbcctl
// stats`. Builders: control core (reads the node-wide counts, sip-fastpath/admission.h, and
// the workers' counters). Renderers: sbcctl and /metrics (pure functions).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sbc::control {

struct trunk_admission_report {
    std::string name;
    uint64_t calls = 0;             ///< node-wide, now
    uint64_t max_calls = 0;         ///< 0: no limit
    uint64_t calls_per_second = 0;  ///< 0: no limit
    uint64_t calls_burst = 0;
    uint64_t refused = 0;           ///< new calls refused by admission (every reason)
};

struct admission_report {
    uint64_t node_calls = 0;        ///< calls counted against the node now
    uint64_t node_max_calls = 0;    ///< 0: no limit
    std::vector<trunk_admission_report> trunks;
};

/// {"calls", "max_calls", "trunks": [{name, calls, max_calls, calls_per_second, calls_burst, refused}]}
nlohmann::json to_json(const admission_report& r);
/// sbc_admission_calls, sbc_admission_max_calls, sbc_trunk_calls_active, sbc_trunk_max_calls,
/// sbc_trunk_calls_refused_total (with a trunk label).
void admission_prometheus(const admission_report& r, std::string& out);
/// Rows of `sbcctl stats` from the sip report's "admission" object (none when absent).
std::vector<std::vector<std::string>> admission_rows(const nlohmann::json& admission);
/// The peers table's LIMIT ("-": none) and FULL (times passed over full) from a peer's JSON.
std::string peer_limit_text(const nlohmann::json& peer);

}  // namespace sbc::control
