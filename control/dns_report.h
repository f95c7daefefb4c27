// What the control core reports about DNS SRV regions: per SRV name its state, peers known,
// TTL, refresh times and counters (queries, failed refreshes, stale answers served); rendered
// as JSON (control socket, key "dns"), Prometheus text (/metrics, sbc_dns_*) and the DNS part
// of `sbcctl peers`. Builders: control core (control/dns.cc). Renderers: pure functions
// (control core for JSON and Prometheus, sbcctl for text).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sbc::control {

struct dns_name_report {
    std::string srv;            ///< "_sip._udp.region1.example.net"
    std::string region;         ///< the [[region]] it feeds
    std::string state;          ///< "waiting" (no answer yet), "ok", "stale" (refresh failing, last good
                                ///< answer kept), "failed" (failing and nothing to serve)
    uint64_t peers = 0;         ///< peers (address:port) known now
    uint32_t ttl_s = 0;         ///< smallest TTL of the last good answer
    double age_s = -1;          ///< since the last good answer; -1: none yet
    double next_refresh_s = 0;  ///< until the next query (0: under way)
    uint64_t queries = 0;       ///< SRV and A queries sent
    uint64_t failures = 0;      ///< refreshes that failed (timeout, SERVFAIL, NXDOMAIN, no targets, ...)
    uint64_t stale_served = 0;  ///< failed refreshes after which the last good answer was kept
    std::string last_error;     ///< of the last failed refresh; "" when none yet
};

struct dns_report {
    bool enabled = false;       ///< some [[region]] has an srv name
    std::string servers;        ///< "127.0.0.1:5353" or "/etc/resolv.conf"
    std::vector<dns_name_report> names;
};

nlohmann::json to_json(const dns_report& r);
/// sbc_dns_queries_total, sbc_dns_failures_total, sbc_dns_stale_served_total, sbc_dns_peers and
/// sbc_dns_answer_ok per srv name; "" when DNS is not used.
std::string dns_prometheus(const dns_report& r);
/// The DNS part of `sbcctl peers` (from the report's "dns" JSON); "" when DNS is not used.
std::string render_dns_text(const nlohmann::json& report);

}  // namespace sbc::control
