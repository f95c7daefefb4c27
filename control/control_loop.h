// The control core's loop on the EAL main lcore: publishes snapshots, drains worker events
// (neighbours, ICMP errors), runs ARP resolution, serves the control socket, and feeds the
// HTTP thread's /metrics and /healthz. Control core only, except report(), which the HTTP
// thread may call too (it reads only atomics and immutable data).
#pragma once

#include <array>
#include <atomic>
#include <cstdio>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "control/canary.h"
#include "control/config.h"
#include "control/control_socket.h"
#include "control/dns.h"
#include "control/metrics_http.h"
#include "control/neighbours.h"
#include "control/passive_health.h"
#include "control/probe_runner.h"
#include "control/proxy_build.h"
#include "control/stats.h"
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

    /// Control core: the current report (counters read with relaxed loads).
    [[nodiscard]] stats_report report() const;

private:
    nlohmann::json handle(const nlohmann::json& request);
    void drain_events(uint64_t now_ms);
    void send_arp(uint16_t iface, const dataplane::arp_fields& f);
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

    config cfg_;
    dataplane::dataplane_runtime& rt_;
    neighbour_manager neighbours_;
    std::optional<control_socket> socket_;
    std::unique_ptr<metrics_http> http_;
    std::vector<dataplane::interface_info> interfaces_;  ///< as published, for reports
    std::atomic<uint64_t> generation_{0};
    std::atomic<int> state_{0};  ///< 0 starting, 1 running, 2 draining
    uint64_t overload_changes_ = 0;  ///< times the overloaded state flipped ([self] overload_calls)
    /// Calls being set up or established, all workers.
    [[nodiscard]] uint64_t active_calls() const;
    /// Sets or clears the node's overloaded bit from the active calls (control only).
    void update_overload(uint64_t active);
    uint64_t drain_deadline_ms_ = 0;
    uint64_t icmp_unreachable_ = 0;  ///< control core only
    std::chrono::steady_clock::time_point started_;
    bool config_refused_ = false;
    peer_ids ids_;
    /// `srv` regions: DNS answers become peers; a change publishes new tables (control/dns.h).
    dns_regions dns_{[](const std::string& line) { std::fprintf(stderr, "sbcd: %s\n", line.c_str()); },
                     [this](const std::string& key) { return peer_has_calls(key); }};
    bool dns_publish_pending_ = false;
    uint64_t dns_changed_ms_ = 0;
    std::shared_ptr<const sip::proxy_tables> tables_;  ///< as published; control core only
    std::vector<std::string> peer_names_;               ///< by peer id
    passive_health passive_;
    probe_runner prober_;  ///< OPTIONS probes and the probed peers' health
    canary_registry canaries_;  ///< canary peers by name, kept across snapshots and reloads
    /// Each worker's longest loop gap (TSC cycles) over the last full second: run() reads and
    /// restarts the workers' windows once a second. Control core only.
    std::array<uint64_t, max_workers> loop_gap_cycles_{};
    void sample_loop_gaps();
    // /metrics is rendered by the control core and served from this copy, so that the HTTP
    // thread never reads control-core state.
    std::mutex metrics_mu_;
    std::string metrics_text_;
};

}  // namespace sbc::control
