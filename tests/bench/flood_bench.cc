// flood benchmark: one worker core carries legitimate calls at a fixed rate while it receives a
// flood, and what the flood costs it. The production worker loop (run_loop(production)) runs
// on its own lcore over a net_ring port whose rings the main lcore owns; the main lcore is the
// generator of flood_gen.h (trusted caller, callee, the flood: unknown sources, INVITEs from an
// allowed untrusted source, malformed SIP; on its own, INVITEs from forged sources the
// untrusted trunk allows). The worker's tables are built from a config text by the control
// core's own code (parse_config, build_snapshot, build_proxy_tables): two trunks, "carrier"
// (198.18.0.2/32, port 5060, `trusted = true`) and "customers" (198.18.0.3/32 and the forged
// sources' 198.18.128.0/17, port 5062, untrusted), one region with the callee 198.18.0.11; [flood] at its
// defaults. `--config-extra FILE` appends TOML (a `[flood]` section, say) to that text. The
// control core's part (deny list, publication) is flood_control.h's stand-in.
//
// Phases, in one process: warm-up (legit only, 0.5 s); baseline (legit only, --baseline s):
// the worker's busy CPU per wall second that the legitimate calls cost; flood (legit and
// flood, --seconds s, then until the RX ring is empty); tail (no new call; open calls end or
// time out). CPU is the worker thread's CPU clock times the loop's busy share (as cps_bench).
//   flood_mpps      = flood packets / busy CPU seconds of the worker in the flood phase (legit
//                     calls included): the flood rate one fully used worker core absorbs
//                     while it carries them.
//   drop_ns_per_pkt = (busy CPU of the flood phase - baseline legit CPU per second x its wall
//                     seconds) / flood packets. In the baseline the calls' messages come in
//                     small bursts, dearer per message than inside the flood's full bursts,
//                     so the subtraction leans toward a lower drop cost, by at most the
//                     legit share (printed).
// Legit calls: ok = the caller got the 200 to its BYE; failed = a final error, or nothing
// within --call-timeout. Last line: `flood: legit_ok=X legit_failed=Y flood_mpps=Z
// drop_ns_per_pkt=W`. Driven by scripts/bench/flood.sh.
//
// `--mix floor` offers, instead of a flood, frames of an EtherType nobody handles (dropped by the
// first stage): the least any frame from another core costs the worker, the yardstick for the
// flood's figures. `--mix forward` offers the same frames, written the same way at the same
// backlog, to the same loop running the io benchmark's macswap stage (macswap_stage.h) instead
// of the production stages: each frame goes back out of the port and the main lcore frees it.
// No legitimate calls then (the stage would bounce them); its drop_ns_per_pkt is the worker's
// busy CPU per forwarded packet, printed as `forward: fresh_ns_per_pkt=N`: what forwarding a
// fresh frame costs, to set against what dropping a flood frame costs. The forward frames are
// freed by the main lcore (net_ring's TX ring hands them over), not by the worker as a NIC's TX
// completion would: forwarding is spared the free a drop pays, so the comparison favours it.
// `--mix forward_nic` is that forwarding as a NIC has the worker do it (forward_nic_stage): the
// main lcore hands each forwarded frame back on a ring and the worker frees it, and the loop
// also does the production loop's poll work, as the floor and the flood runs do. Printed as
// `forward_nic: fresh_ns_per_pkt=N`.
//
// `--port null` (the owned runs of flood.sh): the worker's port is net_null instead, whose RX
// takes each mbuf from a pool on the worker and whose TX frees there, as a NIC's refill and
// TX completion do; every mbuf of that pool holds a flood frame of the kinds asked for, written
// before the start (preload), and the untrusted source is denied from the start (the steady
// state). No legitimate calls; the worker is saturated. What the stages cost around a frame in
// the worker's cache, for floor, the flood kinds and forward alike.
//
//   flood_bench [--seconds N] [--baseline N] [--legit-cps N] [--mix all|unknown|invite|malformed|spoofed|floor|forward|forward_nic]
//               [--backlog N] [--flood-max N] [--unknown-sources N] [--call-timeout S]
//               [--config-extra FILE] [--timeline-ms N] [--port ring|null] -- EAL args
// --timeline-ms N: every N ms of the flood phase, one `timeline:` line (overload state and what
// the worker did since the last line), to see when and why new requests were shed.
// Main lcore: the generator; one worker lcore: the worker loop.
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_launch.h>

#include "control/config.h"
#include "control/proxy_build.h"
#include "control/snapshot_build.h"
#include "dataplane/overload.h"
#include "dataplane/runtime.h"
#include "dataplane/stages.h"
#include "dataplane/worker.h"
#include "sip-fastpath/proxy.h"
#include "bench_common.h"
#include "flood_control.h"
#include "flood_gen.h"
#include "flood_probe.h"
#include "macswap_stage.h"

namespace {

namespace dp = sbc::dataplane;
namespace sip = sbc::sip;
namespace fl = sbc::bench::flood;

pthread_t worker_thread;
std::atomic<pid_t> worker_tid{0};
std::atomic<bool> worker_started{false};
/// forward_nic: the frames the worker forwarded, handed back by the generator (SP/SC).
rte_ring* completions = nullptr;

/// The forward yardstick as a NIC has the worker do it (`--mix forward_nic`): the io
/// benchmark's macswap stage, and in each iteration what net_ring leaves to the other core or
/// skips: the free of what was sent (a NIC's TX completion; free_dropped, the put a fast-free
/// NIC makes, and the drop path's own) and the production loop's poll work (poll_worker).
struct forward_nic_stage {
    void burst(dp::worker& w, const dp::snapshot& s, uint16_t port, rte_mbuf** p, uint16_t n) const noexcept
    {
        sbc::bench::macswap_stage{}.burst(w, s, port, p, n);
    }
    uint32_t poll(dp::worker& w, const dp::snapshot& s, uint64_t now_tsc) const noexcept
    {
        std::array<rte_mbuf*, dp::burst_size> done;
        const unsigned n = rte_ring_sc_dequeue_burst(completions, reinterpret_cast<void**>(done.data()), done.size(), nullptr);
        if (n != 0) dp::free_dropped(done.data(), n);
        return n + dp::poll_worker(w, s, now_tsc);
    }
};

/// `--port null`: every frame net_null receives has this length (the mbuf's frame, shorter, is
/// followed by padding, which the IPv4 stage trims as Ethernet padding).
constexpr unsigned null_frame_bytes = 1400;

/// `--port null`: a pool of its own for the port's RX queue, every mbuf holding a flood frame of
/// the turn, and the queue set up again over it (before the worker starts). RX takes from it and
/// drops free to it on the worker; what the worker sends comes from its own pool, so nothing it
/// writes ends up received. Its cache hands the worker the same few mbufs again and again, each
/// with the frame written here: the frames stay in its cache, as io's circulate.
bool preload(uint16_t port, fl::generator& g)
{
    if (g.longest_flood() > null_frame_bytes) {
        std::fprintf(stderr, "flood_bench: a flood frame of %zu bytes exceeds --port null's %u\n", g.longest_flood(),
                     null_frame_bytes);
        return false;
    }
    const int socket = static_cast<int>(rte_socket_id());
    rte_mempool* pool = rte_pktmbuf_pool_create("flood_null_rx", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, socket);
    if (pool == nullptr) {
        std::fprintf(stderr, "flood_bench: --port null pool: %s\n", rte_strerror(rte_errno));
        return false;
    }
    rte_mempool_obj_iter(
        pool,
        [](rte_mempool*, void* gen, void* obj, unsigned) {
            auto* m = static_cast<rte_mbuf*>(obj);
            rte_pktmbuf_reset(m);
            static_cast<fl::generator*>(gen)->write_flood(m);
        },
        &g);
    if (rte_eth_dev_stop(port) != 0 ||
        rte_eth_rx_queue_setup(port, 0, 512, static_cast<unsigned>(socket), nullptr, pool) != 0 ||
        rte_eth_dev_start(port) != 0) {
        std::fprintf(stderr, "flood_bench: --port null: cannot set its RX queue up again\n");
        return false;
    }
    return true;
}

/// The bench's sbcd config, its interface on `device`, `extra` appended.
std::string config_text(const std::string& device, const std::string& extra)
{
    std::string t = "[node]\nworkers = 1\nmanagement_http = \"\"\n\n[[interface]]\nname = \"access\"\ndevice = \"";
    t += device + "\"\naddress = \"198.18.0.1/24\"\n\n";
    t += "[[trunk]]\nname = \"carrier\"\ninterface = \"access\"\nport = 5060\nallow = [\"198.18.0.2/32\"]\ntrusted = true\n";
    t += "\n[[trunk]]\nname = \"customers\"\ninterface = \"access\"\nport = 5062\nallow = [\"198.18.0.3/32\", \"198.18.128.0/17\"]\n\n"
         "[[region]]\nname = \"r1\"\ntrunk = \"carrier\"\npeers = [ { address = \"198.18.0.11:5060\" } ]\n\n"
         "[[peer_group]]\nname = \"g1\"\nregions = [\"r1\"]\n\n"
         "[[route]]\nname = \"default\"\npeer_group = \"g1\"\n\n";
    return t + extra;
}


/// What one measured window saw.
struct window {
    double wall_s = 0, cpu_s = 0, busy = 0, busy_cpu_s = 0;
    uint64_t faults = 0;  ///< the worker thread's page faults
    dp::counters_view d;
    std::array<uint64_t, sip::proxy_counter_count> proxy{};
    std::array<uint64_t, fl::kind_count> flood{};
    uint64_t legit_started = 0;
};

struct mark {
    uint64_t tsc;
    double cpu;
    uint64_t faults;
    dp::counters_view c;
    std::array<uint64_t, sip::proxy_counter_count> proxy;
    std::array<uint64_t, fl::kind_count> flood;
    uint64_t started;
};

mark take(const dp::worker& w, const fl::generator& g)
{
    mark m{rte_rdtsc(), sbc::bench::thread_cpu_s(worker_thread), sbc::bench::flood::thread_faults(worker_tid.load()), dp::snapshot_of(w.counters), {}, g.offered(), g.started()};
    for (std::size_t i = 0; i < sip::proxy_counter_count; ++i) m.proxy[i] = w.proxy->stats().get(static_cast<sip::proxy_counter>(i));
    return m;
}

window between(const mark& a, const mark& b, uint64_t hz)
{
    window r;
    r.wall_s = static_cast<double>(b.tsc - a.tsc) / static_cast<double>(hz);
    r.cpu_s = b.cpu - a.cpu;
    r.faults = b.faults - a.faults;
    r.d = dp::difference(a.c, b.c);
    r.busy = r.d.total_cycles != 0 ? static_cast<double>(r.d.busy_cycles) / static_cast<double>(r.d.total_cycles) : 0;
    r.busy_cpu_s = r.cpu_s * r.busy;
    for (std::size_t i = 0; i < r.proxy.size(); ++i) r.proxy[i] = b.proxy[i] - a.proxy[i];
    for (std::size_t k = 0; k < fl::kind_count; ++k) r.flood[k] = b.flood[k] - a.flood[k];
    r.legit_started = b.started - a.started;
    return r;
}

uint64_t sum(const std::array<uint64_t, fl::kind_count>& a)
{
    uint64_t n = 0;
    for (const uint64_t v : a) n += v;
    return n;
}

void print_counters(const char* phase, const window& r)
{
    std::printf("%s: worker rx=%lu tx=%lu drops=%lu page_faults=%lu stages:", phase, static_cast<unsigned long>(r.d.rx_packets),
                static_cast<unsigned long>(r.d.tx_packets), static_cast<unsigned long>(r.d.drops_total()),
                static_cast<unsigned long>(r.faults));
    for (std::size_t s = 0; s < dp::stage_count; ++s)
        std::printf(" %s=%lu", std::string(dp::stage_name(static_cast<dp::stage>(s))).c_str(),
                    static_cast<unsigned long>(r.d.stage_packets[s]));
    std::printf("\n");
    for (std::size_t i = 0; i < dp::drop_reason_count; ++i)
        if (r.d.drops[i] != 0)
            std::printf("%s: drop %s=%lu\n", phase, std::string(dp::drop_reason_name(static_cast<dp::drop_reason>(i))).c_str(),
                        static_cast<unsigned long>(r.d.drops[i]));
    for (std::size_t i = 0; i < r.proxy.size(); ++i)
        if (r.proxy[i] != 0)
            std::printf("%s: proxy %s=%lu\n", phase,
                        std::string(sip::proxy_counter_name(static_cast<sip::proxy_counter>(i))).c_str(),
                        static_cast<unsigned long>(r.proxy[i]));
}

}  // namespace

int main(int argc, char** argv)
{
    double seconds = 5, baseline = 2, call_timeout = 4;
    uint64_t legit_cps = 2000, flood_max = 200'000'000;
    unsigned backlog = 2048;
    uint32_t unknown_sources = 65536;
    double timeline_ms = 0;
    std::string mix = "all", extra_file, port_kind = "ring";
    int i = 1;
    for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
        const std::string a = argv[i];
        const bool v = i + 1 < argc;
        if (a == "--seconds" && v) seconds = std::atof(argv[++i]);
        else if (a == "--baseline" && v) baseline = std::atof(argv[++i]);
        else if (a == "--legit-cps" && v) legit_cps = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--mix" && v) mix = argv[++i];
        else if (a == "--backlog" && v) backlog = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
        else if (a == "--flood-max" && v) flood_max = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--unknown-sources" && v) unknown_sources = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
        else if (a == "--call-timeout" && v) call_timeout = std::atof(argv[++i]);
        else if (a == "--config-extra" && v) extra_file = argv[++i];
        else if (a == "--timeline-ms" && v) timeline_ms = std::atof(argv[++i]);
        else if (a == "--port" && v) port_kind = argv[++i];
        else {
            std::fprintf(
                stderr,
                "usage: flood_bench [--seconds N] [--baseline N] [--legit-cps N] "
                "[--mix all|unknown|invite|malformed|spoofed|floor|forward|forward_nic] [--backlog N] [--flood-max N] "
                "[--unknown-sources N] [--call-timeout S] [--config-extra FILE] [--timeline-ms N] [--port ring|null] "
                "-- EAL args\n");
            return 2;
        }
    }
    fl::generator_options go;
    if (mix != "all") {
        for (std::size_t k = 0; k < fl::kind_count; ++k) go.kinds[k] = mix == fl::kind_names[k];
        if (std::find(go.kinds.begin(), go.kinds.end(), true) == go.kinds.end()) {
            std::fprintf(stderr, "flood_bench: --mix: expected all, unknown, invite, malformed, spoofed, floor, forward or forward_nic, got %s\n",
                         mix.c_str());
            return 2;
        }
    }
    const bool forward_nic = mix == "forward_nic";
    const bool forward = mix == "forward" || forward_nic;
    if (forward) legit_cps = 0;  // the macswap stage would send the calls' messages back
    const bool owned = port_kind == "null";
    if (port_kind != "ring" && !owned) {
        std::fprintf(stderr, "flood_bench: --port: expected ring or null, got %s\n", port_kind.c_str());
        return 2;
    }
    if (owned && (forward_nic || mix == "spoofed")) {
        std::fprintf(stderr, "flood_bench: --port null: the worker frees what it sends there already (no forward_nic), "
                             "and its frames repeat (no spoofed)\n");
        return 2;
    }
    if (owned) legit_cps = 0;  // nothing comes from the generator on that port
    backlog = std::clamp(backlog, 32u, 16384u);
    unknown_sources = std::clamp(unknown_sources, 1u, 65536u);
    seconds = std::clamp(seconds, 0.1, 120.0);
    baseline = std::clamp(baseline, 0.1, 60.0);
    call_timeout = std::clamp(call_timeout, 0.1, 60.0);
    std::string extra;
    if (!extra_file.empty()) {
        std::ifstream f(extra_file);
        std::stringstream ss;
        ss << f.rdbuf();
        if (!f) {
            std::fprintf(stderr, "flood_bench: cannot read %s\n", extra_file.c_str());
            return 2;
        }
        extra = ss.str();
    }

    const std::string device = owned ? "net_null_flood" : "net_ring_flood";
    const auto loaded = sbc::control::parse_config(config_text(device, extra), "flood_bench.toml");
    if (!loaded.cfg) {
        for (const auto& e : loaded.errors) std::fprintf(stderr, "flood_bench: %s\n", e.to_string().c_str());
        return 2;
    }
    const sbc::control::config& cfg = *loaded.cfg;

    if (!sbc::bench::eal_init("flood_bench", argc, argv, i)) return 1;
    const int socket = static_cast<int>(rte_socket_id());
    rte_ring* rx = rte_ring_create("flood_rx", 65536, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
    rte_ring* tx = rte_ring_create("flood_tx", 65536, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
    go.pool = rte_pktmbuf_pool_create("flood_gen", 65535, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, socket);
    if (rx == nullptr || tx == nullptr || go.pool == nullptr) {
        std::fprintf(stderr, "flood_bench: rings or pool: %s\n", rte_strerror(rte_errno));
        return 1;
    }
    if (owned) {
        // net_null: its RX takes fresh mbufs from the worker's own pool and its TX frees on the
        // worker, as a NIC's refill and completion do; the frame is what the mbuf last held.
        const std::string args = "size=" + std::to_string(null_frame_bytes);
        if (rte_vdev_init(device.c_str(), args.c_str()) != 0) {
            std::fprintf(stderr, "flood_bench: cannot create %s\n", device.c_str());
            return 1;
        }
    } else if (rte_eth_from_rings("flood", &rx, 1, &tx, 1, static_cast<unsigned>(socket)) < 0) {
        std::fprintf(stderr, "flood_bench: rte_eth_from_rings: %s\n", rte_strerror(rte_errno));
        return 1;
    }
    std::string error;
    dp::port_options po;
    po.workers = 1;
    po.mbufs_per_worker = 65535;
    po.setups_per_worker = cfg.limits.transactions_per_worker;
    po.dialogs_per_worker = cfg.limits.dialogs_per_worker;
    auto rt = dp::start_dataplane({device}, po, error);
    if (rt == nullptr) {
        std::fprintf(stderr, "flood_bench: %s\n", error.c_str());
        return 1;
    }
    auto snap = sbc::control::build_snapshot(cfg, rt->ports, 1, error);
    sbc::control::peer_ids ids;
    if (snap) snap->proxy = sbc::control::build_proxy_tables(cfg, snap->interfaces, 1, ids, error);
    if (!snap || !snap->proxy) {
        std::fprintf(stderr, "flood_bench: %s\n", error.c_str());
        return 1;
    }
    fl::control_stand_in control{cfg, rt->shared->flood, snap->proxy, {}};
    sbc::control::publish_snapshot(rt->shared->snap, std::move(snap));
    control.publish();
    for (uint32_t host : {fl::caller_ip, fl::untrusted_ip, fl::callee_ip}) {
        const dp::mac_addr mac{0x02, 0, 0, 0, 0, static_cast<uint8_t>(host & 0xff)};
        rt->shared->neighbours.insert(sbc::ip_address::v4(host), mac, 1);
    }
    std::printf("config: carrier 198.18.0.2/32:5060 trusted, customers 198.18.0.3/32,198.18.128.0/17:5062 untrusted, peer "
                "198.18.0.11; transactions_per_worker=%u%s%s\n",
                cfg.limits.transactions_per_worker, extra.empty() ? "" : "; extra: ", extra_file.c_str());
    const sbc::dataplane::flood_limits& lim = cfg.flood;
    std::printf("config: [flood] enabled=%s trusted_rate=%u/%u untrusted_rate=%u/%u untrusted_trunk_rate=%u/%u "
                "unknown_rate=%u/%u deny_after_malformed=%u deny_s=%u (rate/burst per source and worker, the trunk's "
                "and unknown's per worker; 0: no limit)\n",
                cfg.flood.enabled ? "true" : "false", lim.trusted_rate, lim.trusted_burst, lim.untrusted_rate,
                lim.untrusted_burst, lim.untrusted_trunk_rate, lim.untrusted_trunk_burst, lim.unknown_rate,
                lim.unknown_burst, lim.deny_after_malformed, cfg.flood.deny_s);
    std::printf("run: port=%s mix=%s legit_cps=%lu baseline_s=%.1f flood_s=%.1f backlog=%u unknown_sources=%u "
                "call_timeout_s=%.1f\n",
                port_kind.c_str(), mix.c_str(), static_cast<unsigned long>(legit_cps), baseline, seconds, backlog,
                unknown_sources, call_timeout);

    const uint64_t hz = rte_get_tsc_hz();
    go.to_worker = rx;
    go.from_worker = tx;
    go.events = rt->events;
    if (forward_nic) {
        // As large as the port's rings: every frame in flight fits, none is freed elsewhere.
        completions = rte_ring_create("flood_done", 65536, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
        if (completions == nullptr) {
            std::fprintf(stderr, "flood_bench: completion ring: %s\n", rte_strerror(rte_errno));
            return 1;
        }
        go.completions = completions;
    }
    std::memcpy(go.sbc_mac, rt->ports[0].mac.addr_bytes, 6);
    go.hz = hz;
    go.backlog = backlog;
    go.unknown_sources = unknown_sources;
    go.call_timeout_tsc = static_cast<uint64_t>(call_timeout * static_cast<double>(hz));
    go.max_calls = static_cast<std::size_t>(static_cast<double>(legit_cps) * (baseline + seconds + 4) + 1024);
    go.event_ctx = &control;
    go.on_event = [](const dp::event& e, void* ctx) {
        static_cast<fl::control_stand_in*>(ctx)->on_event(e, rte_rdtsc() / (rte_get_tsc_hz() / 1000));
    };
    fl::generator g(go);
    if (owned) {
        if (!preload(rt->ports[0].port_id, g)) return 1;
        // The steady state from the first frame: the untrusted source denied (as it is within
        // milliseconds of its flood in the ring runs), so that no flood frame is parsed.
        control.list.add(sbc::ip_address::v4(fl::untrusted_ip), dp::deny_reason::by_operator, "flood_bench --port null",
                         cfg.flood.deny_s, false, rte_rdtsc() / (hz / 1000), 0);
        control.publish();
    }

    dp::worker& w = *rt->workers[0];
    const auto launch = [&w]<typename Stage>(Stage) {
        return rte_eal_remote_launch(
            [](void* arg) -> int {
                worker_thread = pthread_self();
                worker_tid.store(gettid());
                worker_started.store(true);
                dp::run_loop(*static_cast<dp::worker*>(arg), Stage{});
                return 0;
            },
            &w, w.lcore);
    };
    if ((forward_nic ? launch(forward_nic_stage{})
         : forward   ? launch(sbc::bench::macswap_stage{})
                     : launch(dp::production{})) != 0) {
        std::fprintf(stderr, "flood_bench: cannot launch the worker on lcore %u\n", w.lcore);
        return 1;
    }
    rt->launched = true;
    while (!worker_started.load()) std::this_thread::yield();

    const auto at = [hz](uint64_t from, double s) { return from + static_cast<uint64_t>(s * static_cast<double>(hz)); };
    uint64_t next_tick = 0;
    const uint64_t tick_tsc = hz / 1000;
    const auto step = [&](uint64_t t, uint64_t legit_due, bool with_flood) {
        g.round(t, legit_due, with_flood);
        if (t >= next_tick) {
            control.tick(t / tick_tsc);
            next_tick = t + tick_tsc;
        }
    };
    const uint64_t legit0 = rte_rdtsc();
    const auto due = [&](uint64_t now) { return (now - legit0) * legit_cps / hz; };
    uint64_t now = legit0;
    while ((now = rte_rdtsc()) < at(legit0, 0.5)) step(now, due(now), false);

    // Baseline: legitimate calls only.
    const mark b0 = take(w, g);
    while ((now = rte_rdtsc()) < at(b0.tsc, baseline)) step(now, due(now), false);
    const mark b1 = take(w, g);
    const window base = between(b0, b1, hz);

    // Flood: legitimate calls and the flood; then until the worker has taken every frame.
    const mark f0 = take(w, g);
    uint64_t next_print = at(f0.tsc, 1), ok_prev = g.ok(), fl_prev = 0;
    fl::overload_seen ov;
    const sbc::sip::overload_policy& ovp = cfg.overload;
    const auto ms_since = [&](uint64_t t) { return static_cast<double>(t - f0.tsc) * 1e3 / static_cast<double>(hz); };
    mark tl_prev = f0;
    uint64_t next_tl = timeline_ms > 0 ? at(f0.tsc, timeline_ms / 1e3) : UINT64_MAX;
    while ((now = rte_rdtsc()) < at(f0.tsc, seconds) && sum(g.offered()) - sum(f0.flood) < flood_max) {
        step(now, due(now), !owned);
        ov.sample(ovp, ms_since(now));
        if (now >= next_tl) {
            const mark m = take(w, g);
            const window d = between(tl_prev, m, hz);
            const dp::overload_view v = dp::overload_of(0);
            const auto drop = [&](dp::drop_reason r) { return static_cast<unsigned long>(d.d.drops[static_cast<std::size_t>(r)]); };
            const auto px = [&](sip::proxy_counter c) { return static_cast<unsigned long>(d.proxy[static_cast<std::size_t>(c)]); };
            std::printf("timeline: ms=%.0f reduction=%u busy_permille=%u ring_percent=%u rx=%lu loop_busy=%.0f%% "
                        "rate_drops=%lu denied_drops=%lu invites=%lu shed=%lu retransmits=%lu page_faults=%lu legit_failed=%lu\n",
                        ms_since(m.tsc), v.reduction, v.busy_permille, v.ring_percent,
                        static_cast<unsigned long>(d.d.rx_packets), d.busy * 100, drop(dp::drop_reason::flood_rate_untrusted),
                        drop(dp::drop_reason::flood_denied), px(sip::proxy_counter::invites),
                        px(sip::proxy_counter::shed_overload), px(sip::proxy_counter::retransmits_sent),
                        static_cast<unsigned long>(d.faults), static_cast<unsigned long>(g.failed()));
            tl_prev = m;
            next_tl = at(next_tl, timeline_ms / 1e3);
        }
        if (now >= next_print) {
            const uint64_t f = sum(g.offered());
            std::printf("second: legit_ok=%lu legit_failed=%lu legit_open=%lu flood_offered=%lu rx_backlog=%u\n",
                        static_cast<unsigned long>(g.ok() - ok_prev), static_cast<unsigned long>(g.failed()),
                        static_cast<unsigned long>(g.legit_open()), static_cast<unsigned long>(f - fl_prev), g.rx_backlog());
            std::fflush(stdout);
            ok_prev = g.ok();
            fl_prev = f;
            next_print = at(next_print, 1);
        }
    }
    const uint64_t drain_until = at(now, 2);
    while ((now = rte_rdtsc()) < drain_until && g.rx_backlog() != 0) {
        step(now, due(now), false);
        ov.sample(ovp, ms_since(now));
    }
    const uint64_t settle = at(now, 0.001);  // the worker's last burst
    while ((now = rte_rdtsc()) < settle) step(now, due(now), false);
    const mark f1 = take(w, g);
    const window flood = between(f0, f1, hz);

    // Tail: no new call; the open ones end or time out.
    const uint64_t started = g.started();
    const uint64_t tail_until = at(now, call_timeout + 0.5);
    while ((now = rte_rdtsc()) < tail_until && g.legit_open() != 0) step(now, started, false);
    const mark t1 = take(w, g);
    const window tail = between(f1, t1, hz);
    dp::stop_dataplane(*rt);

    const double legit_cpu_per_s = base.busy_cpu_s / base.wall_s;
    std::printf("baseline: wall_s=%.2f legit_calls=%lu worker_cpu_s=%.3f busy=%.1f%% busy_cpu_s=%.4f "
                "legit_busy_cpu_per_s=%.4f legit_us_per_call=%.2f\n",
                base.wall_s, static_cast<unsigned long>(base.legit_started), base.cpu_s, base.busy * 100, base.busy_cpu_s,
                legit_cpu_per_s,
                base.legit_started ? base.busy_cpu_s / static_cast<double>(base.legit_started) * 1e6 : 0.0);
    if (owned) std::printf("baseline: --port null: the port floods from the start; no calls, nothing subtracted\n");
    print_counters("baseline", base);
    print_counters("flood", flood);
    print_counters("tail", tail);
    // --port null: what the worker took from the port (forwarded, with the macswap stage).
    const uint64_t pkts = !owned ? sum(flood.flood) : forward ? flood.d.tx_packets : flood.d.rx_packets;
    const double legit_share = owned ? 0 : legit_cpu_per_s * flood.wall_s;
    const double flood_cpu = std::max(0.0, flood.busy_cpu_s - legit_share);
    const double drop_ns = pkts ? flood_cpu / static_cast<double>(pkts) * 1e9 : 0;
    const double flood_mpps = flood.busy_cpu_s > 0 ? static_cast<double>(pkts) / flood.busy_cpu_s / 1e6 : 0;
    for (std::size_t k = 0; k < fl::kind_count; ++k)
        if (go.kinds[k] && !owned)  // --port null: the port offers them (flood_pkts)
            std::printf("flood: kind=%s offered=%lu\n", std::string(fl::kind_names[k]).c_str(),
                        static_cast<unsigned long>(flood.flood[k]));
    std::printf("answers: to_unknown_sources=%lu to_untrusted_source:", static_cast<unsigned long>(g.unknown_answers()));
    for (std::size_t c = 0; c < g.untrusted_answers().size(); ++c)
        if (g.untrusted_answers()[c] != 0)
            std::printf(" %s=%lu", c == 0 ? "request" : std::to_string(c).c_str(),
                        static_cast<unsigned long>(g.untrusted_answers()[c]));
    std::printf(" flood_invites_reaching_callee=%lu\n", static_cast<unsigned long>(g.flood_invites_seen_by_callee()));
    std::printf("deny: source_reports=%lu denied_now=%zu policies_published=%lu denials:",
                static_cast<unsigned long>(control.reports), control.list.entries().size(),
                static_cast<unsigned long>(control.publishes));
    for (std::size_t r = 0; r < sbc::dataplane::deny_reason_count; ++r)
        std::printf(" %s=%lu", std::string(sbc::dataplane::deny_reason_name(static_cast<sbc::dataplane::deny_reason>(r))).c_str(),
                    static_cast<unsigned long>(control.list.denials()[r]));
    std::printf("\n");
    std::printf("overload: policy busy>%u%% ring>%u%% window_ms=%u; seen in the flood phase: max_reduction=%u "
                "max_busy_permille=%u max_ring_percent=%u overloaded_rounds=%lu/%lu (by_busy=%lu by_ring=%lu) "
                "first_ms=%.1f last_ms=%.1f\n",
                ovp.busy_percent, ovp.ring_percent, ovp.window_ms, ov.max_reduction, ov.max_busy, ov.max_ring,
                static_cast<unsigned long>(ov.overloaded), static_cast<unsigned long>(ov.samples),
                static_cast<unsigned long>(ov.by_busy), static_cast<unsigned long>(ov.by_ring), ov.first_ms, ov.last_ms);
    std::printf("legit: started=%lu ok=%lu failed=%lu timeouts=%lu", static_cast<unsigned long>(g.started()),
                static_cast<unsigned long>(g.ok()), static_cast<unsigned long>(g.failed()),
                static_cast<unsigned long>(g.timeouts()));
    for (std::size_t c = 1; c < g.failed_codes().size(); ++c)
        if (g.failed_codes()[c] != 0) std::printf(" final_%zu=%lu", c, static_cast<unsigned long>(g.failed_codes()[c]));
    std::printf(" open=%lu generator_unexpected=%lu generator_no_mbuf=%lu\n", static_cast<unsigned long>(g.legit_open()),
                static_cast<unsigned long>(g.unexpected()), static_cast<unsigned long>(g.no_mbuf()));
    std::printf("result: mix=%s wall_s=%.2f flood_pkts=%lu flood_wall_mpps=%.3f worker_cpu_s=%.3f busy=%.1f%% "
                "busy_cpu_s=%.3f legit_share_cpu_s=%.4f flood_cpu_s=%.3f flood_mpps=%.3f drop_ns_per_pkt=%.1f%s\n",
                mix.c_str(), flood.wall_s, static_cast<unsigned long>(pkts), static_cast<double>(pkts) / flood.wall_s / 1e6,
                flood.cpu_s, flood.busy * 100, flood.busy_cpu_s, legit_share, flood_cpu, flood_mpps, drop_ns,
                flood.busy < 0.9 ? " (worker below 90% busy: the generator, not the worker, limited the flood)" : "");
    {
        // Frames per busy iteration (full bursts: the per-iteration work is spread over 32) and
        // what a busy and an idle iteration cost: where a drop's cost goes, burst or loop.
        const auto& d = flood.d;
        const double busy_loops = static_cast<double>(d.busy_loops),
                     idle_loops = static_cast<double>(d.loops - d.busy_loops);
        const double frames =
            static_cast<double>(d.rx_packets != 0 ? d.rx_packets : d.tx_packets);  // macswap counts no rx
        const double ns_per_cycle = 1e9 / static_cast<double>(hz);
        std::printf(
            "loops: busy=%.0f idle=%.0f frames_per_busy_loop=%.1f busy_ns_per_loop=%.0f idle_ns_per_loop=%.0f\n",
            busy_loops, idle_loops, busy_loops > 0 ? frames / busy_loops : 0.0,
            busy_loops > 0 ? static_cast<double>(d.busy_cycles) * ns_per_cycle / busy_loops : 0.0,
            idle_loops > 0 ? static_cast<double>(d.total_cycles - d.busy_cycles) * ns_per_cycle / idle_loops : 0.0);
    }
    if (forward)
        std::printf("%s: fresh_ns_per_pkt=%.1f offered=%lu worker_tx=%lu returned=%lu busy=%.1f%%\n", mix.c_str(), drop_ns,
                    static_cast<unsigned long>(pkts), static_cast<unsigned long>(flood.d.tx_packets),
                    static_cast<unsigned long>(g.returned()), flood.busy * 100);
    std::printf("flood: legit_ok=%lu legit_failed=%lu flood_mpps=%.3f drop_ns_per_pkt=%.1f\n",
                static_cast<unsigned long>(g.ok()), static_cast<unsigned long>(g.failed() + g.legit_open()), flood_mpps,
                drop_ns);
    std::fflush(stdout);
    std::_Exit(0);  // the proxy's tables are large; the OS takes them back faster than delete
}
