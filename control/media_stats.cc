// Rendering of the media report (see media_stats.h). Pure functions, no I/O.
#include "control/media_stats.h"

#include <sstream>

#include "control/report_util.h"

namespace sbc::control {

using nlohmann::json;

namespace {

json flow_json(const media_flow_report& f)
{
    return {{"local", f.local}, {"far", f.far},       {"latched", f.latched},     {"packets", f.packets},
            {"bytes", f.bytes}, {"lost", f.lost},     {"jitter_ms", f.jitter_ms}, {"refused", f.refused}};
}

}  // namespace

json to_json(const media_report& r)
{
    if (!r.enabled) return {{"enabled", false}};
    json drops = json::object();
    for (const auto& [k, v] : r.drops) drops[k] = v;
    json counters = json::object();
    for (const auto& [k, v] : r.counters) counters[k] = v;
    json calls = json::array();
    for (const auto& c : r.calls) {
        json streams = json::array();
        for (const auto& s : c.streams)
            streams.push_back({{"index", s.index},
                               {"rtcp_mux", s.rtcp_mux},
                               {"rtp", {{"from_a", flow_json(s.rtp[0])}, {"from_b", flow_json(s.rtp[1])}}},
                               {"rtcp", {{"from_a", flow_json(s.rtcp[0])}, {"from_b", flow_json(s.rtcp[1])}}}});
        calls.push_back({{"call", c.call}, {"worker", c.worker}, {"age_s", c.age_s}, {"streams", streams}});
    }
    return {{"enabled", true},
            {"packets_from_a", r.packets[0]},
            {"packets_from_b", r.packets[1]},
            {"bytes_from_a", r.bytes[0]},
            {"bytes_from_b", r.bytes[1]},
            {"rtcp_packets", r.rtcp_packets},
            {"latched", r.latched},
            {"drops", drops},
            {"sessions", counters},
            {"sessions_active", r.sessions_active},
            {"flows_active", r.flows_active},
            {"ports_free", r.ports_free},
            {"ports_quarantined", r.ports_quarantined},
            {"jitter_bounds_ms", r.jitter_bounds_ms},
            {"jitter_flows", r.jitter_flows},
            {"jitter_sum_ms", r.jitter_sum_ms},
            {"calls", calls}};
}

std::string media_prometheus(const media_report& r)
{
    if (!r.enabled) return {};
    using report::prom_labels;
    report::prom_writer w;
    // A family of two samples, one per direction (a: caller side, b: callee side).
    auto by_direction = [&](const char* name, const char* help, const std::array<uint64_t, 2>& v) {
        w.family(name, "counter", help);
        w.sample(prom_labels({{"direction", "a_to_b"}}), v[0]);
        w.sample(prom_labels({{"direction", "b_to_a"}}), v[1]);
    };
    by_direction("media_packets_total", "RTP and RTCP packets relayed, by direction (a: caller side, b: callee side).",
                 r.packets);
    by_direction("media_bytes_total", "UDP payload bytes relayed, by direction.", r.bytes);
    w.single("media_rtcp_packets_total", "counter", "RTCP packets among those relayed.", r.rtcp_packets);
    w.single("media_latched_total", "counter", "Far ends learned from their first packets.", r.latched);
    w.family("media_drops_total", "counter", "Media packets dropped by the relay, by reason.");
    for (const auto& [k, v] : r.drops) w.sample(prom_labels({{"reason", k}}), v);
    for (std::size_t i = 0; i < r.counters.size(); ++i)
        w.single("media_" + r.counters[i].first + "_total", "counter", r.counter_help[i].second, r.counters[i].second);
    w.histogram("media_jitter_ms",
                "RTP interarrival jitter (RFC 3550) of each anchored flow with packets, when its call ended, in ms.",
                r.jitter_bounds_ms, r.jitter_flows, r.jitter_sum_ms);
    w.single("media_sessions_active", "gauge", "Calls whose media is anchored now.", r.sessions_active);
    w.single("media_flows_active", "gauge", "One-way RTP and RTCP flows set up now.", r.flows_active);
    w.single("media_ports_free", "gauge", "Media port pairs free for new calls.", r.ports_free);
    w.single("media_ports_quarantined", "gauge", "Media port pairs waiting out their quarantine.", r.ports_quarantined);
    return w.str();
}

std::string render_calls_media_text(const json& report)
{
    const json media = report.value("media", json::object());
    if (!media.value("enabled", false)) return "media: not anchored (no [media] in the config)\n";
    std::ostringstream o;
    o << "media: " << media.value("sessions_active", uint64_t{0}) << " call(s), relayed "
      << media.value("packets_from_a", uint64_t{0}) << " packets A->B, " << media.value("packets_from_b", uint64_t{0})
      << " B->A; ports free " << media.value("ports_free", uint64_t{0}) << " pairs\n";
    const json calls = media.value("calls", json::array());
    auto row = [&](const char* what, const json& f) {
        const std::string far = f.value("far", std::string());
        o << "    " << what << "  " << f.value("local", std::string()) << " <- " << (far.empty() ? "?" : far)
          << (f.value("latched", false) ? " (latched)" : "") << "  packets " << f.value("packets", uint64_t{0})
          << "  bytes " << f.value("bytes", uint64_t{0}) << "  lost " << f.value("lost", uint64_t{0}) << "  jitter "
          << report::fmt("%.2f", f.value("jitter_ms", 0.0)) << " ms";
        if (f.value("refused", uint64_t{0}) != 0) o << "  refused " << f.value("refused", uint64_t{0});
        o << "\n";
    };
    for (const auto& c : calls) {
        o << "call " << c.value("call", std::string()) << " (worker " << c.value("worker", 0u) << ", up "
          << static_cast<uint64_t>(c.value("age_s", 0.0)) << " s)\n";
        for (const auto& s : c.value("streams", json::array())) {
            o << "  stream " << s.value("index", 0u) << (s.value("rtcp_mux", false) ? " (rtcp-mux)" : "") << "\n";
            row("rtp  from A", s["rtp"]["from_a"]);
            row("rtp  from B", s["rtp"]["from_b"]);
            if (!s.value("rtcp_mux", false)) {
                row("rtcp from A", s["rtcp"]["from_a"]);
                row("rtcp from B", s["rtcp"]["from_b"]);
            }
        }
    }
    if (calls.empty()) o << "(no call with media)\n";
    return o.str();
}

}  // namespace sbc::control
