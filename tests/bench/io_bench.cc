// io benchmark, sbcd's side: the production worker loop (run_loop from dataplane/worker.h: rx
// burst, process, inject drain, TX buffering and flush, RCU quiescent state, busy accounting)
// around a stage that only swaps MAC addresses and sends the burst out of the other port, on
// a pair of net_ring ports with one burst injected per port at start, the same setup as
// `dpdk-testpmd --forward-mode=macswap --tx-first`. Prints one line per second and, last,
// `sbcd_mpps=X` (median of the per-second rates). Driven by scripts/bench/io.sh.
//
//   io_bench [--seconds N] [--warmup N] [--frame-size B] -- EAL args (with two net_ring vdevs)
#include <unistd.h>

#include <algorithm>
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

namespace {

namespace dp = sbc::dataplane;

/// The bench-only stage: testpmd's macswap, sending each burst to the paired port.
struct macswap_stage {
    uint32_t poll(dp::worker&, const dp::snapshot&, uint64_t) const noexcept { return 0; }
    void burst(dp::worker& w, const dp::snapshot&, uint16_t port, rte_mbuf** pkts, uint16_t n) const noexcept
    {
        const uint16_t out = port == w.ports[0] ? w.ports[1] : w.ports[0];
        for (uint16_t i = 0; i < n; ++i) {
            auto* eth = rte_pktmbuf_mtod(pkts[i], rte_ether_hdr*);
            const rte_ether_addr a = eth->src_addr;
            eth->src_addr = eth->dst_addr;
            eth->dst_addr = a;
            dp::tx_enqueue(w, out, pkts[i]);
        }
    }
};

/// One burst of UDP frames of `size` bytes sent on `port` before the loop starts.
bool inject_burst(rte_mempool* pool, uint16_t port, uint16_t size)
{
    std::array<rte_mbuf*, dp::burst_size> pkts;
    if (rte_pktmbuf_alloc_bulk(pool, pkts.data(), dp::burst_size) != 0) return false;
    for (auto* m : pkts) {
        char* p = rte_pktmbuf_append(m, size);
        std::memset(p, 0, size);
        auto* eth = reinterpret_cast<rte_ether_hdr*>(p);
        const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x01}, src[6] = {0x02, 0, 0, 0, 0, 0x02};
        std::memcpy(eth->dst_addr.addr_bytes, dst, 6);
        std::memcpy(eth->src_addr.addr_bytes, src, 6);
        eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
    }
    const uint16_t sent = rte_eth_tx_burst(port, 0, pkts.data(), dp::burst_size);
    if (sent < dp::burst_size) rte_pktmbuf_free_bulk(pkts.data() + sent, dp::burst_size - sent);
    return sent == dp::burst_size;
}

double median(std::vector<double> v)
{
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

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
    std::vector<char*> eal{argv[0]};
    for (++i; i < argc; ++i) eal.push_back(argv[i]);
    eal.push_back(nullptr);
    if (rte_eal_init(static_cast<int>(eal.size() - 1), eal.data()) < 0) {
        std::fprintf(stderr, "io_bench: EAL init failed: %s\n", rte_strerror(rte_errno));
        return 1;
    }
    if (rte_eth_dev_count_avail() != 2) {
        std::fprintf(stderr, "io_bench: needs exactly two ports (two net_ring vdevs), found %u\n",
                     rte_eth_dev_count_avail());
        return 1;
    }
    std::vector<std::string> devices;
    uint16_t pid = 0;
    RTE_ETH_FOREACH_DEV(pid)
    {
        char name[RTE_ETH_NAME_MAX_LEN];
        rte_eth_dev_get_name_by_port(pid, name);
        devices.emplace_back(name);
    }
    std::string error;
    dp::port_options po;
    po.workers = 1;
    auto rt = dp::start_dataplane(devices, po, error);
    if (rt == nullptr) {
        std::fprintf(stderr, "io_bench: %s\n", error.c_str());
        return 1;
    }
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
                dp::run_loop(*static_cast<dp::worker*>(arg), macswap_stage{});
                return 0;
            },
            &w, w.lcore) != 0) {
        std::fprintf(stderr, "io_bench: cannot launch the worker on lcore %u\n", w.lcore);
        return 1;
    }
    rt->launched = true;

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
    dp::stop_dataplane(*rt);
    sbc::control::retire_snapshot(rt->shared->snap);
    rt.reset();
    std::printf("sbcd_mpps=%.3f\n", median(rates));
    rte_eal_cleanup();
    return 0;
}
