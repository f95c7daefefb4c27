// Reporting of calls and peers (see sip_stats.h).
#include "control/sip_stats.h"

#include "control/dns_report.h"

#include <cstdio>
#include <sstream>

namespace sbc::control {

using json = nlohmann::json;

namespace {

constexpr const char* failure_names[5] = {"4xx", "5xx", "6xx", "timeout", "icmp"};

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
    if (ms < 0) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2fms", ms);
    return buf;
}

/// Left-aligned columns, two spaces apart.
std::string table(const std::vector<std::vector<std::string>>& rows)
{
    std::vector<std::size_t> w;
    for (const auto& r : rows)
        for (std::size_t i = 0; i < r.size(); ++i) {
            if (w.size() <= i) w.push_back(0);
            w[i] = std::max(w[i], r[i].size());
        }
    std::string out;
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

uint64_t u(const json& j, const char* k)
{
    return j.contains(k) && j[k].is_number_unsigned() ? j[k].get<uint64_t>() : 0;
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
                         {"state_changes", p.state_changes},
                         {"canary", p.canary}});
    }
    j["peers"] = peers;
    json trunks = json::object(), routes = json::object();
    for (const auto& t : r.invites_by_trunk) trunks[t.name] = t.count;
    for (const auto& t : r.invites_by_route) routes[t.name] = t.count;
    j["invites_by_trunk"] = trunks;
    j["invites_by_route"] = routes;
    j["probe_send_failures"] = r.probe_send_failures;
    j["probe_late_replies"] = r.probe_late_replies;
    return j;
}

std::string sip_prometheus(const sip_report& r)
{
    if (!r.enabled) return {};
    std::ostringstream o;
    for (std::size_t i = 0; i < r.counters.size(); ++i) {
        const auto& [name, v] = r.counters[i];
        o << "# HELP sbc_sip_" << name << "_total " << r.help[i].second << "\n# TYPE sbc_sip_" << name
          << "_total counter\nsbc_sip_" << name << "_total " << v << "\n";
    }
    o << "# HELP sbc_calls_active Established calls (dialogs).\n# TYPE sbc_calls_active gauge\nsbc_calls_active "
      << r.dialogs_active << "\n";
    o << "# HELP sbc_probe_send_failures_total OPTIONS probes that could not be sent (no MAC for the next hop yet, no "
         "buffer, inject ring full); they count as failed.\n# TYPE sbc_probe_send_failures_total counter\n"
         "sbc_probe_send_failures_total "
      << r.probe_send_failures << "\n";
    o << "# HELP sbc_probe_late_replies_total Replies to OPTIONS probes that came after their timeout (or twice).\n"
         "# TYPE sbc_probe_late_replies_total counter\nsbc_probe_late_replies_total "
      << r.probe_late_replies << "\n";
    o << "# HELP sbc_call_setups_active Calls being set up.\n# TYPE sbc_call_setups_active gauge\nsbc_call_setups_active "
      << r.setups_active << "\n";
    o << "# HELP sbc_trunk_invites_total New calls offered on the trunk.\n# TYPE sbc_trunk_invites_total counter\n";
    for (const auto& t : r.invites_by_trunk) o << "sbc_trunk_invites_total{trunk=\"" << escape(t.name) << "\"} " << t.count << "\n";
    o << "# HELP sbc_route_invites_total New calls by the route they took (route=\"(none)\": no route, 404).\n"
         "# TYPE sbc_route_invites_total counter\n";
    for (const auto& t : r.invites_by_route) o << "sbc_route_invites_total{route=\"" << escape(t.name) << "\"} " << t.count << "\n";
    o << "# HELP sbc_peer_up 1 when the peer takes new calls.\n# TYPE sbc_peer_up gauge\n";
    for (const auto& p : r.peers)
        o << "sbc_peer_up{peer=\"" << escape(p.name) << "\",region=\"" << escape(p.region) << "\"} "
          << (p.state == "up" || p.state == "trial" || p.state == "canary" ? 1 : 0) << "\n";
    o << "# HELP sbc_peer_canary 1 while the peer is a canary: it takes only the new calls that match `match`.\n"
         "# TYPE sbc_peer_canary gauge\n";
    for (const auto& p : r.peers)
        o << "sbc_peer_canary{peer=\"" << escape(p.name) << "\",match=\"" << escape(p.canary) << "\"} "
          << (p.canary.empty() ? 0 : 1) << "\n";
    o << "# HELP sbc_peer_state Health state of the peer: 0 up, 1 down, 2 trial, 3 draining, 4 disabled, 5 canary.\n"
         "# TYPE sbc_peer_state gauge\n";
    for (const auto& p : r.peers)
        o << "sbc_peer_state{peer=\"" << escape(p.name) << "\",state=\"" << escape(p.state) << "\"} " << state_number(p.state)
          << "\n";
    o << "# HELP sbc_peer_state_changes_total Up/down flips of the peer's health (probes, passive detection, trials).\n"
         "# TYPE sbc_peer_state_changes_total counter\n";
    for (const auto& p : r.peers)
        o << "sbc_peer_state_changes_total{peer=\"" << escape(p.name) << "\"} " << p.state_changes << "\n";
    o << "# HELP sbc_peer_probes_sent_total OPTIONS probes sent to the peer.\n# TYPE sbc_peer_probes_sent_total counter\n";
    for (const auto& p : r.peers)
        if (p.probe == "options") o << "sbc_peer_probes_sent_total{peer=\"" << escape(p.name) << "\"} " << p.probes_sent << "\n";
    o << "# HELP sbc_peer_probes_failed_total OPTIONS probes that timed out or got a code outside accepted_codes.\n"
         "# TYPE sbc_peer_probes_failed_total counter\n";
    for (const auto& p : r.peers)
        if (p.probe == "options") o << "sbc_peer_probes_failed_total{peer=\"" << escape(p.name) << "\"} " << p.probes_failed << "\n";
    o << "# HELP sbc_peer_probe_rtt_seconds RTT of the last answered OPTIONS probe.\n# TYPE sbc_peer_probe_rtt_seconds gauge\n";
    for (const auto& p : r.peers)
        if (p.last_probe_rtt_ms >= 0)
            o << "sbc_peer_probe_rtt_seconds{peer=\"" << escape(p.name) << "\"} " << p.last_probe_rtt_ms / 1000.0 << "\n";
    o << "# HELP sbc_peer_active_calls Calls on the peer (set up or established).\n# TYPE sbc_peer_active_calls gauge\n";
    for (const auto& p : r.peers) o << "sbc_peer_active_calls{peer=\"" << escape(p.name) << "\"} " << p.active_calls << "\n";
    o << "# HELP sbc_peer_attempts_total INVITE attempts sent to the peer.\n# TYPE sbc_peer_attempts_total counter\n";
    for (const auto& p : r.peers) o << "sbc_peer_attempts_total{peer=\"" << escape(p.name) << "\"} " << p.attempts << "\n";
    o << "# HELP sbc_peer_failures_total Failed attempts by cause (408/503/504 and other codes by class, timeout, ICMP).\n"
         "# TYPE sbc_peer_failures_total counter\n";
    for (const auto& p : r.peers)
        for (std::size_t i = 0; i < 5; ++i)
            o << "sbc_peer_failures_total{peer=\"" << escape(p.name) << "\",cause=\"" << failure_names[i] << "\"} "
              << p.failures[i] << "\n";
    return o.str();
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
    return out + table(rows);
}

std::string render_peers_text(const json& j)
{
    const json s = j.contains("sip") ? j["sip"] : json::object();
    if (!s.value("enabled", false)) return "no peers configured\n";
    std::vector<std::vector<std::string>> rows{
        {"PEER", "REGION", "ADDRESS", "STATE", "WHY", "RTT", "ACTIVE", "ATTEMPTS", "4XX", "5XX", "6XX", "TIMEOUT", "ICMP", "CANARY", "SOURCE"}};
    const json peers = s.contains("peers") ? s["peers"] : json::array();
    for (const auto& p : peers) {
        const json f = p.value("failures", json::object());
        rows.push_back({p.value("name", ""), p.value("region", ""), p.value("address", ""), p.value("state", ""),
                        p.value("why", "").empty() ? "-" : p.value("why", ""), rtt_text(p), std::to_string(u(p, "active_calls")),
                        std::to_string(u(p, "attempts")), std::to_string(u(f, "4xx")), std::to_string(u(f, "5xx")),
                        std::to_string(u(f, "6xx")), std::to_string(u(f, "timeout")), std::to_string(u(f, "icmp")),
                        p.value("canary", "").empty() ? "-" : p.value("canary", ""),
                        p.value("source", "").empty() ? "static" : p.value("source", "")});
    }
    return table(rows) + render_dns_text(j);
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
    rows.push_back({"calls established now", std::to_string(u(s, "dialogs_active"))});
    rows.push_back({"calls being set up now", std::to_string(u(s, "setups_active"))});
    return "\n" + table(rows);
}

}  // namespace sbc::control
