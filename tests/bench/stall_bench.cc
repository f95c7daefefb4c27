// stall benchmark: does the control core's publishing stall the workers? The production worker
// loop (run_loop from dataplane/worker.h: rx burst, process, TX flush, RCU quiescent state per
// iteration, max loop gap) forwards on a pair of net_ring ports, as in io_bench, around a stage
// that per burst reads the published snapshot's peer table and picks a peer with the production
// select_peer (so it reads the health words the control core flips), swaps MAC addresses and
// sends the burst out of the other port. Meanwhile the main lcore, standing in for the control
// core, alternates rounds:
//   idle: wakes every millisecond, as sbcd's control loop does, and does nothing;
//   busy: publishes 1,000 snapshots per second (a fresh snapshot object through rcu_xchg_pointer,
//         the old one freed with call_rcu after the grace period) and flips 10,000 health words
//         per second (relaxed stores of the `down` bit on 64 peers), paced per millisecond.
// Each round: forwarded packets per second (the worker's tx counter), the share of the round the
// worker thread was on its CPU (/proc schedstat) and the packets per second of that CPU time,
// drops (the worker's drop counters), the longest gap between two loop iterations, and in busy
// rounds the publish and flip rates reached. On a shared machine other processes take the
// worker's CPU now and then; the per-CPU-second rate sets that aside and is printed as
// `per_cpu_second: idle_mpps=.. busy_mpps=.. ratio=..`. Last line: the medians over the rounds
// of each kind of the wall-clock rates and
//   stall: idle_mpps=X busy_mpps=Y ratio=Z max_loop_gap_us=W
// (X, Y: medians over the rounds of each kind; Z: the median over the pairs of rounds of busy /
// idle; W: the longest gap seen in any busy round). Driven by scripts/bench/stall.sh.
//
//   stall_bench [--rounds N] [--round-ms MS] [--publish-per-s P] [--flips-per-s F] -- EAL args
//   (EAL args with exactly two net_ring vdevs and two lcores: main and one worker)
#include <sys/syscall.h>
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

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_launch.h>

#include "control/snapshot_build.h"
#include "dataplane/runtime.h"
#include "dataplane/worker.h"
#include "sip-fastpath/peer_select.h"
#include "bench_common.h"

namespace {

namespace dp = sbc::dataplane;
namespace sip = sbc::sip;
using clock_type = std::chrono::steady_clock;

constexpr uint32_t bench_peers = 64;

/// Macswap to the other port, after one peer choice per burst from the snapshot (as a new call
/// would make): the worker reads what the control core publishes and flips.
struct select_and_forward_stage {
    sip::select_state* st;
    uint64_t* picks;
    uint32_t poll(dp::worker&, const dp::snapshot&, uint64_t) const noexcept { return 0; }
    void burst(dp::worker& w, const dp::snapshot& snap, uint16_t port, rte_mbuf** pkts, uint16_t n) const noexcept
    {
        if (snap.proxy) {
            const uint32_t p =
                sip::select_peer(*snap.proxy, w.shared->peer_health, {.region = 0, .sel = sip::selector::srv}, *st);
            if (p != sip::no_peer) ++*picks;
        }
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

struct worker_arg {
    dp::worker* w;
    sip::select_state st;
    uint64_t picks = 0;
    std::atomic<pid_t> tid{0};
};

/// CPU time the kernel gave thread `tid` so far, in ns (/proc schedstat: time on the CPU).
uint64_t thread_run_ns(pid_t tid)
{
    const std::string path = "/proc/self/task/" + std::to_string(tid) + "/schedstat";
    std::FILE* f = std::fopen(path.c_str(), "r");
    if (f == nullptr) return 0;
    unsigned long long run = 0;
    if (std::fscanf(f, "%llu", &run) != 1) run = 0;
    std::fclose(f);
    return run;
}

using sbc::bench::inject_burst;

std::shared_ptr<const sip::proxy_tables> bench_tables()
{
    auto t = std::make_shared<sip::proxy_tables>();
    sip::region r{"r1", {}};
    for (uint32_t i = 0; i < bench_peers; ++i) {
        sip::peer p;
        p.name = "r1/peer" + std::to_string(i);
        p.id = i;
        p.address = sbc::ip_address::v4(0xc6120100u + i);  // 198.18.1.x
        p.priority = static_cast<uint16_t>(i / 16);
        p.weight = static_cast<uint16_t>(10 + i % 7);
        t->peers.push_back(p);
        r.peers.push_back(i);
    }
    t->index_peers();
    t->regions.push_back(r);
    t->groups.push_back({"g1", {0}, sip::selector::srv});
    return t;
}

std::unique_ptr<dp::snapshot> make_snapshot(uint64_t gen, const std::shared_ptr<const sip::proxy_tables>& t)
{
    auto s = std::make_unique<dp::snapshot>();
    s->generation = gen;
    s->proxy = t;
    s->index_interfaces();
    return s;
}

using sbc::bench::median;

struct round_result {
    double mpps = 0;
    double cpu_share = 0;   ///< of the round's wall time, how much the worker thread was on its CPU
    double mpps_per_cpu = 0;  ///< packets per second of CPU time the worker actually had
    uint64_t drops = 0;
    double max_gap_us = 0;
    double publish_per_s = 0;
    double flips_per_s = 0;
};

}  // namespace

int main(int argc, char** argv)
{
    unsigned rounds = 20, round_ms = 500, publish_per_s = 1000, flips_per_s = 10000;
    int i = 1;
    for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
        const std::string a = argv[i];
        auto value = [&] { return static_cast<unsigned>(std::atoi(argv[++i])); };
        if (a == "--rounds" && i + 1 < argc) rounds = value();
        else if (a == "--round-ms" && i + 1 < argc) round_ms = value();
        else if (a == "--publish-per-s" && i + 1 < argc) publish_per_s = value();
        else if (a == "--flips-per-s" && i + 1 < argc) flips_per_s = value();
        else {
            std::fprintf(stderr, "usage: stall_bench [--rounds N] [--round-ms MS] [--publish-per-s P] [--flips-per-s F] "
                                 "-- EAL args\n");
            return 2;
        }
    }
    if (rounds == 0 || round_ms < 10 || publish_per_s == 0 || publish_per_s > 1000 || flips_per_s % publish_per_s != 0) {
        std::fprintf(stderr, "stall_bench: rounds > 0, rounds of 10 ms or more, publish rate 1..1000/s, flips a multiple of it\n");
        return 2;
    }
    if (!sbc::bench::eal_init("stall_bench", argc, argv, i)) return 1;
    auto rt = sbc::bench::start_two_ring_ports("stall_bench");
    if (rt == nullptr) return 1;
    const auto tables = bench_tables();
    uint64_t generation = 1;
    sbc::control::publish_snapshot(rt->shared->snap, make_snapshot(generation, tables));
    dp::worker& w = *rt->workers[0];
    for (const auto& p : rt->ports) {
        if (!inject_burst(w.pool, p.port_id, 64)) {
            std::fprintf(stderr, "stall_bench: cannot inject the first burst on %s\n", p.device.c_str());
            return 1;
        }
    }
    worker_arg arg{&w, {}, 0, {}};
    if (rte_eal_remote_launch(
            [](void* a) -> int {
                auto* wa = static_cast<worker_arg*>(a);
                wa->tid.store(static_cast<pid_t>(::syscall(SYS_gettid)), std::memory_order_relaxed);
                dp::run_loop(*wa->w, select_and_forward_stage{&wa->st, &wa->picks});
                return 0;
            },
            &arg, w.lcore) != 0) {
        std::fprintf(stderr, "stall_bench: cannot launch the worker on lcore %u\n", w.lcore);
        return 1;
    }
    rt->launched = true;
    std::this_thread::sleep_for(std::chrono::seconds(1));  // warm-up

    const double tsc_per_us = static_cast<double>(rte_get_tsc_hz()) / 1e6;
    const unsigned flips_per_publish = flips_per_s / publish_per_s;
    const auto tick = std::chrono::microseconds(1'000'000 / publish_per_s);
    auto& words = rt->shared->peer_health.word;
    uint32_t flip_next = 0;

    auto run_round = [&](bool busy) {
        round_result r;
        w.max_loop_gap_epoch.bump();  // this thread stands in for the control core, the word's writer
        const auto before = dp::snapshot_of(w.counters);
        const uint64_t run0 = thread_run_ns(arg.tid.load(std::memory_order_relaxed));
        const auto t0 = clock_type::now();
        const auto end = t0 + std::chrono::milliseconds(round_ms);
        uint64_t published = 0, flipped = 0;
        {
            // Paced per tick in both kinds of round: sbcd's control loop wakes every
            // millisecond whether or not it has anything to publish (control_loop::run polls
            // its socket with a 1 ms timeout), so the idle round wakes alike and does nothing.
            // A tick missed (the main thread preempted) is caught up at once, so that the rate
            // over the round is what was asked for.
            for (uint64_t k = 0;; ++k) {
                const auto due = t0 + tick * k;
                if (due >= end) break;
                std::this_thread::sleep_until(due);
                if (!busy) continue;
                sbc::control::publish_snapshot(rt->shared->snap, make_snapshot(++generation, tables));
                ++published;
                for (unsigned f = 0; f < flips_per_publish; ++f) {
                    // One peer's `down` bit per flip, round the table. Relaxed, as the control
                    // core does it: the only writer, and workers need no ordering with it.
                    auto& word = words[flip_next];
                    word.store(word.load(std::memory_order_relaxed) ^ sip::peer_state::down, std::memory_order_relaxed);
                    flip_next = (flip_next + 1) % bench_peers;
                    ++flipped;
                }
            }
            std::this_thread::sleep_until(end);
        }
        const auto t1 = clock_type::now();
        const uint64_t run1 = thread_run_ns(arg.tid.load(std::memory_order_relaxed));
        // The worker folds its counters every 64 iterations: let it fold once more.
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        const auto after = dp::snapshot_of(w.counters);
        const auto d = dp::difference(before, after);
        const double secs = std::chrono::duration<double>(t1 - t0).count();
        r.mpps = static_cast<double>(d.tx_packets) / secs / 1e6;
        r.cpu_share = static_cast<double>(run1 - run0) / 1e9 / secs;
        r.mpps_per_cpu = run1 > run0 ? static_cast<double>(d.tx_packets) / (static_cast<double>(run1 - run0) / 1e9) / 1e6 : 0;
        r.drops = d.drops_total();
        r.max_gap_us = static_cast<double>(w.max_loop_gap.get()) / tsc_per_us;
        r.publish_per_s = static_cast<double>(published) / secs;
        r.flips_per_s = static_cast<double>(flipped) / secs;
        return r;
    };

    std::vector<double> idle_rates, busy_rates, idle_cpu_rates, busy_cpu_rates, pair_ratios, pair_cpu_ratios;
    double busy_gap = 0, idle_gap = 0;
    uint64_t drops = 0;
    // Pairs of rounds, idle first in odd pairs and busy first in even ones, short enough that
    // both rounds of a pair see the same background load; the ratio is the median of the pairs'
    // ratios, which cancels load that drifts over the run.
    for (unsigned rr = 0; rr < rounds; ++rr) {
        double pair_mpps[2] = {0, 0}, pair_cpu[2] = {0, 0};
        for (bool busy : {rr % 2 == 1, rr % 2 == 0}) {
            const round_result r = run_round(busy);
            pair_mpps[busy] = r.mpps;
            pair_cpu[busy] = r.mpps_per_cpu;
            (busy ? busy_rates : idle_rates).push_back(r.mpps);
            (busy ? busy_cpu_rates : idle_cpu_rates).push_back(r.mpps_per_cpu);
            double& gap = busy ? busy_gap : idle_gap;
            gap = std::max(gap, r.max_gap_us);
            drops += r.drops;
            std::printf("round %u %s: forwarded_mpps=%.3f worker_cpu=%.0f%% mpps_per_cpu_s=%.3f drops=%lu "
                        "max_loop_gap_us=%.1f publish_per_s=%.0f flips_per_s=%.0f\n",
                        rr + 1, busy ? "busy" : "idle", r.mpps, 100 * r.cpu_share, r.mpps_per_cpu,
                        static_cast<unsigned long>(r.drops), r.max_gap_us, r.publish_per_s, r.flips_per_s);
            std::fflush(stdout);
        }
        if (pair_mpps[0] > 0) pair_ratios.push_back(pair_mpps[1] / pair_mpps[0]);
        if (pair_cpu[0] > 0) pair_cpu_ratios.push_back(pair_cpu[1] / pair_cpu[0]);
    }
    dp::stop_dataplane(*rt);
    sbc::control::retire_snapshot(rt->shared->snap);
    const uint64_t picks = arg.picks;
    rt.reset();
    const double idle = median(idle_rates), busy = median(busy_rates);
    const double idle_cpu = median(idle_cpu_rates), busy_cpu = median(busy_cpu_rates);
    std::printf("bursts_with_a_peer_picked=%lu drops_total=%lu idle_max_loop_gap_us=%.1f\n",
                static_cast<unsigned long>(picks), static_cast<unsigned long>(drops), idle_gap);
    // Per second of CPU the worker had: what the control core costs it, preemption by other
    // processes on a shared machine set aside.
    std::printf("per_cpu_second: idle_mpps=%.3f busy_mpps=%.3f ratio=%.3f\n", idle_cpu, busy_cpu,
                median(pair_cpu_ratios));
    std::printf("stall: idle_mpps=%.3f busy_mpps=%.3f ratio=%.3f max_loop_gap_us=%.1f\n", idle, busy,
                median(pair_ratios), busy_gap);
    rte_eal_cleanup();
    return 0;
}
