// IPv6 vocabulary of the dataplane that needs no EAL: ICMPv6 and Neighbor Discovery numbers
// (RFC 4443, RFC 4861), the addresses ND derives (link-local from a MAC, solicited-node
// multicast, the Ethernet multicast MAC of an IPv6 group), and address scopes. Any thread;
// pure, inline, no heap: the IPv6 stages, the control core's resolver and the tests share it.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "common/address.h"

namespace sbc::dataplane {

using ipv6_bytes = std::array<uint8_t, 16>;

namespace icmp6 {
constexpr uint8_t proto = 58;  ///< the Next Header value of ICMPv6
constexpr uint8_t dest_unreachable = 1;
constexpr uint8_t packet_too_big = 2;
constexpr uint8_t parameter_problem = 4;
constexpr uint8_t port_unreachable = 4;  ///< destination unreachable's code
constexpr uint8_t echo_request = 128;
constexpr uint8_t echo_reply = 129;
constexpr uint8_t router_solicitation = 133;
constexpr uint8_t router_advertisement = 134;
constexpr uint8_t neighbour_solicitation = 135;
constexpr uint8_t neighbour_advertisement = 136;
constexpr uint8_t nd_hop_limit = 255;  ///< RFC 4861 7.1.1: anything else was forwarded, and is refused
constexpr uint8_t opt_source_lladdr = 1;
constexpr uint8_t opt_target_lladdr = 2;
constexpr uint8_t na_router = 0x80;     ///< first byte of an NA's flags word
constexpr uint8_t na_solicited = 0x40;
constexpr uint8_t na_override = 0x20;
constexpr uint32_t nd_message_len = 24;  ///< NS and NA: type, code, checksum, flags, target
constexpr uint32_t lladdr_option_len = 8;  ///< one Ethernet link-layer address option
}  // namespace icmp6

/// The extension headers the IPv6 stage walks (RFC 8200 4.1); anything else ends the chain.
namespace ipv6_ext {
constexpr uint8_t hop_by_hop = 0;
constexpr uint8_t routing = 43;
constexpr uint8_t fragment = 44;
constexpr uint8_t destination = 60;
constexpr uint8_t no_next = 59;
}  // namespace ipv6_ext

/// ff02::1, every node on the link: where an unsolicited NA goes.
constexpr ipv6_bytes all_nodes{0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

[[nodiscard]] inline bool is_multicast6(const uint8_t* a) noexcept { return a[0] == 0xff; }
/// fe80::/10 (RFC 4291 2.5.6).
[[nodiscard]] inline bool is_link_local6(const uint8_t* a) noexcept { return a[0] == 0xfe && (a[1] & 0xc0) == 0x80; }
[[nodiscard]] inline bool is_unspecified6(const uint8_t* a) noexcept
{
    uint64_t w[2];
    std::memcpy(w, a, 16);
    return (w[0] | w[1]) == 0;
}

/// The solicited-node multicast group of `a` (RFC 4291 2.7.1): ff02::1:ff and its last 24 bits.
[[nodiscard]] inline ipv6_bytes solicited_node(const uint8_t* a) noexcept
{
    return {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, a[13], a[14], a[15]};
}
/// Whether `dst` is the solicited-node group of `a`.
[[nodiscard]] inline bool is_solicited_node_of(const uint8_t* dst, const uint8_t* a) noexcept
{
    const ipv6_bytes g = solicited_node(a);
    return std::memcmp(dst, g.data(), 16) == 0;
}

/// The Ethernet address an IPv6 multicast group is sent to (RFC 2464 7): 33:33 and its last 32 bits.
[[nodiscard]] inline std::array<uint8_t, 6> multicast_mac6(const uint8_t* group) noexcept
{
    return {0x33, 0x33, group[12], group[13], group[14], group[15]};
}

/// The link-local address of an interface with `mac` (RFC 4291 2.5.1 and appendix A: modified
/// EUI-64, the universal/local bit flipped).
[[nodiscard]] inline ip_address link_local_of(const std::array<uint8_t, 6>& mac) noexcept
{
    const ipv6_bytes b{0xfe,   0x80,   0,    0,    0,      0,      0,      0,
                       static_cast<uint8_t>(mac[0] ^ 0x02), mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]};
    return ip_address::v6(b);
}

}  // namespace sbc::dataplane
