// Reporting of header and number rules (see rule_report.h). Control core and sbcctl.
#include "control/rule_report.h"

#include "control/report_util.h"

namespace sbc::control {

using json = nlohmann::json;

json to_json(const std::vector<rule_report>& r)
{
    json rules = json::array();
    for (const auto& x : r)
        rules.push_back({{"owner", x.owner},
                         {"direction", x.direction},
                         {"name", x.name},
                         {"kind", x.kind},
                         {"hits", x.hits},
                         {"failures", x.failures}});
    return rules;
}

void rules_prometheus(const std::vector<rule_report>& r, std::string& out)
{
    if (r.empty()) return;
    using report::prom_labels;
    report::prom_writer w;
    w.family("rule_hits_total", "counter",
             "Times a header or number rule applied (a header added, removed or replaced; a number pattern matched).");
    for (const auto& x : r)
        w.sample(prom_labels({{"owner", x.owner}, {"direction", x.direction}, {"rule", x.name}}), x.hits);
    w.family("rule_failures_total", "counter",
             "Times a header or number rule could not apply (a rewritten user part over 128 bytes, the pattern's "
             "match limit, more than 32 added headers); the request went on without it.");
    for (const auto& x : r)
        w.sample(prom_labels({{"owner", x.owner}, {"direction", x.direction}, {"rule", x.name}}), x.failures);
    out += w.str();
}

std::vector<std::vector<std::string>> rule_rows(const json& rules)
{
    std::vector<std::vector<std::string>> rows;
    if (!rules.is_array()) return rows;
    for (const auto& x : rules) {
        const std::string label = x.value("owner", "") + ":" + x.value("direction", "") + ":" + x.value("name", "");
        rows.push_back({"rule " + label + " (" + x.value("kind", "") + ") hits", std::to_string(x.value("hits", uint64_t{0}))});
        if (x.value("failures", uint64_t{0}) != 0)
            rows.push_back({"rule " + label + " failures", std::to_string(x.value("failures", uint64_t{0}))});
    }
    return rows;
}

}  // namespace sbc::control
