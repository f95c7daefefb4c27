// sbcd: the daemon. Reads the config (refusing a bad one with exit code 2 before anything
// starts), brings up EAL, ports and workers, and runs the control loop on the main lcore until
// SIGINT or SIGTERM, then stops the ports and exits 0. Main thread.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <rte_eal.h>

#include "control/config.h"
#include "control/control_loop.h"
#include "control/stream_service.h"
#include "control/snapshot_build.h"
#include "dataplane/rtp_stage.h"
#include "dataplane/runtime.h"

namespace {

constexpr const char* usage = R"(usage: sbcd --config FILE [--check] [-- EAL-ARGS...]

The sbc session border controller daemon.

  -c, --config FILE   the config file (TOML); see docs/config.md for every key
      --check         validate the config and exit: 0 when valid, 2 with every problem
                      listed as FILE:LINE: KEY: MESSAGE
  -h, --help          this text
      --version       print the version
  -- EAL-ARGS...      passed to DPDK's EAL after the ones sbcd derives from the config
                      (lcores, memory, devices, file prefix) and [dpdk].eal_args

Signals: SIGINT and SIGTERM stop the daemon cleanly (ports stopped, exit 0); SIGHUP re-reads
the config (like `sbcctl reload`): a file with problems is refused and the running config stays;
it also reopens the [cdr] file (after logrotate moved it).
Operate it with sbcctl (status, stats, top) over [node].control_socket, and scrape
/metrics and /healthz on [node].management_http.

Examples:
  sbcd --config /etc/sbc/sbc.toml --check     validate a file before (re)loading it
  sbcd --config /etc/sbc/sbc.toml             run in the foreground (systemd: sbcd.service)
  sbcd -c sbc.toml -- --log-level=pmd.net.ice:debug   pass an EAL option through

Exit codes: 0 clean stop, 1 runtime failure (EAL, ports, sockets), 2 bad usage or config.
)";

void on_signal(int sig)
{
    if (sig == SIGHUP)
        sbc::control::reload_requested.store(true, std::memory_order_relaxed);
    else
        sbc::control::stop_requested.store(true, std::memory_order_relaxed);
}

/// [media] into the dataplane (the flow table and each worker's sessions), before the workers;
/// how media leaves each address rides every snapshot (build_snapshot).
bool start_media(const sbc::control::config& cfg, sbc::dataplane::dataplane_runtime& rt, std::string& error)
{
    if (!cfg.media.enabled) return true;
    // The config's [media] is the dataplane's media_config (control/config.h), as read.
    return sbc::dataplane::start_media(rt, cfg.media, error);
}

}  // namespace

int main(int argc, char** argv)
{
    std::string config_path;
    bool check_only = false;
    std::vector<std::string> eal_extra;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--") {
            for (int j = i + 1; j < argc; ++j) eal_extra.emplace_back(argv[j]);
            break;
        }
        if (a == "-h" || a == "--help") {
            std::fputs(usage, stdout);
            return 0;
        }
        if (a == "--version") {
            std::puts("sbcd 0.1.0");
            return 0;
        }
        if (a == "--check") {
            check_only = true;
        } else if ((a == "-c" || a == "--config") && i + 1 < argc) {
            config_path = argv[++i];
        } else if (a.rfind("--config=", 0) == 0) {
            config_path = a.substr(9);
        } else {
            std::fprintf(stderr, "sbcd: unknown argument '%s'\n\n%s", a.c_str(), usage);
            return 2;
        }
    }
    if (config_path.empty()) {
        std::fprintf(stderr, "sbcd: --config FILE is required\n\n%s", usage);
        return 2;
    }

    auto loaded = sbc::control::load_config(config_path);
    if (!loaded.cfg) {
        for (const auto& e : loaded.errors) std::fprintf(stderr, "sbcd: %s\n", e.to_string().c_str());
        std::fprintf(stderr, "sbcd: %s refused (%zu problem%s); nothing started\n", config_path.c_str(),
                     loaded.errors.size(), loaded.errors.size() == 1 ? "" : "s");
        return 2;
    }
    const sbc::control::config& cfg = *loaded.cfg;
    if (check_only) {
        std::printf("%s: valid\n", config_path.c_str());
        return 0;
    }

    sbc::dataplane::eal_options eo;
    eo.program = argv[0];
    eo.workers = cfg.node.workers;
    eo.no_huge = cfg.dpdk.no_huge;
    eo.memory_mb = cfg.dpdk.memory_mb;
    eo.file_prefix = cfg.dpdk.file_prefix.empty() ? "sbc-" + cfg.node.name : cfg.dpdk.file_prefix;
    std::vector<std::string> devices;
    for (const auto& ic : cfg.interfaces) {
        bool seen = false;
        for (const auto& d : devices) seen = seen || d == ic.device;
        if (!seen) devices.push_back(ic.device);
    }
    eo.devices = devices;
    eo.extra = cfg.dpdk.eal_args;
    eo.af_packet_max_datagram = cfg.dpdk.af_packet_max_datagram;
    eo.extra.insert(eo.extra.end(), eal_extra.begin(), eal_extra.end());

    std::string error;
    if (!sbc::dataplane::eal_start(eo, error)) {
        std::fprintf(stderr, "sbcd: %s\n", error.c_str());
        return 1;
    }

    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGHUP, &sa, nullptr);
    std::signal(SIGPIPE, SIG_IGN);

    int rc = 0;
    {
        sbc::dataplane::port_options po;
        po.workers = cfg.node.workers;
        po.rx_ring = cfg.dpdk.rx_ring;
        po.tx_ring = cfg.dpdk.tx_ring;
        po.mbufs_per_worker = cfg.dpdk.mbufs_per_worker;
        po.setups_per_worker = cfg.limits.transactions_per_worker;
        po.dialogs_per_worker = cfg.limits.dialogs_per_worker;
        po.streams = sbc::control::stream_service::needed(cfg);
        po.stream_message_bytes = cfg.streams.max_message_bytes;
        po.af_packet_max_datagram = cfg.dpdk.af_packet_max_datagram;
        po.large_setups_per_worker = cfg.limits.large_messages_per_worker;
        po.cdr_ring = cfg.cdr.enabled() ? cfg.cdr.ring : 0;  // [cdr]: each worker's ring of call records
        auto rt = sbc::dataplane::start_dataplane(devices, po, error);
        if (!rt) {
            std::fprintf(stderr, "sbcd: %s\n", error.c_str());
            rte_eal_cleanup();
            return 1;
        }
        {
            sbc::control::control_loop loop(cfg, *rt);
            if (!loop.start(error) || !start_media(cfg, *rt, error) || !sbc::dataplane::launch_workers(*rt, error)) {
                std::fprintf(stderr, "sbcd: %s\n", error.c_str());
                rc = loop.config_refused() ? 2 : 1;
            } else {
                rc = loop.run();
            }
            sbc::dataplane::stop_dataplane(*rt);
            loop.finish_cdr();  // the records the workers left in their rings (calls ended by the stop)
        }
        sbc::control::retire_snapshot(rt->shared->snap);
    }
    rte_eal_cleanup();
    std::fprintf(stderr, "sbcd: stopped\n");
    return rc;
}
