// Reporting of calls and peers (see sip_stats.h).
#include "control/sip_stats.h"

#include "control/dns_report.h"
#include "control/report_util.h"

namespace sbc::control {

using json = nlohmann::json;

namespace {

constexpr const char* failure_names[5] = {"4xx", "5xx", "6xx", "timeout", "icmp"};

/// The value of the sbc_peer_state gauge for a state word of peer_report::state.
int state_number(const std::string& s)
{
    static constexpr const char* names[] = {"up", "down", "trial", "draining", "disabled", "canary"};
    for (int i = 0; i < 6; ++i)
        if (s == names[i]) return i;
    return -1;
}

/// "0.42ms" for the peers table; "-" when no probe was answered (or the peer is not probed).
std::string rtt_text(const json& p)
{
    const double ms = p.contains("last_probe_rtt_ms") && p["last_probe_rtt_ms"].is_number() ? p["last_probe_rtt_ms"].get<double>() : -1;
    return report::fmt_or_dash("%.2fms", ms);
}

uint64_t u(const json& j, const char* k)
{
    return j.contains(k) && j[k].is_number_unsigned() ? j[k].get<uint64_t>() : 0;
}

/// The peers table's STATE: "up (suspect)" while suspect (the JSON state stays "up", a
/// separate flag says suspect).
std::string state_text(const json& p)
{
    std::string s = p.value("state", "");
    if (p.value("suspect", false)) s += " (suspect)";
    return s;
}

/// The peers table's LATE: probes answered after their timeout; "-" for peers not probed.
std::string late_text(const json& p)
{
    return p.value("probe", "") == "options" ? std::to_string(u(p, "probes_late")) : "-";
}

/// "250ms" learned from the peer's response times, "1000ms*" the configured no_response_ms
/// (nothing learned yet); "-" from an sbcd that does not report it.
std::string timer_text(const json& p)
{
    const uint64_t ms = u(p, "no_response_ms");
    if (ms == 0) return "-";
    return std::to_string(ms) + "ms" + (p.value("no_response_learned", false) ? "" : "*");
}

/// RFC 7339 feedback in force: "30%/800ms" (percent of new calls sent elsewhere, time left), "-".
std::string oc_text(const json& p)
{
    const uint64_t pct = u(p, "oc_reduction");
    if (pct == 0) return "-";
    return std::to_string(pct) + "%/" + std::to_string(u(p, "oc_left_ms")) + "ms";
}

}  // namespace

json to_json(const sip_report& r)
{
    json j;
    j["enabled"] = r.enabled;
    json c = json::object();
    for (const auto& [k, v] : r.counters) c[k] = v;
    j["counters"] = c;
    j["setups_active"] = r.setups_active;
    j["dialogs_active"] = r.dialogs_active;
    json peers = json::array();
    for (const auto& p : r.peers) {
        json f = json::object();
        for (std::size_t i = 0; i < 5; ++i) f[failure_names[i]] = p.failures[i];
        peers.push_back({{"name", p.name},
                         {"region", p.region},
                         {"address", p.address},
                         {"id", p.id},
                         {"state", p.state},
                         {"why", p.why},
                         {"consecutive_failures", p.consecutive_failures},
                         {"attempts", p.attempts},
                         {"active_calls", p.active_calls},
                         {"failures", f},
                         {"source", p.source},
                         {"probe", p.probe},
                         {"last_probe_rtt_ms", p.last_probe_rtt_ms},
                         {"probes_sent", p.probes_sent},
                         {"probes_failed", p.probes_failed},
                         {"probes_late", p.probes_late},
                         {"suspect", p.suspect},
                         {"suspect_marks", p.suspect_marks},
                         {"state_changes", p.state_changes},
                         {"no_response_ms", p.no_response_ms},
                         {"no_response_learned", p.no_response_learned},
                         {"response_samples", p.response_samples},
                         {"oc_reduction", p.oc_reduction},
                         {"oc_left_ms", p.oc_left_ms},
                         {"canary", p.canary},
                         {"max_calls", p.max_calls},
                         {"full_skips", p.full_skips}});
    }
    j["peers"] = peers;
    json trunks = json::object(), routes = json::object();
    for (const auto& t : r.invites_by_trunk) trunks[t.name] = t.count;
    for (const auto& t : r.invites_by_route) routes[t.name] = t.count;
    j["invites_by_trunk"] = trunks;
    j["invites_by_route"] = routes;
    json fallbacks = json::object();
    for (const auto& t : r.fallbacks_by_route) fallbacks[t.name] = t.count;
    j["fallbacks_by_route"] = fallbacks;
    // [scanner] matches by set (the shipped list, the operator's patterns) and field.
    static constexpr const char* scanner_sets[] = {"default", "config"};
    static constexpr const char* scanner_fields[] = {"user_agent", "from", "to"};
    json scanner = json::object();
    for (std::size_t i = 0; i < r.scanner_matches.size(); ++i) scanner[scanner_sets[i / 3]][scanner_fields[i % 3]] = r.scanner_matches[i];
    j["scanner_matches"] = scanner;
    j["probe_send_failures"] = r.probe_send_failures;
    j["probe_late_replies"] = r.probe_late_replies;
    j["admission"] = to_json(r.admission);
    j["rules"] = to_json(r.rules);
    return j;
}

std::string sip_prometheus(const sip_report& r)
{
    if (!r.enabled) return {};
    using report::prom_labels;
    report::prom_writer w;
    for (std::size_t i = 0; i < r.counters.size(); ++i)
        w.single("sip_" + r.counters[i].first + "_total", "counter", r.help[i].second, r.counters[i].second);
    w.single("calls_active", "gauge", "Established calls (dialogs).", r.dialogs_active);
    w.single("probe_send_failures_total", "counter",
             "OPTIONS probes that could not be sent (no MAC for the next hop yet, no buffer, inject ring full); they "
             "count as failed.",
             r.probe_send_failures);
    w.single("probe_late_replies_total", "counter",
             "Replies to OPTIONS probes too late to count: after the next probe was sent (the probe had failed), "
             "or twice.",
             r.probe_late_replies);
    w.single("call_setups_active", "gauge", "Calls being set up.", r.setups_active);
    w.family("trunk_invites_total", "counter", "New calls offered on the trunk.");
    for (const auto& t : r.invites_by_trunk) w.sample(prom_labels({{"trunk", t.name}}), t.count);
    w.family("route_invites_total", "counter", "New calls by the route they took (route=\"(none)\": no route, 404).");
    for (const auto& t : r.invites_by_route) w.sample(prom_labels({{"route", t.name}}), t.count);
    if (!r.fallbacks_by_route.empty()) {
        w.family("route_fallbacks_total", "counter",
                 "Calls moved to the route's fallback_group after a final response in its fallback_codes.");
        for (const auto& t : r.fallbacks_by_route) w.sample(prom_labels({{"route", t.name}}), t.count);
    }
    w.family("sip_scanner_matches_total", "counter",
             "Requests that matched a scanner signature, by set (default: the shipped list; config: [scanner] patterns) and field.");
    for (std::size_t i = 0; i < r.scanner_matches.size(); ++i) {
        static constexpr const char* sets[] = {"default", "config"};
        static constexpr const char* fields[] = {"user_agent", "from", "to"};
        w.sample(prom_labels({{"set", sets[i / 3]}, {"field", fields[i % 3]}}), r.scanner_matches[i]);
    }
    w.family("peer_up", "gauge", "1 when the peer takes new calls.");
    for (const auto& p : r.peers)
        w.sample(prom_labels({{"peer", p.name}, {"region", p.region}}),
                 p.state == "up" || p.state == "trial" || p.state == "canary" ? 1 : 0);
    w.family("peer_canary", "gauge", "1 while the peer is a canary: it takes only the new calls that match `match`.");
    for (const auto& p : r.peers) w.sample(prom_labels({{"peer", p.name}, {"match", p.canary}}), p.canary.empty() ? 0 : 1);
    w.family("peer_state", "gauge",
             "Health state of the peer: 0 up, 1 down, 2 trial, 3 draining, 4 disabled, 5 canary.");
    for (const auto& p : r.peers) w.sample(prom_labels({{"peer", p.name}, {"state", p.state}}), state_number(p.state));
    w.family("peer_state_changes_total", "counter",
             "Up/down flips of the peer's health (probes, passive detection, trials).");
    for (const auto& p : r.peers) w.sample(prom_labels({{"peer", p.name}}), p.state_changes);
    w.family("peer_probes_sent_total", "counter", "OPTIONS probes sent to the peer.");
    for (const auto& p : r.peers)
        if (p.probe == "options") w.sample(prom_labels({{"peer", p.name}}), p.probes_sent);
    w.family("peer_probes_failed_total", "counter",
             "OPTIONS probes that timed out or got a code outside accepted_codes.");
    for (const auto& p : r.peers)
        if (p.probe == "options") w.sample(prom_labels({{"peer", p.name}}), p.probes_failed);
    w.family("peer_probes_late_total", "counter",
             "OPTIONS probes answered after their timeout but before the next probe: counted as answered.");
    for (const auto& p : r.peers)
        if (p.probe == "options") w.sample(prom_labels({{"peer", p.name}}), p.probes_late);
    w.family("peer_suspect", "gauge",
             "1 while the peer is suspect (silent or unreachable once, nothing heard since): no new calls while "
             "another peer of its region is up and not suspect.");
    for (const auto& p : r.peers) w.sample(prom_labels({{"peer", p.name}}), p.suspect ? 1 : 0);
    w.family("peer_suspect_total", "counter", "Times the peer became suspect.");
    for (const auto& p : r.peers) w.sample(prom_labels({{"peer", p.name}}), p.suspect_marks);
    w.family("peer_probe_rtt_seconds", "gauge", "RTT of the last answered OPTIONS probe.");
    for (const auto& p : r.peers)
        if (p.last_probe_rtt_ms >= 0) w.sample(prom_labels({{"peer", p.name}}), p.last_probe_rtt_ms / 1000.0);
    w.family("peer_no_response_ms", "gauge",
             "No-answer timer in force for the peer's next attempts, in ms: learned from its response times, "
             "else [retry] no_response_ms.");
    for (const auto& p : r.peers) w.sample(prom_labels({{"peer", p.name}}), p.no_response_ms);
    w.family("peer_response_samples_total", "counter",
             "Response times of the peer taken for its no-answer timer (first responses to INVITEs, probe replies).");
    for (const auto& p : r.peers) w.sample(prom_labels({{"peer", p.name}}), p.response_samples);
    w.family("peer_oc_reduction_percent", "gauge",
             "RFC 7339 overload control: percent of new calls the peer asked us to send to other peers (0: none).");
    for (const auto& p : r.peers) w.sample(prom_labels({{"peer", p.name}}), p.oc_reduction);
    w.family("peer_active_calls", "gauge", "Calls on the peer (set up or established).");
    for (const auto& p : r.peers) w.sample(prom_labels({{"peer", p.name}}), p.active_calls);
    w.family("peer_attempts_total", "counter", "INVITE attempts sent to the peer.");
    for (const auto& p : r.peers) w.sample(prom_labels({{"peer", p.name}}), p.attempts);
    w.family("peer_failures_total", "counter",
             "Failed attempts by cause (408/503/504 and other codes by class, timeout, ICMP).");
    for (const auto& p : r.peers)
        for (std::size_t i = 0; i < 5; ++i) w.sample(prom_labels({{"peer", p.name}, {"cause", failure_names[i]}}), p.failures[i]);
    w.family("peer_max_calls", "gauge", "The peer's max_calls (call admission); 0: no limit.");
    for (const auto& p : r.peers) w.sample(prom_labels({{"peer", p.name}}), p.max_calls);
    w.family("peer_full_skips_total", "counter", "Times selection passed the peer over because it was at its max_calls.");
    for (const auto& p : r.peers) w.sample(prom_labels({{"peer", p.name}}), p.full_skips);
    std::string out = w.str();
    admission_prometheus(r.admission, out);
    rules_prometheus(r.rules, out);
    return out;
}

std::string render_calls_text(const json& j)
{
    const json s = j.contains("sip") ? j["sip"] : json::object();
    if (!s.value("enabled", false)) return "no SIP service configured (no [[trunk]]/[[route]])\n";
    std::string out = "calls: " + std::to_string(u(s, "dialogs_active")) + " established, " +
                      std::to_string(u(s, "setups_active")) + " being set up\n\n";
    std::vector<std::vector<std::string>> rows{{"PEER", "REGION", "STATE", "ACTIVE"}};
    const json peers = s.contains("peers") ? s["peers"] : json::array();
    for (const auto& p : peers)
        rows.push_back({p.value("name", ""), p.value("region", ""), p.value("state", ""),
                        std::to_string(u(p, "active_calls"))});
    return out + report::table_text(rows);
}

std::string render_peers_text(const json& j)
{
    const json s = j.contains("sip") ? j["sip"] : json::object();
    if (!s.value("enabled", false)) return "no peers configured\n";
    std::vector<std::vector<std::string>> rows{
        {"PEER", "REGION", "ADDRESS", "STATE", "WHY", "RTT", "LATE", "TIMER", "OC", "ACTIVE", "LIMIT", "FULL", "ATTEMPTS", "4XX", "5XX", "6XX", "TIMEOUT", "ICMP", "CANARY", "SOURCE"}};
    const json peers = s.contains("peers") ? s["peers"] : json::array();
    for (const auto& p : peers) {
        const json f = p.value("failures", json::object());
        rows.push_back({p.value("name", ""), p.value("region", ""), p.value("address", ""), state_text(p),
                        p.value("why", "").empty() ? "-" : p.value("why", ""), rtt_text(p), late_text(p), timer_text(p),
                        oc_text(p), std::to_string(u(p, "active_calls")), peer_limit_text(p),
                        std::to_string(u(p, "full_skips")),
                        std::to_string(u(p, "attempts")), std::to_string(u(f, "4xx")), std::to_string(u(f, "5xx")),
                        std::to_string(u(f, "6xx")), std::to_string(u(f, "timeout")), std::to_string(u(f, "icmp")),
                        p.value("canary", "").empty() ? "-" : p.value("canary", ""),
                        p.value("source", "").empty() ? "static" : p.value("source", "")});
    }
    return report::table_text(rows) + render_dns_text(j);
}

std::string render_sip_stats_text(const json& j)
{
    const json s = j.contains("sip") ? j["sip"] : json::object();
    if (!s.value("enabled", false)) return {};
    std::vector<std::vector<std::string>> rows{{"SIP", "COUNT"}};
    const json counters = s.contains("counters") ? s["counters"] : json::object();
    for (const auto& [k, v] : counters.items())
        rows.push_back({k, std::to_string(v.is_number_unsigned() ? v.get<uint64_t>() : 0)});
    const json trunks = s.contains("invites_by_trunk") ? s["invites_by_trunk"] : json::object();
    for (const auto& [k, v] : trunks.items()) rows.push_back({"new calls on trunk " + k, std::to_string(v.is_number_unsigned() ? v.get<uint64_t>() : 0)});
    const json routes = s.contains("invites_by_route") ? s["invites_by_route"] : json::object();
    for (const auto& [k, v] : routes.items()) rows.push_back({"new calls by route " + k, std::to_string(v.is_number_unsigned() ? v.get<uint64_t>() : 0)});
    const json fallbacks = s.contains("fallbacks_by_route") ? s["fallbacks_by_route"] : json::object();
    for (const auto& [k, v] : fallbacks.items()) rows.push_back({"calls fallen back by route " + k, std::to_string(v.is_number_unsigned() ? v.get<uint64_t>() : 0)});
    rows.push_back({"calls established now", std::to_string(u(s, "dialogs_active"))});
    rows.push_back({"calls being set up now", std::to_string(u(s, "setups_active"))});
    for (auto& row : admission_rows(s.contains("admission") ? s["admission"] : json{})) rows.push_back(std::move(row));
    for (auto& row : rule_rows(s.contains("rules") ? s["rules"] : json{})) rows.push_back(std::move(row));
    return "\n" + report::table_text(rows);
}

}  // namespace sbc::control
