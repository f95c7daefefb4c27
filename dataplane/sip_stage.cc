// The SIP stage (see sip_stage.h): per datagram, parse into the proxy's message, find the
// owner worker from the identifiers we minted, hand off or handle, then frame and send what
// the proxy produced. Counters are tallied in locals and added once per burst. Worker only.
#include "dataplane/sip_stage.h"

#include <array>
#include <cstring>
#include <string_view>

#include <rte_cycles.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "dataplane/events.h"
#include "sip-fastpath/probe_branch.h"
#include "sip-fastpath/proxy_ids.h"

namespace sbc::dataplane {

namespace {

constexpr std::size_t max_workers = 64;  ///< worker::handoff_in/out size
constexpr uint32_t udp_ip_headers = sizeof(rte_ipv4_hdr) + sizeof(rte_udp_hdr);

/// What the SIP stage keeps per worker besides the proxy: the scratch a multi-segment
/// datagram (reassembled from fragments) is linearised into, the IPv4 identification of
/// the packets it originates, and the last millisecond the proxy's timers ran. Indexed by
/// worker id; only that worker touches its entry (cache-line aligned, never shared).
struct alignas(64) sip_local {
    std::array<char, 65536> scratch;
    uint16_t ip_id = 0;
    uint64_t last_tick_ms = 0;
};
std::array<sip_local, max_workers> locals;

/// Per-burst tallies, added to the worker's counters once.
struct tally {
    uint32_t handoff_full = 0;
    uint32_t no_buffer = 0;
    uint32_t too_big = 0;
    uint32_t no_interface = 0;
    uint32_t no_neighbour = 0;
    uint32_t not_trunk = 0;
    uint32_t sent = 0;
    uint32_t last_needed = 0;  ///< next hop already reported as needed in this burst
    uint32_t glean_ip = 0;     ///< next hop of the datagram being handled (0: none)
    mac_addr glean_mac{};      ///< and the MAC it came from

    void commit(worker& w) const noexcept
    {
        if (handoff_full) w.counters.drop(drop_reason::sip_handoff_full, handoff_full);
        if (no_buffer) w.counters.drop(drop_reason::sip_no_buffer, no_buffer);
        if (too_big) w.counters.drop(drop_reason::sip_too_big, too_big);
        if (no_interface) w.counters.drop(drop_reason::sip_no_interface, no_interface);
        if (no_neighbour) w.counters.drop(drop_reason::neighbour_unknown, no_neighbour);
        if (not_trunk) w.counters.drop(drop_reason::udp_port_closed, not_trunk);
    }
};

uint64_t now_ms_of(const worker& w, uint64_t tsc) noexcept { return tsc / (w.tsc_per_ms != 0 ? w.tsc_per_ms : 1); }

/// The interface a datagram from `src` leaves on: its trunk's, else the one with that address.
const interface_info* interface_for(const snapshot& snap, sip::endpoint src) noexcept
{
    const int t = snap.proxy->find_trunk(src.ip, src.port);
    if (t >= 0) {
        const uint16_t i = snap.proxy->trunks[static_cast<std::size_t>(t)].iface;
        if (i < snap.interfaces.size() && snap.interfaces[i].address == src.ip) return &snap.interfaces[i];
    }
    for (const auto& ifc : snap.interfaces)
        if (ifc.address == src.ip) return &ifc;
    return nullptr;
}

/// Frames one datagram of the proxy into a fresh mbuf and queues it for transmission.
void send_datagram(worker& w, const snapshot& snap, const sip::out_datagram& d, tally& t) noexcept
{
    if (udp_ip_headers + d.len > sip_mtu) {
        ++t.too_big;
        return;
    }
    const interface_info* ifc = interface_for(snap, d.src);
    if (ifc == nullptr) {
        ++t.no_interface;
        return;
    }
    const uint32_t hop = ifc->next_hop(d.dst.ip);
    auto mac = hop != 0 ? w.shared->neighbours.lookup(hop) : std::nullopt;
    // An answer to the datagram being handled goes back to the MAC it came from, also before
    // the control core has learned it (a caller's first INVITE must get its 100 Trying).
    if (!mac && hop != 0 && hop == t.glean_ip) mac = t.glean_mac;
    if (!mac) {
        ++t.no_neighbour;
        if (hop != 0 && hop != t.last_needed) {
            event e{};
            e.kind = event_kind::neighbour_needed;
            e.worker = static_cast<uint8_t>(w.id);
            e.iface = static_cast<uint16_t>(ifc - snap.interfaces.data());
            e.ip = hop;
            post_event(w, e);
            t.last_needed = hop;
        }
        return;
    }
    rte_mbuf* m = rte_pktmbuf_alloc(w.pool);
    if (m == nullptr) {
        ++t.no_buffer;
        return;
    }
    const auto l3 = static_cast<uint16_t>(udp_ip_headers + d.len);
    char* p = rte_pktmbuf_append(m, l3);
    if (p == nullptr) {
        rte_pktmbuf_free(m);
        ++t.no_buffer;
        return;
    }
    sip_local& loc = locals[w.id];
    auto* ip = reinterpret_cast<rte_ipv4_hdr*>(p);
    ip->version_ihl = RTE_IPV4_VHL_DEF;
    ip->type_of_service = 0;
    ip->total_length = rte_cpu_to_be_16(l3);
    ip->packet_id = rte_cpu_to_be_16(loc.ip_id++);
    ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
    ip->time_to_live = 64;
    ip->next_proto_id = IPPROTO_UDP;
    ip->hdr_checksum = 0;
    ip->src_addr = rte_cpu_to_be_32(d.src.ip);
    ip->dst_addr = rte_cpu_to_be_32(d.dst.ip);
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
    udp->src_port = rte_cpu_to_be_16(d.src.port);
    udp->dst_port = rte_cpu_to_be_16(d.dst.port);
    udp->dgram_len = rte_cpu_to_be_16(static_cast<uint16_t>(sizeof(rte_udp_hdr) + d.len));
    udp->dgram_cksum = 0;
    std::memcpy(udp + 1, d.data.data(), d.len);
    // Software checksum: it covers the payload, which we just wrote and is in cache.
    udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
    m->l2_len = 0;
    m->l3_len = sizeof(rte_ipv4_hdr);
    if (!write_l2(m, *ifc, mac->data())) {
        rte_pktmbuf_free(m);
        ++t.no_buffer;
        return;
    }
    tx_enqueue(w, ifc->port_id, m);
    ++t.sent;
}

/// Sends what the proxy put in the outbox, posts its peer events, and clears it.
void flush_outbox(worker& w, const snapshot& snap, tally& t) noexcept
{
    sip::outbox& o = *w.outbox;
    for (uint32_t i = 0; i < o.n; ++i) send_datagram(w, snap, o.msgs[i], t);
    for (uint32_t i = 0; i < o.n_events; ++i) {
        const sip::peer_event& pe = o.events[i];
        event e{};
        e.kind = pe.kind == sip::peer_event_kind::failed ? event_kind::peer_failed : event_kind::peer_answered;
        e.worker = static_cast<uint8_t>(w.id);
        e.cause = static_cast<peer_cause>(pe.cause);
        e.code = pe.code;
        e.peer_id = pe.peer_id;
        post_event(w, e);
    }
    o.clear();
}

/// Hands `m` to worker `owner` when that is another worker with a ring; true when it did
/// (or dropped it on a full ring).
bool hand_off(worker& w, int owner, rte_mbuf* m, tally& t) noexcept
{
    if (owner < 0 || static_cast<unsigned>(owner) == w.id || static_cast<std::size_t>(owner) >= max_workers)
        return false;
    rte_ring* r = w.handoff_out[static_cast<std::size_t>(owner)];
    if (r == nullptr) return false;  // no such worker: handled here (finds no state, counted)
    if (rte_ring_sp_enqueue(r, m) != 0) {
        rte_pktmbuf_free(m);
        ++t.handoff_full;
    }
    return true;
}

/// A reply to the control core's OPTIONS probe (our probe branch on the top Via): handed to
/// the control core as an event, before any transaction lookup; true when it was one. Only
/// a peer's address may answer a probe (anyone else's "200" would bring a dead peer back).
bool probe_reply(worker& w, const snapshot& snap, const sip::message& msg, uint32_t src_ip) noexcept
{
    const std::string_view branch = msg.text(msg.top_via.branch);
    if (!sip::is_probe_branch(branch)) return false;  // one prefix compare for every other response
    sip::probe_id id;
    // Not well-formed, or not from a peer: the proxy handles it (counted stale or denied).
    if (!sip::read_probe_branch(branch, id) || !snap.proxy->is_peer_address(src_ip)) return false;
    event e{};
    e.kind = event_kind::probe_reply;
    e.worker = static_cast<uint8_t>(w.id);
    e.peer_id = id.peer;
    e.probe_seq = id.seq;
    e.code = msg.status;
    e.probe_rx_tsc8 = static_cast<uint32_t>(rte_rdtsc() >> 8);
    post_event(w, e);
    return true;
}

/// An ICMP unreachable about one of the control core's OPTIONS probes (our probe branch in the
/// quoted datagram, sent from a trunk to a peer): handed to the control core as a probe_reply
/// with code 0, so the probe fails now rather than at its timeout; true when it was one.
bool probe_unreachable(worker& w, const snapshot& snap, const rte_mbuf* m) noexcept
{
    const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, m->l2_len);
    const uint32_t len = rte_be_to_cpu_16(ip->total_length) - m->l3_len;
    icmp_quote iq;
    if (!read_icmp_quote(rte_pktmbuf_mtod_offset(m, const uint8_t*, m->l2_len + m->l3_len), len, iq) ||
        iq.proto != IPPROTO_UDP || snap.proxy->find_trunk(iq.src, iq.src_port) < 0)
        return false;
    const std::size_t b = iq.payload.find(sip::branch_probe);
    sip::probe_id id;
    if (b == std::string_view::npos || !sip::read_probe_branch(iq.payload.substr(b, sip::branch_probe_len), id) ||
        snap.proxy->find_peer(iq.dst, iq.dst_port) == sip::no_peer)
        return false;
    event e{};
    e.kind = event_kind::probe_reply;
    e.worker = static_cast<uint8_t>(w.id);
    e.peer_id = id.peer;
    e.probe_seq = id.seq;
    e.code = 0;  // no SIP answer: ICMP destination unreachable
    e.probe_rx_tsc8 = static_cast<uint32_t>(rte_rdtsc() >> 8);
    post_event(w, e);
    return true;
}

/// One SIP datagram (UDP validated, l2_len and l3_len set): parse, hand off or handle, send.
void handle_datagram(worker& w, const snapshot& snap, rte_mbuf* m, bool check_owner, uint64_t now_ms,
                     tally& t) noexcept
{
    const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, m->l2_len);
    const auto* udp = rte_pktmbuf_mtod_offset(m, const rte_udp_hdr*, m->l2_len + m->l3_len);
    const sip::endpoint src{rte_be_to_cpu_32(ip->src_addr), rte_be_to_cpu_16(udp->src_port)};
    const sip::endpoint local{rte_be_to_cpu_32(ip->dst_addr), rte_be_to_cpu_16(udp->dst_port)};
    const int trunk = snap.proxy->find_trunk(local.ip, local.port);
    if (trunk < 0) {  // a handed-off datagram whose trunk a new snapshot removed
        rte_pktmbuf_free(m);
        ++t.not_trunk;
        return;
    }
    const uint32_t off = m->l2_len + m->l3_len + sizeof(rte_udp_hdr);
    const uint32_t len = rte_be_to_cpu_16(udp->dgram_len) - static_cast<uint32_t>(sizeof(rte_udp_hdr));
    std::string_view payload;
    if (m->nb_segs == 1) {
        payload = {rte_pktmbuf_mtod_offset(m, const char*, off), len};
    } else {
        // Reassembled from fragments: one contiguous copy for the parser.
        char* scratch = locals[w.id].scratch.data();
        const void* p = rte_pktmbuf_read(m, off, len, scratch);
        if (p == nullptr) {
            rte_pktmbuf_free(m);
            return;
        }
        payload = {static_cast<const char*>(p), len};
    }
    // Gleaning: remember which MAC the sender's next hop has, for the answers below, and
    // tell the control core when the neighbour table does not know it yet.
    {
        const auto* eth = rte_pktmbuf_mtod(m, const rte_ether_hdr*);
        t.glean_ip = 0;
        for (const auto& ifc : snap.interfaces) {
            if (ifc.address != local.ip) continue;
            t.glean_ip = ifc.next_hop(src.ip);
            std::memcpy(t.glean_mac.data(), eth->src_addr.addr_bytes, 6);
            if (t.glean_ip != 0 && t.glean_ip == src.ip && !w.shared->neighbours.lookup(src.ip)) {
                event e{};
                e.kind = event_kind::neighbour_seen;
                e.worker = static_cast<uint8_t>(w.id);
                e.iface = static_cast<uint16_t>(&ifc - snap.interfaces.data());
                e.ip = src.ip;
                e.mac = t.glean_mac;
                post_event(w, e);
            }
            break;
        }
    }
    sip::message& msg = w.proxy->parsed();
    const bool parsed = sip::parse(payload, msg) == sip::error::none;
    if (parsed && msg.is_response() && msg.has_top_via && probe_reply(w, snap, msg, src.ip)) {
        rte_pktmbuf_free(m);
        return;
    }
    if (check_owner && parsed && hand_off(w, sip::message_owner(msg), m, t)) return;
    const sip::arrival a{src, local, static_cast<uint16_t>(trunk), now_ms};
    w.proxy->on_parsed(*snap.proxy, w.shared->peer_health, a, *w.outbox);
    rte_pktmbuf_free(m);
    flush_outbox(w, snap, t);
}

/// The owner and the quoted bytes of an ICMP unreachable about a datagram sent from a trunk.
struct quoted_sip {
    int owner = -1;
    std::string_view quoted;
    sip::endpoint to;
};

bool parse_unreachable(const snapshot& snap, const rte_mbuf* m, quoted_sip& q) noexcept
{
    const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, m->l2_len);
    const uint32_t len = rte_be_to_cpu_16(ip->total_length) - m->l3_len;
    icmp_quote iq;
    if (!read_icmp_quote(rte_pktmbuf_mtod_offset(m, const uint8_t*, m->l2_len + m->l3_len), len, iq) ||
        iq.proto != IPPROTO_UDP || snap.proxy->find_trunk(iq.src, iq.src_port) < 0)
        return false;
    q.quoted = iq.payload;
    q.to = {iq.dst, iq.dst_port};
    const std::size_t b = q.quoted.find(sip::branch_stateful);
    sip::txn_id id;
    if (b == std::string_view::npos || !sip::read_branch(q.quoted.substr(b, sip::branch_stateful_len), id))
        return false;
    q.owner = id.worker;
    return true;
}

/// An ICMP unreachable about SIP: hand off, or fail the attempt over here. Consumes m.
void handle_unreachable(worker& w, const snapshot& snap, rte_mbuf* m, const quoted_sip& q, bool check_owner,
                        uint64_t now_ms, tally& t) noexcept
{
    if (check_owner && hand_off(w, q.owner, m, t)) return;
    w.proxy->on_icmp_unreachable(*snap.proxy, w.shared->peer_health, q.quoted, q.to, now_ms, *w.outbox);
    rte_pktmbuf_free(m);
    flush_outbox(w, snap, t);
}

}  // namespace

void sip_stage(worker& w, const snapshot& snap, sub_burst& b) noexcept
{
    w.counters.entered(stage::sip, b.n);
    tally t;
    const uint64_t now_ms = now_ms_of(w, rte_rdtsc());
    for (uint16_t i = 0; i < b.n; ++i) handle_datagram(w, snap, b.pkts[i], true, now_ms, t);
    t.commit(w);
    b.n = 0;
}

bool sip_unreachable(worker& w, const snapshot& snap, rte_mbuf* m) noexcept
{
    if (!snap.proxy || !w.proxy) return false;
    if (probe_unreachable(w, snap, m)) {
        rte_pktmbuf_free(m);
        return true;
    }
    quoted_sip q;
    if (!parse_unreachable(snap, m, q)) return false;
    tally t;
    handle_unreachable(w, snap, m, q, true, now_ms_of(w, rte_rdtsc()), t);
    t.commit(w);
    return true;
}

uint32_t sip_poll(worker& w, const snapshot& snap, uint64_t now_tsc) noexcept
{
    if (!snap.proxy || !w.proxy) return 0;
    tally t;
    const uint64_t now_ms = now_ms_of(w, now_tsc);
    uint32_t received = 0;
    std::array<rte_mbuf*, burst_size> pkts;
    for (rte_ring* r : w.handoff_in) {
        if (r == nullptr) continue;
        const unsigned n = rte_ring_sc_dequeue_burst(r, reinterpret_cast<void**>(pkts.data()), burst_size, nullptr);
        for (unsigned i = 0; i < n; ++i) {
            rte_mbuf* m = pkts[i];
            const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, m->l2_len);
            if (ip->next_proto_id == IPPROTO_ICMP) {
                quoted_sip q;
                if (parse_unreachable(snap, m, q))
                    handle_unreachable(w, snap, m, q, false, now_ms, t);
                else
                    rte_pktmbuf_free(m);
            } else {
                handle_datagram(w, snap, m, false, now_ms, t);
            }
        }
        received += n;
    }
    if (received != 0) w.counters.entered(stage::sip, received);
    sip_local& loc = locals[w.id];
    if (now_ms != loc.last_tick_ms) {
        loc.last_tick_ms = now_ms;
        w.proxy->on_tick(*snap.proxy, w.shared->peer_health, now_ms, *w.outbox);
        flush_outbox(w, snap, t);
    }
    t.commit(w);
    return received + t.sent;
}

}  // namespace sbc::dataplane
