// Framing and injecting a UDP datagram from the control core (see probe_send.h). Control core only.
#include "control/probe_send.h"

#include <cstring>

#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "dataplane/stages.h"

namespace sbc::control {

send_result send_udp(dataplane::dataplane_runtime& rt, const dataplane::interface_info& ifc,
                     const dataplane::mac_addr& next_hop_mac, uint16_t src_port, uint32_t dst_ip, uint16_t dst_port,
                     std::string_view payload, uint16_t ip_id)
{
    constexpr std::size_t headers = sizeof(rte_ipv4_hdr) + sizeof(rte_udp_hdr);
    if (headers + payload.size() > 1500) return send_result::too_big;
    rte_mbuf* m = rte_pktmbuf_alloc(rt.control_pool);
    if (m == nullptr) return send_result::no_buffer;
    const auto l3 = static_cast<uint16_t>(headers + payload.size());
    char* p = rte_pktmbuf_append(m, l3);
    if (p == nullptr) {
        rte_pktmbuf_free(m);
        return send_result::too_big;
    }
    auto* ip = reinterpret_cast<rte_ipv4_hdr*>(p);
    ip->version_ihl = RTE_IPV4_VHL_DEF;
    ip->type_of_service = 0;
    ip->total_length = rte_cpu_to_be_16(l3);
    ip->packet_id = rte_cpu_to_be_16(ip_id);
    ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
    ip->time_to_live = 64;
    ip->next_proto_id = IPPROTO_UDP;
    ip->hdr_checksum = 0;
    ip->src_addr = rte_cpu_to_be_32(ifc.address);
    ip->dst_addr = rte_cpu_to_be_32(dst_ip);
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
    udp->src_port = rte_cpu_to_be_16(src_port);
    udp->dst_port = rte_cpu_to_be_16(dst_port);
    udp->dgram_len = rte_cpu_to_be_16(static_cast<uint16_t>(sizeof(rte_udp_hdr) + payload.size()));
    udp->dgram_cksum = 0;
    std::memcpy(udp + 1, payload.data(), payload.size());
    udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
    m->l2_len = 0;
    m->l3_len = sizeof(rte_ipv4_hdr);
    if (!dataplane::write_l2(m, ifc, next_hop_mac.data())) {
        rte_pktmbuf_free(m);
        return send_result::no_buffer;
    }
    m->port = ifc.port_id;
    return dataplane::inject_frame(rt, m) ? send_result::sent : send_result::ring_full;
}

}  // namespace sbc::control
