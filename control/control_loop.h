// The control core's loop on the EAL main lcore: publishes snapshots, drains worker events
// (neighbours, ICMP errors), runs ARP resolution, serves the control socket, and feeds the
// HTTP thread's /metrics and /healthz. Control core only; the HTTP thread reads nothing but
// `http_shared` (see there).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "control/canary.h"
#include "control/capture_service.h"
#include "control/cdr_writer.h"
#include "control/commands.h"
#include "control/config.h"
#include "control/control_socket.h"
#include "control/deny_list.h"
#include "control/dns.h"
#include "control/metrics_http.h"
#include "control/neighbours.h"
#include "control/oc_peers.h"
#include "control/node_state.h"
#include "control/passive_health.h"
#include "control/peer_timer.h"
#include "control/probe_runner.h"
#include "control/stream_service.h"
#include "control/proxy_build.h"
#include "control/stats.h"
#include "dataplane/events.h"
#include "dataplane/runtime.h"

namespace sbc::control {

/// Set from a signal handler (SIGINT/SIGTERM): leave the loop and shut down cleanly.
extern std::atomic<bool> stop_requested;
/// Set from a signal handler (SIGHUP): re-read the config file and publish it.
extern std::atomic<bool> reload_requested;

class control_loop {
public:
    control_loop(config cfg, dataplane::dataplane_runtime& rt);
    ~control_loop();

    /// Publishes the first snapshot, opens the control socket and the HTTP listener, announces
    /// our addresses. False with a message when any of it fails; config_refused() then tells
    /// a config problem (exit code 2) from a runtime one.
    bool start(std::string& error);
    [[nodiscard]] bool config_refused() const noexcept { return config_refused_; }
    /// Runs until stop_requested; returns the process exit code.
    int run();

    /// Control core only: the current report (counters read with relaxed loads). It reads the
    /// config and the published tables, which a reload replaces, so the HTTP thread must not
    /// call it: it gets the text rendered from it (http_shared::metrics_text).
    [[nodiscard]] stats_report report() const;
    /// Control core only: SIP over TCP/TLS (stream thread, certificates), for reports.
    [[nodiscard]] const stream_service& streams() const noexcept { return streams_; }
    /// After stop_dataplane: writes the records the workers left in their rings (the calls
    /// still up, ended by the drain) and flushes the CDR file (control_cdr.cc).
    void finish_cdr();

private:
    /// A control socket request: looks "cmd" up in the command table (control/commands.h) and
    /// runs that command's handler; an unknown one is answered {"ok":false,"error":...}
    /// (control_commands.cc).
    nlohmann::json handle(const nlohmann::json& request);
    using command_handler = nlohmann::json (control_loop::*)(const nlohmann::json& request);
    /// The handler of each served command, by command_id (nullptr for sbcctl-only ones).
    static const std::array<command_handler, command_count> handlers;
    // One per served command (control_commands.cc, control_canary.cc).
    nlohmann::json cmd_report(const nlohmann::json& request);  ///< status, stats, calls, peers
    nlohmann::json cmd_peer(const nlohmann::json& request);
    nlohmann::json cmd_drain(const nlohmann::json& request);
    nlohmann::json cmd_reload(const nlohmann::json& request);
    nlohmann::json cmd_conns(const nlohmann::json& request);  ///< TCP/TLS connections (stream thread)
    nlohmann::json cmd_capture(const nlohmann::json& request);  ///< SIP capture (control_capture.cc)
    nlohmann::json cmd_cdr(const nlohmann::json& request);  ///< `cdr tail|since` (control_cdr.cc)
    // Call detail records (control_cdr.cc): the writer opened at start from [cdr], fed from the
    // workers' rings every loop iteration.
    bool start_cdr(std::string& error);
    void poll_cdr(bool all);  ///< all: until every ring is empty (after the workers stopped)
    void drain_events(uint64_t now_ms);
    void send_arp(uint16_t iface, const dataplane::arp_fields& f);
    void send_nd(uint16_t iface, const dataplane::nd_fields& f);
    /// Builds a frame with `build(span) -> length` into a control-pool mbuf and queues it on
    /// interface `iface`'s port (dataplane::inject_frame).
    template <class Build>
    void send_frame(uint16_t iface, Build&& build);
    [[nodiscard]] uint64_t now_ms() const;
    [[nodiscard]] std::string peer_name(uint32_t id) const;
    /// Re-reads, validates and publishes the config file; false with the reasons, and the
    /// running config untouched, when it is refused.
    bool reload(std::string& error);
    /// Publishes a snapshot of `c` (generation + 1); false with `error`, nothing changed.
    bool publish_config(const config& c, std::string& error);
    void fill_sip(stats_report& r) const;
    /// Whether the peer of that peer_ids key has calls on any worker (control_dns.cc).
    [[nodiscard]] bool peer_has_calls(const std::string& key) const;
    /// ARP for the next hop of every peer not resolved yet, so that the first INVITE to a
    /// peer (also one learned from DNS later) is not lost to an unresolved MAC (control_dns.cc).
    void resolve_peer_hops();
    /// Handles DNS; when a region's peers changed, publishes them once their next hops are
    /// resolved (at most dns_arp_wait_ms later) (control_dns.cc).
    void on_dns(uint64_t now);
    /// `peer canary NAME --match FIELD:PATTERN` and `peer promote NAME` (control_canary.cc).
    nlohmann::json peer_canary(const nlohmann::json& request);
    // Flood protection's deny list (control_deny.cc).
    /// `deny list|add|remove` (sbcctl deny).
    nlohmann::json cmd_deny(const nlohmann::json& request);
    /// A worker's report: denies the source unless it is trusted (ignored, counted).
    void on_source_report(const dataplane::event& e, uint64_t now_ms);
    /// Every loop: expires entries (every 100 ms) and publishes the set when it changed.
    void deny_tick(uint64_t now_ms);
    /// Publishes [flood] of `c` with the deny list to the workers (null when disabled); drops
    /// entries that are trusted under the tables just published.
    void publish_flood(const config& c);
    void fill_flood(stats_report& r) const;
    /// A peer's address, or allowed by a trusted trunk, in the published tables.
    [[nodiscard]] bool source_trusted(const ip_address& a) const;

    /// What the HTTP thread reads; nothing else of this class is touched from there.
    /// Declared before http_, so that it is destroyed after it: http_'s destructor joins the
    /// HTTP thread, and a scrape still running must find the mutex and the string alive.
    struct http_shared {
        /// Written by the control core (start: starting, run(): running, drain: draining),
        /// read by it and by /healthz. Relaxed: one byte that publishes no other data; a
        /// /healthz a poll late is fine.
        std::atomic<node_state> state{node_state::starting};
        /// The /metrics body, rendered by the control core from report() every 200 ms. The
        /// HTTP thread copies it under `mu`, so it never sees a string being reassigned, and a
        /// reload changes only what the next rendering says (report() runs on the control core).
        std::mutex mu;
        std::string metrics_text;
    };

    /// As last published (publish_config), for reports and commands. Control core only.
    struct published_state {
        std::atomic<uint64_t> generation{0};  ///< relaxed: written and read by the control core
        std::vector<dataplane::interface_info> interfaces;
        std::shared_ptr<const sip::proxy_tables> tables;
        std::vector<std::string> peer_names;  ///< by peer id
    };

    /// Drain and overload ([self] drain_timeout_s, overload_calls). Control core only.
    struct drain_overload_state {
        uint64_t drain_deadline_ms = 0;  ///< now_ms() at which a drain stops with calls still up
        uint64_t overload_changes = 0;   ///< times the overloaded state flipped
    };

    /// A change of DNS answers waiting for its new peers' next hops (on_dns). Control core only.
    struct dns_publish_state {
        bool pending = false;
        uint64_t changed_ms = 0;  ///< when the change was seen; published anyway after dns_arp_wait_ms
    };

    config cfg_;
    dataplane::dataplane_runtime& rt_;
    neighbour_manager neighbours_;
    std::optional<control_socket> socket_;
    http_shared shared_;
    std::unique_ptr<metrics_http> http_;  ///< after shared_: see http_shared
    published_state published_;
    drain_overload_state drain_;
    /// Calls being set up or established, all workers.
    [[nodiscard]] uint64_t active_calls() const;
    /// Sets or clears the node's overloaded bit from the active calls (control only).
    void update_overload(uint64_t active);
    uint64_t icmp_unreachable_ = 0;  ///< control core only
    uint64_t packet_too_big_ = 0;    ///< control core only: ICMPv6 Packet Too Big about our datagrams
    std::chrono::steady_clock::time_point started_;
    bool config_refused_ = false;
    peer_ids ids_;
    /// `srv` regions: DNS answers become peers; a change publishes new tables (control/dns.h).
    dns_regions dns_{[](const std::string& line) { std::fprintf(stderr, "sbcd: %s\n", line.c_str()); },
                     [this](const std::string& key) { return peer_has_calls(key); }};
    dns_publish_state dns_publish_;
    passive_health passive_;
    probe_runner prober_;  ///< OPTIONS probes and the probed peers' health
    peer_timer timers_;    ///< each peer's learned no-answer timer (calls' and probes' response times)
    /// Peers' RFC 7339 feedback: the reduction of new calls each asks for, until when.
    oc_peers oc_{rt_.shared->peer_health, [](const std::string& line) { std::fprintf(stderr, "sbcd: %s\n", line.c_str()); }};
    /// SIP over TCP/TLS: namespace, exception port, stream thread. Declared after everything
    /// its thread reads, so that it stops first.
    stream_service streams_;
    canary_registry canaries_;  ///< canary peers by name, kept across snapshots and reloads
    std::unique_ptr<cdr_writer> cdr_;  ///< null without [cdr] (control_cdr.cc)
    /// SIP capture (`sbcctl capture`): its thread drains the workers' capture rings; stopped
    /// (file complete) when the loop goes, before the runtime.
    capture_service capture_{rt_};
    /// Denied sources; the control core is the only writer (control_deny.cc). Kept across reloads.
    struct deny_state {
        deny_list list;
        bool dirty = false;        ///< changed since last published
        uint64_t last_expiry_ms = 0;
    } deny_;
    /// Each worker's longest loop gap (TSC cycles) over the last full second: run() reads and
    /// restarts the workers' windows once a second. Control core only.
    std::array<uint64_t, max_workers> loop_gap_cycles_{};
    void sample_loop_gaps();
};

}  // namespace sbc::control
