// IPv6 fragmentation at the source (see ipv6_fragment.h). Any thread on mbufs it owns: workers.
#include "dataplane/ipv6_fragment.h"

#include <cstring>

#include <rte_byteorder.h>
#include <rte_ether.h>

#include "dataplane/nd.h"
#include "dataplane/stages.h"

namespace sbc::dataplane {

bool frame_ipv6_fragments(rte_mempool* pool, const interface_info& ifc, const uint8_t* dst_mac, const ip_address& src,
                          const ip_address& dst, uint8_t proto, std::span<const uint8_t> data, uint32_t id,
                          uint8_t hop_limit, uint8_t tclass, uint32_t mtu, std::span<rte_mbuf*, max_ipv6_fragments> out,
                          uint32_t& n) noexcept
{
    n = 0;
    // The fragment header takes 8 bytes of the 65,535 a payload may have.
    if (!src.is_v6() || !dst.is_v6() || data.empty() || data.size() > 65535 - 8 || mtu < 1280 || mtu > 9000)
        return false;
    const uint32_t step = ipv6_fragment_step(mtu);
    const auto total = static_cast<uint32_t>(data.size());
    const uint32_t count = (total + step - 1) / step;
    if (count > out.size() || rte_pktmbuf_alloc_bulk(pool, out.data(), count) != 0) return false;
    const auto s = src.v6_bytes(), d = dst.v6_bytes();
    const uint32_t vtc = rte_cpu_to_be_32(0x60000000u | uint32_t{tclass} << 20);
    const uint32_t ident = rte_cpu_to_be_32(id);
    for (uint32_t i = 0; i < count; ++i) {
        rte_mbuf* m = out[i];
        const uint32_t off = i * step;  // into the upper-layer datagram, a multiple of 8
        const uint32_t len = total - off < step ? total - off : step;
        const auto l3 = static_cast<uint16_t>(48 + len);
        if (rte_pktmbuf_tailroom(m) < l3) {
            rte_pktmbuf_free_bulk(out.data(), count);
            return false;
        }
        auto* p = rte_pktmbuf_mtod(m, uint8_t*);
        m->data_len = l3;
        m->pkt_len = l3;
        std::memcpy(p, &vtc, 4);
        p[4] = static_cast<uint8_t>((len + 8) >> 8);
        p[5] = static_cast<uint8_t>(len + 8);
        p[6] = ipv6_ext::fragment;
        p[7] = hop_limit;
        std::memcpy(p + 8, s.data(), 16);
        std::memcpy(p + 24, d.data(), 16);
        uint8_t* f = p + 40;
        f[0] = proto;
        f[1] = 0;
        const uint16_t offset_flags = static_cast<uint16_t>(off | (i + 1 < count ? 1u : 0u));  // offset in 8-byte units << 3
        f[2] = static_cast<uint8_t>(offset_flags >> 8);
        f[3] = static_cast<uint8_t>(offset_flags);
        std::memcpy(f + 4, &ident, 4);
        std::memcpy(p + 48, data.data() + off, len);
        m->l2_len = 0;
        m->l3_len = 48;
        if (!write_l2(m, ifc, dst_mac, RTE_ETHER_TYPE_IPV6)) {
            rte_pktmbuf_free_bulk(out.data(), count);
            return false;
        }
    }
    n = count;
    return true;
}

}  // namespace sbc::dataplane
