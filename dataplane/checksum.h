// The Internet checksum (RFC 1071) over a buffer, eight bytes a step, the IPv4 header and
// UDP checksums from field values, and the IPv6 upper-layer checksum (ICMPv6, RFC 8200 8.1): what every IPv4/UDP datagram the SBC originates (SIP
// messages, probes) is checksummed with. DPDK 22.11's
// rte_raw_cksum adds one 16-bit word per step; on a SIP message of ~700 bytes that loop was the
// largest single cost of framing (perf over scripts/bench/cps.sh), so this one accumulates
// 32-bit halves of 64-bit loads into a 64-bit sum and folds once. The one's complement sum does
// not depend on the word size it is computed in (RFC 1071 2(B)), so the result is bit for bit
// rte_raw_cksum's (tests/unit/checksum_test.cc). Any thread; pure, inline, no heap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sbc::dataplane {

/// The one's complement sum of `len` bytes at `buf` plus `sum`, folded to 16 bits, in host
/// order as rte_raw_cksum returns it (not inverted).
[[nodiscard]] inline uint16_t raw_checksum(const void* buf, std::size_t len, uint32_t sum = 0) noexcept
{
    const auto* p = static_cast<const uint8_t*>(buf);
    uint64_t acc = sum;
    while (len >= 32) {
        uint64_t w[4];
        std::memcpy(w, p, 32);
        for (uint64_t v : w) acc += (v & 0xffffffffu) + (v >> 32);
        p += 32;
        len -= 32;
    }
    while (len >= 4) {
        uint32_t v;
        std::memcpy(&v, p, 4);
        acc += v;
        p += 4;
        len -= 4;
    }
    if (len >= 2) {
        uint16_t v;
        std::memcpy(&v, p, 2);
        acc += v;
        p += 2;
        len -= 2;
    }
    if (len != 0) acc += *p;  // the odd last byte as the low byte of a host-order word, as DPDK does
    // Fold 64 -> 32 -> 16 bits, adding the carries back in.
    acc = (acc & 0xffffffffu) + (acc >> 32);
    acc = (acc & 0xffffffffu) + (acc >> 32);
    acc = (acc & 0xffffu) + (acc >> 16);
    acc = (acc & 0xffffu) + (acc >> 16);
    return static_cast<uint16_t>(acc);
}

namespace detail {
/// Folds a sum of 16-bit words to 16 bits, carries added back in.
[[nodiscard]] constexpr uint16_t fold16(uint64_t v) noexcept
{
    v = (v & 0xffffffffu) + (v >> 32);
    v = (v & 0xffffu) + (v >> 16);
    v = (v & 0xffffu) + (v >> 16);
    v = (v & 0xffffu) + (v >> 16);
    return static_cast<uint16_t>(v);
}
[[nodiscard]] constexpr uint16_t swap16(uint16_t v) noexcept { return static_cast<uint16_t>(v << 8 | v >> 8); }
/// Sum of the 16-bit halves of a host-order IPv4 address.
[[nodiscard]] constexpr uint32_t halves(uint32_t a) noexcept { return (a >> 16) + (a & 0xffffu); }
}  // namespace detail

/// The header checksum of an IPv4 header without options, from its field values (host order),
/// as the 16-bit value to store in the header (what rte_ipv4_cksum returns): computed without
/// reading back the header just written, whose stores the CPU may not have completed.
[[nodiscard]] constexpr uint16_t ipv4_header_checksum(uint32_t src, uint32_t dst, uint16_t total_length, uint16_t id,
                                                      uint16_t fragment_offset, uint8_t ttl, uint8_t proto,
                                                      uint8_t tos = 0) noexcept
{
    const uint64_t sum = (0x45u << 8 | tos) + uint32_t{total_length} + id + fragment_offset +
                         (uint32_t{ttl} << 8 | proto) + detail::halves(src) + detail::halves(dst);
    return detail::swap16(static_cast<uint16_t>(~detail::fold16(sum)));
}

/// The UDP checksum of a datagram over IPv4 (pseudo-header, UDP header from its values, host
/// order, and the payload summed where it lies, before or after it is copied into the packet),
/// as the 16-bit value to store in the UDP header (what rte_ipv4_udptcp_cksum returns: a
/// computed 0 is sent as 0xffff, RFC 768).
[[nodiscard]] inline uint16_t udp4_checksum(uint32_t src, uint32_t dst, uint16_t src_port, uint16_t dst_port,
                                            const void* payload, std::size_t len) noexcept
{
    const auto udp_len = static_cast<uint32_t>(8 + len);
    const uint64_t header = detail::halves(src) + detail::halves(dst) + 17u /* IPPROTO_UDP */ + udp_len +
                            src_port + dst_port + udp_len;
    // The header's sum is over big-endian words; raw_checksum's over host-order loads: swap to add.
    const uint16_t sum = raw_checksum(payload, len, detail::swap16(detail::fold16(header)));
    return sum == 0xffff ? 0xffff : static_cast<uint16_t>(~sum);
}

/// The one's complement sum of the IPv6 pseudo-header (RFC 8200 8.1) for an upper-layer
/// message of `len` bytes, folded, not inverted: what the message's own sum is added to.
[[nodiscard]] inline uint16_t ipv6_pseudo_sum(const uint8_t* src, const uint8_t* dst, uint8_t next_header,
                                              std::size_t len) noexcept
{
    const uint32_t len32 = static_cast<uint32_t>(len);
    // The pseudo-header's last two words in network order, summed as host-order loads like the rest.
    const uint8_t tail[8] = {static_cast<uint8_t>(len32 >> 24), static_cast<uint8_t>(len32 >> 16),
                             static_cast<uint8_t>(len32 >> 8), static_cast<uint8_t>(len32), 0, 0, 0, next_header};
    uint16_t sum = raw_checksum(src, 16);
    sum = raw_checksum(dst, 16, sum);
    return raw_checksum(tail, 8, sum);
}

/// The checksum of an upper-layer message over IPv6 (RFC 8200 8.1: the pseudo-header of both
/// addresses, the upper-layer length and the next header, then the message, whose checksum
/// field must hold 0 before), as the 16-bit value to copy into the field as it is (not
/// byte-swapped); 0 when `msg` already carries a correct checksum. `len` is the upper-layer length, never the IPv6 payload
/// length (which counts extension headers too).
[[nodiscard]] inline uint16_t ipv6_upper_checksum(const uint8_t* src, const uint8_t* dst, uint8_t next_header,
                                                  const void* msg, std::size_t len) noexcept
{
    return static_cast<uint16_t>(~raw_checksum(msg, len, ipv6_pseudo_sum(src, dst, next_header, len)));
}

/// The UDP checksum of a datagram over IPv6 (RFC 8200 8.1: pseudo-header, the UDP header from
/// its values, the payload summed where it lies), as the 16-bit value to store in the UDP header
/// (what rte_ipv4_udptcp_cksum returns): a computed 0 is sent as 0xffff, since 0 means "none",
/// which IPv6 forbids for UDP.
[[nodiscard]] inline uint16_t udp6_checksum(const uint8_t* src, const uint8_t* dst, uint16_t src_port,
                                            uint16_t dst_port, const void* payload, std::size_t len) noexcept
{
    const auto udp_len = static_cast<uint32_t>(8 + len);
    // The UDP header's words (its length twice: in the pseudo-header and the header), as
    // big-endian values; raw_checksum's sums are over host-order loads: swapped to add.
    const uint64_t header = uint64_t{src_port} + dst_port + udp_len + udp_len;
    const uint16_t pseudo = ipv6_pseudo_sum(src, dst, 17 /* IPPROTO_UDP */, 0);
    const uint16_t sum = raw_checksum(payload, len, uint32_t{pseudo} + detail::swap16(detail::fold16(header)));
    return sum == 0xffff ? 0xffff : static_cast<uint16_t>(~sum);
}

}  // namespace sbc::dataplane
