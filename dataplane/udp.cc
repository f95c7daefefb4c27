// UDP stage: length and checksum validation, then delivery to the service that listens on the
// port: datagrams to a media address and port in the [media] range go to the RTP stage, those
// to a SIP trunk (address and port) to the SIP stage after flood screening (source_screen.h;
// their checksum is verified after it, so that a flood costs a lookup, not a pass over its
// payload); the rest is counted as udp_port_closed.
// Worker only.
#include <rte_ip.h>
#include <rte_udp.h>

#include "dataplane/rtp_stage.h"
#include "dataplane/sip_stage.h"
#include "dataplane/source_screen.h"
#include "dataplane/stages.h"
#include "dataplane/udp_sip.h"

namespace sbc::dataplane {

namespace {

bool udp_checksum_ok(const rte_mbuf* m, const rte_ipv4_hdr* ip, const rte_udp_hdr* udp) noexcept
{
    const uint64_t flags = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
    if (flags == RTE_MBUF_F_RX_L4_CKSUM_GOOD) return true;
    if (flags == RTE_MBUF_F_RX_L4_CKSUM_BAD) return false;
    if (udp->dgram_cksum == 0) return true;  // IPv4 senders may omit it (RFC 768)
    if (m->nb_segs == 1) return rte_ipv4_udptcp_cksum_verify(ip, udp) == 0;
    return rte_ipv4_udptcp_cksum_mbuf_verify(m, ip, static_cast<uint16_t>(m->l2_len + m->l3_len)) == 0;
}

}  // namespace

void udp_stage(worker& w, const snapshot& snap, sub_burst& b) noexcept
{
    w.counters.entered(stage::udp, b.n);
    uint32_t truncated = 0, bad_sum = 0, closed = 0;
    sub_burst sip;
    sub_burst media;
    std::array<uint8_t, burst_size> media_addr;
    std::array<uint16_t, burst_size> sip_trunk;  ///< found once here, used by the SIP stage
    const rtp::flow_table* flows = w.shared->media_flows.get();
    for (uint16_t i = 0; i < b.n; ++i) {
        rte_mbuf* m = b.pkts[i];
        const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, m->l2_len);
        const uint32_t payload = rte_be_to_cpu_16(ip->total_length) - m->l3_len;
        if (payload < sizeof(rte_udp_hdr) || rte_pktmbuf_data_len(m) < m->l2_len + m->l3_len + sizeof(rte_udp_hdr)) {
            rte_pktmbuf_free(m);
            ++truncated;
            continue;
        }
        const auto* udp = rte_pktmbuf_mtod_offset(m, const rte_udp_hdr*, m->l2_len + m->l3_len);
        const uint16_t ulen = rte_be_to_cpu_16(udp->dgram_len);
        if (ulen < sizeof(rte_udp_hdr) || ulen > payload) {
            rte_pktmbuf_free(m);
            ++truncated;
            continue;
        }
        const uint16_t dport = rte_be_to_cpu_16(udp->dst_port);
        const bool media_port = flows != nullptr && flows->in_range(dport);
        if (!media_port && snap.proxy) {
            // SIP: its checksum is verified after flood screening (below), so that a flood
            // from an unknown or denied source is dropped for a lookup, not a checksum over
            // its whole payload.
            const int trunk = snap.proxy->find_trunk(ip_address::v4(rte_be_to_cpu_32(ip->dst_addr)), dport);
            if (trunk >= 0) {
                sip_trunk[sip.n] = static_cast<uint16_t>(trunk);
                sip.push(m, b.iface[i]);
                continue;
            }
        }
        if (!udp_checksum_ok(m, ip, udp)) {
            rte_pktmbuf_free(m);
            ++bad_sum;
            continue;
        }
        if (media_port) {
            // Our media range (config keeps trunk ports out of it): RTP and RTCP to relay.
            const int a = flows->address_index(rte_be_to_cpu_32(ip->dst_addr));
            if (a >= 0) {
                media_addr[media.n] = static_cast<uint8_t>(a);
                media.push(m, b.iface[i]);
                continue;
            }
        }
        rte_pktmbuf_free(m);
        ++closed;
    }
    if (sip.n != 0) {
        // Flood screening first (source_screen.h): what it drops never enters the SIP stage.
        bad_sum += screen_sip(w, snap, sip, sip_trunk.data(), [](const rte_mbuf* m) {
            const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, m->l2_len);
            return udp_checksum_ok(m, ip, rte_pktmbuf_mtod_offset(m, const rte_udp_hdr*, m->l2_len + m->l3_len));
        });
    }
    if (truncated) w.counters.drop(drop_reason::udp_truncated, truncated);
    if (bad_sum) w.counters.drop(drop_reason::udp_bad_checksum, bad_sum);
    if (closed) w.counters.drop(drop_reason::udp_port_closed, closed);
    b.n = 0;
    if (media.n != 0) rtp_stage(w, snap, media, media_addr.data());
    if (sip.n != 0) sip_stage(w, snap, sip, sip_trunk.data());
}

}  // namespace sbc::dataplane
