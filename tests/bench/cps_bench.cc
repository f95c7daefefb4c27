// cps benchmark: calls per second through one worker core running the production loop
// (run_loop(production): rx burst, classify, IPv4, UDP, the SIP stage with the stateful proxy,
// framing with software UDP checksums, TX), and memory per active call. The main lcore plays
// the callers (198.18.0.2) and the callee (198.18.0.11, the only peer) on one net_ring port
// whose rings it owns: it writes frames from templates with unique Call-IDs and branches and
// answers what the worker sends:
//   caller INVITE -> (SBC 100 to caller, INVITE to callee) -> callee 100, 180, 200 ->
//   (180, 200 to caller) -> caller ACK, BYE -> (ACK, BYE to callee) -> callee 200 -> caller.
// A call counts when the caller receives the 200 to its BYE. Frames the bench sends carry a
// zero UDP checksum (allowed over IPv4; what a NIC's RX checksum offload saves the worker);
// everything the worker sends is checksummed in software on the worker.
//
// Phases: (1) memory: N calls established and held (no BYE); the process RSS grows by the pages
// the proxy's setup and dialog tables touch: bytes_per_call = RSS delta / N; then the held
// calls are ended. (2) throughput: up to `window` calls in flight for `seconds` after
// `warmup`; calls_per_s = calls completed / seconds the worker was busy (its busy-cycle
// accounting) scaled to the CPU time its thread really got, i.e. what one fully used worker
// core carries; the wall-clock rate and the busy
// share are printed too (below 100 % busy the generator, not the worker, was the limit).
// Last line: `cps: calls_per_s=X bytes_per_call=Y`. Driven by scripts/bench/cps.sh.
//
//   cps_bench [--seconds N] [--warmup N] [--window N] [--hold N] [--setups N] [--config SBC_TOML] -- EAL args
// --config: the proxy tables built from an sbc.toml by sbcd's loader and builder (cps_tables.h;
// scripts/bench/cps_base.toml and cps_rules.toml), instead of the hand-built ones.
// --cdr FILE: call detail records on, as in sbcd with [cdr]: the worker's proxy hands every ended
// call to its ring (port_options::cdr_ring), and the main lcore drains it every millisecond with
// sbcd's writer (control/cdr_ring.h, control/cdr_writer.h) into FILE, as sbcd's control loop does.
// --capture FILE: a SIP capture matching every message, as `sbcctl capture start FILE` in sbcd:
// the worker copies every frame in and out into its ring, sbcd's capture thread
// (control/capture_service.h) drains it into FILE with the pcap writer.
// Main lcore: the generator; one worker lcore: the worker loop.
#include <unistd.h>

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_launch.h>
#include <rte_udp.h>

#include "control/capture_service.h"
#include "control/cdr_ring.h"
#include "control/snapshot_build.h"
#include "dataplane/events.h"
#include "dataplane/runtime.h"
#include "dataplane/stages.h"
#include "dataplane/worker.h"
#include "sip-fastpath/call_state.h"
#include "bench_common.h"
#include "tests/bench/cps_tables.h"

namespace {

namespace dp = sbc::dataplane;
namespace sip = sbc::sip;

constexpr uint32_t ip4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return a << 24 | b << 16 | c << 8 | d; }
constexpr uint32_t sbc_ip = ip4(198, 18, 0, 1);
constexpr uint32_t caller_ip = ip4(198, 18, 0, 2);
constexpr uint32_t callee_ip = ip4(198, 18, 0, 11);
constexpr uint16_t sip_port = 5060;
constexpr uint8_t caller_mac[6] = {0x02, 0, 0, 0, 0, 0x02};
constexpr uint8_t callee_mac[6] = {0x02, 0, 0, 0, 0, 0x0b};
constexpr std::string_view sdp =
    "v=0\r\no=- 1 1 IN IP4 198.18.0.2\r\ns=-\r\nc=IN IP4 198.18.0.2\r\nt=0 0\r\n"
    "m=audio 40000 RTP/AVP 0 8 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:8 PCMA/8000\r\n"
    "a=rtpmap:101 telephone-event/8000\r\na=sendrecv\r\n";

/// Appends to a fixed buffer.
struct text {
    char* p;
    char* start;
    explicit text(char* b) : p(b), start(b) {}
    text& operator<<(std::string_view s)
    {
        std::memcpy(p, s.data(), s.size());
        p += s.size();
        return *this;
    }
    text& hex(uint32_t v)
    {
        static constexpr char d[] = "0123456789abcdef";
        for (int i = 7; i >= 0; --i) *p++ = d[(v >> (i * 4)) & 15];
        return *this;
    }
    text& dec(std::size_t v)
    {
        char b[24];
        int n = 0;
        do {
            b[n++] = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v != 0);
        while (n > 0) *p++ = b[--n];
        return *this;
    }
    [[nodiscard]] std::size_t size() const { return static_cast<std::size_t>(p - start); }
};

struct generator {
    rte_mempool* pool = nullptr;
    rte_ring* to_worker = nullptr;    ///< the port's RX ring
    rte_ring* from_worker = nullptr;  ///< the port's TX ring
    uint8_t sbc_mac[6]{};
    std::vector<rte_mbuf*> out;       ///< frames waiting for room in to_worker
    uint64_t next_call = 0;
    uint64_t in_flight = 0;
    uint64_t established = 0;
    uint64_t completed = 0;
    uint64_t unexpected = 0;
    uint64_t no_mbuf = 0;
    rte_ring* events = nullptr;       ///< the control core's event ring, drained and dropped
    bool hold = false;                ///< answer 200 with ACK only (no BYE)
    // --cdr: the worker's ring of call records and sbcd's writer, drained every cdr_every cycles.
    rte_ring* cdr_ring = nullptr;
    sbc::control::cdr_writer* cdr = nullptr;
    uint64_t cdr_every = 0, cdr_next = 0;
    uint16_t ip_id = 0;

    /// A frame to the SBC with `payload` (UDP checksum 0).
    void send(const uint8_t* src_mac, uint32_t src, std::string_view payload)
    {
        rte_mbuf* m = rte_pktmbuf_alloc(pool);
        if (m == nullptr) {
            ++no_mbuf;
            return;
        }
        const auto len = static_cast<uint16_t>(14 + 28 + payload.size());
        char* p = rte_pktmbuf_append(m, len);
        if (p == nullptr) {
            rte_pktmbuf_free(m);
            ++unexpected;
            return;
        }
        std::memcpy(p, sbc_mac, 6);
        std::memcpy(p + 6, src_mac, 6);
        auto* eth = reinterpret_cast<rte_ether_hdr*>(p);
        eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
        auto* ip = reinterpret_cast<rte_ipv4_hdr*>(eth + 1);
        ip->version_ihl = RTE_IPV4_VHL_DEF;
        ip->type_of_service = 0;
        ip->total_length = rte_cpu_to_be_16(static_cast<uint16_t>(28 + payload.size()));
        ip->packet_id = rte_cpu_to_be_16(ip_id++);
        ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
        ip->time_to_live = 64;
        ip->next_proto_id = IPPROTO_UDP;
        ip->hdr_checksum = 0;
        ip->src_addr = rte_cpu_to_be_32(src);
        ip->dst_addr = rte_cpu_to_be_32(sbc_ip);
        ip->hdr_checksum = rte_ipv4_cksum(ip);
        auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
        udp->src_port = rte_cpu_to_be_16(sip_port);
        udp->dst_port = rte_cpu_to_be_16(sip_port);
        udp->dgram_len = rte_cpu_to_be_16(static_cast<uint16_t>(8 + payload.size()));
        udp->dgram_cksum = 0;
        std::memcpy(udp + 1, payload.data(), payload.size());
        out.push_back(m);
    }

    void invite(uint32_t id)
    {
        char b[1024];
        text t(b);
        t << "INVITE sip:bob@198.18.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-i";
        t.hex(id) << "\r\nMax-Forwards: 70\r\nFrom: <sip:alice@198.18.0.2>;tag=f";
        t.hex(id) << "\r\nTo: <sip:bob@198.18.0.1>\r\nCall-ID: ";
        t.hex(id) << "@cps.bench\r\nCSeq: 1 INVITE\r\nContact: <sip:alice@198.18.0.2:5060>\r\n"
                     "Content-Type: application/sdp\r\nContent-Length: ";
        t.dec(sdp.size()) << "\r\n\r\n" << sdp;
        send(caller_mac, caller_ip, {b, t.size()});
    }

    /// What a caller's in-dialog requests take from the 200 (RFC 3261 12.1.2): the remote
    /// target (its Contact), the route set (its Record-Routes, reversed) and To with the tag,
    /// as a UA does, so that whatever the SBC writes there (topology hiding) is followed.
    struct dialog_view {
        std::string_view target;
        std::array<std::string_view, 8> rr{};  ///< Record-Route values in the order received
        std::size_t n_rr = 0;
        std::string_view to;
    };

    static dialog_view view_of(std::string_view msg)
    {
        dialog_view v;
        std::size_t pos = msg.find("\r\n") + 2;
        while (pos < msg.size()) {
            const std::size_t e = msg.find("\r\n", pos);
            if (e == std::string_view::npos || e == pos) break;
            const std::string_view line = msg.substr(pos, e - pos);
            if (line.starts_with("Record-Route: ") && v.n_rr < v.rr.size()) v.rr[v.n_rr++] = line.substr(14);
            else if (line.starts_with("To: ")) v.to = line.substr(4);
            else if (line.starts_with("Contact: ")) {
                const std::size_t l = line.find('<'), r = line.find('>');
                if (l != std::string_view::npos && r != std::string_view::npos && r > l) v.target = line.substr(l + 1, r - l - 1);
            }
            pos = e + 2;
        }
        return v;
    }

    /// `v` null: the fixed dialog of a plain SBC (held calls ended at the end of phase 1).
    void in_dialog(uint32_t id, std::string_view method, unsigned cseq, const dialog_view* v = nullptr)
    {
        char b[2048];
        text t(b);
        t << method << " " << (v != nullptr && !v->target.empty() ? v->target : "sip:bob@198.18.0.11:5060")
          << " SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-" << method;
        t.hex(id) << "\r\n";
        if (v == nullptr) t << "Route: <sip:198.18.0.1:5060;lr;w=00>\r\n";
        for (std::size_t k = v != nullptr ? v->n_rr : 0; k > 0; --k) t << "Route: " << v->rr[k - 1] << "\r\n";
        t << "Max-Forwards: 70\r\nFrom: <sip:alice@198.18.0.2>;tag=f";
        t.hex(id) << "\r\nTo: ";
        if (v != nullptr && !v->to.empty()) {
            t << v->to;
        } else {
            t << "<sip:bob@198.18.0.1>;tag=t";
            t.hex(id);
        }
        t << "\r\nCall-ID: ";
        t.hex(id) << "@cps.bench\r\nCSeq: ";
        t.dec(cseq) << " " << method << "\r\nContent-Length: 0\r\n\r\n";
        send(caller_mac, caller_ip, {b, t.size()});
    }

    /// The callee's response to `req` (Via, Record-Route, From, To with our tag, Call-ID, CSeq).
    void respond(std::string_view req, std::string_view status, bool tag, bool body)
    {
        char b[2048];
        text t(b);
        t << "SIP/2.0 " << status << "\r\n";
        std::string_view call_id;
        std::size_t pos = req.find("\r\n") + 2;
        while (pos < req.size()) {
            const std::size_t e = req.find("\r\n", pos);
            if (e == std::string_view::npos || e == pos) break;
            const std::string_view line = req.substr(pos, e - pos);
            switch (line[0]) {
            case 'V':
            case 'R':
                if (line.starts_with("Via:") || (line.starts_with("Record-Route:") && tag)) t << line << "\r\n";
                break;
            case 'F': t << line << "\r\n"; break;
            case 'T':
                t << line;
                if (tag && line.find(";tag=") == std::string_view::npos) {
                    t << ";tag=t";
                    // the Call-ID comes after To in our INVITE; the tag is the call number
                    const std::size_t ci = req.find("Call-ID: ", e);
                    if (ci != std::string_view::npos) t << req.substr(ci + 9, 8);
                }
                t << "\r\n";
                break;
            case 'C':
                if (line.starts_with("Call-ID:")) {
                    call_id = line;
                    t << line << "\r\n";
                } else if (line.starts_with("CSeq:")) {
                    t << line << "\r\n";
                }
                break;
            default: break;
            }
            pos = e + 2;
        }
        if (tag) t << "Contact: <sip:bob@198.18.0.11:5060>\r\n";
        if (body) {
            t << "Content-Type: application/sdp\r\nContent-Length: ";
            t.dec(sdp.size()) << "\r\n\r\n" << sdp;
        } else {
            t << "Content-Length: 0\r\n\r\n";
        }
        send(callee_mac, callee_ip, {b, t.size()});
    }

    static uint32_t call_of(std::string_view msg)
    {
        const std::size_t ci = msg.find("Call-ID: ");
        if (ci == std::string_view::npos) return ~0u;
        uint32_t v = 0;
        for (char c : msg.substr(ci + 9, 8)) v = v << 4 | static_cast<uint32_t>(c <= '9' ? c - '0' : c - 'a' + 10);
        return v;
    }

    /// One frame the worker sent.
    void on_sent(rte_mbuf* m)
    {
        const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, 14);
        const auto* udp = reinterpret_cast<const rte_udp_hdr*>(ip + 1);
        const std::string_view msg(reinterpret_cast<const char*>(udp + 1), rte_be_to_cpu_16(udp->dgram_len) - 8u);
        const uint32_t dst = rte_be_to_cpu_32(ip->dst_addr);
        if (dst == callee_ip) {
            if (msg.starts_with("INVITE ")) {
                respond(msg, "100 Trying", false, false);
                respond(msg, "180 Ringing", true, false);
                respond(msg, "200 OK", true, true);
            } else if (msg.starts_with("BYE ")) {
                respond(msg, "200 OK", false, false);
            } else if (!msg.starts_with("ACK ")) {
                if (unexpected++ < 3) std::printf("unexpected to callee: %.*s\n", 60, msg.data());
            }
        } else if (dst == caller_ip) {
            if (msg.starts_with("SIP/2.0 200")) {
                const std::size_t cs = msg.find("CSeq: ");
                const bool bye = cs != std::string_view::npos && msg.substr(cs + 6, 6) == "2 BYE\r";
                const uint32_t id = call_of(msg);
                if (bye) {
                    ++completed;
                    --in_flight;
                } else {
                    ++established;
                    const dialog_view v = view_of(msg);
                    in_dialog(id, "ACK", 1, &v);
                    if (!hold) in_dialog(id, "BYE", 2, &v);
                }
            } else if (!msg.starts_with("SIP/2.0 100") && !msg.starts_with("SIP/2.0 180")) {
                if (unexpected++ < 3) std::printf("unexpected to caller: %.*s\n", 60, msg.data());
            }
        } else {
            ++unexpected;
        }
        rte_pktmbuf_free(m);
    }

    /// One round: drain what the worker sent, start calls up to `window` in flight (at most
    /// `max_new`), push frames to the worker.
    void round(uint64_t window, uint64_t max_new)
    {
        if (cdr != nullptr && rte_rdtsc() >= cdr_next) {
            sbc::control::drain_cdr_ring(cdr_ring, *cdr);
            const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::system_clock::now().time_since_epoch()).count();
            cdr->flush(now);
            cdr_next = rte_rdtsc() + cdr_every;
        }
        std::array<rte_mbuf*, 64> pkts;
        const unsigned n = rte_ring_sc_dequeue_burst(from_worker, reinterpret_cast<void**>(pkts.data()), 64, nullptr);
        for (unsigned i = 0; i < n; ++i) on_sent(pkts[i]);
        std::array<dp::event, 64> ev;
        rte_ring_sc_dequeue_burst_elem(events, ev.data(), sizeof(dp::event), 64, nullptr);
        for (uint64_t k = 0; k < max_new && in_flight < window && out.size() < 256; ++k) {
            invite(static_cast<uint32_t>(next_call++));
            ++in_flight;
        }
        if (!out.empty()) {
            const unsigned sent =
                rte_ring_sp_enqueue_burst(to_worker, reinterpret_cast<void**>(out.data()), static_cast<unsigned>(out.size()), nullptr);
            out.erase(out.begin(), out.begin() + sent);
        }
    }
};

pthread_t worker_thread;
std::atomic<bool> worker_started{false};

/// CPU seconds the worker's thread has run (the machine may be shared: wall time overstates).
double worker_cpu_s() { return sbc::bench::thread_cpu_s(worker_thread); }
using sbc::bench::rss_bytes;

}  // namespace

int main(int argc, char** argv)
{
    double seconds = 3, warmup = 1;
    uint64_t window = 4096, hold_n = 20000;
    uint32_t setups = 1u << 20;
    const char* config = nullptr;  ///< an sbc.toml to build the proxy tables from (cps_tables.h)
    const char* cdr_path = nullptr;  ///< --cdr: the call detail record file
    const char* capture_path = nullptr;  ///< --capture: the pcap file of a capture of every message
    int i = 1;
    for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
        const std::string a = argv[i];
        if (a == "--seconds" && i + 1 < argc) seconds = std::atof(argv[++i]);
        else if (a == "--warmup" && i + 1 < argc) warmup = std::atof(argv[++i]);
        else if (a == "--window" && i + 1 < argc) window = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--hold" && i + 1 < argc) hold_n = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--setups" && i + 1 < argc) setups = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
        else if (a == "--config" && i + 1 < argc) config = argv[++i];
        else if (a == "--cdr" && i + 1 < argc) cdr_path = argv[++i];
        else if (a == "--capture" && i + 1 < argc) capture_path = argv[++i];
        else {
            std::fprintf(stderr, "usage: cps_bench [--seconds N] [--warmup N] [--window N] [--hold N] [--setups N] "
                                 "[--config SBC_TOML] [--cdr FILE] [--capture FILE] -- EAL args\n");
            return 2;
        }
    }
    if (!sbc::bench::eal_init("cps_bench", argc, argv, i)) return 1;
    const int socket = static_cast<int>(rte_socket_id());
    generator g;
    g.to_worker = rte_ring_create("cps_rx", 65536, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
    g.from_worker = rte_ring_create("cps_tx", 65536, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
    g.pool = rte_pktmbuf_pool_create("cps_gen", 65535, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, socket);
    if (g.to_worker == nullptr || g.from_worker == nullptr || g.pool == nullptr) {
        std::fprintf(stderr, "cps_bench: rings or pool: %s\n", rte_strerror(rte_errno));
        return 1;
    }
    const int port = rte_eth_from_rings("cps", &g.to_worker, 1, &g.from_worker, 1, static_cast<unsigned>(socket));
    if (port < 0) {
        std::fprintf(stderr, "cps_bench: rte_eth_from_rings: %s\n", rte_strerror(rte_errno));
        return 1;
    }
    std::string error;
    dp::port_options po;
    po.workers = 1;
    po.mbufs_per_worker = 65535;
    po.setups_per_worker = setups;
    po.dialogs_per_worker = static_cast<uint32_t>(std::max<uint64_t>(131072, hold_n + window));
    po.cdr_ring = cdr_path != nullptr ? sbc::control::default_cdr_ring : 0;
    auto rt = dp::start_dataplane({"net_ring_cps"}, po, error);
    if (rt == nullptr) {
        std::fprintf(stderr, "cps_bench: %s\n", error.c_str());
        return 1;
    }
    std::memcpy(g.sbc_mac, rt->ports[0].mac.addr_bytes, 6);
    g.events = rt->events;

    auto snap = std::make_unique<dp::snapshot>();
    snap->generation = 1;
    dp::interface_info ifc;
    ifc.name = "access";
    ifc.port_id = static_cast<uint16_t>(port);
    ifc.address = {sbc::ip_address::v4(sbc_ip), 24};
    std::memcpy(ifc.mac.data(), g.sbc_mac, 6);
    // Hand-built, or built from --config as sbcd would (the rule-set run of cps.sh).
    const auto tables = sbc::bench::cps_tables(config, ifc, error);
    if (tables == nullptr) {
        std::fprintf(stderr, "cps_bench: %s\n", error.c_str());
        return 1;
    }
    std::printf("tables: %s\n", config != nullptr ? config : "hand-built");
    std::unique_ptr<sbc::control::cdr_writer> cdr;
    if (cdr_path != nullptr) {
        sbc::control::cdr_config cc;
        cc.path = cdr_path;
        cc.rotate_bytes = 0;  // one file for the run
        cc.rotate_seconds = 0;
        const uint64_t tsc_per_ms = rt->workers[0]->tsc_per_ms;
        const sbc::control::cdr_clock clock{
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count(),
            rte_rdtsc() / tsc_per_ms};
        cdr = sbc::control::cdr_writer::open(cc, clock, clock.wall_ms_at,
                                             [](const std::string& l) { std::fprintf(stderr, "cps_bench: %s\n", l.c_str()); }, error);
        if (cdr == nullptr) {
            std::fprintf(stderr, "cps_bench: --cdr: %s\n", error.c_str());
            return 1;
        }
        cdr->set_names(sbc::control::cdr_names_of(*tables));
        g.cdr = cdr.get();
        g.cdr_ring = rt->workers[0]->cdr_out;
        g.cdr_every = rte_get_tsc_hz() / 1000;
        std::printf("cdr: %s\n", cdr_path);
    }
    snap->interfaces.push_back(ifc);
    snap->proxy = tables;
    snap->index_interfaces();
    sbc::control::publish_snapshot(rt->shared->snap, std::move(snap));
    dp::mac_addr cm, ce;
    std::memcpy(cm.data(), caller_mac, 6);
    std::memcpy(ce.data(), callee_mac, 6);
    rt->shared->neighbours.insert(sbc::ip_address::v4(caller_ip), cm, 1);
    rt->shared->neighbours.insert(sbc::ip_address::v4(callee_ip), ce, 1);

    std::unique_ptr<sbc::control::capture_service> capture;
    if (capture_path != nullptr) {
        capture = std::make_unique<sbc::control::capture_service>(*rt);
        sbc::control::capture_request cr;
        cr.path = capture_path;
        cr.max_mb = 1024 * 1024;  // the run, not the file, ends it
        if (!capture->start(cr, error)) {
            std::fprintf(stderr, "cps_bench: --capture: %s\n", error.c_str());
            return 1;
        }
        std::printf("capture: %s\n", capture_path);
    }
    dp::worker& w = *rt->workers[0];
    if (rte_eal_remote_launch(
            [](void* arg) -> int {
                worker_thread = pthread_self();
                worker_started.store(true);
                dp::run_loop(*static_cast<dp::worker*>(arg), dp::production{});
                return 0;
            },
            &w, w.lcore) != 0) {
        std::fprintf(stderr, "cps_bench: cannot launch the worker on lcore %u\n", w.lcore);
        return 1;
    }
    rt->launched = true;
    while (!worker_started.load()) std::this_thread::yield();
    const uint64_t hz = rte_get_tsc_hz();
    const sip::proxy_stats& ps = w.proxy->stats();

    // Phase 1: memory per active call.
    double bytes_per_call = 0;
    if (hold_n != 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        const uint64_t rss0 = rss_bytes();
        g.hold = true;
        const uint64_t deadline = rte_rdtsc() + hz * 30;
        // At most 1024 setups under way, so that none waits past the no-response timer.
        while (g.established < hold_n && rte_rdtsc() < deadline)
            g.round(hold_n, g.next_call - g.established < 1024 && g.next_call < hold_n ? 64 : 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the last ACKs through
        for (int k = 0; k < 100; ++k) g.round(0, 0);
        const uint64_t rss1 = rss_bytes();
        const uint64_t dialogs = ps.dialogs_active.get();
        bytes_per_call = static_cast<double>(rss1 - rss0) / static_cast<double>(hold_n);
        std::printf("memory: held=%lu dialogs_active=%lu setups_active=%lu rss_delta_bytes=%lu bytes_per_call=%.0f\n",
                    static_cast<unsigned long>(g.established), static_cast<unsigned long>(dialogs),
                    static_cast<unsigned long>(ps.setups_active.get()), static_cast<unsigned long>(rss1 - rss0),
                    bytes_per_call);
        const double setup_b = static_cast<double>(sizeof(sip::call_setup) + sip::max_out_size + 4 + 4 + 24);
        const double dialog_b = static_cast<double>(sizeof(sip::dialog_entry) + 4 + 4 + 24);
        std::printf("memory: tables: setup=%.0f bytes (slot %zu + message buffer %zu + free list, index, timer), "
                    "dialog=%.0f bytes (entry %zu + hash head, free list, timer)\n",
                    setup_b, sizeof(sip::call_setup), sip::max_out_size, dialog_b,
                    sizeof(sip::dialog_entry));
        // End the held calls.
        g.hold = false;
        const uint64_t held = g.next_call;
        for (uint64_t id = 0; id < held; ++id) {
            g.in_dialog(static_cast<uint32_t>(id), "BYE", 2);
            g.round(0, 0);
        }
        const uint64_t d2 = rte_rdtsc() + hz * 30;
        while (g.in_flight != 0 && rte_rdtsc() < d2) g.round(0, 0);
        std::printf("memory: held calls ended: completed=%lu dialogs_active=%lu\n",
                    static_cast<unsigned long>(g.completed), static_cast<unsigned long>(ps.dialogs_active.get()));
    }

    // Phase 2: throughput.
    const uint64_t t_start = rte_rdtsc();
    const uint64_t t_measure = t_start + static_cast<uint64_t>(warmup * static_cast<double>(hz));
    const uint64_t t_end = t_measure + static_cast<uint64_t>(seconds * static_cast<double>(hz));
    while (rte_rdtsc() < t_measure) g.round(window, 64);
    const uint64_t c0 = g.completed;
    const auto v0 = dp::snapshot_of(w.counters);
    const uint64_t tsc0 = rte_rdtsc();
    const double cpu0 = worker_cpu_s();
    uint64_t next_print = tsc0 + hz;
    uint64_t c_prev = c0;
    while (rte_rdtsc() < t_end) {
        g.round(window, 64);
        if (rte_rdtsc() >= next_print) {
            std::printf("second: calls=%lu in_flight=%lu\n", static_cast<unsigned long>(g.completed - c_prev),
                        static_cast<unsigned long>(g.in_flight));
            std::fflush(stdout);
            c_prev = g.completed;
            next_print += hz;
        }
    }
    const uint64_t tsc1 = rte_rdtsc();
    const double cpu_s = worker_cpu_s() - cpu0;
    const uint64_t c1 = g.completed;
    const auto v1 = dp::snapshot_of(w.counters);
    const auto d = dp::difference(v0, v1);
    const double wall_s = static_cast<double>(tsc1 - tsc0) / static_cast<double>(hz);
    const double busy_s = static_cast<double>(d.busy_cycles) / static_cast<double>(hz);
    const double calls = static_cast<double>(c1 - c0);
    const double wall_rate = calls / wall_s;
    const double busy = d.total_cycles != 0 ? static_cast<double>(d.busy_cycles) / static_cast<double>(d.total_cycles) : 0;
    // The worker polls without pause, so its CPU time is the core it used: busy cycles
    // (wall-clock) would count the time another process held the CPU on a shared machine.
    const double cpu_busy_s = cpu_s * (busy > 0 ? busy : 1);
    const double per_core = cpu_busy_s > 0 ? calls / cpu_busy_s : 0;
    dp::stop_dataplane(*rt);
    std::printf("throughput: calls=%.0f wall_s=%.2f calls_per_wall_s=%.0f worker_cpu_s=%.2f worker_busy=%.1f%% "
                "busy_s=%.2f calls_per_busy_core_s=%.0f worker_rx=%lu worker_tx=%lu drops=%lu\n",
                calls, wall_s, wall_rate, cpu_s, busy * 100, busy_s, per_core, static_cast<unsigned long>(d.rx_packets),
                static_cast<unsigned long>(d.tx_packets), static_cast<unsigned long>(d.drops_total()));
    std::printf("proxy: invites=%lu answered=%lu table_full=%lu stale=%lu outbox_full=%lu setups_active=%lu "
                "dialogs_active=%lu generator_unexpected=%lu generator_no_mbuf=%lu\n",
                static_cast<unsigned long>(ps.get(sip::proxy_counter::invites)),
                static_cast<unsigned long>(ps.get(sip::proxy_counter::calls_answered)),
                static_cast<unsigned long>(ps.get(sip::proxy_counter::table_full)),
                static_cast<unsigned long>(ps.get(sip::proxy_counter::stale_responses)),
                static_cast<unsigned long>(ps.get(sip::proxy_counter::outbox_full)),
                static_cast<unsigned long>(ps.setups_active.get()), static_cast<unsigned long>(ps.dialogs_active.get()),
                static_cast<unsigned long>(g.unexpected), static_cast<unsigned long>(g.no_mbuf));
    for (std::size_t r = 0; r < dp::drop_reason_count; ++r)
        if (d.drops[r] != 0)
            std::printf("drop: %s=%lu\n", std::string(dp::drop_reason_name(static_cast<dp::drop_reason>(r))).c_str(),
                        static_cast<unsigned long>(d.drops[r]));
    if (cdr != nullptr) {
        while (sbc::control::drain_cdr_ring(g.cdr_ring, *cdr) != 0) {
        }
        cdr->flush(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
        const auto cr = cdr->report();
        std::printf("cdr: written=%lu write_errors=%lu dropped=%lu worker_records=%lu\n",
                    static_cast<unsigned long>(cr.written), static_cast<unsigned long>(cr.write_errors),
                    static_cast<unsigned long>(w.counters.cdr_dropped.get()),
                    static_cast<unsigned long>(w.counters.cdr_records.get()));
    }
    if (capture != nullptr) {
        std::string ignored;
        capture->stop(ignored);
        const auto cs = capture->status();
        std::printf("capture: messages=%lu bytes=%lu copied=%lu dropped_ring_full=%lu dropped_no_buffer=%lu\n",
                    static_cast<unsigned long>(cs.messages), static_cast<unsigned long>(cs.bytes),
                    static_cast<unsigned long>(w.capture_stats.copied.get()),
                    static_cast<unsigned long>(cs.dropped_ring_full), static_cast<unsigned long>(cs.dropped_no_buffer));
    }
    std::printf("cps: calls_per_s=%.0f bytes_per_call=%.0f\n", per_core, bytes_per_call);
    std::fflush(stdout);
    std::_Exit(0);  // the proxy's tables are large; the OS takes them back faster than delete
}
