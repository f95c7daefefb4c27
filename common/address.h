// The one address vocabulary of sbc: an IP address that holds IPv4 or IPv6, a prefix, the SIP
// transports, and an endpoint (address, port, transport, stream connection). Config, snapshot,
// events, proxy, media and the control core all speak it. Plain values, no heap: any thread,
// also the packet path. Only IPv4 runs today; IPv6 values parse, format, compare and hash so that
// the IPv6 work adds code, not type changes.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace sbc {

enum class ip_family : uint8_t { none = 0, v4 = 4, v6 = 6 };

/// The host-order IPv4 netmask of a prefix length (0: 0; 32 or more: all ones; 24: 0xffffff00).
/// constexpr and branch-light, so that the IPv4 packet path derives it from a prefix per packet
/// rather than keeping a second copy of the length.
[[nodiscard]] constexpr uint32_t ipv4_netmask(unsigned len) noexcept
{
    return len == 0 ? 0 : len >= 32 ? ~uint32_t{0} : ~uint32_t{0} << (32 - len);
}

/// An IPv4 or IPv6 address. IPv4 is kept in host byte order in the last word, so that the
/// IPv4 packet path reads it with one load; IPv6 as its 16 bytes in network order.
class ip_address {
public:
    constexpr ip_address() noexcept = default;

    /// An IPv4 address from host byte order (0xC6120001 is 198.18.0.1).
    [[nodiscard]] static constexpr ip_address v4(uint32_t host_order) noexcept
    {
        ip_address a;
        a.family_ = ip_family::v4;
        a.w_[3] = host_order;
        return a;
    }
    /// An IPv6 address from its 16 bytes in network order.
    [[nodiscard]] static ip_address v6(std::span<const uint8_t, 16> bytes) noexcept
    {
        ip_address a;
        a.family_ = ip_family::v6;
        std::memcpy(a.w_.data(), bytes.data(), 16);
        return a;
    }

    [[nodiscard]] constexpr ip_family family() const noexcept { return family_; }
    [[nodiscard]] constexpr bool is_v4() const noexcept { return family_ == ip_family::v4; }
    [[nodiscard]] constexpr bool is_v6() const noexcept { return family_ == ip_family::v6; }
    /// Unset (ip_family::none) or the zero address of its family.
    [[nodiscard]] constexpr bool is_unspecified() const noexcept
    {
        return (w_[0] | w_[1] | w_[2] | w_[3]) == 0;
    }
    /// The IPv4 address in host byte order; 0 for anything that is not IPv4.
    [[nodiscard]] constexpr uint32_t v4_host() const noexcept { return family_ == ip_family::v4 ? w_[3] : 0; }
    /// The IPv6 bytes in network order (all zero for anything that is not IPv6).
    [[nodiscard]] std::array<uint8_t, 16> v6_bytes() const noexcept
    {
        std::array<uint8_t, 16> b{};
        if (family_ == ip_family::v6) std::memcpy(b.data(), w_.data(), 16);
        return b;
    }

    /// Masks to the first `bits` bits of the family (IPv4 0..32, IPv6 0..128).
    [[nodiscard]] ip_address masked(unsigned bits) const noexcept;

    /// A well-mixed 64-bit hash (for hash tables; equal addresses hash equal).
    [[nodiscard]] constexpr uint64_t hash() const noexcept
    {
        // Two independent multiplies (the proxy hashes a source per message), family mixed in.
        const uint64_t hi = (uint64_t{w_[0]} << 32 | w_[1]) * 0x9e3779b97f4a7c15ull;
        const uint64_t lo = (uint64_t{w_[2]} << 32 | w_[3]) ^ uint64_t{static_cast<uint8_t>(family_)} << 56;
        const uint64_t h = hi ^ lo * 0xff51afd7ed558ccdull;
        return h ^ (h >> 29);
    }

    /// Family first, then for IPv4 the one word that holds it: loads of the sizes the v4()
    /// constructor stored, so that a freshly decoded address compares without a store-forwarding
    /// stall on the packet path.
    friend constexpr bool operator==(const ip_address& a, const ip_address& b) noexcept
    {
        if (a.family_ != b.family_) return false;
        if (a.family_ != ip_family::v6) return a.w_[3] == b.w_[3];
        return a.w_ == b.w_;
    }
    /// IPv4 before IPv6; within a family, numeric order.
    friend constexpr std::strong_ordering operator<=>(const ip_address& a, const ip_address& b) noexcept
    {
        if (a.family_ != b.family_) return a.family_ <=> b.family_;
        if (a.family_ == ip_family::v6) {
            const int c = std::memcmp(a.w_.data(), b.w_.data(), 16);
            return c <=> 0;
        }
        return a.w_[3] <=> b.w_[3];
    }

private:
    std::array<uint32_t, 4> w_{};
    ip_family family_ = ip_family::none;
};

/// An address and a prefix length, as written ("198.18.0.0/15"); canonical() masks it.
struct ip_prefix {
    ip_address addr;
    uint8_t len = 0;

    /// The same prefix with its host bits cleared.
    [[nodiscard]] ip_prefix canonical() const noexcept { return ip_prefix{addr.masked(len), len}; }
    /// Whether `a` is inside (same family, same first `len` bits). IPv4 inline: the trunk's
    /// source check runs for every message.
    [[nodiscard]] bool contains(const ip_address& a) const noexcept
    {
        if (a.family() != addr.family()) return false;
        if (a.is_v4()) {
            const uint32_t mask = len == 0 ? 0 : len >= 32 ? ~uint32_t{0} : ~uint32_t{0} << (32 - len);
            return ((a.v4_host() ^ addr.v4_host()) & mask) == 0;
        }
        return a.masked(len) == addr.masked(len);
    }
    friend bool operator==(const ip_prefix&, const ip_prefix&) noexcept = default;
};

/// How SIP travels between two endpoints.
enum class transport : uint8_t { udp = 0, tcp = 1, tls = 2 };
constexpr std::size_t transport_count = 3;

/// "UDP", "TCP", "TLS": as in a Via's sent-protocol (RFC 3261 20.42).
[[nodiscard]] std::string_view transport_via_name(transport t) noexcept;
/// "udp", "tcp", "tls": as in a URI's transport parameter and in config files.
[[nodiscard]] std::string_view transport_param_name(transport t) noexcept;
/// Parses either spelling, case-insensitively.
[[nodiscard]] std::optional<transport> parse_transport(std::string_view s) noexcept;
/// Whether messages on `t` are framed by Content-Length on a stream (TCP, TLS).
[[nodiscard]] constexpr bool is_stream(transport t) noexcept { return t != transport::udp; }

/// Which families a name resolves to (a region's address_family, RFC 3263 4.2): IPv4 only
/// (A), IPv6 only (AAAA), or both, each SRV target taking the preferred family's addresses
/// when it has any and the other's otherwise.
enum class family_choice : uint8_t { ipv4, ipv6, prefer_ipv6, prefer_ipv4 };

/// A stream connection's id (0: none, a datagram transport).
using connection_id = uint32_t;

/// Where a SIP message comes from or goes to: address, port, transport, and for TCP/TLS the
/// connection it travels on.
struct endpoint {
    ip_address addr;
    uint16_t port = 0;
    transport proto = transport::udp;
    connection_id conn = 0;

    /// An IPv4/UDP endpoint from host-order values (what the IPv4 datagram path has).
    [[nodiscard]] static constexpr endpoint udp4(uint32_t ip_host, uint16_t port) noexcept
    {
        return endpoint{ip_address::v4(ip_host), port, transport::udp, 0};
    }
    /// Address, port and transport as a 64-bit hash input; the connection does not take part
    /// (a message keeps its transaction when it comes back on another connection).
    [[nodiscard]] constexpr uint64_t hash() const noexcept
    {
        return addr.hash() ^ (uint64_t{port} << 8 | static_cast<uint64_t>(proto)) * 0x9e3779b97f4a7c15ull;
    }
    /// Same address, port and transport, whatever the connection (a Route naming us, a peer
    /// seen again on another connection).
    [[nodiscard]] constexpr bool same_place(const endpoint& o) const noexcept
    {
        return addr == o.addr && port == o.port && proto == o.proto;
    }
    friend constexpr bool operator==(const endpoint&, const endpoint&) noexcept = default;
};

/// Longest text format_address writes ("ffff:...:255.255.255.255" plus room).
constexpr std::size_t max_address_text = 48;
/// Longest text format_endpoint writes: "[v6]:65535".
constexpr std::size_t max_endpoint_text = max_address_text + 8;

/// Writes `a` as text ("198.18.0.1", "2001:db8::1" per RFC 5952) into `out`, returns the length
/// written (0 when it does not fit or the address is unset). No heap: the packet path uses it.
std::size_t format_address(const ip_address& a, std::span<char> out) noexcept;
/// "198.18.0.1:5060", "[2001:db8::1]:5060" (no transport); 0 when it does not fit.
std::size_t format_endpoint(const endpoint& e, std::span<char> out) noexcept;
/// The same as a string (control core, tests).
[[nodiscard]] std::string to_string(const ip_address& a);
[[nodiscard]] std::string to_string(const endpoint& e);
[[nodiscard]] std::string to_string(const ip_prefix& p);

/// Parses a dotted quad or an IPv6 literal (without brackets); nullopt when it is neither.
[[nodiscard]] std::optional<ip_address> parse_address(std::string_view s) noexcept;
/// Parses a dotted quad only; each part 0..255 without a leading zero ("01.2.3.4" is refused:
/// inet_aton would read it as octal).
[[nodiscard]] std::optional<ip_address> parse_ipv4(std::string_view s) noexcept;
/// Parses "addr/len" (len 1..32 for IPv4, 1..128 for IPv6), the address as written (host bits
/// kept, so that a config can say which were set); nullopt when it is not one.
[[nodiscard]] std::optional<ip_prefix> parse_prefix(std::string_view s) noexcept;

}  // namespace sbc

template <>
struct std::hash<sbc::ip_address> {
    std::size_t operator()(const sbc::ip_address& a) const noexcept { return static_cast<std::size_t>(a.hash()); }
};
template <>
struct std::hash<sbc::endpoint> {
    std::size_t operator()(const sbc::endpoint& e) const noexcept { return static_cast<std::size_t>(e.hash()); }
};
