// The SIP stage's send step (see sip_path.h): every message the proxy produced is framed for
// the transport of the leg it goes on (UDP datagrams; TCP and TLS messages go to the stream
// thread, dataplane/stream_ring.h) and queued for transmission; what could not be sent goes back
// to the proxy as a local failure (never the peer's); the proxy's peer verdicts go to the control
// core as events. Worker only: no heap, locks, system calls or logging.
#include "dataplane/events.h"
#include <array>
#include <optional>

#include <rte_ip.h>
#include <rte_memcpy.h>
#include <rte_udp.h>

#include "dataplane/capture.h"
#include "dataplane/ipv6_fragment.h"
#include "dataplane/nd.h"
#include "dataplane/checksum.h"
#include "dataplane/neighbour_wait.h"
#include "dataplane/sip_path.h"
#include "dataplane/sip_stage.h"
#include "dataplane/stream_ring.h"
#include "dataplane/udp_frame.h"
#include "dataplane/udp_fragment.h"

namespace sbc::dataplane {

namespace {

/// The MAC of `hop`: from the neighbour table or what this worker learned from its senders
/// (neighbour_wait.h), else the one the message being answered came from (an off-link sender's
/// answer goes back through the router its frame came from); null when none knows it (the
/// caller holds the message while the control core resolves the hop).
const uint8_t* resolve(worker& w, const snapshot& snap, const next_hop& nh, mac_addr& mac) noexcept
{
    const sip_worker_state& st = sip_state(w.id);
    if (const uint8_t* known = hop_mac(w, nh.hop, nh.iface, st.now_ms, mac)) return known;
    if (const sip_handoff* in = st.answering; in != nullptr && in->iface == nh.iface && in->iface < snap.interfaces.size() &&
                                                 snap.interfaces[in->iface].next_hop(in->src.addr) == nh.hop)
        return in->src_mac.data();
    return nullptr;
}

/// Queues the fragments `frags[0..n)` of one datagram, or holds them for the hop's MAC (each
/// fragment a held frame; sip_unsent reads the first).
void send_or_hold(worker& w, const interface_info& ifc, const next_hop& nh, const uint8_t* dst_mac,
                  std::span<rte_mbuf* const> frags, const capture_filter* capture, std::string_view bytes,
                  sip_tally& t) noexcept
{
    if (capture != nullptr) capture_fragments(w, *capture, frags[0], bytes);
    for (rte_mbuf* f : frags) {
        if (dst_mac == nullptr)
            hold_for_hop(w, f, nh.iface, ifc.port_id, nh.hop, held_kind::sip, sip_state(w.id).now_ms);
        else
            tx_enqueue(w, ifc.port_id, f);
    }
    t.fragments += static_cast<uint32_t>(frags.size());
    if (dst_mac != nullptr) ++t.sent;
}

/// Frames a datagram larger than the MTU as IPv4 fragments (udp_fragment.h) and sends them.
void send_fragments(worker& w, const interface_info& ifc, const next_hop& nh, const uint8_t* dst_mac,
                    const sip::out_message& d, const capture_filter* capture, sip_tally& t) noexcept
{
    static constexpr mac_addr unresolved{};  // filled in when the hold releases the frames
    std::array<rte_mbuf*, max_fragments> frags;
    uint32_t n = 0;
    const fragment_result r = frame_udp4_fragments(w.pool, ifc, dst_mac != nullptr ? dst_mac : unresolved.data(), d.src,
                                                   d.dst, d.bytes(), sip_state(w.id).ip_id++, ipv4_mtu, frags, n);
    if (r != fragment_result::ok) {
        if (r == fragment_result::no_buffer) ++t.no_buffer;
        else ++t.too_big;
        return;
    }
    send_or_hold(w, ifc, nh, dst_mac, {frags.data(), n}, capture, d.bytes(), t);
}

/// Frames an IPv6 datagram that does not fit `mtu` (the path's) as IPv6 fragments at the
/// source (ipv6_fragment.h: routers never fragment IPv6) and sends them. The UDP header is
/// written with its checksum in the worker's scratch, in front of the payload.
void send_fragments6(worker& w, const interface_info& ifc, const next_hop& nh, const uint8_t* dst_mac,
                     const sip::out_message& d, uint32_t mtu, const capture_filter* capture, sip_tally& t) noexcept
{
    static constexpr mac_addr unresolved{};
    sip_worker_state& st = sip_state(w.id);
    const std::size_t udp_len = sizeof(rte_udp_hdr) + d.len;
    if (udp_len > st.tx_scratch.size()) {
        ++t.too_big;
        return;
    }
    auto* udp = reinterpret_cast<rte_udp_hdr*>(st.tx_scratch.data());
    const auto s = d.src.addr.v6_bytes(), dst = d.dst.addr.v6_bytes();
    udp->src_port = rte_cpu_to_be_16(d.src.port);
    udp->dst_port = rte_cpu_to_be_16(d.dst.port);
    udp->dgram_len = rte_cpu_to_be_16(static_cast<uint16_t>(udp_len));
    udp->dgram_cksum = udp6_checksum(s.data(), dst.data(), d.src.port, d.dst.port, d.bytes().data(), d.len);
    rte_memcpy(udp + 1, d.bytes().data(), d.len);
    std::array<rte_mbuf*, max_ipv6_fragments> frags;
    uint32_t n = 0;
    if (!frame_ipv6_fragments(w.pool, ifc, dst_mac != nullptr ? dst_mac : unresolved.data(), d.src.addr, d.dst.addr,
                              IPPROTO_UDP, {reinterpret_cast<const uint8_t*>(st.tx_scratch.data()), udp_len},
                              ++st.ip6_id, 64, ifc.tos_sip, mtu, frags, n)) {
        ++t.no_buffer;
        return;
    }
    send_or_hold(w, ifc, nh, dst_mac, {frags.data(), n}, capture, d.bytes(), t);
}

/// Frames one datagram of the proxy into a fresh mbuf (fragments when over the MTU) and
/// queues it for transmission; copies the frame for the capture when `capture` is set.
void send_datagram(worker& w, const snapshot& snap, const sip::out_message& d, const capture_filter* capture,
                   sip_tally& t) noexcept
{
    if (d.len > max_udp4_payload) {  // more than one datagram carries (the proxy refuses it first; IPv6 carries more)
        ++t.too_big;
        return;
    }
    // The trunk we send from names the interface (two VLANs may share an address).
    const int trunk = snap.proxy->find_trunk(d.src.addr, d.src.port);
    const uint16_t prefer = trunk >= 0 ? snap.proxy->trunks[static_cast<std::size_t>(trunk)].iface : no_interface;
    const next_hop nh = route_packet(snap.interfaces, d.src.addr, d.dst.addr, prefer);
    if (nh.iface == no_interface) {
        ++t.no_interface;
        return;
    }
    if (!nh.found()) {  // off-link and the interface has no gateway
        ++t.no_neighbour;
        return;
    }
    mac_addr mac;
    const uint8_t* dst_mac = resolve(w, snap, nh, mac);
    if (d.dst.addr.is_v6()) {
        // The path MTU a Packet Too Big taught us (RFC 8201), else the interface's.
        const uint32_t mtu = w.shared->path_mtu.lookup(d.dst.addr).value_or(ipv6_mtu);
        if (udp6_headers + d.len > mtu) {
            send_fragments6(w, snap.interfaces[nh.iface], nh, dst_mac, d, mtu, capture, t);
            return;
        }
    } else if (udp4_headers + d.len > ipv4_mtu) {
        send_fragments(w, snap.interfaces[nh.iface], nh, dst_mac, d, capture, t);
        return;
    }
    static constexpr mac_addr unresolved{};  // filled in when the hold releases the frame
    rte_mbuf* m = rte_pktmbuf_alloc(w.pool);
    if (m == nullptr) {
        ++t.no_buffer;
        return;
    }
    const interface_info& ifc = snap.interfaces[nh.iface];
    if (!frame_udp(m, ifc, dst_mac != nullptr ? dst_mac : unresolved.data(), d.src, d.dst, d.bytes(),
                   sip_state(w.id).ip_id++)) {
        rte_pktmbuf_free(m);
        ++t.no_buffer;
        return;
    }
    // Copied as framed (checksums, DSCP); one held for ARP carries a zero destination MAC.
    if (capture != nullptr) capture_frame(w, *capture, m);
    if (dst_mac == nullptr) {
        // Held while the control core resolves the hop (a first answer to a new caller's
        // address, a first BYE): sent when ARP answers, dropped and counted if it never does.
        hold_for_hop(w, m, nh.iface, ifc.port_id, nh.hop, held_kind::sip, sip_state(w.id).now_ms);
        return;
    }
    tx_enqueue(w, ifc.port_id, m);
    ++t.sent;
}

/// Hands one message for a TCP or TLS leg to the stream thread, which owns the connections.
void send_stream(worker& w, const sip::out_message& d, sip_tally& t) noexcept
{
    if (w.stream_out == nullptr) {
        ++t.no_transport;
        return;
    }
    rte_mbuf* m = rte_pktmbuf_alloc(w.stream_pool);
    if (m == nullptr) {
        ++t.no_buffer;
        return;
    }
    char* data = rte_pktmbuf_append(m, d.len);
    if (data == nullptr) {
        rte_pktmbuf_free(m);
        ++t.too_big;
        return;
    }
    rte_memcpy(data, d.bytes().data(), d.len);
    stream_send* h = stream_send_of(m);
    *h = stream_send{};
    h->src = d.src;
    h->dst = d.dst;
    h->len = d.len;
    h->worker = static_cast<uint8_t>(w.id);
    if (rte_ring_sp_enqueue(w.stream_out, m) != 0) {
        rte_pktmbuf_free(m);
        ++t.stream_full;
        return;
    }
    ++t.sent;
}

}  // namespace

static_assert(sip::max_udp_payload == max_udp4_payload, "the proxy refuses what send_datagram would drop");

namespace {

/// Sends one message of the proxy; returns the local reason it did not leave, if it did not,
/// read from the tally the send counted it in. A next hop without a MAC (no_neighbour) is left
/// to the neighbour code: a datagram held for ARP is no failure until its hold expires, which
/// reports it as unresolved. The tallies stay the drop counters they were.
std::optional<sip::send_failure> send_one(worker& w, const snapshot& snap, const sip::out_message& msg,
                                          const capture_filter* capture, sip_tally& t) noexcept
{
    const sip_tally before = t;
    if (msg.dst.proto == transport::udp)
        send_datagram(w, snap, msg, capture != nullptr && capture_wanted(w, *capture, msg) ? capture : nullptr, t);
    else
        send_stream(w, msg, t);
    if (t.too_big != before.too_big) return sip::send_failure::too_big;
    if (t.no_interface != before.no_interface) return sip::send_failure::no_route;
    if (t.no_buffer != before.no_buffer || t.stream_full != before.stream_full) return sip::send_failure::no_buffer;
    if (t.no_transport != before.no_transport) return sip::send_failure::no_connection;
    if (t.no_neighbour != before.no_neighbour) return sip::send_failure::no_route;  // off-link, no gateway
    return std::nullopt;
}

}  // namespace

void flush_outbox(worker& w, const snapshot& snap, sip_tally& t) noexcept
{
    sip::outbox& o = *w.outbox;
    struct failed_send {
        uint32_t index;
        sip::send_failure why;
    };
    std::array<failed_send, sip::outbox_capacity> failed;
    uint32_t n_failed = 0;
    const uint32_t n_produced = o.n;
    const capture_filter* capture = capture_now(w);  // null: no capture runs (capture_filter.h)
    for (uint32_t i = 0; i < n_produced; ++i)
        if (const auto why = send_one(w, snap, o.msgs[i], capture, t)) failed[n_failed++] = {i, *why};
    if (n_failed != 0) {
        // The proxy learns what did not leave, so that a call whose INVITE cannot be sent is
        // answered now instead of failing over after each peer's no-response timer, blamed on
        // the peers. It only appends to the outbox: the failed messages stay in place while it
        // reads them. What it adds (answers to the senders) is sent once; a failure among them
        // is only counted, never reported again.
        const sip_worker_state& st = sip_state(w.id);
        const uint64_t now_ms = st.answering != nullptr ? st.answering->now_ms : st.last_tick_ms;
        for (uint32_t k = 0; k < n_failed; ++k) {
            const sip::out_message& msg = o.msgs[failed[k].index];
            w.proxy->on_send_failed(*snap.proxy, w.shared->peer_health, msg.bytes(), msg.dst,
                                    failed[k].why, now_ms, o);
        }
        for (uint32_t i = n_produced; i < o.n; ++i) send_one(w, snap, o.msgs[i], capture, t);
    }
    for (uint32_t i = 0; i < o.n_events; ++i) {
        const sip::peer_event& pe = o.events[i];
        event e{};
        e.kind = pe.kind == sip::peer_event_kind::failed     ? event_kind::peer_failed
                 : pe.kind == sip::peer_event_kind::responded ? event_kind::peer_responded
                 : pe.kind == sip::peer_event_kind::overload  ? event_kind::peer_overload
                                                              : event_kind::peer_answered;
        e.worker = static_cast<uint8_t>(w.id);
        e.cause = pe.cause;
        e.code = pe.code;
        e.peer_id = pe.peer_id;
        e.rtt_us = pe.rtt_us;
        if (pe.kind == sip::peer_event_kind::overload) {
            e.code = pe.oc_reduction;
            e.oc_validity_ms = pe.oc_validity_ms;
            e.oc_seq_hi = static_cast<uint32_t>(pe.oc_seq >> 32);
            e.oc_seq_lo = static_cast<uint32_t>(pe.oc_seq);
            e.has_oc_seq = pe.has_oc_seq;
        }
        post_event(w, e);
    }
    o.clear();
}

void sip_unsent(worker& w, const snapshot& snap, const rte_mbuf* m, uint64_t now_ms) noexcept
{
    if (!snap.proxy || !w.proxy) return;
    // Framed by frame_udp4/6 or as fragments: l2_len set, the IP and UDP headers in the first
    // segment; a first fragment is read (its text's start), a later one is not.
    const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, m->l2_len);
    uint32_t l3 = 0;
    endpoint to;
    if ((ip->version_ihl >> 4) == 6) {
        const auto* ip6 = reinterpret_cast<const uint8_t*>(ip);
        l3 = 40;
        if (ip6[6] == ipv6_ext::fragment) {  // our fragment header: offset 0 for the first
            if (rte_pktmbuf_data_len(m) < m->l2_len + 48 || (ip6[42] << 8 | ip6[43]) >> 3 != 0) return;
            l3 = 48;
        }
        to.addr = ip_address::v6(std::span<const uint8_t, 16>(ip6 + 24, 16));
    } else {
        if (is_later_fragment(ip)) return;
        l3 = static_cast<uint32_t>(ip->version_ihl & 0x0f) * 4;
        to.addr = ip_address::v4(rte_be_to_cpu_32(ip->dst_addr));
    }
    const uint32_t off = m->l2_len + l3 + static_cast<uint32_t>(sizeof(rte_udp_hdr));
    if (off > rte_pktmbuf_data_len(m)) return;
    const auto* udp = rte_pktmbuf_mtod_offset(m, const rte_udp_hdr*, m->l2_len + l3);
    to.port = rte_be_to_cpu_16(udp->dst_port);
    const std::string_view sent{rte_pktmbuf_mtod_offset(m, const char*, off), rte_pktmbuf_data_len(m) - off};
    w.proxy->on_send_failed(*snap.proxy, w.shared->peer_health, sent, to, sip::send_failure::unresolved, now_ms,
                            *w.outbox);
    sip_tally t;
    flush_outbox(w, snap, t);
    t.commit(w);
}

}  // namespace sbc::dataplane
