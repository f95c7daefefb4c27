// The TCP stage: TCP for our addresses (IPv4, and IPv6 past its extension headers) leaves the fast path to the kernel of sbcd's own
// namespace through the stream thread and the exception port (dataplane/stream_ring.h,
// transport/exception_port.h). Only segments from a source that a trunk listening on TCP or
// TLS allows (to that port), or from a peer's address (our own connections to peers, and peers
// that connect to us), go; anything else is dropped and counted here, before a SYN can open
// anything in the kernel. The frame leaves without its 802.1Q tag (the kernel interface has
// none). Worker only: no heap, locks, system calls or logging.
#include <cstring>

#include <rte_ip.h>
#include <rte_tcp.h>

#include "dataplane/events.h"
#include "dataplane/stages.h"

namespace sbc::dataplane {

namespace {

/// Whether a trunk listens on TCP or TLS at (address, port) and allows `src`.
bool trunk_allows(const sip::proxy_tables& t, const ip_address& local, uint16_t port, const ip_address& src) noexcept
{
    for (const sip::trunk& tr : t.trunks) {
        if ((tr.tcp_port == port || tr.tls_port == port) && port != 0 && tr.owns(local) && tr.allows(src))
            return true;
    }
    return false;
}

/// The length of the IP packet `m` carries (IPv4 total length, or the IPv6 header and its
/// payload length: l3_len then covers the extension headers the IPv6 stage walked), with its
/// addresses.
uint32_t ip_length(const rte_mbuf* m, ip_address& src, ip_address& dst) noexcept
{
    const auto* ip = rte_pktmbuf_mtod_offset(m, const uint8_t*, m->l2_len);
    if ((ip[0] >> 4) == 6) {
        const auto* h = reinterpret_cast<const rte_ipv6_hdr*>(ip);
        src = ip_address::v6(std::span<const uint8_t, 16>(h->src_addr, 16));
        dst = ip_address::v6(std::span<const uint8_t, 16>(h->dst_addr, 16));
        return sizeof(rte_ipv6_hdr) + rte_be_to_cpu_16(h->payload_len);
    }
    const auto* h = reinterpret_cast<const rte_ipv4_hdr*>(ip);
    src = ip_address::v4(rte_be_to_cpu_32(h->src_addr));
    dst = ip_address::v4(rte_be_to_cpu_32(h->dst_addr));
    return rte_be_to_cpu_16(h->total_length);
}

/// Tells the control core the MAC of an on-link sender it does not know yet, so that the
/// kernel's answers (a SYN-ACK) find their next hop.
void glean(worker& w, const snapshot& snap, uint16_t ifc, const ip_address& src, const rte_ether_hdr* eth) noexcept
{
    if (!snap.interfaces[ifc].on_link(src) || w.shared->neighbours.lookup(src)) return;
    event e{};
    e.kind = event_kind::neighbour_seen;
    e.worker = static_cast<uint8_t>(w.id);
    e.iface = ifc;
    e.ip = src;
    std::memcpy(e.mac.data(), eth->src_addr.addr_bytes, e.mac.size());
    post_event(w, e);
}

}  // namespace

void tcp_stage(worker& w, const snapshot& snap, sub_burst& b) noexcept
{
    w.counters.entered(stage::tcp, b.n);
    if (w.kernel_out == nullptr || !snap.proxy) {
        drop_all(w, b, drop_reason::tcp_no_streams);
        return;
    }
    std::array<rte_mbuf*, burst_size> out;
    unsigned n_out = 0;
    uint32_t truncated = 0, denied = 0;
    for (uint16_t i = 0; i < b.n; ++i) {
        rte_mbuf* m = b.pkts[i];
        ip_address src, dst;
        if (ip_length(m, src, dst) < m->l3_len + sizeof(rte_tcp_hdr) ||
            rte_pktmbuf_data_len(m) < m->l2_len + m->l3_len + sizeof(rte_tcp_hdr)) {
            rte_pktmbuf_free(m);
            ++truncated;
            continue;
        }
        const auto* tcp = rte_pktmbuf_mtod_offset(m, const rte_tcp_hdr*, m->l2_len + m->l3_len);
        if (!trunk_allows(*snap.proxy, dst, rte_be_to_cpu_16(tcp->dst_port), src) &&
            !snap.proxy->is_peer_address(src)) {
            rte_pktmbuf_free(m);
            ++denied;
            continue;
        }
        auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
        glean(w, snap, b.iface[i], src, eth);
        if (m->l2_len > sizeof(rte_ether_hdr)) {
            // Untag: the MACs move up over the tag; the inner EtherType is already in place.
            const uint16_t tag = static_cast<uint16_t>(m->l2_len - sizeof(rte_ether_hdr));
            std::memmove(reinterpret_cast<char*>(eth) + tag, eth, 2 * RTE_ETHER_ADDR_LEN);
            rte_pktmbuf_adj(m, tag);
            m->l2_len = sizeof(rte_ether_hdr);
        }
        out[n_out++] = m;
    }
    b.n = 0;
    if (n_out != 0) {
        const unsigned sent = rte_ring_sp_enqueue_burst(w.kernel_out, reinterpret_cast<void**>(out.data()), n_out, nullptr);
        if (sent < n_out) {
            rte_pktmbuf_free_bulk(out.data() + sent, n_out - sent);
            w.counters.drop(drop_reason::kernel_ring_full, n_out - sent);
        }
    }
    if (truncated) w.counters.drop(drop_reason::tcp_truncated, truncated);
    if (denied) w.counters.drop(drop_reason::tcp_not_allowed, denied);
}

}  // namespace sbc::dataplane
