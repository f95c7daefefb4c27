// A worker's side of next hops whose MAC the control core has not published yet (the tables
// are in dataplane/neighbour_hold.h): what it learned from its own senders, and the packets it
// holds while ARP runs. Worker only: no heap, locks, system calls or logging.
#pragma once

#include <cstdint>

#include <rte_mbuf.h>

#include "dataplane/neighbour_hold.h"
#include "dataplane/worker.h"

namespace sbc::dataplane {

/// The MAC of next hop `hop` (IPv4, host order) on interface `iface`: the neighbour table's,
/// else the one this worker saw that hop use as a sender; null when neither knows it.
const uint8_t* hop_mac(worker& w, uint32_t hop, uint16_t iface, uint64_t now_ms, mac_addr& buf) noexcept;
/// The same for a next hop of either family.
const uint8_t* hop_mac(worker& w, const ip_address& hop, uint16_t iface, uint64_t now_ms, mac_addr& buf) noexcept;

/// Holds the framed packet `m` (everything written but its destination MAC) for next hop
/// `hop` on interface `iface`, to leave on `port` once resolved. The first packet for a hop
/// asks the control core to resolve it; a full hold frees `m` and counts it. Returns whether
/// `m` was held.
bool hold_for_hop(worker& w, rte_mbuf* m, uint16_t iface, uint16_t port, const ip_address& hop, held_kind kind,
                  uint64_t now_ms) noexcept;

/// Once per loop iteration: sends the held packets whose next hop resolved and drops (counted;
/// SIP requests go back to the proxy as unsendable) those held past the hold time. Returns how
/// many packets left the hold.
uint32_t release_held(worker& w, const snapshot& snap, uint64_t now_ms) noexcept;

}  // namespace sbc::dataplane
