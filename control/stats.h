// The status report the control core builds from the workers' counters, and everything that
// renders it: JSON for the control socket, Prometheus text for /metrics, and the text views
// of `sbcctl status`, `sbcctl stats` and `sbcctl top`.
// to_json/to_prometheus: control core or HTTP thread (pure functions over a copy).
// render_*: sbcctl (pure functions over the JSON the daemon sent).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "control/cdr_format.h"
#include "control/deny_list.h"
#include "control/dns_report.h"
#include "control/media_stats.h"
#include "control/sip_stats.h"
#include "dataplane/counters.h"

namespace sbc::control {

struct interface_status {
    std::string name;
    std::string device;
    std::string address;  ///< "a.b.c.d/n"
    std::string mac;      ///< "aa:bb:cc:dd:ee:ff"
    uint16_t port_id = 0;
    uint16_t vlan = 0;
    bool link_up = false;
    std::string gateway;      ///< "" when the interface has none
    std::string gateway_mac;  ///< "" while unresolved
    std::string address6;     ///< "2001:db8::1/64"; "" when the interface does not run IPv6
    std::string link_local6;  ///< "fe80::..." derived from the MAC; "" without IPv6
    std::string gateway6;     ///< "" when the interface has no IPv6 gateway
    std::string gateway6_mac; ///< "" while unresolved (Neighbor Discovery)
};

struct worker_status {
    unsigned id = 0;
    unsigned lcore = 0;
    dataplane::counters_view counters;
    double max_loop_gap_us = 0;  ///< longest time between two loop iterations in the last full second
    // [overload] (dataplane/overload.h): what the worker last measured.
    unsigned overload_reduction = 0;  ///< percent of new requests it refuses with 503; 0: not overloaded
    double recent_busy_percent = 0;   ///< busy share over [overload] window_ms
    unsigned ring_percent = 0;        ///< fill of its fullest ring (handoff in, stream in, events)
    // The calls this worker owns (its proxy's tables): how evenly RSS spreads them.
    uint64_t setups_active = 0;   ///< calls being set up
    uint64_t dialogs_active = 0;  ///< established calls
};

/// SIP over TCP and TLS, for /metrics: control_loop::report() copies the stream thread's
/// counters and the configured certificates here, so that rendering never touches the thread.
struct stream_metrics {
    bool running = false;  ///< false: no stream thread (no TCP/TLS trunk or peer); nothing rendered
    /// A named value with its meaning (the HELP line, or a comment line for a reason).
    struct counter {
        std::string name;
        std::string help;
        uint64_t value = 0;
    };
    std::array<uint64_t, 3> open_by_state{};  ///< connections open now: connecting, handshaking, established
    std::vector<counter> counters;            ///< every SBC_STREAM_COUNTERS counter (transport/stream_thread.h)
    std::vector<counter> closed;              ///< connections ended, by reason label
    std::vector<counter> handshakes_failed;   ///< TLS handshakes failed, by reason label
    std::vector<counter> pump;                ///< the exception port's pump counters
    struct certificate {
        std::string owner;  ///< "trunk NAME", "region NAME" or "tls"
        std::string file;
        int64_t not_after = 0;  ///< Unix time
    };
    std::vector<certificate> certificates;
};

struct stats_report {
    std::string node_name;
    std::string state;  ///< "running" | "draining" | "starting"
    std::string version;
    double uptime_s = 0;
    uint64_t snapshot_generation = 0;
    uint64_t tsc_hz = 0;
    std::vector<interface_status> interfaces;
    std::vector<worker_status> workers;
    dataplane::counters_view total;
    uint64_t neighbours = 0;
    uint64_t icmp_unreachable = 0;  ///< ICMP destination-unreachable received about our datagrams
    uint64_t packet_too_big = 0;    ///< ICMPv6 Packet Too Big received about our datagrams
    uint64_t path_mtu_entries = 0;  ///< IPv6 destinations with a recorded path MTU
    sip_report sip;
    dns_report dns;  ///< srv regions (control/dns.h)
    media_report media;  ///< anchored media (control/media_stats.h)
    stream_metrics streams;  ///< SIP over TCP/TLS (transport/stream_thread.h); /metrics only
    flood_report flood;      ///< flood screening and the deny list (control/deny_list.h); /metrics only
    cdr_report cdr;          ///< the call detail record writer (control/cdr_format.h)
};

/// The report as the control socket sends it; the shape is documented in docs/operations.md.
nlohmann::json to_json(const stats_report& r);
/// One counters object of that JSON (also used for "total" and each worker's "counters").
nlohmann::json to_json(const dataplane::counters_view& c);
/// Reads a counters object back; absent fields and unknown drop reasons or stages are
/// ignored, so an sbcctl of another version still shows what both know.
dataplane::counters_view counters_from_json(const nlohmann::json& j);

/// Prometheus text exposition format 0.0.4 for /metrics: every metric prefixed `sbc_`,
/// counters suffixed `_total`, per-worker series labelled worker="N".
std::string to_prometheus(const stats_report& r);

/// The SIP-over-TCP/TLS part of /metrics (included in to_prometheus; "" when not running):
/// sbc_stream_connections{state}, sbc_stream_handshakes_total{result,reason},
/// sbc_stream_closed_total{reason}, sbc_stream_bytes_total{direction},
/// sbc_stream_messages_total{direction}, sbc_stream_<counter>_total,
/// sbc_exception_port_<counter>_total, sbc_tls_certificate_expiry_seconds{owner,file}.
std::string stream_prometheus(const stream_metrics& s);

/// `sbcctl conns`: every TCP/TLS connection, then each TCP/TLS peer's connections and last
/// error, then the listeners that failed (the JSON of the `conns` command).
std::string render_conns_text(const nlohmann::json& answer);

/// `sbcctl status`: node, state, uptime, interfaces (address, MAC, link, gateway resolved or
/// not), workers and how busy they are.
std::string render_status_text(const nlohmann::json& report);
/// `sbcctl stats`: totals, packets per stage, drops by reason (non-zero first), per worker.
std::string render_stats_text(const nlohmann::json& report);
/// `sbcctl top`: per-worker busy % from the cycle deltas between two reports, packets per
/// second in and out, drops per second by reason.
std::string render_top_text(const nlohmann::json& prev, const nlohmann::json& cur, double seconds);

/// "1d 02:03:04" / "02:03:04".
std::string format_duration(double seconds);

}  // namespace sbc::control
