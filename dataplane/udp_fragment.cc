// IPv4 fragmentation of UDP datagrams we originate (see udp_fragment.h). Any thread on mbufs
// it owns: workers (SIP over UDP larger than the MTU).
#include "dataplane/udp_fragment.h"

#include <cstring>

#include <rte_ip.h>
#include <rte_udp.h>

#include "dataplane/checksum.h"
#include "dataplane/stages.h"

namespace sbc::dataplane {

fragment_result frame_udp4_fragments(rte_mempool* pool, const interface_info& ifc, const uint8_t* dst_mac,
                                     const endpoint& src, const endpoint& dst, std::string_view payload,
                                     uint16_t ip_id, uint32_t mtu, std::span<rte_mbuf*, max_fragments> out,
                                     uint32_t& n) noexcept
{
    n = 0;
    if (!src.addr.is_v4() || !dst.addr.is_v4() || payload.size() > max_udp4_payload || mtu < 1280 || mtu > 9000)
        return fragment_result::too_big;
    const uint32_t step = fragment_step(mtu);
    const auto total = static_cast<uint32_t>(sizeof(rte_udp_hdr) + payload.size());  // the UDP datagram
    const uint32_t count = (total + step - 1) / step;
    if (count > out.size()) return fragment_result::too_big;
    if (rte_pktmbuf_alloc_bulk(pool, out.data(), count) != 0) return fragment_result::no_buffer;
    const uint32_t saddr = src.addr.v4_host();
    const uint32_t daddr = dst.addr.v4_host();
    rte_udp_hdr udp;
    udp.src_port = rte_cpu_to_be_16(src.port);
    udp.dst_port = rte_cpu_to_be_16(dst.port);
    udp.dgram_len = rte_cpu_to_be_16(static_cast<uint16_t>(total));
    udp.dgram_cksum = udp4_checksum(saddr, daddr, src.port, dst.port, payload.data(), payload.size());
    for (uint32_t i = 0; i < count; ++i) {
        rte_mbuf* m = out[i];
        const uint32_t off = i * step;  // into the UDP datagram, a multiple of 8
        const uint32_t len = total - off < step ? total - off : step;
        const auto l3 = static_cast<uint16_t>(sizeof(rte_ipv4_hdr) + len);
        if (rte_pktmbuf_tailroom(m) < l3) {
            rte_pktmbuf_free_bulk(out.data(), count);
            return fragment_result::no_buffer;
        }
        char* p = rte_pktmbuf_mtod(m, char*);
        m->data_len = l3;
        m->pkt_len = l3;
        const auto frag = static_cast<uint16_t>((off >> 3) | (i + 1 < count ? RTE_IPV4_HDR_MF_FLAG : 0));
        auto* ip = reinterpret_cast<rte_ipv4_hdr*>(p);
        ip->version_ihl = RTE_IPV4_VHL_DEF;
        ip->type_of_service = ifc.tos_sip;  // SIP: the interface's SIP DSCP
        ip->total_length = rte_cpu_to_be_16(l3);
        ip->packet_id = rte_cpu_to_be_16(ip_id);
        ip->fragment_offset = rte_cpu_to_be_16(frag);
        ip->time_to_live = 64;
        ip->next_proto_id = IPPROTO_UDP;
        ip->src_addr = rte_cpu_to_be_32(saddr);
        ip->dst_addr = rte_cpu_to_be_32(daddr);
        ip->hdr_checksum = ipv4_header_checksum(saddr, daddr, l3, ip_id, frag, 64, IPPROTO_UDP, ifc.tos_sip);
        char* body = p + sizeof(rte_ipv4_hdr);
        if (i == 0) {
            std::memcpy(body, &udp, sizeof(udp));
            std::memcpy(body + sizeof(udp), payload.data(), len - sizeof(udp));
        } else {
            std::memcpy(body, payload.data() + (off - sizeof(udp)), len);
        }
        m->l2_len = 0;
        m->l3_len = sizeof(rte_ipv4_hdr);
        if (!write_l2(m, ifc, dst_mac)) {
            rte_pktmbuf_free_bulk(out.data(), count);
            return fragment_result::no_buffer;
        }
    }
    n = count;
    return fragment_result::ok;
}

bool is_later_fragment(const void* ip) noexcept
{
    const auto* h = static_cast<const rte_ipv4_hdr*>(ip);
    return (rte_be_to_cpu_16(h->fragment_offset) & RTE_IPV4_HDR_OFFSET_MASK) != 0;
}

}  // namespace sbc::dataplane
