// Framing UDP datagrams we originate and choosing their way out (see udp_frame.h). Any thread
// on an mbuf it owns: workers (SIP) and the control core (OPTIONS probes).
#include "dataplane/udp_frame.h"

#include <cstring>

#include <rte_ip.h>
#include <rte_udp.h>

#include "dataplane/checksum.h"
#include "dataplane/ipv6_fragment.h"
#include "dataplane/stages.h"

namespace sbc::dataplane {

namespace {

/// Whether `from` is one of the addresses of `ifc` (IPv4 one compare).
bool owns(const interface_info& ifc, const ip_address& from) noexcept
{
    if (!from.is_v6()) return ifc.address.addr == from;
    return ifc.has_v6() && (ifc.address6.addr == from || ifc.link_local6 == from);
}

}  // namespace

next_hop route_packet(std::span<const interface_info> ifcs, const ip_address& from, const ip_address& to,
                      uint16_t prefer) noexcept
{
    auto via = [&](uint16_t i) {
        return next_hop{i, to.is_unspecified() ? ip_address{} : ifcs[i].next_hop(to)};
    };
    if (prefer < ifcs.size() && owns(ifcs[prefer], from)) return via(prefer);
    for (uint16_t i = 0; i < ifcs.size(); ++i) {
        if (!from.is_unspecified() && !owns(ifcs[i], from)) continue;
        const next_hop nh = via(i);
        if (from.is_unspecified() && !nh.found()) continue;
        return nh;
    }
    return {};
}

bool frame_udp4(rte_mbuf* m, const interface_info& ifc, const uint8_t* dst_mac, const endpoint& src,
                const endpoint& dst, std::string_view payload, uint16_t ip_id) noexcept
{
    if (!src.addr.is_v4() || !dst.addr.is_v4() || udp4_headers + payload.size() > ipv4_mtu) return false;
    const auto l3 = static_cast<uint16_t>(udp4_headers + payload.size());
    // A fresh mbuf (one empty segment): sized in place rather than by rte_pktmbuf_append, whose
    // walk to the last segment reads the mbuf's second cache line, which rte_pktmbuf_alloc has
    // just written and the CPU may not have yet (a stall measured in scripts/bench/cps.sh).
    if (m->data_len != 0 || rte_pktmbuf_tailroom(m) < l3) return false;
    char* p = rte_pktmbuf_mtod(m, char*);
    m->data_len = l3;
    m->pkt_len = l3;
    const uint32_t saddr = src.addr.v4_host();
    const uint32_t daddr = dst.addr.v4_host();
    auto* ip = reinterpret_cast<rte_ipv4_hdr*>(p);
    ip->version_ihl = RTE_IPV4_VHL_DEF;
    ip->type_of_service = ifc.tos_sip;  // the interface's SIP DSCP
    ip->total_length = rte_cpu_to_be_16(l3);
    ip->packet_id = rte_cpu_to_be_16(ip_id);
    ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
    ip->time_to_live = 64;
    ip->next_proto_id = IPPROTO_UDP;
    ip->src_addr = rte_cpu_to_be_32(saddr);
    ip->dst_addr = rte_cpu_to_be_32(daddr);
    // Checksums from the values and from the payload where the proxy wrote it (in cache), not
    // read back from the packet being written (dataplane/checksum.h).
    ip->hdr_checksum =
        ipv4_header_checksum(saddr, daddr, l3, ip_id, RTE_IPV4_HDR_DF_FLAG, 64, IPPROTO_UDP, ifc.tos_sip);
    auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
    udp->src_port = rte_cpu_to_be_16(src.port);
    udp->dst_port = rte_cpu_to_be_16(dst.port);
    udp->dgram_len = rte_cpu_to_be_16(static_cast<uint16_t>(sizeof(rte_udp_hdr) + payload.size()));
    udp->dgram_cksum = udp4_checksum(saddr, daddr, src.port, dst.port, payload.data(), payload.size());
    std::memcpy(udp + 1, payload.data(), payload.size());
    m->l2_len = 0;
    m->l3_len = sizeof(rte_ipv4_hdr);
    return write_l2(m, ifc, dst_mac);
}

bool frame_udp6(rte_mbuf* m, const interface_info& ifc, const uint8_t* dst_mac, const endpoint& src,
                const endpoint& dst, std::string_view payload) noexcept
{
    if (!src.addr.is_v6() || !dst.addr.is_v6() || udp6_headers + payload.size() > ipv6_mtu) return false;
    const auto l3 = static_cast<uint16_t>(udp6_headers + payload.size());
    if (m->data_len != 0 || rte_pktmbuf_tailroom(m) < l3) return false;  // a fresh mbuf, as frame_udp4's
    char* p = rte_pktmbuf_mtod(m, char*);
    m->data_len = l3;
    m->pkt_len = l3;
    const auto s = src.addr.v6_bytes(), d = dst.addr.v6_bytes();
    auto* ip = reinterpret_cast<rte_ipv6_hdr*>(p);
    ip->vtc_flow = rte_cpu_to_be_32(6u << 28 | uint32_t{ifc.tos_sip} << 20);  // the SIP DSCP in Traffic Class
    const auto udp_len = static_cast<uint16_t>(sizeof(rte_udp_hdr) + payload.size());
    ip->payload_len = rte_cpu_to_be_16(udp_len);
    ip->proto = IPPROTO_UDP;
    ip->hop_limits = 64;
    std::memcpy(ip->src_addr, s.data(), 16);
    std::memcpy(ip->dst_addr, d.data(), 16);
    auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
    udp->src_port = rte_cpu_to_be_16(src.port);
    udp->dst_port = rte_cpu_to_be_16(dst.port);
    udp->dgram_len = rte_cpu_to_be_16(udp_len);
    udp->dgram_cksum = udp6_checksum(s.data(), d.data(), src.port, dst.port, payload.data(), payload.size());
    std::memcpy(udp + 1, payload.data(), payload.size());
    m->l2_len = 0;
    m->l3_len = sizeof(rte_ipv6_hdr);
    return write_l2(m, ifc, dst_mac, RTE_ETHER_TYPE_IPV6);
}

}  // namespace sbc::dataplane
