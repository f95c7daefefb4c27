// What the control core reports about calls: the proxy counters summed over workers, active
// setups and dialogs, and every peer with its state, calls and failures; rendered as JSON (the
// control socket), Prometheus text (/metrics) and the text of `sbcctl calls` and `sbcctl peers`.
// Builders: control core. Renderers: sbcctl (pure functions over the JSON).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "control/admission_report.h"
#include "control/rule_report.h"

namespace sbc::control {

struct peer_report {
    std::string name;
    std::string region;
    std::string address;   ///< "a.b.c.d:port"
    uint32_t id = 0;
    std::string state;     ///< "up", "down", "trial", "draining", "disabled", "canary"
    std::string why;       ///< last failure ("503", "timeout", "icmp unreachable"), or ""
    unsigned consecutive_failures = 0;
    uint64_t attempts = 0;
    uint64_t active_calls = 0;
    std::array<uint64_t, 5> failures{};  ///< 4xx, 5xx, 6xx, timeout, icmp
    std::string source;    ///< "" static; "SRV-NAME TARGET" learned from DNS; "SRV-NAME (gone from DNS)"
    std::string probe = "none";          ///< "options": probed (control/probe_runner.h)
    double last_probe_rtt_ms = -1;       ///< RTT of the last answered probe; -1: none
    uint64_t probes_sent = 0;
    uint64_t probes_failed = 0;          ///< timed out or answered with a code not accepted
    uint64_t probes_late = 0;            ///< answered after their timeout, before the next probe (not failed)
    bool suspect = false;                ///< silent or unreachable once, nothing heard since (control/passive_health.h)
    uint64_t suspect_marks = 0;          ///< times it became suspect
    uint64_t state_changes = 0;          ///< up/down flips by health (probes, passive, trials)
    uint32_t no_response_ms = 0;         ///< no-answer timer in force (control/peer_timer.h)
    bool no_response_learned = false;    ///< learned from its response times, else [retry] no_response_ms
    uint64_t response_samples = 0;       ///< response times taken (first responses to INVITEs, probe replies)
    unsigned oc_reduction = 0;           ///< RFC 7339: percent of new calls it asked us to send elsewhere (0: none)
    uint64_t oc_left_ms = 0;             ///< how long that reduction still holds
    std::string canary;    ///< "from:^\\+15550100" while a canary (only matching calls), else ""
    uint64_t max_calls = 0;   ///< its call limit (admission); 0: none
    uint64_t full_skips = 0;  ///< times selection passed it over at its limit
};

struct named_count {
    std::string name;
    uint64_t count = 0;
};

struct sip_report {
    bool enabled = false;  ///< the config has trunks and routes
    std::vector<std::pair<std::string, uint64_t>> counters;  ///< proxy counters by name, summed
    std::vector<std::pair<std::string, std::string>> help;   ///< counter name -> meaning
    uint64_t setups_active = 0;
    uint64_t dialogs_active = 0;
    std::vector<peer_report> peers;
    std::vector<named_count> invites_by_trunk;  ///< new calls offered on each trunk
    std::vector<named_count> invites_by_route;  ///< new calls that took each route ("(none)": 404)
    std::vector<named_count> fallbacks_by_route;  ///< calls moved to the fallback_group, routes that have one
    /// Requests that matched a scanner signature, by [set * 3 + field] (sip::proxy_stats).
    std::array<uint64_t, 6> scanner_matches{};
    uint64_t probe_send_failures = 0;  ///< OPTIONS probes not sent (no MAC for the next hop yet, no buffer, ring full)
    uint64_t probe_late_replies = 0;   ///< probe replies too late to count: after the next probe was sent, or twice
    admission_report admission;        ///< call admission: node and trunk counts, limits, refusals
    std::vector<rule_report> rules;    ///< header and number rules: hits and failures per rule (rule_report.h)
};

nlohmann::json to_json(const sip_report& r);
/// Appends the sip metrics (sbc_sip_*, sbc_calls_active, sbc_peer_*) in Prometheus text.
std::string sip_prometheus(const sip_report& r);
/// `sbcctl calls`: active calls and setups, by peer and state.
std::string render_calls_text(const nlohmann::json& report);
/// `sbcctl peers`: every peer with region, address, state, why, no-answer timer, active calls,
/// failures.
std::string render_peers_text(const nlohmann::json& report);
/// The SIP part of `sbcctl stats`.
std::string render_sip_stats_text(const nlohmann::json& report);

}  // namespace sbc::control
