// The SIP stage's receive step (see sip_path.h): a validated UDP datagram to a trunk becomes a
// decoded, transport-neutral input (endpoints with transport, trunk, arrival time) stored in its
// mbuf's headroom; the sender's next hop is gleaned; replies to the control core's OPTIONS
// probes and ICMP errors about our datagrams are recognised. Also the stage's entry points.
// Worker only: no heap, locks, system calls or logging.
#include <rte_cycles.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "dataplane/events.h"
#include "dataplane/sip_path.h"
#include "dataplane/sip_stage.h"
#include "dataplane/source_screen.h"
#include "sip-fastpath/probe_branch.h"
#include "sip-fastpath/proxy_ids.h"

namespace sbc::dataplane {

namespace {


/// Hands the control core a reply to its probe `id`: SIP status `code`, or 0 for an ICMP
/// unreachable about the probe; stamped with the worker's TSC at receipt (for the RTT).
void post_probe_reply(worker& w, const sip::probe_id& id, uint16_t code) noexcept
{
    event e{};
    e.kind = event_kind::probe_reply;
    e.worker = static_cast<uint8_t>(w.id);
    e.peer_id = id.peer;
    e.probe_seq = id.seq;
    e.code = code;
    e.probe_rx_tsc8 = static_cast<uint32_t>(rte_rdtsc() >> 8);
    post_event(w, e);
}

}  // namespace

std::array<sip_worker_state, max_workers> sip_states;

uint64_t now_ms_of(const worker& w, uint64_t tsc) noexcept { return tsc / (w.tsc_per_ms != 0 ? w.tsc_per_ms : 1); }

void sip_tally::commit(worker& w) const noexcept
{
    if (handoff_full) w.counters.drop(drop_reason::sip_handoff_full, handoff_full);
    if (no_buffer) w.counters.drop(drop_reason::sip_no_buffer, no_buffer);
    if (too_big) w.counters.drop(drop_reason::sip_too_big, too_big);
    if (no_interface) w.counters.drop(drop_reason::sip_no_interface, no_interface);
    if (no_neighbour) w.counters.drop(drop_reason::neighbour_unknown, no_neighbour);
    if (not_trunk) w.counters.drop(drop_reason::udp_port_closed, not_trunk);
    if (unreadable) w.counters.drop(drop_reason::sip_unreadable, unreadable);
    if (no_transport) w.counters.drop(drop_reason::sip_no_transport, no_transport);
    if (stream_full) w.counters.drop(drop_reason::sip_stream_full, stream_full);
    if (fragments) w.counters.sip_fragments_sent.add(fragments);
    if (handed_off) w.counters.sip_handed_off.add(handed_off);
    if (handed_in) w.counters.sip_handed_in.add(handed_in);
}

void decode_datagram(const rte_mbuf* m, uint16_t iface, uint16_t trunk, uint64_t now_ms, sip_handoff& in) noexcept
{
    const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, m->l2_len);
    const auto* udp = rte_pktmbuf_mtod_offset(m, const rte_udp_hdr*, m->l2_len + m->l3_len);
    const auto* eth = rte_pktmbuf_mtod(m, const rte_ether_hdr*);
    in.what = sip_handoff::kind::message;
    if ((ip->version_ihl >> 4) == 6) {
        const auto* ip6 = reinterpret_cast<const uint8_t*>(ip);
        in.src = endpoint{ip_address::v6(std::span<const uint8_t, 16>(ip6 + 8, 16)), rte_be_to_cpu_16(udp->src_port),
                          transport::udp, 0};
        in.local = endpoint{ip_address::v6(std::span<const uint8_t, 16>(ip6 + 24, 16)),
                            rte_be_to_cpu_16(udp->dst_port), transport::udp, 0};
    } else {
        in.src = endpoint::udp4(rte_be_to_cpu_32(ip->src_addr), rte_be_to_cpu_16(udp->src_port));
        in.local = endpoint::udp4(rte_be_to_cpu_32(ip->dst_addr), rte_be_to_cpu_16(udp->dst_port));
    }
    in.now_ms = now_ms;
    in.off = m->l2_len + m->l3_len + static_cast<uint32_t>(sizeof(rte_udp_hdr));
    in.len = rte_be_to_cpu_16(udp->dgram_len) - static_cast<uint32_t>(sizeof(rte_udp_hdr));
    in.trunk = trunk;
    in.iface = iface;
    std::memcpy(in.src_mac.data(), eth->src_addr.addr_bytes, in.src_mac.size());
}

std::string_view input_bytes(worker& w, const rte_mbuf* m, const sip_handoff& in, sip_tally& t) noexcept
{
    if (m->nb_segs == 1) return {rte_pktmbuf_mtod_offset(m, const char*, in.off), in.len};
    // Reassembled from fragments: one contiguous copy for the parser.
    char* scratch = sip_state(w.id).scratch.data();
    const void* p = in.len <= sip_state(w.id).scratch.size() ? rte_pktmbuf_read(m, in.off, in.len, scratch) : nullptr;
    if (p == nullptr) {
        ++t.unreadable;
        return {};
    }
    return {static_cast<const char*>(p), in.len};
}

void glean_sender(worker& w, const snapshot& snap, const sip_handoff& in) noexcept
{
    if (in.iface >= snap.interfaces.size()) return;
    if (in.src.addr.is_v6()) {
        if (!snap.interfaces[in.iface].on_link(in.src.addr)) return;
        w.learned6.learn(in.src.addr.v6_bytes(), in.iface, in.src_mac, in.now_ms);
    } else {
        const uint32_t src = in.src.addr.v4_host();
        if (src == 0 || !snap.interfaces[in.iface].on_link_v4(src)) return;
        // This worker answers or relays toward the sender at once (the callee's 180 toward a
        // new caller, 0.1 ms after its INVITE): from what it saw, not after the control core's
        // round trip.
        w.learned.learn(src, in.iface, in.src_mac, in.now_ms);
    }
    if (w.shared->neighbours.lookup(in.src.addr)) return;
    event e{};
    e.kind = event_kind::neighbour_seen;
    e.worker = static_cast<uint8_t>(w.id);
    e.iface = in.iface;
    e.ip = in.src.addr;
    e.mac = in.src_mac;
    post_event(w, e);
}

bool take_probe_reply(worker& w, const snapshot& snap, const sip::message& msg, const ip_address& src) noexcept
{
    const std::string_view branch = msg.text(msg.top_via.branch);
    if (!sip::is_probe_branch(branch)) return false;  // one prefix compare for every other response
    sip::probe_id id;
    // Not well-formed, or not from a peer: the proxy handles it (counted stale or denied).
    // Only a peer's address may answer a probe (anyone else's "200" would bring a dead peer back).
    if (!sip::read_probe_branch(branch, id) || !snap.proxy->is_peer_address(src)) return false;
    post_probe_reply(w, id, msg.status);
    return true;
}

namespace {

/// decode_sip_quote for ICMPv6 (RFC 4443 3.1: the message, then as much of the datagram as
/// fits): a UDP datagram right after its IPv6 header (we send no extension headers; a later
/// fragment's quote has no UDP header to read).
bool decode_sip_quote6(const snapshot& snap, const rte_mbuf* m, sip_quote& q) noexcept
{
    const auto* ip = rte_pktmbuf_mtod_offset(m, const uint8_t*, m->l2_len);
    const uint32_t len = 40 + (uint32_t{ip[4]} << 8 | ip[5]) - m->l3_len;
    const uint8_t* msg = ip + m->l3_len;
    constexpr uint32_t quoted_headers = 8 + 40 + sizeof(rte_udp_hdr);
    if (len < quoted_headers || msg[8 + 6] != IPPROTO_UDP) return false;
    const uint8_t* orig = msg + 8;
    const auto* udp = reinterpret_cast<const rte_udp_hdr*>(orig + 40);
    if (snap.proxy->find_trunk6(ip_address::v6(std::span<const uint8_t, 16>(orig + 8, 16)),
                                rte_be_to_cpu_16(udp->src_port)) < 0)
        return false;
    q.to = endpoint{ip_address::v6(std::span<const uint8_t, 16>(orig + 24, 16)), rte_be_to_cpu_16(udp->dst_port),
                    transport::udp, 0};
    const auto* payload = reinterpret_cast<const char*>(udp + 1);
    q.payload = std::string_view(payload, len - quoted_headers);
    q.off = static_cast<uint32_t>(payload - rte_pktmbuf_mtod(m, const char*));
    return true;
}

}  // namespace

bool decode_sip_quote(const snapshot& snap, const rte_mbuf* m, sip_quote& q) noexcept
{
    const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, m->l2_len);
    if ((ip->version_ihl >> 4) == 6) return decode_sip_quote6(snap, m, q);
    const uint32_t len = rte_be_to_cpu_16(ip->total_length) - m->l3_len;
    const auto* icmp = rte_pktmbuf_mtod_offset(m, const uint8_t*, m->l2_len + m->l3_len);
    icmp_quote iq;
    if (!read_icmp_quote(icmp, len, iq) || iq.proto != IPPROTO_UDP ||
        snap.proxy->find_trunk(ip_address::v4(iq.src), iq.src_port) < 0)
        return false;
    q.to = endpoint::udp4(iq.dst, iq.dst_port);
    q.payload = iq.payload;
    q.off = static_cast<uint32_t>(iq.payload.data() - rte_pktmbuf_mtod(m, const char*));
    return true;
}

// --- the stage's entry points (sip_stage.h)

void sip_stage(worker& w, const snapshot& snap, sub_burst& b, const uint16_t* trunks) noexcept
{
    w.counters.entered(stage::sip, b.n);
    sip_tally t;
    const uint64_t start = rte_rdtsc();
    const uint64_t now_ms = now_ms_of(w, start);
    sip_worker_state& st = sip_state(w.id);
    st.now_ms = now_ms;
    sip_handoff in;
    for (uint16_t i = 0; i < b.n; ++i) {
        rte_mbuf* m = b.pkts[i];
        decode_datagram(m, b.iface[i], trunks[i], now_ms, in);
        dispatch_input(w, snap, m, in, true, t);
    }
    t.commit(w);
    b.n = 0;
    st.sip_cycles += rte_rdtsc() - start;
}

bool sip_unreachable(worker& w, const snapshot& snap, rte_mbuf* m) noexcept
{
    if (!snap.proxy || !w.proxy) return false;
    sip_quote q;
    if (!decode_sip_quote(snap, m, q)) return false;
    // About one of the control core's probes: it fails now, not at its timeout (code 0).
    const std::size_t b = q.payload.find(sip::branch_probe);
    sip::probe_id id;
    if (b != std::string_view::npos && sip::read_probe_branch(q.payload.substr(b, sip::branch_probe_len), id) &&
        snap.proxy->find_peer(q.to.addr, q.to.port) != sip::no_peer) {
        post_probe_reply(w, id, 0);  // no SIP answer: ICMP destination unreachable
        rte_pktmbuf_free(m);
        return true;
    }
    if (q.payload.find(sip::branch_stateful) == std::string_view::npos &&
        q.payload.find(sip::branch_stateless) == std::string_view::npos)
        return false;
    sip_handoff in;
    in.what = sip_handoff::kind::unreachable;
    in.src = q.to;
    in.now_ms = now_ms_of(w, rte_rdtsc());
    in.off = q.off;
    in.len = static_cast<uint32_t>(q.payload.size());
    sip_tally t;
    dispatch_input(w, snap, m, in, true, t);
    t.commit(w);
    return true;
}

}  // namespace sbc::dataplane
