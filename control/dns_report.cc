// Reporting of DNS SRV regions (see dns_report.h).
#include "control/dns_report.h"

#include "control/report_util.h"

namespace sbc::control {

using json = nlohmann::json;

json to_json(const dns_report& r)
{
    json j;
    j["enabled"] = r.enabled;
    j["servers"] = r.servers;
    json names = json::array();
    for (const auto& n : r.names)
        names.push_back({{"srv", n.srv},
                         {"region", n.region},
                         {"state", n.state},
                         {"peers", n.peers},
                         {"ttl_s", n.ttl_s},
                         {"age_s", n.age_s},
                         {"next_refresh_s", n.next_refresh_s},
                         {"queries", n.queries},
                         {"failures", n.failures},
                         {"stale_served", n.stale_served},
                         {"last_error", n.last_error}});
    j["names"] = names;
    return j;
}

std::string dns_prometheus(const dns_report& r)
{
    if (!r.enabled) return {};
    report::prom_writer w;
    auto series = [&](const char* metric, const char* type, const char* help, auto value) {
        w.family(metric, type, help);
        for (const auto& n : r.names) w.sample(report::prom_labels({{"srv", n.srv}, {"region", n.region}}), value(n));
    };
    series("dns_queries_total", "counter", "DNS queries sent (SRV and A) for the region's SRV name.",
           [](const dns_name_report& n) { return n.queries; });
    series("dns_failures_total", "counter",
           "Refreshes of the SRV name that failed (timeout, SERVFAIL, NXDOMAIN, no targets, A lookups).",
           [](const dns_name_report& n) { return n.failures; });
    series("dns_stale_served_total", "counter",
           "Failed refreshes after which the last good answer was kept (serve stale).",
           [](const dns_name_report& n) { return n.stale_served; });
    series("dns_peers", "gauge", "Peers (address:port) known from the SRV name now.",
           [](const dns_name_report& n) { return n.peers; });
    series("dns_answer_ok", "gauge", "1 when the last refresh of the SRV name succeeded.",
           [](const dns_name_report& n) { return n.state == "ok" ? 1 : 0; });
    return w.str();
}

std::string render_dns_text(const json& report)
{
    if (!report.contains("dns")) return {};
    const json& d = report["dns"];
    if (!d.value("enabled", false)) return {};
    std::vector<std::vector<std::string>> rows{
        {"SRV", "REGION", "STATE", "PEERS", "TTL", "AGE", "NEXT", "QUERIES", "FAILED", "STALE", "LAST ERROR"}};
    const json names = d.contains("names") ? d["names"] : json::array();
    auto num = [](const json& j, const char* k) {
        return std::to_string(j.contains(k) && j[k].is_number_unsigned() ? j[k].get<uint64_t>() : 0);
    };
    auto dbl = [](const json& j, const char* k) { return j.contains(k) && j[k].is_number() ? j[k].get<double>() : -1.0; };
    for (const auto& n : names)
        rows.push_back({n.value("srv", ""), n.value("region", ""), n.value("state", ""), num(n, "peers"),
                        num(n, "ttl_s") + "s", report::fmt_or_dash("%.1fs", dbl(n, "age_s")),
                        report::fmt_or_dash("%.1fs", dbl(n, "next_refresh_s")),
                        num(n, "queries"), num(n, "failures"), num(n, "stale_served"),
                        n.value("last_error", "").empty() ? "-" : n.value("last_error", "")});
    return "\nDNS (servers: " + d.value("servers", std::string("?")) + ")\n" + report::table_text(rows);
}

}  // namespace sbc::control
