// ICMP stage: echo replies for our addresses (in place, checksums recomputed) and
// destination-unreachable reports turned into events for the control core and, when they quote
// a SIP datagram we sent from a trunk, given to the proxy that owns the attempt (sip_stage).
// Worker only.
#include <cstring>

#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "dataplane/events.h"
#include "dataplane/sip_stage.h"
#include "dataplane/stages.h"

namespace sbc::dataplane {

namespace {

constexpr uint8_t icmp_dest_unreachable = 3;

/// One's complement sum of `len` bytes of m's packet from `off`, any number of segments.
uint16_t cksum_mbuf(const rte_mbuf* m, uint32_t off, uint32_t len) noexcept
{
    uint16_t sum = 0;
    if (m->nb_segs == 1) return rte_raw_cksum(rte_pktmbuf_mtod_offset(m, const void*, off), len);
    if (rte_raw_cksum_mbuf(m, off, len, &sum) != 0) return 0;
    return sum;
}

void report_unreachable(worker& w, uint16_t iface, const rte_ipv4_hdr* ip, const uint8_t* icmp, uint32_t len) noexcept
{
    icmp_quote q;
    if (!read_icmp_quote(icmp, len, q)) return;
    event e{};
    e.kind = event_kind::icmp_unreachable;
    e.worker = static_cast<uint8_t>(w.id);
    e.iface = iface;
    e.ip = ip_address::v4(rte_be_to_cpu_32(ip->src_addr));
    e.icmp_type = icmp[0];
    e.icmp_code = icmp[1];
    e.orig_dst = ip_address::v4(q.dst);
    e.orig_proto = q.proto;
    e.orig_src_port = q.src_port;
    e.orig_dst_port = q.dst_port;
    post_event(w, e);
}

}  // namespace

bool read_icmp_quote(const uint8_t* icmp, uint32_t len, icmp_quote& q) noexcept
{
    // ICMP header (8) + the original IP header + at least 8 bytes of its payload (RFC 792).
    if (len < 8 + sizeof(rte_ipv4_hdr) + 8) return false;
    const auto* orig = reinterpret_cast<const rte_ipv4_hdr*>(icmp + 8);
    const uint32_t ihl = (orig->version_ihl & 0xfu) * 4u;
    if (ihl < sizeof(rte_ipv4_hdr) || len < 8 + ihl + 8) return false;
    q.src = rte_be_to_cpu_32(orig->src_addr);
    q.dst = rte_be_to_cpu_32(orig->dst_addr);
    q.proto = orig->next_proto_id;
    if (q.proto == IPPROTO_UDP) {
        const auto* udp = reinterpret_cast<const rte_udp_hdr*>(icmp + 8 + ihl);
        q.src_port = rte_be_to_cpu_16(udp->src_port);
        q.dst_port = rte_be_to_cpu_16(udp->dst_port);
        const uint32_t at = 8 + ihl + static_cast<uint32_t>(sizeof(rte_udp_hdr));
        q.payload = {reinterpret_cast<const char*>(icmp) + at, len - at};
    }
    return true;
}

void icmp_stage(worker& w, const snapshot& snap, sub_burst& b) noexcept
{
    w.counters.entered(stage::icmp, b.n);
    uint32_t truncated = 0, bad_sum = 0, unhandled = 0;
    for (uint16_t i = 0; i < b.n; ++i) {
        rte_mbuf* m = b.pkts[i];
        auto* ip = rte_pktmbuf_mtod_offset(m, rte_ipv4_hdr*, m->l2_len);
        const uint32_t off = m->l2_len + m->l3_len;
        const uint32_t len = rte_be_to_cpu_16(ip->total_length) - m->l3_len;
        if (len < sizeof(rte_icmp_hdr) || rte_pktmbuf_data_len(m) < off + sizeof(rte_icmp_hdr)) {
            rte_pktmbuf_free(m);
            ++truncated;
            continue;
        }
        if (cksum_mbuf(m, off, len) != 0xffff) {
            rte_pktmbuf_free(m);
            ++bad_sum;
            continue;
        }
        auto* icmp = rte_pktmbuf_mtod_offset(m, rte_icmp_hdr*, off);
        if (icmp->icmp_type == RTE_IP_ICMP_ECHO_REQUEST && icmp->icmp_code == 0) {
            icmp->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
            icmp->icmp_cksum = 0;
            icmp->icmp_cksum = static_cast<uint16_t>(~cksum_mbuf(m, off, len));
            const rte_be32_t src = ip->src_addr;
            ip->src_addr = ip->dst_addr;
            ip->dst_addr = src;
            ip->time_to_live = 64;
            ip->hdr_checksum = 0;
            ip->hdr_checksum = rte_ipv4_cksum(ip);
            auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
            // Reply from our own MAC, also when the request went to a broadcast address.
            eth->dst_addr = eth->src_addr;
            std::memcpy(eth->src_addr.addr_bytes, snap.interfaces[b.iface[i]].mac.data(), RTE_ETHER_ADDR_LEN);
            m->ol_flags = 0;
            tx_enqueue(w, m->port, m);
            continue;
        }
        if (icmp->icmp_type == icmp_dest_unreachable && rte_pktmbuf_data_len(m) >= off + len) {
            report_unreachable(w, b.iface[i], ip, reinterpret_cast<const uint8_t*>(icmp), len);
            if (m->nb_segs != 1 || !sip_unreachable(w, snap, m)) rte_pktmbuf_free(m);
            continue;
        }
        rte_pktmbuf_free(m);
        ++unhandled;
    }
    if (truncated) w.counters.drop(drop_reason::icmp_truncated, truncated);
    if (bad_sum) w.counters.drop(drop_reason::icmp_bad_checksum, bad_sum);
    if (unhandled) w.counters.drop(drop_reason::icmp_unhandled, unhandled);
    b.n = 0;
}

}  // namespace sbc::dataplane
