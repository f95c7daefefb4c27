// UDP over IPv6 (see stages.h): the length, the checksum IPv6 makes mandatory (RFC 8200 8.1,
// over the UDP length with the pseudo-header, never the IPv6 payload length, which counts
// extension headers), and delivery: datagrams to a trunk's IPv6 address and port go to the SIP
// stage after flood screening (udp_sip.h, their checksum verified after it); the rest get port
// unreachable (rate-limited, RFC 4443 2.4) and are counted as udp_port_closed. m->l3_len is the
// offset of the UDP header (extension headers included); a reassembled datagram is a chain.
// Worker only: no heap, locks, system calls or logging.
#include <rte_ip.h>
#include <rte_udp.h>

#include "dataplane/checksum.h"
#include "dataplane/nd.h"
#include "dataplane/sip_stage.h"
#include "dataplane/stages.h"
#include "dataplane/udp_sip.h"

namespace sbc::dataplane {

namespace {

/// Whether the UDP checksum of the datagram in `m` (UDP length `ulen`) is right; the NIC's
/// verdict when it gave one. A zero checksum was refused before.
bool udp6_checksum_ok(const rte_mbuf* m, uint32_t ulen) noexcept
{
    const uint64_t flags = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
    if (flags == RTE_MBUF_F_RX_L4_CKSUM_GOOD) return true;
    if (flags == RTE_MBUF_F_RX_L4_CKSUM_BAD) return false;
    const auto* ip = rte_pktmbuf_mtod_offset(m, const uint8_t*, m->l2_len);
    const uint16_t pseudo = ipv6_pseudo_sum(ip + 8, ip + 24, IPPROTO_UDP, ulen);
    const uint32_t off = m->l2_len + m->l3_len;
    if (m->nb_segs == 1) return raw_checksum(ip + m->l3_len, ulen, pseudo) == 0xffff;
    uint16_t sum = 0;
    if (rte_raw_cksum_mbuf(m, off, ulen, &sum) != 0) return false;
    return detail::fold16(uint64_t{pseudo} + sum) == 0xffff;
}

/// The UDP length of the datagram in `m` (checked: within the upper-layer length).
uint32_t udp_length(const rte_mbuf* m) noexcept
{
    return rte_be_to_cpu_16(rte_pktmbuf_mtod_offset(m, const rte_udp_hdr*, m->l2_len + m->l3_len)->dgram_len);
}

}  // namespace

void udp6_stage(worker& w, const snapshot& snap, sub_burst& b) noexcept
{
    w.counters.entered(stage::udp6, b.n);
    drop_tally tally;
    sub_burst sip;
    std::array<uint16_t, burst_size> sip_trunk;  ///< found once here, used by the SIP stage
    for (uint16_t i = 0; i < b.n; ++i) {
        rte_mbuf* m = b.pkts[i];
        const auto* ip = rte_pktmbuf_mtod_offset(m, const uint8_t*, m->l2_len);
        // What follows the extension headers: the upper-layer length (a reassembled datagram's
        // payload length is the whole one's).
        const uint32_t upper = 40 + (uint32_t{ip[4]} << 8 | ip[5]) - m->l3_len;
        if (upper < sizeof(rte_udp_hdr) || rte_pktmbuf_data_len(m) < m->l2_len + m->l3_len + sizeof(rte_udp_hdr)) {
            tally.drop(m, drop_reason::udp_truncated);
            continue;
        }
        const auto* udp = rte_pktmbuf_mtod_offset(m, const rte_udp_hdr*, m->l2_len + m->l3_len);
        const uint16_t ulen = rte_be_to_cpu_16(udp->dgram_len);
        if (ulen < sizeof(rte_udp_hdr) || ulen > upper) {
            tally.drop(m, drop_reason::udp_truncated);
            continue;
        }
        if (udp->dgram_cksum == 0) {
            tally.drop(m, drop_reason::udp6_no_checksum);
            continue;
        }
        const uint16_t dport = rte_be_to_cpu_16(udp->dst_port);
        if (snap.proxy) {
            const ip_address dst = ip_address::v6(std::span<const uint8_t, 16>(ip + 24, 16));
            const int trunk = snap.proxy->find_trunk6(dst, dport);
            if (trunk >= 0) {
                sip_trunk[sip.n] = static_cast<uint16_t>(trunk);
                sip.push(m, b.iface[i]);
                continue;
            }
        }
        if (!udp6_checksum_ok(m, ulen)) {
            tally.drop(m, drop_reason::udp_bad_checksum);
            continue;
        }
        // Nobody listens there (media over IPv6 is not built yet): port unreachable, so that
        // the sender moves on at once (RFC 4443 3.1).
        const interface_info& ifc = snap.interfaces[b.iface[i]];
        if (send_icmp6_error(w, snap, m, ifc, icmp6::dest_unreachable, icmp6::port_unreachable, 0))
            tally.count(drop_reason::udp_port_closed);
        else
            tally.drop(m, drop_reason::udp_port_closed);
    }
    if (sip.n != 0) {
        const uint32_t bad = screen_sip(w, snap, sip, sip_trunk.data(),
                                        [](const rte_mbuf* m) { return udp6_checksum_ok(m, udp_length(m)); });
        tally.count(drop_reason::udp_bad_checksum, bad);
    }
    tally.commit(w);
    b.n = 0;
    if (sip.n != 0) sip_stage(w, snap, sip, sip_trunk.data());
}

}  // namespace sbc::dataplane
