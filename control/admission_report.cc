// Reporting of call admission (see admission_report.h). Control core and sbcctl.
#include "control/admission_report.h"

#include "control/report_util.h"

namespace sbc::control {

using json = nlohmann::json;

namespace {

uint64_t u(const json& j, const char* k)
{
    return j.contains(k) && j[k].is_number_unsigned() ? j[k].get<uint64_t>() : 0;
}

std::string limit_text(uint64_t v) { return v == 0 ? "none" : std::to_string(v); }

}  // namespace

json to_json(const admission_report& r)
{
    json trunks = json::array();
    for (const auto& t : r.trunks)
        trunks.push_back({{"name", t.name},
                          {"calls", t.calls},
                          {"max_calls", t.max_calls},
                          {"calls_per_second", t.calls_per_second},
                          {"calls_burst", t.calls_burst},
                          {"refused", t.refused}});
    return {{"calls", r.node_calls}, {"max_calls", r.node_max_calls}, {"trunks", trunks}};
}

void admission_prometheus(const admission_report& r, std::string& out)
{
    using report::prom_labels;
    report::prom_writer w;
    w.single("admission_calls", "gauge", "Calls counted against the node's [admission] max_calls now (all workers).",
             r.node_calls);
    w.single("admission_max_calls", "gauge", "The node's [admission] max_calls; 0: no limit.", r.node_max_calls);
    w.family("trunk_calls_active", "gauge", "Calls that arrived on the trunk and are being set up or established.");
    for (const auto& t : r.trunks) w.sample(prom_labels({{"trunk", t.name}}), t.calls);
    w.family("trunk_max_calls", "gauge", "The trunk's max_calls; 0: no limit.");
    for (const auto& t : r.trunks) w.sample(prom_labels({{"trunk", t.name}}), t.max_calls);
    w.family("trunk_calls_refused_total", "counter",
             "New calls on the trunk refused by admission (trunk calls or rate, node calls, every peer full).");
    for (const auto& t : r.trunks) w.sample(prom_labels({{"trunk", t.name}}), t.refused);
    out += w.str();
}

std::vector<std::vector<std::string>> admission_rows(const json& a)
{
    std::vector<std::vector<std::string>> rows;
    if (!a.is_object()) return rows;
    rows.push_back({"calls on the node now (limit)", std::to_string(u(a, "calls")) + " (" + limit_text(u(a, "max_calls")) + ")"});
    const json trunks = a.contains("trunks") ? a["trunks"] : json::array();
    for (const auto& t : trunks) {
        const std::string name = t.value("name", "");
        std::string limits = limit_text(u(t, "max_calls"));
        if (u(t, "calls_per_second") != 0)
            limits += ", " + std::to_string(u(t, "calls_per_second")) + "/s burst " + std::to_string(u(t, "calls_burst"));
        rows.push_back({"calls on trunk " + name + " now (limit)", std::to_string(u(t, "calls")) + " (" + limits + ")"});
        rows.push_back({"calls refused on trunk " + name, std::to_string(u(t, "refused"))});
    }
    return rows;
}

std::string peer_limit_text(const json& p)
{
    const uint64_t limit = u(p, "max_calls");
    return limit == 0 ? "-" : std::to_string(limit);
}

}  // namespace sbc::control
