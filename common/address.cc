// Text forms of the address vocabulary (common/address.h): parse and format IPv4 and IPv6,
// prefixes and endpoints. Any thread; format_address and format_endpoint write into the
// caller's buffer without the heap, so the packet path may use them.
#include "common/address.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

namespace sbc {

namespace {

/// Decimal 0..999 of 1..3 digits, no sign, no leading '+', no leading zero ("010" is 8 to
/// inet_aton, 10 to others: ambiguous, so refused).
std::optional<unsigned> parse_octet(std::string_view s) noexcept
{
    if (s.empty() || s.size() > 3 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
    unsigned v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<unsigned>(c - '0');
    }
    return v;
}

std::size_t format_v4(uint32_t a, std::span<char> out) noexcept
{
    char tmp[16];
    // Straight into `out` when it surely fits (the Via and Record-Route writers' case).
    char* b = out.size() >= 15 ? out.data() : tmp;
    std::size_t n = 0;
    for (int shift = 24; shift >= 0; shift -= 8) {
        const unsigned o = (a >> shift) & 0xff;
        if (o >= 100) b[n++] = static_cast<char>('0' + o / 100);
        if (o >= 10) b[n++] = static_cast<char>('0' + o / 10 % 10);
        b[n++] = static_cast<char>('0' + o % 10);
        if (shift != 0) b[n++] = '.';
    }
    if (b == tmp) {
        if (n > out.size()) return 0;
        std::copy_n(tmp, n, out.data());
    }
    return n;
}

}  // namespace

ip_address ip_address::masked(unsigned bits) const noexcept
{
    ip_address r = *this;
    if (family_ == ip_family::v4) {
        r.w_[3] = w_[3] & ipv4_netmask(bits);
        return r;
    }
    if (family_ != ip_family::v6) return r;
    std::array<uint8_t, 16> b = v6_bytes();
    for (unsigned i = 0; i < 16; ++i) {
        const unsigned lo = i * 8;
        if (bits >= lo + 8) continue;
        b[i] = bits <= lo ? 0 : static_cast<uint8_t>(b[i] & (0xff00u >> (bits - lo)));
    }
    return v6(b);
}

namespace {
/// By transport's value: as in a Via's sent-protocol, and as in a URI's transport parameter.
constexpr std::array<std::string_view, transport_count> via_names{"UDP", "TCP", "TLS"};
constexpr std::array<std::string_view, transport_count> param_names{"udp", "tcp", "tls"};
}  // namespace

std::string_view transport_via_name(transport t) noexcept { return via_names[static_cast<std::size_t>(t) % transport_count]; }
std::string_view transport_param_name(transport t) noexcept
{
    return param_names[static_cast<std::size_t>(t) % transport_count];
}

std::optional<transport> parse_transport(std::string_view s) noexcept
{
    auto eq = [s](std::string_view w) {
        return s.size() == w.size() &&
               std::equal(s.begin(), s.end(), w.begin(), [](char a, char b) { return std::tolower(a) == b; });
    };
    if (eq("udp")) return transport::udp;
    if (eq("tcp")) return transport::tcp;
    if (eq("tls")) return transport::tls;
    return std::nullopt;
}

std::size_t format_address(const ip_address& a, std::span<char> out) noexcept
{
    if (a.is_v4()) return format_v4(a.v4_host(), out);
    if (!a.is_v6()) return 0;
    char tmp[INET6_ADDRSTRLEN];
    const auto b = a.v6_bytes();
    if (inet_ntop(AF_INET6, b.data(), tmp, sizeof tmp) == nullptr) return 0;
    const std::size_t n = std::char_traits<char>::length(tmp);
    if (n > out.size()) return 0;
    std::copy_n(tmp, n, out.data());
    return n;
}

std::size_t format_endpoint(const endpoint& e, std::span<char> out) noexcept
{
    char tmp[max_endpoint_text];
    // Straight into `out` when it surely fits (the Via and Record-Route writers' case).
    char* b = out.size() >= max_endpoint_text ? out.data() : tmp;
    std::size_t n = 0;
    if (e.addr.is_v6()) b[n++] = '[';
    const std::size_t a = format_address(e.addr, std::span<char>(b + n, max_address_text));
    if (a == 0) return 0;
    n += a;
    if (e.addr.is_v6()) b[n++] = ']';
    b[n++] = ':';
    char digits[5];
    std::size_t d = 0;
    uint16_t p = e.port;
    do {
        digits[d++] = static_cast<char>('0' + p % 10);
        p = static_cast<uint16_t>(p / 10);
    } while (p != 0);
    while (d != 0) b[n++] = digits[--d];
    if (b == tmp) {
        if (n > out.size()) return 0;
        std::copy_n(tmp, n, out.data());
    }
    return n;
}

std::string to_string(const ip_address& a)
{
    char buf[max_address_text];
    return std::string(buf, format_address(a, buf));
}

std::string to_string(const endpoint& e)
{
    char buf[max_endpoint_text];
    return std::string(buf, format_endpoint(e, buf));
}

std::string to_string(const ip_prefix& p) { return to_string(p.addr) + "/" + std::to_string(p.len); }

std::optional<ip_address> parse_ipv4(std::string_view s) noexcept
{
    // One pass (the proxy parses every Route and Request-URI host with it): four octets of one
    // to three digits, no leading zero, each at most 255, three dots.
    uint32_t a = 0;
    unsigned octet = 0, digits = 0, dots = 0;
    for (const char c : s) {
        if (c >= '0' && c <= '9') {
            if (digits == 1 && octet == 0) return std::nullopt;  // "01"
            octet = octet * 10 + static_cast<unsigned>(c - '0');
            if (++digits > 3 || octet > 255) return std::nullopt;
        } else if (c == '.' && digits != 0 && dots < 3) {
            a = (a << 8) | octet;
            octet = digits = 0;
            ++dots;
        } else {
            return std::nullopt;
        }
    }
    if (digits == 0 || dots != 3) return std::nullopt;
    return ip_address::v4((a << 8) | octet);
}

std::optional<ip_address> parse_address(std::string_view s) noexcept
{
    if (auto v4 = parse_ipv4(s)) return v4;
    if (s.find(':') == std::string_view::npos) return std::nullopt;
    char tmp[INET6_ADDRSTRLEN];
    if (s.size() >= sizeof tmp) return std::nullopt;
    std::copy(s.begin(), s.end(), tmp);
    tmp[s.size()] = '\0';
    std::array<uint8_t, 16> b{};
    if (inet_pton(AF_INET6, tmp, b.data()) != 1) return std::nullopt;
    return ip_address::v6(b);
}

std::optional<ip_prefix> parse_prefix(std::string_view s) noexcept
{
    const auto slash = s.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    const auto a = parse_address(s.substr(0, slash));
    const auto len = parse_octet(s.substr(slash + 1));
    if (!a || !len || *len < 1 || *len > (a->is_v4() ? 32u : 128u)) return std::nullopt;
    return ip_prefix{*a, static_cast<uint8_t>(*len)};
}

}  // namespace sbc
