// Rare events that workers push to the control core through one multi-producer rte_ring:
// neighbours seen in ARP, next hops that need resolving, ICMP errors from peers.
// Workers enqueue (never block: a full ring is counted and the event dropped); the control
// core dequeues.
#pragma once

#include <array>
#include <cstdint>

namespace sbc::dataplane {

enum class event_kind : uint8_t {
    neighbour_seen = 1,     ///< ARP from `ip` with `mac` on interface `iface`
    neighbour_needed = 2,   ///< a packet for next hop `ip` found no MAC
    icmp_unreachable = 3,   ///< ICMP destination unreachable about a datagram we sent
};

struct event {
    event_kind kind{};
    uint8_t worker = 0;
    uint16_t iface = 0;
    uint32_t ip = 0;                  ///< host order: neighbour, or the ICMP sender
    std::array<uint8_t, 6> mac{};     ///< neighbour_seen
    uint8_t icmp_type = 0;
    uint8_t icmp_code = 0;
    uint32_t orig_dst = 0;            ///< icmp_unreachable: destination of the datagram that failed
    uint16_t orig_src_port = 0;
    uint16_t orig_dst_port = 0;
    uint8_t orig_proto = 0;
    std::array<uint8_t, 7> pad{};
};
static_assert(sizeof(event) == 32, "event is a ring element of 32 bytes");

constexpr unsigned event_ring_size = 4096;

}  // namespace sbc::dataplane
