// rtp benchmark, sbcd's side: one worker core relaying G.711 20 ms RTP (214-byte frames) through
// the production worker loop (run_loop of dataplane/worker.h) around the media relay stage
// (rtp::relay_burst of rtp/relay.h), and the same loop around testpmd's 5tswap work (swap MAC,
// IPv4 and UDP addresses, no lookup) as the ceiling. Driven by scripts/bench/rtp.sh.
//
// The loop: one net_ring port whose RX ring is its own TX ring (rte_eth_from_rings with one
// ring for both), so whatever the worker sends comes back to it. --in-flight packets (default
// 262,144, each its own mbuf with a 2 KiB buffer) are put in the ring before the worker starts:
// the worker touches each one once per lap, so packet data and mbufs are never cache-hot.
//
// Flows are set up the way sbcd sets them up: per call, an SDP offer from leg A and an answer
// from leg B through rtp::media_sessions::rewrite_sdp (which allocates the ports and publishes
// the streams in the flow table). A flow is one direction of one call's RTP (the packets
// arriving on one of our ports; its RTCP port is allocated beside it and idle here), so N
// flows are N/2 calls. The calls are chained: leg B of call c talks to leg A of call c+1 (the
// SDP of one names the SBC's port of the other, as when a call hairpins through the SBC), the
// last to the first. A packet relayed out of call c's B port thus arrives on call c+1's A
// port and is relayed again, round the whole chain; half the packets go the other way round.
// Every flow carries packets, symmetric latching sees the address its SDP gave (the two ends
// of the chain are latched by the first two packets in the ring), and each packet is
// looked up, latched-checked, counted (RFC 3550 sequence and jitter), rewritten and
// checksummed incrementally on every lap. The packets start at random places on the chain,
// so consecutive packets hit unrelated flows.
//
// Modes, run one after the other in one process over the same mbufs and ring:
//   ceiling      the 5tswap stage
//   FLOWS        the relay stage with FLOWS active flows (e.g. 1000, 100000, 1000000)
//   pFLOWS       sbcd's whole pipeline (run_loop(production): classify, IPv4, UDP, the RTP
//                stage of dataplane/rtp_stage.h, with media brought up by start_media as
//                sbcd does) for FLOWS flows on one media address (at most 32,256 flows); the
//                frames carry RX checksum-good flags, what a NIC's RX offload sets
// Per mode: warm-up, then --seconds one-second samples of the worker's tx_packets, divided by
// the CPU time the worker thread got in that second (the machine is shared; wall time would
// count another process's time as the worker's), median. Per relay mode also the process RSS
// growth from before the flow table was built to the end of the run (flow table, sessions,
// port pools, everything the flows touched), divided by the flows: bytes_per_flow.
// Output lines:
//   mode=ceiling mpps=X wall_mpps=Y cpu_share=Z
//   mode=relay flows=N mpps=X wall_mpps=Y cpu_share=Z bytes_per_flow=B table_bytes_per_flow=T drops=D
//   mode=pipeline flows=N ... (the same fields)
//
//   rtp_bench [--modes ceiling,1000,100000,1000000,p1000] [--in-flight N] [--seconds N] [--warmup N]
//             -- EAL args (main lcore: setup and sampling; one worker lcore)
#include <unistd.h>

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_launch.h>
#include <rte_udp.h>

#include "control/snapshot_build.h"
#include "dataplane/rtp_stage.h"
#include "dataplane/runtime.h"
#include "dataplane/stages.h"
#include "dataplane/worker.h"
#include "rtp/media.h"
#include "rtp/relay.h"
#include "bench_common.h"

namespace {

namespace dp = sbc::dataplane;
namespace rtp = sbc::rtp;

constexpr uint16_t frame_size = 214;  // 14 Ethernet + 20 IPv4 + 8 UDP + 12 RTP + 160 PCMU
constexpr uint16_t udp_payload = frame_size - 14 - 20 - 8;
constexpr uint32_t first_media_ip = 198u << 24 | 18u << 16 | 64u << 8 | 1;  // 198.18.64.1, .2, ...
constexpr uint16_t port_min = 1024;
constexpr uint16_t port_max = 65535;

// ---------------------------------------------------------------------------------------------
// The two stages (worker only).

/// testpmd's 5tswap: swap Ethernet, IPv4 and UDP source and destination, send back out.
struct swap_stage {
    uint32_t poll(dp::worker&, const dp::snapshot&, uint64_t) const noexcept { return 0; }
    void burst(dp::worker& w, const dp::snapshot&, uint16_t port, rte_mbuf** pkts, uint16_t n) const noexcept
    {
        for (uint16_t i = 0; i < n; ++i) {
            auto* eth = rte_pktmbuf_mtod(pkts[i], rte_ether_hdr*);
            const rte_ether_addr a = eth->src_addr;
            eth->src_addr = eth->dst_addr;
            eth->dst_addr = a;
            if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)) {
                auto* ip = reinterpret_cast<rte_ipv4_hdr*>(eth + 1);
                const rte_be32_t src = ip->src_addr;
                ip->src_addr = ip->dst_addr;
                ip->dst_addr = src;
                if (ip->next_proto_id == IPPROTO_UDP) {
                    auto* udp = reinterpret_cast<rte_udp_hdr*>(reinterpret_cast<uint8_t*>(ip) + rte_ipv4_hdr_len(ip));
                    const rte_be16_t sport = udp->src_port;
                    udp->src_port = udp->dst_port;
                    udp->dst_port = sport;
                }
            }
            dp::tx_enqueue(w, port, pkts[i]);
        }
    }
};

/// The relay: what sbcd's classify/IPv4/UDP stages hand the relay (an IPv4 UDP datagram to
/// one of our media addresses, l2_len and l3_len set), then rtp::relay_burst and TX. The
/// IPv4 and UDP checksums are not verified here: that is the NIC's RX offload on real ports.
struct relay_stage {
    const rtp::relay_env* env = nullptr;
    const rtp::media_egress_table* egress = nullptr;
    rtp::relay_counters* counters = nullptr;
    uint64_t* not_media = nullptr;  ///< packets the bench itself could not hand to the relay

    uint32_t poll(dp::worker&, const dp::snapshot&, uint64_t) const noexcept { return 0; }
    void burst(dp::worker& w, const dp::snapshot&, uint16_t, rte_mbuf** pkts, uint16_t n) const noexcept
    {
        const uint64_t now_tsc = rte_rdtsc();
        std::array<rte_mbuf*, dp::burst_size> media;
        std::array<uint8_t, dp::burst_size> addr;
        uint16_t m = 0;
        for (uint16_t i = 0; i < n; ++i) {
            rte_mbuf* p = pkts[i];
            const auto* eth = rte_pktmbuf_mtod(p, const rte_ether_hdr*);
            const auto* ip = reinterpret_cast<const rte_ipv4_hdr*>(eth + 1);
            const int a = eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) && ip->next_proto_id == IPPROTO_UDP
                              ? env->table->address_index(rte_be_to_cpu_32(ip->dst_addr))
                              : -1;
            if (a < 0) {
                ++*not_media;
                rte_pktmbuf_free(p);
                continue;
            }
            p->l2_len = sizeof(rte_ether_hdr);
            p->l3_len = static_cast<uint16_t>(rte_ipv4_hdr_len(ip));
            media[m] = p;
            addr[m] = static_cast<uint8_t>(a);
            ++m;
        }
        rtp::relay_out out;
        out.n = 0;
        rtp::relay_burst(*env, *egress, media.data(), addr.data(), m, now_tsc, now_tsc / w.tsc_per_ms, out, *counters);
        for (uint16_t i = 0; i < out.n; ++i) dp::tx_enqueue(w, out.port[i], out.pkts[i]);
    }
};

// ---------------------------------------------------------------------------------------------
// Measurement helpers (main lcore).

pthread_t worker_thread;
std::atomic<bool> worker_running{false};

double worker_cpu_s() { return sbc::bench::thread_cpu_s(worker_thread); }
using sbc::bench::rss_bytes;

using sbc::bench::median;

struct bench {
    dp::dataplane_runtime* rt = nullptr;
    dp::worker* w = nullptr;
    rte_ring* ring = nullptr;
    rte_mempool* pool = nullptr;
    uint16_t port = 0;
    rte_ether_addr mac{};
    unsigned in_flight = 262144;
    unsigned seconds = 3, warmup = 1;
};

/// One frame from (src, sport) to (dst, dport) in `m`: Ethernet to and from our own MAC (what
/// latching learns), IPv4 and UDP checksums right, an RTP header with sequence `seq`.
void write_frame(const bench& b, rte_mbuf* m, uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport, uint32_t seq)
{
    rte_pktmbuf_reset(m);
    char* p = rte_pktmbuf_append(m, frame_size);
    std::memset(p, 0xff, frame_size);  // PCMU silence
    auto* eth = reinterpret_cast<rte_ether_hdr*>(p);
    eth->dst_addr = b.mac;
    eth->src_addr = b.mac;
    eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
    auto* ip = reinterpret_cast<rte_ipv4_hdr*>(eth + 1);
    ip->version_ihl = RTE_IPV4_VHL_DEF;
    ip->type_of_service = 0xb8;  // EF, as phones mark voice
    ip->total_length = rte_cpu_to_be_16(frame_size - 14);
    ip->packet_id = 0;
    ip->fragment_offset = 0;
    ip->time_to_live = 64;
    ip->next_proto_id = IPPROTO_UDP;
    ip->src_addr = rte_cpu_to_be_32(src);
    ip->dst_addr = rte_cpu_to_be_32(dst);
    ip->hdr_checksum = 0;
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
    udp->src_port = rte_cpu_to_be_16(sport);
    udp->dst_port = rte_cpu_to_be_16(dport);
    udp->dgram_len = rte_cpu_to_be_16(8 + udp_payload);
    auto* r = reinterpret_cast<uint8_t*>(udp + 1);
    r[0] = 0x80;
    r[1] = 0;  // PT 0, PCMU
    r[2] = static_cast<uint8_t>(seq >> 8);
    r[3] = static_cast<uint8_t>(seq);
    const uint32_t ts = seq * 160, ssrc = 0x5bc00000u ^ src ^ sport;
    for (int i = 0; i < 4; ++i) {
        r[4 + i] = static_cast<uint8_t>(ts >> (24 - 8 * i));
        r[8 + i] = static_cast<uint8_t>(ssrc >> (24 - 8 * i));
    }
    udp->dgram_cksum = 0;
    udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
    // What a NIC with RX checksum offload reports; only the pipeline mode reads it.
    m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD;
}

/// Puts the prepared frames in the ring (the worker is stopped). False when it is too small.
bool fill_ring(const bench& b, std::vector<rte_mbuf*>& frames)
{
    const unsigned n = static_cast<unsigned>(frames.size());
    return rte_ring_sp_enqueue_bulk(b.ring, reinterpret_cast<void**>(frames.data()), n, nullptr) == n;
}

/// Frees whatever is left in the ring after the worker stopped; returns how many there were.
unsigned drain_ring(const bench& b)
{
    unsigned total = 0;
    std::array<void*, 256> objs;
    for (;;) {
        const unsigned n = rte_ring_sc_dequeue_burst(b.ring, objs.data(), objs.size(), nullptr);
        if (n == 0) break;
        rte_pktmbuf_free_bulk(reinterpret_cast<rte_mbuf**>(objs.data()), n);
        total += n;
    }
    return total;
}

struct run_result {
    double mpps = 0, wall_mpps = 0, cpu_share = 0;
};

/// Runs `stage` on the worker lcore for warm-up plus the samples; returns the medians.
template <class Stage>
bool run_stage(bench& b, Stage stage, run_result& res)
{
    static Stage* current = nullptr;
    current = &stage;
    b.w->shared->stop.store(false);
    worker_running.store(false);
    if (rte_eal_remote_launch(
            [](void* arg) -> int {
                worker_thread = pthread_self();
                worker_running.store(true);
                dp::run_loop(*static_cast<dp::worker*>(arg), *current);
                return 0;
            },
            b.w, b.w->lcore) != 0) {
        std::fprintf(stderr, "rtp_bench: cannot launch the worker on lcore %u\n", b.w->lcore);
        return false;
    }
    while (!worker_running.load()) std::this_thread::yield();
    using clock = std::chrono::steady_clock;
    std::this_thread::sleep_for(std::chrono::seconds(b.warmup));
    std::vector<double> per_cpu, wall, share;
    auto before = dp::snapshot_of(b.w->counters);
    double cpu0 = worker_cpu_s();
    auto t0 = clock::now();
    for (unsigned s = 0; s < b.seconds; ++s) {
        std::this_thread::sleep_until(t0 + std::chrono::seconds(1));
        const auto now = dp::snapshot_of(b.w->counters);
        const double cpu1 = worker_cpu_s();
        const auto t1 = clock::now();
        const auto d = dp::difference(before, now);
        const double secs = std::chrono::duration<double>(t1 - t0).count();
        const double cpu = cpu1 - cpu0;
        const auto pkts = static_cast<double>(d.tx_packets);
        if (cpu > 0.05) per_cpu.push_back(pkts / cpu / 1e6);
        wall.push_back(pkts / secs / 1e6);
        share.push_back(cpu / secs);
        before = now;
        cpu0 = cpu1;
        t0 = t1;
    }
    b.w->shared->stop.store(true);
    rte_eal_wait_lcore(b.w->lcore);
    res.mpps = median(per_cpu);
    res.wall_mpps = median(wall);
    res.cpu_share = median(share);
    return true;
}

// ---------------------------------------------------------------------------------------------
// Relay mode setup: calls through media_sessions, chained.

/// Our media address and port in an SDP body the SBC wrote ("c=IN IP4 a.b.c.d", "m=audio P").
bool sdp_endpoint(std::string_view body, uint32_t& ip, uint16_t& port)
{
    const auto c = body.find("c=IN IP4 ");
    const auto m = body.find("m=audio ");
    if (c == std::string_view::npos || m == std::string_view::npos) return false;
    unsigned a = 0, b2 = 0, c2 = 0, d = 0, p = 0;
    if (std::sscanf(std::string(body.substr(c + 9, 16)).c_str(), "%u.%u.%u.%u", &a, &b2, &c2, &d) != 4) return false;
    if (std::sscanf(std::string(body.substr(m + 8, 6)).c_str(), "%u", &p) != 1) return false;
    ip = a << 24 | b2 << 16 | c2 << 8 | d;
    port = static_cast<uint16_t>(p);
    return true;
}

std::string sdp_body(uint64_t call, uint32_t ip, uint16_t port)
{
    char b[320];
    const int n = std::snprintf(b, sizeof b,
                                "v=0\r\no=- %lu 1 IN IP4 %u.%u.%u.%u\r\ns=-\r\nc=IN IP4 %u.%u.%u.%u\r\nt=0 0\r\n"
                                "m=audio %u RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\na=ptime:20\r\na=sendrecv\r\n",
                                static_cast<unsigned long>(call), ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255,
                                ip & 255, ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255, port);
    return std::string(b, static_cast<std::size_t>(n));
}

bool neighbour_is_us(const void* ctx, uint32_t, uint8_t mac[6]) noexcept
{
    std::memcpy(mac, static_cast<const rte_ether_addr*>(ctx)->addr_bytes, 6);
    return true;
}

struct endpoint {
    uint32_t ip = 0;
    uint16_t port = 0;
};

bool run_relay(bench& b, unsigned flows, bool pipeline, std::mt19937_64& rng)
{
    const unsigned calls = std::max(2u, flows / 2);
    const uint64_t rss0 = rss_bytes();

    // Enough addresses for the calls: a call takes one port pair facing each leg.
    const uint32_t pairs_per_address = (uint32_t{port_max} - port_min + 1) / 2;
    const unsigned addresses = static_cast<unsigned>((2ull * calls + pairs_per_address - 1) / pairs_per_address);
    if (addresses > rtp::max_media_addresses || (pipeline && addresses > 1)) {
        std::fprintf(stderr, "rtp_bench: %u flows need %u media addresses (at most %u; the pipeline mode: 1)\n", flows,
                     addresses, pipeline ? 1 : rtp::max_media_addresses);
        return false;
    }
    rtp::flow_table_config tc;
    for (unsigned i = 0; i < addresses; ++i) tc.addresses.push_back(first_media_ip + i);
    tc.port_min = port_min;
    tc.port_max = port_max;
    tc.workers = 1;
    rtp::media_config mc;
    mc.enabled = true;
    for (const uint32_t a : tc.addresses) mc.addresses.push_back(sbc::ip_address::v4(a));
    mc.port_min = port_min;
    mc.port_max = port_max;
    mc.inactivity_timeout_s = 0;
    mc.sessions_per_worker = std::max<uint32_t>(1024, std::bit_ceil(calls));
    // The relay mode owns its table and sessions; the pipeline mode has sbcd's start_media
    // build them into the runtime, beside an interface that owns the media address.
    std::unique_ptr<rtp::flow_table> own_table;
    std::unique_ptr<rtp::media_sessions> own_sessions;
    rtp::flow_table* table = nullptr;
    rtp::media_sessions* sessions = nullptr;
    if (pipeline) {
        auto snap = std::make_unique<dp::snapshot>();
        snap->generation = 2;
        dp::interface_info ifc;
        ifc.name = "media";
        ifc.port_id = b.port;
        ifc.address = {sbc::ip_address::v4(first_media_ip), 15};  // 198.18.64.1/15
        std::memcpy(ifc.mac.data(), b.mac.addr_bytes, 6);
        snap->interfaces.push_back(ifc);
        snap->index_interfaces();
        std::string error;
        if (!dp::media_egress_of(mc, snap->interfaces, b.rt->ports, snap->media_egress, error) ||
            !dp::start_media(*b.rt, mc, error)) {
            std::fprintf(stderr, "rtp_bench: start_media: %s\n", error.c_str());
            return false;
        }
        sbc::control::publish_snapshot(b.rt->shared->snap, std::move(snap));
        dp::mac_addr us;
        std::memcpy(us.data(), b.mac.addr_bytes, 6);
        b.rt->shared->neighbours.insert(sbc::ip_address::v4(first_media_ip), us, 1);
        table = b.rt->shared->media_flows.get();
        sessions = b.w->media.get();
    } else {
        own_table = std::make_unique<rtp::flow_table>(tc);
        own_sessions = std::make_unique<rtp::media_sessions>(*own_table, 0, mc);
        table = own_table.get();
        sessions = own_sessions.get();
    }

    // Offers in call order (leg A of call c sits at our B port of call c-1), answers in reverse
    // order (leg B of call c sits at our A port of call c+1). The two ends of the chain are not
    // known when their SDP is written: they carry a placeholder, and latching fixes them.
    std::vector<endpoint> a_port(calls), b_port(calls);
    const endpoint placeholder{198u << 24 | 19u << 16 | 255u << 8 | 1, 9};
    std::vector<char> out(4096);
    const auto t_setup = std::chrono::steady_clock::now();
    for (unsigned c = 0; c < calls; ++c) {
        const endpoint far = c == 0 ? placeholder : b_port[c - 1];
        const std::string body = sdp_body(c + 1, far.ip, far.port);
        std::size_t len = 0;
        if (sessions->rewrite_sdp(c + 1, sbc::sip::media_leg::b, "application/sdp", body, out, len, 0) !=
                sbc::sip::sdp_verdict::rewritten ||
            !sdp_endpoint({out.data(), len}, b_port[c].ip, b_port[c].port)) {
            std::fprintf(stderr, "rtp_bench: offer of call %u not anchored\n", c);
            return false;
        }
    }
    for (unsigned c = calls; c-- > 0;) {
        const endpoint far = c + 1 == calls ? placeholder : a_port[c + 1];
        const std::string body = sdp_body(c + 1, far.ip, far.port);
        std::size_t len = 0;
        if (sessions->rewrite_sdp(c + 1, sbc::sip::media_leg::a, "application/sdp", body, out, len, 0) !=
                sbc::sip::sdp_verdict::rewritten ||
            !sdp_endpoint({out.data(), len}, a_port[c].ip, a_port[c].port)) {
            std::fprintf(stderr, "rtp_bench: answer of call %u not anchored\n", c);
            return false;
        }
    }
    const double setup_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_setup).count();

    rtp::relay_env env;
    env.table = table;
    rtp::media_egress_table egress{};
    for (unsigned i = 0; i < addresses; ++i) {
        rtp::media_egress& e = egress[i];
        e.port_id = b.port;
        std::memcpy(e.mac, b.mac.addr_bytes, 6);
        e.netmask = 0xfffe0000;  // 198.18.0.0/15
    }
    env.lookup = neighbour_is_us;
    env.lookup_ctx = &b.mac;
    env.tsc_hz = rte_get_tsc_hz();

    // The frames: first the two that latch the ends of the chain, then the rest at random
    // places, alternately forward (into an A port, from the previous call's B port) and
    // backward (into a B port, from the next call's A port).
    std::vector<rte_mbuf*> frames(b.in_flight);
    if (rte_pktmbuf_alloc_bulk(b.pool, frames.data(), b.in_flight) != 0) {
        std::fprintf(stderr, "rtp_bench: cannot allocate %u mbufs\n", b.in_flight);
        return false;
    }
    auto forward = [&](rte_mbuf* m, unsigned c, uint32_t seq) {
        const endpoint& from = b_port[(c + calls - 1) % calls];
        write_frame(b, m, from.ip, from.port, a_port[c].ip, a_port[c].port, seq);
    };
    auto backward = [&](rte_mbuf* m, unsigned c, uint32_t seq) {
        const endpoint& from = a_port[(c + 1) % calls];
        write_frame(b, m, from.ip, from.port, b_port[c].ip, b_port[c].port, seq);
    };
    forward(frames[0], 0, 0);
    backward(frames[1], calls - 1, 0);
    std::uniform_int_distribution<unsigned> pick(0, calls - 1);
    for (unsigned i = 2; i < b.in_flight; ++i) {
        if (i & 1) backward(frames[i], pick(rng), i);
        else forward(frames[i], pick(rng), i);
    }
    if (!fill_ring(b, frames)) {
        std::fprintf(stderr, "rtp_bench: the ring cannot hold %u frames\n", b.in_flight);
        return false;
    }

    rtp::relay_counters own_counters;
    rtp::relay_counters& counters = pipeline ? b.w->media_counters : own_counters;
    const uint64_t relayed0[2] = {counters.packets[0].get(), counters.packets[1].get()};
    const uint64_t latched0 = counters.latched.get();
    uint64_t drops0 = 0;
    for (const auto& d : counters.drops) drops0 += d.get();
    const auto worker0 = dp::snapshot_of(b.w->counters);
    uint64_t not_media = 0;
    run_result r;
    if (!(pipeline ? run_stage(b, dp::production{}, r) : run_stage(b, relay_stage{&env, &egress, &counters, &not_media}, r)))
        return false;
    const uint64_t rss1 = rss_bytes();
    // Relay drops, and in the pipeline whatever the stages before it dropped.
    uint64_t drops = not_media + dp::difference(worker0, dp::snapshot_of(b.w->counters)).drops_total();
    for (const auto& d : counters.drops) drops += d.get();
    drops -= drops0;
    const unsigned left = drain_ring(b);
    std::printf("mode=%s flows=%u calls=%u addresses=%u setup_ms=%.0f mpps=%.3f wall_mpps=%.3f cpu_share=%.2f "
                "bytes_per_flow=%.0f table_bytes_per_flow=%.0f relayed_a=%lu relayed_b=%lu drops=%lu latched=%lu "
                "in_flight_end=%u\n",
                pipeline ? "pipeline" : "relay", 2 * calls, calls, addresses, setup_ms, r.mpps, r.wall_mpps, r.cpu_share,
                static_cast<double>(rss1 - rss0) / (2.0 * calls),
                static_cast<double>(table->bytes_allocated()) / (2.0 * calls),
                static_cast<unsigned long>(counters.packets[0].get() - relayed0[0]),
                static_cast<unsigned long>(counters.packets[1].get() - relayed0[1]), static_cast<unsigned long>(drops),
                static_cast<unsigned long>(counters.latched.get() - latched0), left);
    for (std::size_t i = 0; i < rtp::relay_drop_count; ++i) {
        if (counters.drops[i].get() != 0) {
            std::printf("  drop %.*s=%lu\n", static_cast<int>(rtp::relay_drop_name(static_cast<rtp::relay_drop>(i)).size()),
                        rtp::relay_drop_name(static_cast<rtp::relay_drop>(i)).data(),
                        static_cast<unsigned long>(counters.drops[i].get()));
        }
    }
    std::fflush(stdout);
    return true;
}

bool run_ceiling(bench& b, std::mt19937_64& rng)
{
    std::vector<rte_mbuf*> frames(b.in_flight);
    if (rte_pktmbuf_alloc_bulk(b.pool, frames.data(), b.in_flight) != 0) {
        std::fprintf(stderr, "rtp_bench: cannot allocate %u mbufs\n", b.in_flight);
        return false;
    }
    std::uniform_int_distribution<uint32_t> any;
    for (unsigned i = 0; i < b.in_flight; ++i) {
        const uint32_t r = any(rng);
        write_frame(b, frames[i], first_media_ip + (r & 15), static_cast<uint16_t>(port_min + (r >> 16)),
                    first_media_ip + 16 + (r & 15), static_cast<uint16_t>(port_min + ((r >> 4) & 0xfff)), i);
    }
    if (!fill_ring(b, frames)) {
        std::fprintf(stderr, "rtp_bench: the ring cannot hold %u frames\n", b.in_flight);
        return false;
    }
    run_result r;
    if (!run_stage(b, swap_stage{}, r)) return false;
    const unsigned left = drain_ring(b);
    std::printf("mode=ceiling mpps=%.3f wall_mpps=%.3f cpu_share=%.2f in_flight_end=%u\n", r.mpps, r.wall_mpps,
                r.cpu_share, left);
    std::fflush(stdout);
    return true;
}

}  // namespace

int main(int argc, char** argv)
{
    bench b;
    std::string modes = "ceiling,1000,100000,1000000";
    int i = 1;
    for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
        const std::string a = argv[i];
        if (a == "--modes" && i + 1 < argc) modes = argv[++i];
        else if (a == "--in-flight" && i + 1 < argc) b.in_flight = static_cast<unsigned>(std::atoi(argv[++i]));
        else if (a == "--seconds" && i + 1 < argc) b.seconds = static_cast<unsigned>(std::atoi(argv[++i]));
        else if (a == "--warmup" && i + 1 < argc) b.warmup = static_cast<unsigned>(std::atoi(argv[++i]));
        else {
            std::fprintf(stderr, "usage: rtp_bench [--modes ceiling,1000,...] [--in-flight N] [--seconds N] "
                                 "[--warmup N] -- EAL args\n");
            return 2;
        }
    }
    if (b.in_flight < 2 || b.seconds == 0) {
        std::fprintf(stderr, "rtp_bench: --in-flight >= 2 and --seconds >= 1\n");
        return 2;
    }
    if (!sbc::bench::eal_init("rtp_bench", argc, argv, i)) return 1;
    const int socket = static_cast<int>(rte_socket_id());
    b.ring = rte_ring_create("rtpb_loop", rte_align32pow2(b.in_flight + 1024), socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
    b.pool = rte_pktmbuf_pool_create("rtpb_pool", b.in_flight + 4096, 512, 0, RTE_MBUF_DEFAULT_BUF_SIZE, socket);
    if (b.ring == nullptr || b.pool == nullptr) {
        std::fprintf(stderr, "rtp_bench: ring or pool of %u mbufs: %s (raise -m)\n", b.in_flight, rte_strerror(rte_errno));
        return 1;
    }
    const int port = rte_eth_from_rings("rtpb", &b.ring, 1, &b.ring, 1, static_cast<unsigned>(socket));
    if (port < 0) {
        std::fprintf(stderr, "rtp_bench: rte_eth_from_rings: %s\n", rte_strerror(rte_errno));
        return 1;
    }
    b.port = static_cast<uint16_t>(port);
    std::string error;
    dp::port_options po;
    po.workers = 1;
    po.mbufs_per_worker = 2047;
    po.setups_per_worker = 1024;
    po.dialogs_per_worker = 1024;
    auto rt = dp::start_dataplane({"net_ring_rtpb"}, po, error);
    if (rt == nullptr) {
        std::fprintf(stderr, "rtp_bench: %s\n", error.c_str());
        return 1;
    }
    b.mac = rt->ports[0].mac;
    sbc::control::publish_snapshot(rt->shared->snap, std::make_unique<dp::snapshot>());
    b.rt = rt.get();
    b.w = rt->workers[0].get();
    rt->launched = true;  // stop_dataplane waits for the lcore, which run_stage has left idle

    std::mt19937_64 rng(20261130);
    bool ok = true;
    std::size_t pos = 0;
    while (ok && pos <= modes.size()) {
        const std::size_t comma = std::min(modes.find(',', pos), modes.size());
        const std::string mode = modes.substr(pos, comma - pos);
        pos = comma + 1;
        if (mode.empty()) continue;
        if (mode == "ceiling") ok = run_ceiling(b, rng);
        else if (mode[0] == 'p') ok = run_relay(b, static_cast<unsigned>(std::strtoul(mode.c_str() + 1, nullptr, 10)), true, rng);
        else ok = run_relay(b, static_cast<unsigned>(std::strtoul(mode.c_str(), nullptr, 10)), false, rng);
    }
    dp::stop_dataplane(*rt);
    sbc::control::retire_snapshot(rt->shared->snap);
    rt.reset();
    rte_eal_cleanup();
    return ok ? 0 : 1;
}
