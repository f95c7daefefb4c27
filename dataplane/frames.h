// Builders for the frames the SBC originates itself (ARP requests, replies, gratuitous ARP),
// over plain byte buffers so that tests use them too. Control core and tests; no EAL needed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "dataplane/neighbour.h"

namespace sbc::dataplane {

constexpr mac_addr broadcast_mac{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

struct arp_fields {
    uint16_t op = 1;           ///< 1 request, 2 reply
    mac_addr eth_dst = broadcast_mac;
    mac_addr sender_mac{};
    uint32_t sender_ip = 0;    ///< host order
    mac_addr target_mac{};
    uint32_t target_ip = 0;    ///< host order
    uint16_t vlan = 0;         ///< 0: untagged
};

/// Writes an Ethernet (+802.1Q) ARP frame into `out`; returns its length (42 or 46, no
/// padding), or 0 when `out` is too small.
std::size_t build_arp(std::span<uint8_t> out, const arp_fields& f) noexcept;

/// Request for `target_ip` from (mac, ip).
inline arp_fields arp_request(const mac_addr& mac, uint32_t ip, uint32_t target_ip, uint16_t vlan) noexcept
{
    return arp_fields{1, broadcast_mac, mac, ip, mac_addr{}, target_ip, vlan};
}

/// Gratuitous ARP announcing (mac, ip): a request whose sender and target are both ip.
inline arp_fields gratuitous_arp(const mac_addr& mac, uint32_t ip, uint16_t vlan) noexcept
{
    return arp_fields{1, broadcast_mac, mac, ip, mac_addr{}, ip, vlan};
}

}  // namespace sbc::dataplane
