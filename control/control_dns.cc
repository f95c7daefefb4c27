// The control loop's side of DNS SRV regions: whether a peer still has calls (a peer gone
// from DNS stays in the tables until its last call ends) and ARP for the next hops of peers,
// also those learned from DNS after start. Control core only.
#include "control/control_loop.h"

namespace sbc::control {

bool control_loop::peer_has_calls(const std::string& key) const
{
    const auto id = ids_.find(key);
    if (!id) return false;
    for (const auto& w : rt_.workers)
        if (w->proxy && w->proxy->stats().active_by_peer[*id].load(std::memory_order_relaxed) != 0) return true;
    return false;
}

void control_loop::resolve_peer_hops()
{
    if (!tables_) return;
    const uint64_t now = now_ms();
    for (const auto& p : tables_->peers) {
        for (uint16_t i = 0; i < interfaces_.size(); ++i) {
            const uint32_t hop = interfaces_[i].next_hop(p.address);
            if (hop == 0) continue;
            if (!rt_.shared->neighbours.lookup(hop)) neighbours_.needed(i, hop, now);
            break;
        }
    }
}

}  // namespace sbc::control
