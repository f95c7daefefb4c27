// Neighbour resolution policy, ARP and ND (see neighbours.h). Control core only.
#include "control/neighbours.h"

#include <algorithm>

namespace sbc::control {

neighbour_manager::pending_entry* neighbour_manager::find_pending(const ip_address& ip)
{
    for (auto& p : pending_)
        if (p.ip == ip) return &p;
    return nullptr;
}

bool neighbour_manager::is_gateway(const ip_address& ip) const
{
    for (const auto& ifc : ifcs_)
        if (ifc.gateway == ip || ifc.gateway6 == ip) return true;
    return false;
}

void neighbour_manager::request(pending_entry& p, uint64_t now_ms)
{
    if (p.iface >= ifcs_.size()) return;
    const auto& ifc = ifcs_[p.iface];
    if (p.ip.is_v4()) {
        send_(p.iface, dataplane::arp_request(ifc.mac, ifc.v4(), p.ip.v4_host(), ifc.vlan));
    } else {
        if (!send_nd_ || !ifc.has_v6()) return;
        // From the address of the target's scope, so that the answer comes back to it.
        send_nd_(p.iface, dataplane::neighbour_solicitation(ifc.mac, ifc.source6_for(p.ip.v6_bytes().data()), p.ip,
                                                            ifc.vlan));
    }
    ++counters_.requests_sent;
    ++p.attempts;
    p.next_ms = now_ms + policy_.retry_ms;
}

void neighbour_manager::set_interfaces(const std::vector<dataplane::interface_info>& ifcs, uint64_t now_ms)
{
    ifcs_ = ifcs;
    for (uint16_t i = 0; i < ifcs_.size(); ++i) {
        const auto& ifc = ifcs_[i];
        send_(i, dataplane::gratuitous_arp(ifc.mac, ifc.v4(), ifc.vlan));
        if (ifc.has_v6() && send_nd_) {
            send_nd_(i, dataplane::unsolicited_advertisement(ifc.mac, ifc.link_local6, ifc.vlan));
            send_nd_(i, dataplane::unsolicited_advertisement(ifc.mac, ifc.address6.addr, ifc.vlan));
        }
        for (const ip_address& gateway : {ifc.gateway, ifc.gateway6})
            if (!gateway.is_unspecified() && !table_.lookup(gateway)) needed(i, gateway, now_ms);
    }
}

void neighbour_manager::seen(uint16_t iface, const ip_address& ip, const dataplane::mac_addr& mac, uint64_t now_ms)
{
    const bool known = table_.lookup(ip).has_value();
    if (!table_.insert(ip, mac, now_ms)) {
        ++counters_.table_full;
        return;
    }
    if (!known) ++counters_.learned;
    (void)iface;
    std::erase_if(pending_, [&ip](const pending_entry& p) { return p.ip == ip; });
}

void neighbour_manager::needed(uint16_t iface, const ip_address& ip, uint64_t now_ms)
{
    if (pending_entry* p = find_pending(ip)) {
        // Already resolving; a request that waits for its back-off is not hurried by traffic,
        // so that a dead next hop does not turn every packet into an ARP broadcast.
        if (p->attempts < policy_.retries && now_ms >= p->next_ms) request(*p, now_ms);
        return;
    }
    pending_.push_back({iface, ip, 0, now_ms, false});
    request(pending_.back(), now_ms);
}

void neighbour_manager::tick(uint64_t now_ms)
{
    // Refresh entries that grew old: re-ask; they stay usable until the retries run out.
    for (const auto& e : table_.entries()) {
        if (now_ms < e.updated_ms + policy_.timeout_ms || find_pending(e.ip) != nullptr) continue;
        uint16_t iface = 0;
        for (uint16_t i = 0; i < ifcs_.size(); ++i)
            if (ifcs_[i].on_link(e.ip)) iface = i;
        pending_.push_back({iface, e.ip, 0, now_ms, true});
        request(pending_.back(), now_ms);
    }
    for (auto it = pending_.begin(); it != pending_.end();) {
        if (now_ms < it->next_ms) {
            ++it;
            continue;
        }
        if (it->attempts < policy_.retries) {
            request(*it, now_ms);
            ++it;
            continue;
        }
        if (it->refresh) {
            table_.remove(it->ip);
            ++counters_.expired;
            it = pending_.erase(it);
            continue;
        }
        // A next hop that never answered: keep trying after a back-off when it is a gateway,
        // forget it otherwise (traffic will ask again).
        const bool gateway = is_gateway(it->ip);
        if (gateway && now_ms >= it->next_ms + policy_.backoff_ms - policy_.retry_ms) {
            it->attempts = 0;
            request(*it, now_ms);
            ++it;
        } else if (gateway) {
            ++it;
        } else {
            it = pending_.erase(it);
        }
    }
}

}  // namespace sbc::control
