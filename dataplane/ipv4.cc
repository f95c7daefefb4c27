// IPv4 stage (header validation, sorting by protocol: ICMP, UDP, TCP) and fragment reassembly. Worker only.
#include <rte_ip.h>
#include <rte_ip_frag.h>

#include "dataplane/stages.h"

namespace sbc::dataplane {

namespace {

/// Puts a validated, unfragmented datagram into the stage for its protocol; false if none.
bool route_l4(rte_mbuf* m, uint16_t ifc, const rte_ipv4_hdr* ip, l4_bursts& out) noexcept
{
    if (ip->next_proto_id == IPPROTO_UDP) {
        out.udp.push(m, ifc);
        return true;
    }
    if (ip->next_proto_id == IPPROTO_ICMP) {
        out.icmp.push(m, ifc);
        return true;
    }
    if (ip->next_proto_id == IPPROTO_TCP) {
        out.tcp.push(m, ifc);
        return true;
    }
    return false;
}

}  // namespace

void ipv4_stage(worker& w, const snapshot& snap, sub_burst& b, l4_bursts& out) noexcept
{
    w.counters.entered(stage::ipv4, b.n);
    drop_tally tally;
    auto drop = [&tally](rte_mbuf* m, drop_reason r) { tally.drop(m, r); };
    for (uint16_t i = 0; i < b.n; ++i) {
        rte_mbuf* m = b.pkts[i];
        const interface_info& ifc = snap.interfaces[b.iface[i]];
        const uint32_t avail = rte_pktmbuf_data_len(m) - m->l2_len;
        if (avail < sizeof(rte_ipv4_hdr)) {
            drop(m, drop_reason::ipv4_truncated);
            continue;
        }
        auto* ip = rte_pktmbuf_mtod_offset(m, rte_ipv4_hdr*, m->l2_len);
        if ((ip->version_ihl >> 4) != 4) {
            drop(m, drop_reason::ipv4_bad_version);
            continue;
        }
        const uint16_t ihl = static_cast<uint16_t>((ip->version_ihl & 0xf) * 4);
        if (ihl < sizeof(rte_ipv4_hdr)) {
            drop(m, drop_reason::ipv4_bad_header_length);
            continue;
        }
        if (ihl > avail) {
            drop(m, drop_reason::ipv4_truncated);
            continue;
        }
        const uint16_t total = rte_be_to_cpu_16(ip->total_length);
        if (total < ihl || total > avail) {
            drop(m, drop_reason::ipv4_bad_total_length);
            continue;
        }
        const uint64_t csum_flags = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;
        if (csum_flags == RTE_MBUF_F_RX_IP_CKSUM_BAD ||
            (csum_flags != RTE_MBUF_F_RX_IP_CKSUM_GOOD && rte_raw_cksum(ip, ihl) != 0xffff)) {
            drop(m, drop_reason::ipv4_bad_checksum);
            continue;
        }
        if (rte_be_to_cpu_32(ip->dst_addr) != ifc.v4()) {
            drop(m, drop_reason::ipv4_not_for_us);
            continue;
        }
        if (avail > total) rte_pktmbuf_trim(m, static_cast<uint16_t>(avail - total));  // Ethernet padding
        m->l3_len = ihl;
        if (rte_ipv4_frag_pkt_is_fragmented(ip)) {
            out.frag.push(m, b.iface[i]);
            continue;
        }
        if (!route_l4(m, b.iface[i], ip, out)) drop(m, drop_reason::ipv4_protocol_unsupported);
    }
    tally.commit(w);
    b.n = 0;
}

void frag_stage(worker& w, const snapshot&, l4_bursts& io) noexcept
{
    sub_burst& b = io.frag;
    w.counters.entered(stage::frag, b.n);
    if (w.frag_table == nullptr) {
        drop_all(w, b, drop_reason::frag_failed);
        return;
    }
    const uint64_t now = rte_rdtsc();
    uint32_t unsupported = 0, failed = 0;
    for (uint16_t i = 0; i < b.n; ++i) {
        rte_mbuf* m = b.pkts[i];
        auto* ip = rte_pktmbuf_mtod_offset(m, rte_ipv4_hdr*, m->l2_len);
        // Fragments the table gives up on (full, overlapping, timed out) land on the death
        // row, to be freed there: its growth is what failed.
        const uint32_t before = w.death_row.cnt;
        rte_mbuf* whole = rte_ipv4_frag_reassemble_packet(w.frag_table, &w.death_row, m, now, ip);
        failed += w.death_row.cnt - before;
        if (whole == nullptr) continue;
        auto* wip = rte_pktmbuf_mtod_offset(whole, rte_ipv4_hdr*, whole->l2_len);
        if (!route_l4(whole, b.iface[i], wip, io)) {
            rte_pktmbuf_free(whole);
            ++unsupported;
        }
    }
    if (unsupported) w.counters.drop(drop_reason::ipv4_protocol_unsupported, unsupported);
    if (failed) w.counters.drop(drop_reason::frag_failed, failed);
    rte_ip_frag_free_death_row(&w.death_row, 3);
    b.n = 0;
}

}  // namespace sbc::dataplane
