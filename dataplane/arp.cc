// ARP stage: answers requests for our own addresses in place and reports every sender it can
// learn from to the control core, which owns the neighbour table. Worker only.
#include <cstring>

#include <rte_arp.h>
#include <rte_ether.h>

#include "dataplane/events.h"
#include "dataplane/stages.h"

namespace sbc::dataplane {

void arp_stage(worker& w, const snapshot& snap, sub_burst& b) noexcept
{
    w.counters.entered(stage::arp, b.n);
    uint32_t malformed = 0, not_for_us = 0;
    for (uint16_t i = 0; i < b.n; ++i) {
        rte_mbuf* m = b.pkts[i];
        const interface_info& ifc = snap.interfaces[b.iface[i]];
        if (rte_pktmbuf_data_len(m) < m->l2_len + sizeof(rte_arp_hdr)) {
            rte_pktmbuf_free(m);
            ++malformed;
            continue;
        }
        auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
        auto* arp = rte_pktmbuf_mtod_offset(m, rte_arp_hdr*, m->l2_len);
        if (arp->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
            arp->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) || arp->arp_hlen != RTE_ETHER_ADDR_LEN ||
            arp->arp_plen != 4) {
            rte_pktmbuf_free(m);
            ++malformed;
            continue;
        }
        const uint16_t op = rte_be_to_cpu_16(arp->arp_opcode);
        const uint32_t sip = rte_be_to_cpu_32(arp->arp_data.arp_sip);
        const uint32_t tip = rte_be_to_cpu_32(arp->arp_data.arp_tip);
        const bool for_us = tip == ifc.v4();
        // Learn from replies and from requests aimed at us (RFC 826); a gratuitous ARP
        // (sender == target) refreshes an entry the control core already has.
        if (sip != 0 && sip != ifc.v4() && ifc.on_link_v4(sip) && (for_us || op == RTE_ARP_OP_REPLY || sip == tip)) {
            event e{};
            e.kind = event_kind::neighbour_seen;
            e.worker = static_cast<uint8_t>(w.id);
            e.iface = b.iface[i];
            e.ip = ip_address::v4(sip);
            std::memcpy(e.mac.data(), arp->arp_data.arp_sha.addr_bytes, 6);
            post_event(w, e);
        }
        if (op == RTE_ARP_OP_REQUEST && for_us) {
            arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
            arp->arp_data.arp_tha = arp->arp_data.arp_sha;
            arp->arp_data.arp_tip = arp->arp_data.arp_sip;
            std::memcpy(arp->arp_data.arp_sha.addr_bytes, ifc.mac.data(), 6);
            arp->arp_data.arp_sip = rte_cpu_to_be_32(ifc.v4());
            eth->dst_addr = eth->src_addr;
            std::memcpy(eth->src_addr.addr_bytes, ifc.mac.data(), 6);
            tx_enqueue(w, m->port, m);
            continue;
        }
        if (op == RTE_ARP_OP_REQUEST && !for_us) {
            rte_pktmbuf_free(m);
            ++not_for_us;
            continue;
        }
        rte_pktmbuf_free(m);  // a reply or gratuitous ARP: consumed once reported
    }
    if (malformed) w.counters.drop(drop_reason::arp_malformed, malformed);
    if (not_for_us) w.counters.drop(drop_reason::arp_not_for_us, not_for_us);
    b.n = 0;
}

}  // namespace sbc::dataplane
