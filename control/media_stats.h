// What the control core reports about anchored media: RTP/RTCP relayed per direction, relay
// drops by reason, sessions, flows and ports, and each call's streams (ports, far ends,
// packets, bytes, loss, jitter per direction). Rendered as JSON (control socket: "media" in
// the stats report), Prometheus text (/metrics, sbc_media_*) and the text of
// `sbcctl calls --media`. Pure functions over a copy: control core, HTTP thread, sbcctl.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace sbc::control {

struct media_flow_report {
    std::string local;     ///< "198.18.0.1:20000": our port the flow arrives on
    std::string far;       ///< "198.18.0.10:4000": the far end (latched or from SDP), "" unknown
    bool latched = false;
    uint64_t packets = 0, bytes = 0;
    uint32_t lost = 0;
    double jitter_ms = 0;
    uint32_t refused = 0;  ///< refused by latching
};

struct media_stream_report {
    unsigned index = 0;
    bool rtcp_mux = false;
    std::array<media_flow_report, 2> rtp;   ///< [0] from leg A (caller), [1] from leg B (callee)
    std::array<media_flow_report, 2> rtcp;
};

struct media_call_report {
    std::string call;      ///< Call-ID hash, hex
    unsigned worker = 0;
    double age_s = 0;
    std::vector<media_stream_report> streams;
};

struct media_report {
    bool enabled = false;
    std::array<uint64_t, 2> packets{};   ///< relayed from leg A, from leg B
    std::array<uint64_t, 2> bytes{};
    uint64_t rtcp_packets = 0;
    uint64_t latched = 0;
    std::vector<std::pair<std::string, uint64_t>> drops;     ///< relay drops by reason
    std::vector<std::pair<std::string, std::string>> drop_help;
    std::vector<std::pair<std::string, uint64_t>> counters;  ///< media session counters
    std::vector<std::pair<std::string, std::string>> counter_help;
    uint64_t sessions_active = 0;
    uint64_t flows_active = 0;           ///< one-way flows (4 per anchored stream: RTP and RTCP each way)
    uint64_t ports_free = 0;             ///< port pairs free
    uint64_t ports_quarantined = 0;
    /// Anchored RTP flows of ended calls by their jitter at the end: upper bounds in ms, and
    /// the count in each bucket (one more than bounds: above them all); and their sum, in ms.
    std::vector<double> jitter_bounds_ms;
    std::vector<uint64_t> jitter_flows;
    double jitter_sum_ms = 0;
    std::vector<media_call_report> calls;  ///< only when asked (sbcctl calls --media)
};

nlohmann::json to_json(const media_report& r);
/// sbc_media_* metrics; empty without [media].
std::string media_prometheus(const media_report& r);
/// `sbcctl calls --media`: per call, per stream, both directions.
std::string render_calls_media_text(const nlohmann::json& report);

}  // namespace sbc::control
