// First stage of every burst: Ethernet and 802.1Q, interface lookup, split by EtherType (IPv4
// tested first, then ARP and IPv6); and
// process_burst, which runs the stages in order over one received burst, and poll_worker, the
// per-iteration work (SIP handoff rings, proxy timers, packets held for ARP). Worker only.
#include <rte_ether.h>
#include <rte_prefetch.h>

#include "dataplane/neighbour_wait.h"
#include "dataplane/sip_path.h"
#include "dataplane/rtp_stage.h"
#include "dataplane/sip_stage.h"
#include "dataplane/source_screen.h"
#include "dataplane/stages.h"

namespace sbc::dataplane {

void classify(worker& w, const snapshot& snap, uint16_t port, rte_mbuf** pkts, uint16_t n,
              sub_burst& arp, sub_burst& ipv4, sub_burst& ipv6) noexcept
{
    uint64_t bytes = 0;
    uint32_t truncated = 0, unknown_vlan = 0, unsupported = 0, denied = 0, unknown_source = 0, over_trunk = 0;
    early_screen screen(w, snap);  // a flood's SIP datagrams end here (source_screen.h)
    std::array<rte_mbuf*, burst_size> dropped;  // freed together at the end (free_dropped)
    unsigned n_dropped = 0;
    // Another core wrote these mbufs and frames (the NIC, or a ring's producer): every mbuf of
    // the burst is asked for at once, so that the misses overlap, then each frame's first line
    // a few packets ahead, once its mbuf (buf_addr, data_off) has had time to arrive.
    uint32_t last_vlan = UINT32_MAX;  // none yet: a VLAN id has 12 bits
    uint16_t last_ifc = no_interface;
    constexpr uint16_t ahead = 3;
    for (uint16_t i = 0; i < n; ++i) rte_prefetch0(pkts[i]);
    for (uint16_t i = 0; i < n && i < ahead; ++i) rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void*));
    for (uint16_t i = 0; i < n; ++i) {
        if (i + ahead < n) rte_prefetch0(rte_pktmbuf_mtod(pkts[i + ahead], void*));
        rte_mbuf* m = pkts[i];
        const uint32_t len = rte_pktmbuf_data_len(m);
        bytes += rte_pktmbuf_pkt_len(m);
        if (len < sizeof(rte_ether_hdr)) {
            dropped[n_dropped++] = m;
            ++truncated;
            continue;
        }
        const auto* eth = rte_pktmbuf_mtod(m, const rte_ether_hdr*);
        uint16_t type = eth->ether_type;
        uint16_t l2 = sizeof(rte_ether_hdr);
        uint16_t vlan = 0;
        if (m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED) vlan = m->vlan_tci & 0xfff;
        if (type == rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN)) {
            if (len < sizeof(rte_ether_hdr) + sizeof(rte_vlan_hdr)) {
                dropped[n_dropped++] = m;
                ++truncated;
                continue;
            }
            const auto* vh = reinterpret_cast<const rte_vlan_hdr*>(eth + 1);
            vlan = rte_be_to_cpu_16(vh->vlan_tci) & 0xfff;
            type = vh->eth_proto;
            l2 += sizeof(rte_vlan_hdr);
        }
        // A burst comes from one port, nearly always on one VLAN: its interface is looked up
        // when the VLAN changes.
        if (vlan != last_vlan) {
            last_vlan = vlan;
            last_ifc = snap.find_interface(port, vlan);
        }
        const uint16_t ifc = last_ifc;
        if (ifc == no_interface) {
            dropped[n_dropped++] = m;
            ++unknown_vlan;
            continue;
        }
        // Only a kept frame is written: l2_len lies in the mbuf's second cache line, which the
        // producer's core wrote last (rte_pktmbuf_reset); a drop never pulls it in. The whole
        // tx_offload word is stored (what RX leaves there means nothing): a store, not a
        // read-modify-write of a bitfield, so the worker does not wait for the line to arrive.
        const auto keep = [&](sub_burst& next) {
            m->tx_offload = rte_mbuf_tx_offload(l2, 0, 0, 0, 0, 0, 0);
            m->vlan_tci = vlan;
            m->port = port;  // the stages reply on m->port; not every PMD sets it (net_ring does not)
            next.push(m, ifc);
        };
        if (type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)) {
            if (screen.active()) {
                const early_screen::verdict v = screen.check(m, l2);
                if (v != early_screen::verdict::keep) {
                    dropped[n_dropped++] = m;
                    ++(v == early_screen::verdict::denied           ? denied
                       : v == early_screen::verdict::unknown_source ? unknown_source
                                                                    : over_trunk);
                    continue;
                }
            }
            keep(ipv4);
        } else if (type == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP)) {
            keep(arp);
        } else if (type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6)) {
            keep(ipv6);
        } else {
            dropped[n_dropped++] = m;
            ++unsupported;
        }
    }
    if (n_dropped != 0) free_dropped(dropped.data(), n_dropped);
    w.counters.rx_packets.add(n);
    w.counters.rx_bytes.add(bytes);
    w.counters.entered(stage::eth, n);
    if (truncated) w.counters.drop(drop_reason::eth_truncated, truncated);
    if (unknown_vlan) w.counters.drop(drop_reason::vlan_unknown, unknown_vlan);
    if (unsupported) w.counters.drop(drop_reason::ethertype_unsupported, unsupported);
    if (denied) w.counters.drop(drop_reason::flood_denied, denied);
    if (unknown_source) w.counters.drop(drop_reason::flood_unknown_source, unknown_source);
    if (over_trunk) w.counters.drop(drop_reason::flood_rate_untrusted_trunk, over_trunk);
}

void process_burst(worker& w, const snapshot& snap, uint16_t port, rte_mbuf** pkts, uint16_t n) noexcept
{
    sub_burst arp;
    sub_burst ipv4;
    sub_burst ipv6;
    classify(w, snap, port, pkts, n, arp, ipv4, ipv6);
    if (arp.n != 0) arp_stage(w, snap, arp);
    if (ipv6.n != 0) {
        l6_bursts l6;
        ipv6_stage(w, snap, ipv6, l6);
        if (l6.frag6.n != 0) frag6_stage(w, snap, l6);
        if (l6.icmp6.n != 0) icmp6_stage(w, snap, l6.icmp6);
        if (l6.udp6.n != 0) udp6_stage(w, snap, l6.udp6);
        if (l6.tcp.n != 0) tcp_stage(w, snap, l6.tcp);
    }
    if (ipv4.n == 0) return;
    l4_bursts l4;
    ipv4_stage(w, snap, ipv4, l4);
    if (l4.frag.n != 0) frag_stage(w, snap, l4);
    if (l4.icmp.n != 0) icmp_stage(w, snap, l4.icmp);
    if (l4.udp.n != 0) udp_stage(w, snap, l4.udp);
    if (l4.tcp.n != 0) tcp_stage(w, snap, l4.tcp);
}

uint32_t poll_worker(worker& w, const snapshot& snap, uint64_t now_tsc) noexcept
{
    const uint64_t now_ms = now_ms_of(w, now_tsc);  // one division an iteration, for every poll below
    return sip_poll(w, snap, now_tsc, now_ms) + rtp_poll(w, now_ms) + release_held(w, snap, now_ms);
}

}  // namespace sbc::dataplane
