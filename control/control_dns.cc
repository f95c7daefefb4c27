// The control loop's side of DNS SRV regions: publishing a changed peer set once the new
// peers' next hops are resolved, whether a peer still has calls (a peer gone from DNS stays
// in the tables until its last call ends) and ARP for the next hops of every peer, also those
// learned from DNS after start. Control core only.
#include "control/control_loop.h"
#include "dataplane/udp_frame.h"

#include <cstdio>

namespace sbc::control {

bool control_loop::peer_has_calls(const std::string& key) const
{
    const auto id = ids_.find(key);
    if (!id) return false;
    for (const auto& w : rt_.workers)
        if (w->proxy && w->proxy->stats().active_by_peer[*id].get() != 0) return true;
    return false;
}

void control_loop::resolve_peer_hops()
{
    if (!published_.tables) return;
    const uint64_t now = now_ms();
    for (const auto& p : published_.tables->peers) {
        const dataplane::next_hop nh = dataplane::route_packet(published_.interfaces, ip_address{}, p.address);
        if (nh.found() && !rt_.shared->neighbours.lookup(nh.hop)) neighbours_.needed(nh.iface, nh.hop, now);
    }
}

namespace {

// How long new peers from DNS wait for the MAC of their next hop before they are published
// anyway (a worker drops what it cannot address; a peer that never answers ARP must not hold
// back the other changes for long).
constexpr uint64_t dns_arp_wait_ms = 1000;

}  // namespace

void control_loop::on_dns(uint64_t now)
{
    if (dns_.poll(now) && !dns_publish_.pending) {
        dns_publish_.pending = true;
        dns_publish_.changed_ms = now;
    }
    if (!dns_publish_.pending) return;
    bool unresolved = false;
    for (const auto& lr : dns_.peers_for(cfg_))
        for (const auto& p : lr.current) {
            const dataplane::next_hop nh = dataplane::route_packet(published_.interfaces, ip_address{}, p.address);
            if (nh.found() && !rt_.shared->neighbours.lookup(nh.hop)) {
                neighbours_.needed(nh.iface, nh.hop, now);  // sends only when no request is under way
                unresolved = true;
            }
        }
    if (unresolved && now - dns_publish_.changed_ms < dns_arp_wait_ms) return;
    dns_publish_.pending = false;
    std::string err;
    if (!publish_config(cfg_, err)) std::fprintf(stderr, "sbcd: peers from DNS not published: %s\n", err.c_str());
}

}  // namespace sbc::control
