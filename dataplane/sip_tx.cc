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
    if (const uint8_t* known = hop_mac(w, nh.hop.v4_host(), nh.iface, st.now_ms, mac)) return known;
    if (const sip_handoff* in = st.answering; in != nullptr && in->iface == nh.iface && in->iface < snap.interfaces.size() &&
                                                 snap.interfaces[in->iface].next_hop(in->src.addr) == nh.hop)
        return in->src_mac.data();
    return nullptr;
}

/// Frames a datagram larger than the MTU as IPv4 fragments (udp_fragment.h) and queues them,
/// or holds them for the hop's MAC (each fragment a held frame; sip_unsent reads the first).
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
    if (capture != nullptr) capture_fragments(w, *capture, frags[0], d.bytes());
    for (uint32_t i = 0; i < n; ++i) {
        if (dst_mac == nullptr)
            hold_for_hop(w, frags[i], nh.iface, ifc.port_id, nh.hop.v4_host(), held_kind::sip, sip_state(w.id).now_ms);
        else
            tx_enqueue(w, ifc.port_id, frags[i]);
    }
    t.fragments += n;
    if (dst_mac != nullptr) ++t.sent;
}

/// Frames one datagram of the proxy into a fresh mbuf (fragments when over the MTU) and
/// queues it for transmission; copies the frame for the capture when `capture` is set.
void send_datagram(worker& w, const snapshot& snap, const sip::out_message& d, const capture_filter* capture,
                   sip_tally& t) noexcept
{
    if (d.len > max_udp4_payload) {  // more than one datagram carries (the proxy refuses it first)
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
    if (udp4_headers + d.len > ipv4_mtu) {
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
    if (!frame_udp4(m, ifc, dst_mac != nullptr ? dst_mac : unresolved.data(), d.src, d.dst, d.bytes(),
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
        hold_for_hop(w, m, nh.iface, ifc.port_id, nh.hop.v4_host(), held_kind::sip, sip_state(w.id).now_ms);
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
    // Framed by frame_udp4: l2_len set, IPv4 and UDP headers in the first segment.
    const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, m->l2_len);
    const uint32_t ihl = static_cast<uint32_t>(ip->version_ihl & 0x0f) * 4;
    const auto* udp = rte_pktmbuf_mtod_offset(m, const rte_udp_hdr*, m->l2_len + ihl);
    const uint32_t off = m->l2_len + ihl + static_cast<uint32_t>(sizeof(rte_udp_hdr));
    if (off > rte_pktmbuf_data_len(m) || is_later_fragment(ip)) return;  // a first fragment is read: its text's start
    const std::string_view sent{rte_pktmbuf_mtod_offset(m, const char*, off), rte_pktmbuf_data_len(m) - off};
    const endpoint to = endpoint::udp4(rte_be_to_cpu_32(ip->dst_addr), rte_be_to_cpu_16(udp->dst_port));
    w.proxy->on_send_failed(*snap.proxy, w.shared->peer_health, sent, to, sip::send_failure::unresolved, now_ms,
                            *w.outbox);
    sip_tally t;
    flush_outbox(w, snap, t);
    t.commit(w);
}

}  // namespace sbc::dataplane
