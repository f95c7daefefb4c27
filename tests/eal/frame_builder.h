// Test frame builders: Ethernet (optionally 802.1Q), ARP, IPv4 (and its fragments), ICMP,
// UDP, IPv6 with extension headers, ICMPv6 and Neighbor Discovery, with every checksum computed here, independently of the dataplane's own helpers, so
// that the eal tier checks the stages against a second implementation. Plain bytes, no EAL.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace sbc::test {

using bytes = std::vector<uint8_t>;
using mac = std::array<uint8_t, 6>;

constexpr uint16_t ethertype_ipv4 = 0x0800;
constexpr uint16_t ethertype_arp = 0x0806;
constexpr uint16_t ethertype_vlan = 0x8100;
constexpr uint16_t ethertype_ipv6 = 0x86dd;
constexpr uint8_t proto_icmp = 1;
constexpr uint8_t proto_udp = 17;
constexpr uint16_t ip_flag_df = 0x4000;
constexpr uint16_t ip_flag_mf = 0x2000;

/// Dotted-quad literal helper: ipv4(198, 18, 0, 1), host order.
constexpr uint32_t ipv4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) noexcept
{
    return (uint32_t{a} << 24) | (uint32_t{b} << 16) | (uint32_t{c} << 8) | d;
}

/// RFC 1071 sum of `data` added to `acc` (not folded, not complemented).
uint32_t ones_sum(std::span<const uint8_t> data, uint32_t acc = 0) noexcept;
/// Folds and complements a sum: the value to store in a checksum field.
uint16_t fold_checksum(uint32_t sum) noexcept;
/// The Internet checksum of `data`; 0 when `data` already carries a correct checksum.
inline uint16_t internet_checksum(std::span<const uint8_t> data) noexcept { return fold_checksum(ones_sum(data)); }
/// The UDP checksum of `udp` (header with its checksum field, and payload) under the IPv4
/// pseudo-header; 0 when the datagram's checksum is right.
uint16_t udp_checksum(uint32_t src, uint32_t dst, std::span<const uint8_t> udp) noexcept;

uint16_t read16(std::span<const uint8_t> b, std::size_t off) noexcept;
uint32_t read32(std::span<const uint8_t> b, std::size_t off) noexcept;
void write16(std::span<uint8_t> b, std::size_t off, uint16_t v) noexcept;

struct l2_fields {
    mac dst{};
    mac src{};
    uint16_t vlan = 0;  ///< 0: untagged
};

/// Ethernet header (+ 802.1Q tag when vlan != 0) followed by `payload`; no padding.
bytes ethernet(const l2_fields& l2, uint16_t ethertype, std::span<const uint8_t> payload);
/// Pads a frame with zeros to the 60-byte Ethernet minimum, as a NIC would.
bytes pad_to_minimum(bytes frame);

/// Ethernet/IPv4 ARP packet body (28 bytes).
bytes arp(uint16_t op, const mac& sha, uint32_t spa, const mac& tha, uint32_t tpa);

struct ipv4_fields {
    uint32_t src = 0;
    uint32_t dst = 0;
    uint8_t proto = proto_icmp;
    uint8_t ttl = 64;
    uint8_t tos = 0;
    uint16_t id = 0x1234;
    uint16_t flags_fragment = 0;  ///< flags and fragment offset (in 8-byte units), host order
};

/// IPv4 header (IHL 5, correct checksum) followed by `payload`.
bytes ipv4_packet(const ipv4_fields& f, std::span<const uint8_t> payload);

/// The IPv4 fragments of a datagram whose payload is `payload`, each carrying at most
/// `chunk` bytes of it (a multiple of 8), in order.
std::vector<bytes> ipv4_fragments(const ipv4_fields& f, std::span<const uint8_t> payload, std::size_t chunk);

/// ICMP echo request (type 8) or reply (type 0) with a correct checksum.
bytes icmp_echo(uint8_t type, uint16_t id, uint16_t seq, std::span<const uint8_t> data);
/// ICMP destination unreachable (type 3) quoting `original` (an IPv4 packet), checksum right.
bytes icmp_unreachable(uint8_t code, std::span<const uint8_t> original);

/// UDP datagram with a correct checksum under the pseudo-header of (src, dst).
bytes udp_datagram(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, std::span<const uint8_t> data);

using ip6 = std::array<uint8_t, 16>;
constexpr uint8_t proto_icmp6 = 58;

/// An IPv6 address from its text ("2001:db8::1"); aborts the test on a typo.
ip6 ipv6(const char* text);

struct ipv6_fields {
    ip6 src{};
    ip6 dst{};
    uint8_t next = proto_icmp6;  ///< the first next header: an extension header's or the upper layer's
    uint8_t hop_limit = 64;
};

/// IPv6 header followed by `payload` (extension headers and upper layer), payload length set.
bytes ipv6_packet(const ipv6_fields& f, std::span<const uint8_t> payload);

/// A UDP datagram with its checksum under the IPv6 pseudo-header of (src, dst) and the UDP
/// length (RFC 8200 8.1; a computed 0 is sent as all ones).
bytes udp6_datagram(const ip6& src, const ip6& dst, uint16_t sport, uint16_t dport, std::span<const uint8_t> data);

/// An extension header (hop-by-hop, destination options: PadN filling; routing: type 0 with
/// `segments_left`) of `len` bytes (a multiple of 8, at least 8) followed by `rest`.
bytes ipv6_extension(uint8_t next, std::size_t len, std::span<const uint8_t> rest, uint8_t segments_left = 0);

/// The ICMPv6 message (type, code, then `body`) with its checksum under (src, dst), the
/// pseudo-header taking the message's own length (the upper-layer length).
bytes icmp6_message(const ip6& src, const ip6& dst, uint8_t type, uint8_t code, std::span<const uint8_t> body);

/// The body of an NS or NA after type, code and checksum: flags (NA), reserved, target, and a
/// link-layer address option of `option_type` (0: none) carrying `lladdr`.
bytes nd_body(uint8_t flags, const ip6& target, uint8_t option_type, const mac& lladdr);

/// `n` bytes of a recognisable pattern (i * 7 + 3), for payloads.
bytes pattern(std::size_t n, uint8_t seed = 3);

}  // namespace sbc::test
