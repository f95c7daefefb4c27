// io benchmark, sbcd's side: the production worker loop (run_loop from dataplane/worker.h: rx
// burst, process, inject drain, TX buffering and flush, RCU quiescent state, busy accounting)
// around a stage that only swaps MAC addresses and sends the burst out of the other port
// (macswap_stage.h, shared with flood_bench's `--mix forward`), on
// a pair of net_ring ports with one burst injected per port at start, the same setup as
// `dpdk-testpmd --forward-mode=macswap --tx-first`. Prints one line per second, then
// `sbcd_cpu: ... ns_per_pkt=N` (the worker thread's CPU time times its busy share, per packet
// forwarded, over all samples: what scripts/bench/flood.sh compares its drop cost with) and,
// last, `sbcd_mpps=X` (median of the per-second rates). Driven by scripts/bench/io.sh.
//
//   io_bench [--seconds N] [--warmup N] [--frame-size B] -- EAL args (with two net_ring vdevs)
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_launch.h>

#include "control/snapshot_build.h"
#include "dataplane/runtime.h"
#include "dataplane/worker.h"
#include "bench_common.h"
#include "macswap_stage.h"

namespace {

namespace dp = sbc::dataplane;

using sbc::bench::inject_burst;

using sbc::bench::median;

pthread_t worker_thread;
std::atomic<bool> worker_started{false};

}  // namespace

int main(int argc, char** argv)
{
    unsigned seconds = 5, warmup = 1;
    uint16_t frame_size = 64;
    int i = 1;
    for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
        const std::string a = argv[i];
        if (a == "--seconds" && i + 1 < argc) seconds = static_cast<unsigned>(std::atoi(argv[++i]));
        else if (a == "--warmup" && i + 1 < argc) warmup = static_cast<unsigned>(std::atoi(argv[++i]));
        else if (a == "--frame-size" && i + 1 < argc) frame_size = static_cast<uint16_t>(std::atoi(argv[++i]));
        else {
            std::fprintf(stderr, "usage: io_bench [--seconds N] [--warmup N] [--frame-size B] -- EAL args\n");
            return 2;
        }
    }
    if (!sbc::bench::eal_init("io_bench", argc, argv, i)) return 1;
    auto rt = sbc::bench::start_two_ring_ports("io_bench");
    if (rt == nullptr) return 1;
    sbc::control::publish_snapshot(rt->shared->snap, std::make_unique<dp::snapshot>());
    dp::worker& w = *rt->workers[0];
    for (const auto& p : rt->ports) {
        if (!inject_burst(w.pool, p.port_id, frame_size)) {
            std::fprintf(stderr, "io_bench: cannot inject the first burst on %s\n", p.device.c_str());
            return 1;
        }
    }
    if (rte_eal_remote_launch(
            [](void* arg) -> int {
                worker_thread = pthread_self();
                worker_started.store(true);
                dp::run_loop(*static_cast<dp::worker*>(arg), sbc::bench::macswap_stage{});
                return 0;
            },
            &w, w.lcore) != 0) {
        std::fprintf(stderr, "io_bench: cannot launch the worker on lcore %u\n", w.lcore);
        return 1;
    }
    rt->launched = true;
    while (!worker_started.load()) std::this_thread::yield();

    using clock = std::chrono::steady_clock;
    std::this_thread::sleep_for(std::chrono::seconds(warmup));
    std::vector<double> rates;
    // Cross-check with what testpmd reads: the ports' own RX counters.
    auto port_rx = [&] {
        uint64_t n = 0;
        for (const auto& p : rt->ports) {
            rte_eth_stats st{};
            if (rte_eth_stats_get(p.port_id, &st) == 0) n += st.ipackets;
        }
        return n;
    };
    uint64_t rx_before = port_rx();
    auto before = dp::snapshot_of(w.counters);
    const auto first = before;
    const double cpu0 = sbc::bench::thread_cpu_s(worker_thread);
    auto t0 = clock::now();
    for (unsigned s = 0; s < seconds; ++s) {
        std::this_thread::sleep_until(t0 + std::chrono::seconds(1));
        const auto now = dp::snapshot_of(w.counters);
        const uint64_t rx_now = port_rx();
        const auto t1 = clock::now();
        const auto d = dp::difference(before, now);
        const double secs = std::chrono::duration<double>(t1 - t0).count();
        const double mpps = static_cast<double>(d.tx_packets) / secs / 1e6;
        rates.push_back(mpps);
        const double port_mpps = static_cast<double>(rx_now - rx_before) / secs / 1e6;
        std::printf("second %u: forwarded_mpps=%.3f port_rx_mpps=%.3f busy=%.1f%% drops=%lu\n", s + 1, mpps,
                    port_mpps, d.busy_percent(), static_cast<unsigned long>(d.drops_total()));
        std::fflush(stdout);
        before = now;
        rx_before = rx_now;
        t0 = t1;
    }
    const double cpu_s = sbc::bench::thread_cpu_s(worker_thread) - cpu0;
    const auto all = dp::difference(first, dp::snapshot_of(w.counters));
    const double busy = all.busy_percent() / 100;
    std::printf("sbcd_cpu: worker_cpu_s=%.3f busy=%.1f%% forwarded=%lu ns_per_pkt=%.2f\n", cpu_s, busy * 100,
                static_cast<unsigned long>(all.tx_packets),
                all.tx_packets ? cpu_s * busy / static_cast<double>(all.tx_packets) * 1e9 : 0.0);
    dp::stop_dataplane(*rt);
    sbc::control::retire_snapshot(rt->shared->snap);
    rt.reset();
    std::printf("sbcd_mpps=%.3f\n", median(rates));
    rte_eal_cleanup();
    return 0;
}
