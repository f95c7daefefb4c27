// Our Ethernet header (and 802.1Q tag) in front of an IPv4 (or IPv6) packet about to leave: written once
// here for what we route out (SIP and health probes through write_l2(interface) in tx.cc, the
// RTP relay per packet). Header-only and inline: the relay's hot loop calls it per packet.
// Any worker; no heap, locks, system calls or logging.
#pragma once

#include <cstdint>
#include <cstring>

#include <rte_ether.h>
#include <rte_mbuf.h>

namespace sbc::packet {

/// Writes dst and src MAC, and the 802.1Q tag when `vlan` is not 0, in front of the L3 packet
/// that starts at m's data + m->l2_len, growing or shrinking the L2 part to fit (sets
/// m->l2_len), with `ethertype` for the L3 packet (IPv4 unless told). Returns false when
/// there is no headroom (never for frames we received).
inline bool write_l2(rte_mbuf* m, uint16_t vlan, const uint8_t* src_mac, const uint8_t* dst_mac,
                     uint16_t ethertype = RTE_ETHER_TYPE_IPV4) noexcept
{
    const uint16_t want = vlan != 0 ? sizeof(rte_ether_hdr) + sizeof(rte_vlan_hdr) : sizeof(rte_ether_hdr);
    if (m->l2_len < want) {
        if (rte_pktmbuf_prepend(m, static_cast<uint16_t>(want - m->l2_len)) == nullptr) return false;
    } else if (m->l2_len > want) {
        rte_pktmbuf_adj(m, static_cast<uint16_t>(m->l2_len - want));
    }
    m->l2_len = want;
    auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
    std::memcpy(eth->dst_addr.addr_bytes, dst_mac, RTE_ETHER_ADDR_LEN);
    std::memcpy(eth->src_addr.addr_bytes, src_mac, RTE_ETHER_ADDR_LEN);
    if (vlan != 0) {
        eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
        auto* vh = reinterpret_cast<rte_vlan_hdr*>(eth + 1);
        vh->vlan_tci = rte_cpu_to_be_16(vlan);
        vh->eth_proto = rte_cpu_to_be_16(ethertype);
    } else {
        eth->ether_type = rte_cpu_to_be_16(ethertype);
    }
    return true;
}

}  // namespace sbc::packet
