// Framing a UDP datagram that the SBC originates (a SIP message from a worker, an OPTIONS probe
// from the control core) and choosing where it leaves: the interface that owns its source
// address and the next hop to resolve. Written once for every sender. Any thread, on an mbuf
// it owns; no heap, locks or system calls.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include <rte_mbuf.h>

#include "common/address.h"
#include "dataplane/snapshot.h"

namespace sbc::dataplane {

/// Largest IPv4 packet we send in one piece: the interface MTU. A SIP datagram larger than
/// this leaves as IPv4 fragments (dataplane/udp_fragment.h); frame_udp4 takes only what fits.
constexpr uint32_t ipv4_mtu = 1500;
/// IPv4 and UDP headers in front of a datagram's payload.
constexpr uint32_t udp4_headers = 28;
/// IPv6 and UDP headers in front of a datagram's payload (no extension headers: we send none).
constexpr uint32_t udp6_headers = 48;
/// The headers in front of a datagram's payload from `src`: udp6_headers for IPv6, else udp4_headers.
[[nodiscard]] constexpr uint32_t udp_headers(const ip_address& src) noexcept
{
    return src.is_v6() ? udp6_headers : udp4_headers;
}

/// Where a packet from our address `from` to `to` leaves: interface `prefer` when it owns
/// `from` (two VLAN interfaces may share an address: the trunk's own wins), else the first
/// interface that owns `from` (IPv4, or IPv6 global or link-local; when `from` is
/// unspecified, the first that reaches `to`), and
/// the neighbour to send it to (`to` itself on-link, else the gateway).
struct next_hop {
    uint16_t iface = no_interface;  ///< index into the interfaces; no_interface: none
    ip_address hop;                 ///< unspecified: `to` is unreachable from that interface
    [[nodiscard]] bool found() const noexcept { return iface != no_interface && !hop.is_unspecified(); }
};
next_hop route_packet(std::span<const interface_info> ifcs, const ip_address& from, const ip_address& to,
                      uint16_t prefer = no_interface) noexcept;

/// Fills the empty mbuf `m` (fresh from rte_pktmbuf_alloc: one segment, no data) with IPv4 (DF, TTL 64, id `ip_id`,
/// TOS `ifc.tos_sip`: everything framed here is SIP) + UDP (software checksum) +
/// `payload` from `src` to `dst`, then our Ethernet (+802.1Q) header for `dst_mac` on `ifc`.
/// False when the addresses are not IPv4, the datagram exceeds ipv4_mtu, or `m` has no room;
/// the caller frees `m` then.
bool frame_udp4(rte_mbuf* m, const interface_info& ifc, const uint8_t* dst_mac, const endpoint& src,
                const endpoint& dst, std::string_view payload, uint16_t ip_id) noexcept;

/// The same over IPv6 (hop limit 64, traffic class `ifc.tos_sip`, no extension headers, the
/// UDP checksum that IPv6 makes mandatory), up to ipv6_mtu; false when the addresses are not
/// IPv6, the datagram exceeds ipv6_mtu, or `m` has no room.
bool frame_udp6(rte_mbuf* m, const interface_info& ifc, const uint8_t* dst_mac, const endpoint& src,
                const endpoint& dst, std::string_view payload) noexcept;

/// frame_udp4 or frame_udp6, by the family of `src` (`ip_id` is IPv4's only).
inline bool frame_udp(rte_mbuf* m, const interface_info& ifc, const uint8_t* dst_mac, const endpoint& src,
                      const endpoint& dst, std::string_view payload, uint16_t ip_id) noexcept
{
    if (src.addr.is_v6()) return frame_udp6(m, ifc, dst_mac, src, dst, payload);
    return frame_udp4(m, ifc, dst_mac, src, dst, payload, ip_id);
}

}  // namespace sbc::dataplane
