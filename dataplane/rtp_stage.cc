// Media in the dataplane (see rtp_stage.h). Worker only, except start_media (control core).
#include "dataplane/rtp_stage.h"

#include <cstring>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "dataplane/neighbour_wait.h"
#include "rtp/relay.h"

namespace sbc::dataplane {

namespace {

bool neighbour_mac(const void* ctx, uint32_t next_hop, uint8_t mac[6]) noexcept
{
    const auto mac_opt = static_cast<const neighbour_table*>(ctx)->lookup(ip_address::v4(next_hop));
    if (!mac_opt) return false;
    std::memcpy(mac, mac_opt->data(), 6);
    return true;
}

}  // namespace

bool media_egress_of(const rtp::media_config& c, const std::vector<interface_info>& interfaces,
                     const std::vector<port_info>& ports, rtp::media_egress_table& out, std::string& error)
{
    out = {};
    if (!c.enabled) return true;
    for (std::size_t a = 0; a < c.addresses.size() && a < rtp::max_media_addresses; ++a) {
        const interface_info* ifc = nullptr;
        for (const auto& i : interfaces)
            if (i.address.addr == c.addresses[a]) ifc = &i;
        if (ifc == nullptr) {
            error = "media address " + std::to_string(a) + " is not the address of any interface";
            return false;
        }
        rtp::media_egress& e = out[a];
        e.port_id = ifc->port_id;
        e.iface = static_cast<uint16_t>(ifc - interfaces.data());
        e.vlan = ifc->vlan;
        std::memcpy(e.mac, ifc->mac.data(), 6);
        e.netmask = ifc->v4_mask();
        e.gateway = ifc->gateway.v4_host();
        e.tos = ifc->tos_rtp;
        // The NIC's checksum offload where the port has it (start_dataplane enabled it);
        // otherwise RFC 1624 updates, which touch no payload (af_packet, ring, tap).
        for (const auto& p : ports) {
            if (p.port_id != ifc->port_id) continue;
            e.tx_udp_cksum = (p.tx_offloads & RTE_ETH_TX_OFFLOAD_UDP_CKSUM) != 0;
            e.tx_ip_cksum = e.tx_udp_cksum && (p.tx_offloads & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) != 0;
        }
    }
    return true;
}

bool start_media(dataplane_runtime& rt, const rtp::media_config& c, std::string& error)
{
    if (!c.enabled) return true;
    rtp::flow_table_config fc;
    for (const ip_address& a : c.addresses) {
        if (!a.is_v4()) {
            error = "media address " + to_string(a) + " is not IPv4 (IPv6 media is not anchored yet)";
            return false;
        }
        fc.addresses.push_back(a.v4_host());  // the flow table indexes IPv4 in host order
    }
    fc.port_min = c.port_min;
    fc.port_max = c.port_max;
    fc.workers = static_cast<unsigned>(rt.workers.size());
    shared_state& sh = *rt.shared;
    sh.media_flows = std::make_unique<rtp::flow_table>(fc);
    rtp::relay_env& env = sh.media_env;
    env.table = sh.media_flows.get();
    env.strict = c.mode == rtp::latching::strict;
    env.lookup = &neighbour_mac;
    env.lookup_ctx = &sh.neighbours;
    env.tsc_hz = rte_get_tsc_hz() != 0 ? rte_get_tsc_hz() : 1;
    for (auto& w : rt.workers) {
        w->media = std::make_unique<rtp::media_sessions>(*sh.media_flows, w->id, c);
        if (w->proxy) w->proxy->set_media(w->media.get());
    }
    return true;
}

void rtp_stage(worker& w, const snapshot& snap, sub_burst& b, const uint8_t* addr) noexcept
{
    const shared_state& sh = *w.shared;
    rtp::relay_out out;
    const uint64_t now = rte_rdtsc();
    const uint64_t now_ms = now / (w.tsc_per_ms != 0 ? w.tsc_per_ms : 1);
    rtp::relay_burst(sh.media_env, snap.media_egress, b.pkts.data(), addr, b.n, now, now_ms, out, w.media_counters);
    for (uint16_t i = 0; i < out.n; ++i) {
        if (out.hop[i] != 0) {
            // The first packets toward a far end that has not sent yet: to the MAC this worker
            // saw it use (its SIP), else held until ARP answers.
            mac_addr buf;
            const uint8_t* mac = hop_mac(w, out.hop[i], out.iface[i], now_ms, buf);
            if (mac == nullptr) {
                hold_for_hop(w, out.pkts[i], out.iface[i], out.port[i], ip_address::v4(out.hop[i]), held_kind::media, now_ms);
                continue;
            }
            std::memcpy(rte_pktmbuf_mtod(out.pkts[i], rte_ether_hdr*)->dst_addr.addr_bytes, mac, RTE_ETHER_ADDR_LEN);
        }
        tx_enqueue(w, out.port[i], out.pkts[i]);
    }
    b.n = 0;
}

uint32_t rtp_poll(worker& w, uint64_t now_ms) noexcept
{
    if (!w.media) return 0;
    w.media->tick(now_ms);
    return 0;
}

}  // namespace sbc::dataplane
