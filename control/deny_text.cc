// `sbcctl deny` requests and renderings, and the flood part of /metrics (see deny_text.h).
// sbcctl's main thread and the control core.
#include "control/deny_text.h"

#include <algorithm>
#include <ctime>

#include "control/report_util.h"

namespace sbc::control {

namespace {

using nlohmann::json;
using report::prom_labels;
using report::prom_writer;

bool parse_seconds(const std::string& s, uint64_t& out)
{
    if (s.empty() || s.size() > 7 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return false;
    out = std::stoull(s);
    return out >= 1 && out <= 604800;
}

}  // namespace

std::optional<json> deny_request(std::span<const std::string> args, std::string& error)
{
    const std::string action = args.empty() ? std::string("list") : args[0];
    json r{{"cmd", "deny"}, {"action", action}};
    if (action == "list") {
        if (args.size() > 1) {
            error = "deny list takes no arguments, got '" + args[1] + "'";
            return std::nullopt;
        }
        return r;
    }
    if (action != "add" && action != "remove") {
        error = "deny: unknown action '" + action + "' (list, add, remove)";
        return std::nullopt;
    }
    std::string address;
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (action == "add" && (a == "--seconds" || a == "--reason")) {
            if (i + 1 >= args.size()) {
                error = a + " needs a value";
                return std::nullopt;
            }
            const std::string& v = args[++i];
            if (a == "--reason") {
                r["reason"] = v;
                continue;
            }
            uint64_t s = 0;
            if (!parse_seconds(v, s)) {
                error = "--seconds expects an integer in 1..604800, got '" + v + "'";
                return std::nullopt;
            }
            r["seconds"] = s;
        } else if (address.empty() && !a.starts_with("--")) {
            address = a;
        } else {
            error = "deny " + action + ": unexpected argument '" + a + "'";
            return std::nullopt;
        }
    }
    if (address.empty()) {
        error = "deny " + action + " takes an address, e.g. deny " + action + " 198.18.5.7";
        return std::nullopt;
    }
    r["address"] = address;
    return r;
}

json deny_json(const deny_list& list, uint64_t now_ms)
{
    std::vector<const deny_entry*> es;
    for (const auto& [a, e] : list.entries()) es.push_back(&e);
    std::stable_sort(es.begin(), es.end(), [](const deny_entry* a, const deny_entry* b) { return a->until_ms < b->until_ms; });
    json arr = json::array();
    for (const deny_entry* e : es)
        arr.push_back({{"address", to_string(e->addr)},
                       {"reason", std::string(dataplane::deny_reason_name(e->reason))},
                       {"note", e->note},
                       {"since", e->since_unix},
                       {"until", e->until_unix},
                       {"seconds_left", e->until_ms > now_ms ? (e->until_ms - now_ms + 999) / 1000 : 0}});
    return {{"ok", true}, {"denied", arr}};
}

std::string deny_utc(int64_t unix_s)
{
    const std::time_t t = static_cast<std::time_t>(unix_s);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string render_deny_text(const json& answer)
{
    const json* d = answer.contains("denied") ? &answer["denied"] : nullptr;
    if (d == nullptr || !d->is_array() || d->empty()) return "no source denied\n";
    std::string out = "ADDRESS          REASON     SINCE                 UNTIL                 LEFT   NOTE\n";
    for (const auto& e : *d) {
        char line[160];
        std::snprintf(line, sizeof line, "%-16s %-10s %-21s %-21s %5llus ", e.value("address", "").c_str(),
                      e.value("reason", "").c_str(), deny_utc(e.value("since", int64_t{0})).c_str(),
                      deny_utc(e.value("until", int64_t{0})).c_str(),
                      static_cast<unsigned long long>(e.value("seconds_left", uint64_t{0})));
        out += line + e.value("note", std::string()) + "\n";
    }
    return out;
}

std::string flood_prometheus(const flood_report& r)
{
    prom_writer w;
    w.single("flood_enabled", "gauge", "1 when [flood] screening runs (per-source rates before parsing, deny list).",
             uint64_t{r.enabled});
    w.single("denied_sources", "gauge", "Sources on the deny list now (their UDP SIP is dropped before parsing).",
             r.denied);
    w.family("denials_total", "counter", "Sources put on the deny list, by reason (rate, malformed, scanner, operator).");
    for (std::size_t i = 0; i < r.denials.size(); ++i)
        w.sample(prom_labels({{"reason", std::string(dataplane::deny_reason_name(static_cast<dataplane::deny_reason>(i)))}}),
                 r.denials[i]);
    w.single("deny_reports_ignored_total", "counter",
             "Workers' reports about trusted sources (a peer, or a trusted trunk's source): never denied.",
             r.ignored_trusted);
    w.single("deny_expired_total", "counter", "Deny list entries removed when their time was up.", r.expired);
    w.single("deny_refused_full_total", "counter", "Denials refused because the deny list held its most sources (65536).",
             r.refused_full);
    w.family("flood_table_evictions_total", "counter",
             "Entries of the worker's per-source table overwritten because their set was full (least recently used).");
    for (std::size_t i = 0; i < r.evictions.size(); ++i)
        w.sample(prom_labels({{"worker", std::to_string(i)}}), r.evictions[i]);
    w.family("flood_reports_total", "counter", "Sources the worker reported to the control core for denial.");
    for (std::size_t i = 0; i < r.reports.size(); ++i)
        w.sample(prom_labels({{"worker", std::to_string(i)}}), r.reports[i]);
    if (!r.trunk_drops.empty()) {
        w.family("trunk_flood_dropped_total", "counter",
                 "UDP SIP from the trunk's untrusted sources dropped before parsing because together they were over "
                 "[flood] untrusted_trunk_rate (flood_rate_untrusted_trunk, by trunk; untrusted trunks only).");
        for (const auto& [name, n] : r.trunk_drops) w.sample(prom_labels({{"trunk", name}}), n);
    }
    return w.str();
}

}  // namespace sbc::control
