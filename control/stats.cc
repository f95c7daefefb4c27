// Renders the status report: JSON (control socket), Prometheus text (/metrics) and the text
// views of sbcctl. Control core or HTTP thread for to_json/to_prometheus; sbcctl for render_*.
// All pure functions: no I/O, no shared state.
#include "control/stats.h"

#include "control/deny_text.h"

#include "control/report_util.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>
#include <sstream>
#include <string_view>

namespace sbc::control {

using nlohmann::json;
namespace dp = sbc::dataplane;
using report::fmt;
using report::prom_labels;
using report::prom_writer;
using report::text_table;

namespace {

dp::drop_reason reason_at(std::size_t i) { return static_cast<dp::drop_reason>(i); }
dp::stage stage_at(std::size_t i) { return static_cast<dp::stage>(i); }

// 1234567 -> "1.23M"; counts of packets and rates read better with SI prefixes.
std::string si(double v)
{
    const double a = std::fabs(v);
    if (a < 1000) return fmt(std::floor(v) == v ? "%.0f" : "%.1f", v);
    if (a < 1e6) return fmt("%.2fk", v / 1e3);
    if (a < 1e9) return fmt("%.2fM", v / 1e6);
    return fmt("%.2fG", v / 1e9);
}

std::string bytes(uint64_t b)
{
    const double v = static_cast<double>(b);
    if (b < 1024) return std::to_string(b) + " B";
    if (v < 1024.0 * 1024) return fmt("%.1f KiB", v / 1024);
    if (v < 1024.0 * 1024 * 1024) return fmt("%.1f MiB", v / (1024.0 * 1024));
    return fmt("%.2f GiB", v / (1024.0 * 1024 * 1024));
}

std::string str(const json& j, const char* key, const char* fallback = "")
{
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

uint64_t u64(const json& j, const char* key)
{
    auto it = j.find(key);
    return it != j.end() && it->is_number_unsigned() ? it->get<uint64_t>()
           : it != j.end() && it->is_number_integer() ? static_cast<uint64_t>(std::max<int64_t>(0, it->get<int64_t>()))
                                                      : 0;
}

double num(const json& j, const char* key)
{
    auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

const json& arr(const json& j, const char* key)
{
    static const json empty = json::array();
    auto it = j.find(key);
    return it != j.end() && it->is_array() ? *it : empty;
}

}  // namespace

std::string format_duration(double seconds)
{
    auto s = static_cast<uint64_t>(std::max(0.0, seconds));
    char buf[64];
    if (s >= 86400)
        std::snprintf(buf, sizeof buf, "%" PRIu64 "d %02u:%02u:%02u", s / 86400, unsigned(s / 3600 % 24),
                      unsigned(s / 60 % 60), unsigned(s % 60));
    else
        std::snprintf(buf, sizeof buf, "%02u:%02u:%02u", unsigned(s / 3600), unsigned(s / 60 % 60), unsigned(s % 60));
    return buf;
}

json to_json(const dp::counters_view& c)
{
    json stages = json::object();
    for (std::size_t i = 0; i < dp::stage_count; ++i) stages[std::string(dp::stage_name(stage_at(i)))] = c.stage_packets[i];
    json drops = json::object();
    for (std::size_t i = 0; i < dp::drop_reason_count; ++i)
        drops[std::string(dp::drop_reason_name(reason_at(i)))] = c.drops[i];
    return json{{"rx_packets", c.rx_packets},   {"rx_bytes", c.rx_bytes},
                {"tx_packets", c.tx_packets},   {"tx_bytes", c.tx_bytes},
                {"stages", stages},             {"drops", drops},
                {"drops_total", c.drops_total()}, {"events_sent", c.events_sent},
                {"neighbour_held", c.neighbour_held}, {"neighbour_released", c.neighbour_released},
                {"sip_fragments_sent", c.sip_fragments_sent},
                {"icmp6_errors_sent", c.icmp6_errors_sent}, {"icmp6_errors_suppressed", c.icmp6_errors_suppressed},
                {"sip_handed_off", c.sip_handed_off}, {"sip_handed_in", c.sip_handed_in},
                {"cdr_records", c.cdr_records}, {"cdr_dropped", c.cdr_dropped},
                {"loops", c.loops},             {"busy_loops", c.busy_loops},
                {"busy_cycles", c.busy_cycles}, {"total_cycles", c.total_cycles},
                {"busy_percent", c.busy_percent()}};
}

dp::counters_view counters_from_json(const json& j)
{
    dp::counters_view c;
    if (!j.is_object()) return c;
    c.rx_packets = u64(j, "rx_packets");
    c.rx_bytes = u64(j, "rx_bytes");
    c.tx_packets = u64(j, "tx_packets");
    c.tx_bytes = u64(j, "tx_bytes");
    if (auto it = j.find("stages"); it != j.end() && it->is_object())
        for (std::size_t i = 0; i < dp::stage_count; ++i) c.stage_packets[i] = u64(*it, std::string(dp::stage_name(stage_at(i))).c_str());
    if (auto it = j.find("drops"); it != j.end() && it->is_object())
        for (std::size_t i = 0; i < dp::drop_reason_count; ++i)
            c.drops[i] = u64(*it, std::string(dp::drop_reason_name(reason_at(i))).c_str());
    c.events_sent = u64(j, "events_sent");
    c.neighbour_held = u64(j, "neighbour_held");
    c.neighbour_released = u64(j, "neighbour_released");
    c.sip_fragments_sent = u64(j, "sip_fragments_sent");
    c.icmp6_errors_sent = u64(j, "icmp6_errors_sent");
    c.icmp6_errors_suppressed = u64(j, "icmp6_errors_suppressed");
    c.sip_handed_off = u64(j, "sip_handed_off");
    c.sip_handed_in = u64(j, "sip_handed_in");
    c.cdr_records = u64(j, "cdr_records");
    c.cdr_dropped = u64(j, "cdr_dropped");
    c.loops = u64(j, "loops");
    c.busy_loops = u64(j, "busy_loops");
    c.busy_cycles = u64(j, "busy_cycles");
    c.total_cycles = u64(j, "total_cycles");
    return c;
}

json to_json(const stats_report& r)
{
    json ifs = json::array();
    for (const auto& i : r.interfaces)
        ifs.push_back({{"name", i.name},       {"device", i.device},   {"address", i.address},
                       {"mac", i.mac},         {"port_id", i.port_id}, {"vlan", i.vlan},
                       {"link_up", i.link_up}, {"gateway", i.gateway}, {"gateway_mac", i.gateway_mac},
                       {"address6", i.address6}, {"link_local6", i.link_local6}, {"gateway6", i.gateway6},
                       {"gateway6_mac", i.gateway6_mac}});
    json ws = json::array();
    for (const auto& w : r.workers)
        ws.push_back({{"id", w.id}, {"lcore", w.lcore}, {"max_loop_gap_us", w.max_loop_gap_us}, {"counters", to_json(w.counters)},
                      {"overload", {{"reduction_percent", w.overload_reduction},
                                    {"busy_percent", w.recent_busy_percent},
                                    {"ring_percent", w.ring_percent}}},
                      {"calls", {{"established", w.dialogs_active}, {"setting_up", w.setups_active}}}});
    return json{{"node", r.node_name},
                {"state", r.state},
                {"version", r.version},
                {"uptime_s", r.uptime_s},
                {"snapshot_generation", r.snapshot_generation},
                {"tsc_hz", r.tsc_hz},
                {"neighbours", r.neighbours},
                {"icmp_unreachable", r.icmp_unreachable},
                {"packet_too_big", r.packet_too_big},
                {"path_mtu_entries", r.path_mtu_entries},
                {"interfaces", ifs},
                {"workers", ws},
                {"total", to_json(r.total)},
                {"sip", to_json(r.sip)},
                {"dns", to_json(r.dns)},
                {"media", to_json(r.media)},
                {"cdr", to_json(r.cdr)}};
}

std::string to_prometheus(const stats_report& r)
{
    prom_writer w;
    w.single("up", "gauge", "1 while sbcd answers.", uint64_t{1});
    w.family("info", "gauge", "Node name and version of this sbcd; always 1.");
    w.sample(prom_labels({{"node", r.node_name}, {"version", r.version}, {"state", r.state}}), uint64_t{1});
    w.single("draining", "gauge", "1 while the node is draining (no new calls), else 0.",
             uint64_t{r.state == "draining"});
    w.single("uptime_seconds", "gauge", "Seconds since sbcd started.", r.uptime_s);
    w.single("snapshot_generation", "gauge", "Generation of the configuration snapshot the workers use.",
             r.snapshot_generation);
    w.single("tsc_hz", "gauge", "TSC frequency used to turn cycle counts into time.", r.tsc_hz);
    w.single("neighbours", "gauge", "Entries in the neighbour table (ARP and IPv6 Neighbor Discovery).", r.neighbours);
    w.single("icmp_unreachable_total", "counter",
             "ICMP destination-unreachable received about datagrams we sent (peers whose port or host is gone).",
             r.icmp_unreachable);
    w.single("ipv6_packet_too_big_total", "counter",
             "ICMPv6 Packet Too Big received about datagrams we sent; each records the path MTU toward their destination.",
             r.packet_too_big);
    w.single("ipv6_path_mtu_entries", "gauge",
             "IPv6 destinations whose path MTU a Packet Too Big lowered (kept 10 minutes, RFC 8201).", r.path_mtu_entries);

    w.family("interface_link_up", "gauge", "1 when the interface's link is up.");
    for (const auto& i : r.interfaces) w.sample(prom_labels({{"interface", i.name}}), uint64_t{i.link_up});
    w.family("interface_gateway_resolved", "gauge", "1 when the interface's gateway MAC address is known; 0 when unresolved or no gateway.");
    for (const auto& i : r.interfaces) w.sample(prom_labels({{"interface", i.name}}), uint64_t{!i.gateway_mac.empty()});
    w.family("interface_gateway6_resolved", "gauge",
             "1 when the interface's IPv6 gateway MAC address is known (Neighbor Discovery); 0 when unresolved or no IPv6 gateway.");
    for (const auto& i : r.interfaces) w.sample(prom_labels({{"interface", i.name}}), uint64_t{!i.gateway6_mac.empty()});

    struct per_worker {
        const char* name;
        const char* help;
        uint64_t dp::counters_view::*field;
    };
    static constexpr per_worker counters[] = {
        {"rx_packets_total", "Packets received by the worker.", &dp::counters_view::rx_packets},
        {"rx_bytes_total", "Bytes received by the worker.", &dp::counters_view::rx_bytes},
        {"tx_packets_total", "Packets sent by the worker.", &dp::counters_view::tx_packets},
        {"tx_bytes_total", "Bytes sent by the worker.", &dp::counters_view::tx_bytes},
        {"events_sent_total", "Events the worker pushed to the control core.", &dp::counters_view::events_sent},
        {"neighbour_held_total", "Packets held for a next hop while ARP resolved it.", &dp::counters_view::neighbour_held},
        {"neighbour_released_total", "Held packets sent once their next hop resolved.", &dp::counters_view::neighbour_released},
        {"sip_fragments_sent_total", "IPv4 fragments of SIP datagrams larger than the MTU.", &dp::counters_view::sip_fragments_sent},
        {"icmp6_errors_sent_total", "ICMPv6 errors the worker sent about what it received (port unreachable, parameter problem).", &dp::counters_view::icmp6_errors_sent},
        {"icmp6_errors_suppressed_total", "ICMPv6 errors the worker did not send: over [ipv6] icmp_error_rate (RFC 4443 2.4).", &dp::counters_view::icmp6_errors_suppressed},
        {"sip_handed_off_total", "SIP messages the worker handed to the worker that owns their call.", &dp::counters_view::sip_handed_off},
        {"sip_handed_in_total", "SIP messages the worker took from other workers' handoff rings.", &dp::counters_view::sip_handed_in},
        {"cdr_records_total", "Call records the worker handed to the control core.", &dp::counters_view::cdr_records},
        {"cdr_dropped_total", "Call records lost because the ring to the control core was full (the writer fell behind).", &dp::counters_view::cdr_dropped},
        {"loops_total", "Iterations of the worker loop.", &dp::counters_view::loops},
        {"busy_loops_total", "Iterations of the worker loop that received or sent packets.", &dp::counters_view::busy_loops},
        {"busy_cycles_total", "TSC cycles spent in busy iterations.", &dp::counters_view::busy_cycles},
        {"cycles_total", "TSC cycles since the worker loop started.", &dp::counters_view::total_cycles},
    };
    for (const auto& c : counters) {
        w.family(c.name, "counter", c.help);
        for (const auto& wk : r.workers) w.sample(prom_labels({{"worker", std::to_string(wk.id)}}), wk.counters.*c.field);
    }

    w.family("stage_packets_total", "counter", "Packets that entered a pipeline stage.");
    for (const auto& wk : r.workers)
        for (std::size_t i = 0; i < dp::stage_count; ++i)
            w.sample(prom_labels({{"worker", std::to_string(wk.id)}, {"stage", std::string(dp::stage_name(stage_at(i)))}}),
                     wk.counters.stage_packets[i]);

    // One family with a reason label; Prometheus allows a single HELP per family, so each
    // reason's explanation goes in a plain comment line (ignored by parsers, read by people).
    w.family("drops_total", "counter", "Packets dropped, by reason (explained in the comments below).");
    for (std::size_t i = 0; i < dp::drop_reason_count; ++i)
        w.comment("reason=\"" + std::string(dp::drop_reason_name(reason_at(i))) +
                  "\": " + std::string(dp::drop_reason_help(reason_at(i))));
    for (const auto& wk : r.workers)
        for (std::size_t i = 0; i < dp::drop_reason_count; ++i)
            w.sample(prom_labels({{"worker", std::to_string(wk.id)}, {"reason", std::string(dp::drop_reason_name(reason_at(i)))}}),
                     wk.counters.drops[i]);

    w.family("worker_busy_percent", "gauge",
             "Share of the worker's cycles spent in iterations with work since it started, 0..100; use rate() of busy_cycles_total/cycles_total for a recent value.");
    for (const auto& wk : r.workers) w.sample(prom_labels({{"worker", std::to_string(wk.id)}}), wk.counters.busy_percent());
    w.family("worker_max_loop_gap_seconds", "gauge",
             "Longest time between the starts of two loop iterations of the worker in the last full second: how long it was away from its queues (preempted, or stalled).");
    for (const auto& wk : r.workers) w.sample(prom_labels({{"worker", std::to_string(wk.id)}}), wk.max_loop_gap_us / 1e6);
    // [overload] (dataplane/overload.h); the requests shed are sbc_sip_shed_overload_total.
    w.family("worker_overloaded", "gauge",
             "1 while the worker is overloaded ([overload] busy_percent or ring_percent passed) and refuses a share of new calls with 503, else 0.");
    for (const auto& wk : r.workers) w.sample(prom_labels({{"worker", std::to_string(wk.id)}}), uint64_t{wk.overload_reduction != 0});
    w.family("worker_overload_reduction_percent", "gauge",
             "Percent of new INVITEs and other out-of-dialog requests the worker refuses now (also its RFC 7339 oc value); 0: not overloaded.");
    for (const auto& wk : r.workers) w.sample(prom_labels({{"worker", std::to_string(wk.id)}}), uint64_t{wk.overload_reduction});
    w.family("worker_recent_busy_percent", "gauge", "Share of the worker's time on SIP work (after flood screening) over the last [overload] window_ms, 0..100: what [overload] busy_percent is compared with.");
    for (const auto& wk : r.workers) w.sample(prom_labels({{"worker", std::to_string(wk.id)}}), wk.recent_busy_percent);
    w.family("worker_calls_active", "gauge",
             "Established calls (dialogs) the worker owns; their sum is sbc_calls_active. How evenly RSS spreads the calls across workers.");
    for (const auto& wk : r.workers) w.sample(prom_labels({{"worker", std::to_string(wk.id)}}), wk.dialogs_active);
    w.family("worker_call_setups_active", "gauge", "Calls being set up that the worker owns; their sum is sbc_call_setups_active.");
    for (const auto& wk : r.workers) w.sample(prom_labels({{"worker", std::to_string(wk.id)}}), wk.setups_active);
    w.family("worker_ring_fill_percent", "gauge",
             "Fill of the fullest ring into the worker (handoff from other workers, stream thread, events to the control core), 0..100.");
    for (const auto& wk : r.workers) w.sample(prom_labels({{"worker", std::to_string(wk.id)}}), uint64_t{wk.ring_percent});
    return w.str() + sip_prometheus(r.sip) + dns_prometheus(r.dns) + media_prometheus(r.media) +
           stream_prometheus(r.streams) + flood_prometheus(r.flood) + cdr_prometheus(r.cdr);
}

std::string stream_prometheus(const stream_metrics& s)
{
    if (!s.running) return {};
    // The stream thread's own help texts are phrases ("inbound connections accepted"); a HELP
    // line reads as the others do, as a sentence.
    auto sentence = [](std::string h) {
        if (!h.empty() && h[0] >= 'a' && h[0] <= 'z') h[0] = static_cast<char>(h[0] - 'a' + 'A');
        return h + ".";
    };
    auto value_of = [&](std::string_view name) -> uint64_t {
        for (const auto& c : s.counters)
            if (c.name == name) return c.value;
        return 0;
    };
    prom_writer w;
    static constexpr const char* states[] = {"connecting", "handshaking", "established"};
    w.family("stream_connections", "gauge", "SIP connections over TCP and TLS open now, by state.");
    for (std::size_t i = 0; i < s.open_by_state.size(); ++i) w.sample(prom_labels({{"state", states[i]}}), s.open_by_state[i]);

    // One family per reason-labelled counter, as drops_total: the reasons explained in comments.
    w.family("stream_closed_total", "counter", "TCP and TLS connections ended, by reason (explained in the comments below).");
    for (const auto& c : s.closed) w.comment("reason=\"" + c.name + "\": " + c.help);
    for (const auto& c : s.closed) w.sample(prom_labels({{"reason", c.name}}), c.value);
    w.family("stream_handshakes_total", "counter",
             "TLS handshakes completed (result=\"ok\") and failed (result=\"failed\", by reason as for sbc_stream_closed_total).");
    w.sample(prom_labels({{"result", "ok"}}), value_of("handshakes_ok"));
    for (const auto& c : s.handshakes_failed) w.sample(prom_labels({{"result", "failed"}, {"reason", c.name}}), c.value);
    w.family("stream_bytes_total", "counter",
             "Bytes received (in, after TLS) and sent (out, before TLS) on TCP and TLS connections.");
    w.sample(prom_labels({{"direction", "in"}}), value_of("bytes_in"));
    w.sample(prom_labels({{"direction", "out"}}), value_of("bytes_out"));
    w.family("stream_messages_total", "counter", "SIP messages received (in) and sent (out) on TCP and TLS connections.");
    w.sample(prom_labels({{"direction", "in"}}), value_of("msgs_in"));
    w.sample(prom_labels({{"direction", "out"}}), value_of("msgs_out"));
    static constexpr std::string_view labelled[] = {"handshakes_ok", "bytes_in", "bytes_out", "msgs_in", "msgs_out"};
    for (const auto& c : s.counters)
        if (std::find(std::begin(labelled), std::end(labelled), c.name) == std::end(labelled))
            w.single("stream_" + c.name + "_total", "counter", sentence(c.help), c.value);
    for (const auto& c : s.pump) w.single("exception_port_" + c.name + "_total", "counter", sentence(c.help), c.value);

    if (!s.certificates.empty()) {
        w.family("tls_certificate_expiry_seconds", "gauge",
                 "When each configured TLS certificate expires (its notAfter), as a Unix time; alert on it minus time().");
        for (const auto& c : s.certificates) w.sample(prom_labels({{"owner", c.owner}, {"file", c.file}}), c.not_after);
    }
    return w.str();
}

std::string render_conns_text(const json& j)
{
    std::string out;
    if (const std::string ns = str(j, "namespace"); !ns.empty()) out += "namespace " + ns + "\n";
    if (const std::string note = str(j, "note"); !note.empty()) return out + note + "\n";
    auto dash = [](std::string v) { return v.empty() ? std::string("-") : v; };

    const json& conns = arr(j, "conns");
    out += "connections (" + std::to_string(conns.size()) + ")\n";
    if (conns.empty()) {
        out += "  none\n";
    } else {
        text_table ct({"ID", "DIR", "PROTO", "STATE", "LOCAL", "REMOTE", "OWNER", "TLS", "CIPHER", "SUBJECT", "AGE",
                       "MSGS_IN", "MSGS_OUT", "BYTES_IN", "BYTES_OUT"});
        for (const auto& c : conns)
            ct.add({std::to_string(u64(c, "id")), str(c, "direction"), str(c, "transport"), str(c, "state"),
                    str(c, "local"), str(c, "remote"), dash(str(c, "owner")), dash(str(c, "tls_version")),
                    dash(str(c, "cipher")), dash(str(c, "peer_subject")), format_duration(num(c, "age_s")),
                    std::to_string(u64(c, "msgs_in")), std::to_string(u64(c, "msgs_out")), bytes(u64(c, "bytes_in")),
                    bytes(u64(c, "bytes_out"))});
        out += ct.render();
    }

    const json& peers = arr(j, "peers");
    if (!peers.empty()) {
        out += "\npeers over TCP/TLS (" + std::to_string(peers.size()) + ")\n";
        text_table pt({"PEER", "ESTABLISHED", "LAST ERROR"});
        for (const auto& p : peers) pt.add({str(p, "name"), std::to_string(u64(p, "established")), dash(str(p, "last_error"))});
        out += pt.render();
    }
    const json& problems = arr(j, "problems");
    if (!problems.empty()) {
        out += "\nproblems\n";
        for (const auto& p : problems) out += "  " + (p.is_string() ? p.get<std::string>() : p.dump()) + "\n";
    }
    return out;
}

std::string render_status_text(const json& j)
{
    std::string out = "node " + str(j, "node", "?") + "   state " + str(j, "state", "?") + "   version " +
                      str(j, "version", "?") + "   uptime " + format_duration(num(j, "uptime_s")) + "\n";
    out += "snapshot generation " + std::to_string(u64(j, "snapshot_generation")) + ", " +
           std::to_string(u64(j, "neighbours")) + " neighbours\n\n";

    const json& ifs = arr(j, "interfaces");
    out += "interfaces (" + std::to_string(ifs.size()) + ")\n";
    text_table it({"NAME", "ADDRESS", "MAC", "LINK", "VLAN", "PORT", "DEVICE", "GATEWAY"});
    for (const auto& i : ifs) {
        const std::string gw = str(i, "gateway");
        const std::string gw_mac = str(i, "gateway_mac");
        const std::string gateway = gw.empty() ? "none" : gw + (gw_mac.empty() ? " unresolved" : " at " + gw_mac);
        const uint64_t vlan = u64(i, "vlan");
        it.add({str(i, "name"), str(i, "address"), str(i, "mac"),
                i.value("link_up", false) ? "up" : "DOWN", vlan ? std::to_string(vlan) : "-",
                std::to_string(u64(i, "port_id")), str(i, "device"), gateway});
    }
    out += it.render();
    // IPv6 gets its own table, shown when an interface runs it.
    text_table it6({"NAME", "ADDRESS6", "LINK-LOCAL", "GATEWAY6"});
    for (const auto& i : ifs) {
        if (str(i, "address6").empty()) continue;
        const std::string gw = str(i, "gateway6");
        const std::string gw_mac = str(i, "gateway6_mac");
        it6.add({str(i, "name"), str(i, "address6"), str(i, "link_local6"),
                 gw.empty() ? "none" : gw + (gw_mac.empty() ? " unresolved" : " at " + gw_mac)});
    }
    if (it6.size() != 0) out += "\ninterfaces over IPv6\n" + it6.render();

    const json& ws = arr(j, "workers");
    out += "\nworkers (" + std::to_string(ws.size()) + ")\n";
    text_table wt({"ID", "LCORE", "BUSY%", "RX PKTS", "TX PKTS", "DROPS", "MAX GAP"});
    for (const auto& w : ws) {
        const auto c = counters_from_json(w.value("counters", json::object()));
        wt.add({std::to_string(u64(w, "id")), std::to_string(u64(w, "lcore")), fmt("%.1f", c.busy_percent()),
                si(double(c.rx_packets)), si(double(c.tx_packets)), si(double(c.drops_total())),
                fmt("%.0f us", w.value("max_loop_gap_us", 0.0))});
    }
    out += wt.render();
    return out;
}

std::string render_stats_text(const json& j)
{
    const auto t = counters_from_json(j.value("total", json::object()));
    std::string out = "node " + str(j, "node", "?") + "   uptime " + format_duration(num(j, "uptime_s")) + "\n\n";
    out += "totals\n";
    text_table tt({"", "PACKETS", "BYTES"});
    tt.add({"received", std::to_string(t.rx_packets), bytes(t.rx_bytes)});
    tt.add({"sent", std::to_string(t.tx_packets), bytes(t.tx_bytes)});
    tt.add({"dropped", std::to_string(t.drops_total()), ""});
    tt.add({"events to control", std::to_string(t.events_sent), ""});
    tt.add({"held for ARP", std::to_string(t.neighbour_held), ""});
    tt.add({"released after ARP", std::to_string(t.neighbour_released), ""});
    tt.add({"SIP fragments sent", std::to_string(t.sip_fragments_sent), ""});
    tt.add({"ICMPv6 errors sent", std::to_string(t.icmp6_errors_sent), ""});
    tt.add({"ICMPv6 errors over the rate", std::to_string(t.icmp6_errors_suppressed), ""});
    tt.add({"SIP handed to owner", std::to_string(t.sip_handed_off), ""});
    tt.add({"SIP taken from others", std::to_string(t.sip_handed_in), ""});
    tt.add({"call records", std::to_string(t.cdr_records), ""});
    tt.add({"call records lost", std::to_string(t.cdr_dropped), ""});
    out += tt.render();

    out += "\nstages (packets in)\n";
    text_table st({"STAGE", "PACKETS"});
    for (std::size_t i = 0; i < dp::stage_count; ++i)
        st.add({std::string(dp::stage_name(stage_at(i))), std::to_string(t.stage_packets[i])});
    out += st.render();

    // Non-zero reasons first, largest first, so the cause of a loss is on top; the zero ones
    // follow so the operator sees what is counted at all.
    std::vector<std::size_t> order(dp::drop_reason_count);
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return t.drops[a] > t.drops[b]; });
    out += "\ndrops by reason\n";
    text_table dt({"REASON", "PACKETS", "MEANING"});
    for (auto i : order)
        dt.add({std::string(dp::drop_reason_name(reason_at(i))), std::to_string(t.drops[i]),
                std::string(dp::drop_reason_help(reason_at(i)))});
    out += dt.render();

    out += "\nper worker\n";
    text_table wt({"ID", "LCORE", "BUSY%", "CALLS", "SETUPS", "RX PKTS", "RX BYTES", "TX PKTS", "TX BYTES", "DROPS", "EVENTS", "LOOPS"});
    for (const auto& w : arr(j, "workers")) {
        const auto c = counters_from_json(w.value("counters", json::object()));
        // "calls": absent from an older daemon's report (shown as 0).
        const json calls = w.value("calls", json::object());
        wt.add({std::to_string(u64(w, "id")), std::to_string(u64(w, "lcore")), fmt("%.1f", c.busy_percent()),
                std::to_string(u64(calls, "established")), std::to_string(u64(calls, "setting_up")),
                std::to_string(c.rx_packets), bytes(c.rx_bytes), std::to_string(c.tx_packets), bytes(c.tx_bytes),
                std::to_string(c.drops_total()), std::to_string(c.events_sent), std::to_string(c.loops)});
    }
    out += wt.render();
    // [overload] (dataplane/overload.h): absent from an older daemon's report.
    out += "\noverload per worker\n";
    text_table ot({"ID", "BUSY% (WINDOW)", "RING%", "REFUSING"});
    for (const auto& w : arr(j, "workers")) {
        const json o = w.value("overload", json::object());
        const uint64_t reduction = u64(o, "reduction_percent");
        ot.add({std::to_string(u64(w, "id")), fmt("%.1f", num(o, "busy_percent")), std::to_string(u64(o, "ring_percent")),
                reduction == 0 ? "no" : std::to_string(reduction) + "% of new requests (503)"});
    }
    out += ot.render();
    out += render_sip_stats_text(j);
    return out;
}

std::string render_top_text(const json& prev, const json& cur, double seconds)
{
    if (seconds <= 0) seconds = 1;
    std::string out = "node " + str(cur, "node", "?") + "   state " + str(cur, "state", "?") + "   uptime " +
                      format_duration(num(cur, "uptime_s")) + "   interval " + fmt("%.1f", seconds) + " s\n\n";

    std::map<uint64_t, dp::counters_view> before;
    for (const auto& w : arr(prev, "workers")) before[u64(w, "id")] = counters_from_json(w.value("counters", json::object()));

    text_table wt({"WORKER", "LCORE", "BUSY%", "RX PPS", "TX PPS", "RX BIT/S", "TX BIT/S", "DROPS/S"});
    dp::counters_view sum;
    for (const auto& w : arr(cur, "workers")) {
        const auto now = counters_from_json(w.value("counters", json::object()));
        // A worker absent before (first sample, daemon restarted) is shown from zero.
        const auto d = dp::difference(before[u64(w, "id")], now);
        dp::accumulate(sum, d);
        wt.add({std::to_string(u64(w, "id")), std::to_string(u64(w, "lcore")), fmt("%.1f", d.busy_percent()),
                si(double(d.rx_packets) / seconds), si(double(d.tx_packets) / seconds),
                si(8.0 * double(d.rx_bytes) / seconds), si(8.0 * double(d.tx_bytes) / seconds),
                si(double(d.drops_total()) / seconds)});
    }
    wt.add({"all", "", fmt("%.1f", sum.busy_percent()), si(double(sum.rx_packets) / seconds),
            si(double(sum.tx_packets) / seconds), si(8.0 * double(sum.rx_bytes) / seconds),
            si(8.0 * double(sum.tx_bytes) / seconds), si(double(sum.drops_total()) / seconds)});
    out += wt.render();

    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < dp::drop_reason_count; ++i)
        if (sum.drops[i]) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return sum.drops[a] > sum.drops[b]; });
    out += "\ndrops/s by reason\n";
    if (order.empty()) {
        out += "  none\n";
    } else {
        text_table dt({"REASON", "DROPS/S", "MEANING"});
        for (auto i : order)
            dt.add({std::string(dp::drop_reason_name(reason_at(i))), si(double(sum.drops[i]) / seconds),
                    std::string(dp::drop_reason_help(reason_at(i)))});
        out += dt.render();
    }
    return out;
}

}  // namespace sbc::control
