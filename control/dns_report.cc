// Reporting of DNS SRV regions (see dns_report.h).
#include "control/dns_report.h"

#include <cstdio>
#include <sstream>

namespace sbc::control {

using json = nlohmann::json;

namespace {

std::string escape(const std::string& s)
{
    std::string o;
    for (char c : s) {
        if (c == '\\' || c == '"') o += '\\';
        if (c == '\n') {
            o += "\\n";
            continue;
        }
        o += c;
    }
    return o;
}

std::string seconds(double s)
{
    if (s < 0) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1fs", s);
    return buf;
}

}  // namespace

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
    std::ostringstream o;
    auto series = [&](const char* metric, const char* type, const char* help, auto value) {
        o << "# HELP " << metric << " " << help << "\n# TYPE " << metric << " " << type << "\n";
        for (const auto& n : r.names)
            o << metric << "{srv=\"" << escape(n.srv) << "\",region=\"" << escape(n.region) << "\"} " << value(n) << "\n";
    };
    series("sbc_dns_queries_total", "counter", "DNS queries sent (SRV and A) for the region's SRV name.",
           [](const dns_name_report& n) { return n.queries; });
    series("sbc_dns_failures_total", "counter",
           "Refreshes of the SRV name that failed (timeout, SERVFAIL, NXDOMAIN, no targets, A lookups).",
           [](const dns_name_report& n) { return n.failures; });
    series("sbc_dns_stale_served_total", "counter",
           "Failed refreshes after which the last good answer was kept (serve stale).",
           [](const dns_name_report& n) { return n.stale_served; });
    series("sbc_dns_peers", "gauge", "Peers (address:port) known from the SRV name now.",
           [](const dns_name_report& n) { return n.peers; });
    series("sbc_dns_answer_ok", "gauge", "1 when the last refresh of the SRV name succeeded.",
           [](const dns_name_report& n) { return n.state == "ok" ? 1 : 0; });
    return o.str();
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
                        num(n, "ttl_s") + "s", seconds(dbl(n, "age_s")), seconds(dbl(n, "next_refresh_s")),
                        num(n, "queries"), num(n, "failures"), num(n, "stale_served"),
                        n.value("last_error", "").empty() ? "-" : n.value("last_error", "")});
    std::vector<std::size_t> w;
    for (const auto& r : rows)
        for (std::size_t i = 0; i < r.size(); ++i) {
            if (w.size() <= i) w.push_back(0);
            w[i] = std::max(w[i], r[i].size());
        }
    std::string out = "\nDNS (servers: " + d.value("servers", std::string("?")) + ")\n";
    for (const auto& r : rows) {
        std::string line;
        for (std::size_t i = 0; i < r.size(); ++i) {
            line += r[i];
            if (i + 1 < r.size()) line += std::string(w[i] - r[i].size() + 2, ' ');
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
    }
    return out;
}

}  // namespace sbc::control
