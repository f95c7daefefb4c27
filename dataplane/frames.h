// Builders for the frames the SBC originates itself (ARP requests, replies, gratuitous ARP;
// IPv6 neighbour solicitations and unsolicited advertisements), over plain byte buffers so that
// tests use them too. Control core and tests; no EAL needed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "dataplane/nd.h"
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

/// An ICMPv6 Neighbor Discovery message (RFC 4861 4.3, 4.4) with one link-layer address option:
/// a solicitation carries our MAC as its source link-layer address, an advertisement as its
/// target link-layer address.
struct nd_fields {
    uint8_t type = icmp6::neighbour_solicitation;  ///< or icmp6::neighbour_advertisement
    mac_addr eth_dst{};
    mac_addr src_mac{};
    ipv6_bytes src{};     ///< the IPv6 source (ours)
    ipv6_bytes dst{};
    ipv6_bytes target{};  ///< the address solicited or advertised
    uint8_t flags = 0;    ///< NA: icmp6::na_solicited, na_override
    uint16_t vlan = 0;    ///< 0: untagged
};

/// Writes an Ethernet (+802.1Q) IPv6 frame holding the ND message of `f` (hop limit 255, ICMPv6
/// checksum over the pseudo-header) into `out`; returns its length (86 or 90), or 0 when `out`
/// is too small.
std::size_t build_nd(std::span<uint8_t> out, const nd_fields& f) noexcept;

/// A solicitation for `target` from (mac, src), to target's solicited-node group.
inline nd_fields neighbour_solicitation(const mac_addr& mac, const ip_address& src, const ip_address& target,
                                        uint16_t vlan) noexcept
{
    nd_fields f;
    f.src_mac = mac;
    f.src = src.v6_bytes();
    f.target = target.v6_bytes();
    f.dst = solicited_node(f.target.data());
    f.eth_dst = multicast_mac6(f.dst.data());
    f.vlan = vlan;
    return f;
}

/// The unsolicited advertisement of our `addr` to every node (RFC 4861 7.2.6): override set,
/// solicited clear; the IPv6 form of a gratuitous ARP.
inline nd_fields unsolicited_advertisement(const mac_addr& mac, const ip_address& addr, uint16_t vlan) noexcept
{
    nd_fields f;
    f.type = icmp6::neighbour_advertisement;
    f.src_mac = mac;
    f.src = addr.v6_bytes();
    f.target = f.src;
    f.dst = all_nodes;
    f.eth_dst = multicast_mac6(f.dst.data());
    f.flags = icmp6::na_override;
    f.vlan = vlan;
    return f;
}

}  // namespace sbc::dataplane
