// Test frame builders (see frame_builder.h): byte-level encoders written from the RFCs,
// independent of the dataplane's code.
#include "tests/eal/frame_builder.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdlib>

namespace sbc::test {

uint32_t ones_sum(std::span<const uint8_t> data, uint32_t acc) noexcept
{
    std::size_t i = 0;
    for (; i + 1 < data.size(); i += 2) acc += (uint32_t{data[i]} << 8) | data[i + 1];
    if (i < data.size()) acc += uint32_t{data[i]} << 8;
    return acc;
}

uint16_t fold_checksum(uint32_t sum) noexcept
{
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum & 0xffff);
}

uint16_t udp_checksum(uint32_t src, uint32_t dst, std::span<const uint8_t> udp) noexcept
{
    uint32_t acc = (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + proto_udp +
                   static_cast<uint32_t>(udp.size());
    return fold_checksum(ones_sum(udp, acc));
}

uint16_t read16(std::span<const uint8_t> b, std::size_t off) noexcept
{
    return static_cast<uint16_t>((b[off] << 8) | b[off + 1]);
}

uint32_t read32(std::span<const uint8_t> b, std::size_t off) noexcept
{
    return (uint32_t{read16(b, off)} << 16) | read16(b, off + 2);
}

void write16(std::span<uint8_t> b, std::size_t off, uint16_t v) noexcept
{
    b[off] = static_cast<uint8_t>(v >> 8);
    b[off + 1] = static_cast<uint8_t>(v);
}

namespace {
void put16(bytes& b, uint16_t v)
{
    b.push_back(static_cast<uint8_t>(v >> 8));
    b.push_back(static_cast<uint8_t>(v));
}
void put32(bytes& b, uint32_t v)
{
    put16(b, static_cast<uint16_t>(v >> 16));
    put16(b, static_cast<uint16_t>(v));
}
void put(bytes& b, std::span<const uint8_t> s) { b.insert(b.end(), s.begin(), s.end()); }
}  // namespace

bytes ethernet(const l2_fields& l2, uint16_t ethertype, std::span<const uint8_t> payload)
{
    bytes b;
    put(b, l2.dst);
    put(b, l2.src);
    if (l2.vlan != 0) {
        put16(b, ethertype_vlan);
        put16(b, l2.vlan);
    }
    put16(b, ethertype);
    put(b, payload);
    return b;
}

bytes pad_to_minimum(bytes frame)
{
    if (frame.size() < 60) frame.resize(60, 0);
    return frame;
}

bytes arp(uint16_t op, const mac& sha, uint32_t spa, const mac& tha, uint32_t tpa)
{
    bytes b;
    put16(b, 1);  // Ethernet
    put16(b, ethertype_ipv4);
    b.push_back(6);
    b.push_back(4);
    put16(b, op);
    put(b, sha);
    put32(b, spa);
    put(b, tha);
    put32(b, tpa);
    return b;
}

bytes ipv4_packet(const ipv4_fields& f, std::span<const uint8_t> payload)
{
    bytes b;
    b.push_back(0x45);
    b.push_back(f.tos);
    put16(b, static_cast<uint16_t>(20 + payload.size()));
    put16(b, f.id);
    put16(b, f.flags_fragment);
    b.push_back(f.ttl);
    b.push_back(f.proto);
    put16(b, 0);
    put32(b, f.src);
    put32(b, f.dst);
    write16(b, 10, internet_checksum(b));
    put(b, payload);
    return b;
}

std::vector<bytes> ipv4_fragments(const ipv4_fields& f, std::span<const uint8_t> payload, std::size_t chunk)
{
    std::vector<bytes> out;
    for (std::size_t off = 0; off < payload.size(); off += chunk) {
        const std::size_t n = std::min(chunk, payload.size() - off);
        ipv4_fields ff = f;
        ff.flags_fragment = static_cast<uint16_t>((off / 8) | (off + n < payload.size() ? ip_flag_mf : 0));
        out.push_back(ipv4_packet(ff, payload.subspan(off, n)));
    }
    return out;
}

bytes icmp_echo(uint8_t type, uint16_t id, uint16_t seq, std::span<const uint8_t> data)
{
    bytes b{type, 0, 0, 0};
    put16(b, id);
    put16(b, seq);
    put(b, data);
    write16(b, 2, internet_checksum(b));
    return b;
}

bytes icmp_unreachable(uint8_t code, std::span<const uint8_t> original)
{
    bytes b{3, code, 0, 0, 0, 0, 0, 0};
    put(b, original);
    write16(b, 2, internet_checksum(b));
    return b;
}

namespace {

/// A UDP header (checksum 0) and `data`.
bytes unsummed_udp(uint16_t sport, uint16_t dport, std::span<const uint8_t> data)
{
    bytes b;
    put16(b, sport);
    put16(b, dport);
    put16(b, static_cast<uint16_t>(8 + data.size()));
    put16(b, 0);
    put(b, data);
    return b;
}

}  // namespace

bytes udp_datagram(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, std::span<const uint8_t> data)
{
    bytes b = unsummed_udp(sport, dport, data);
    uint16_t c = udp_checksum(src, dst, b);
    write16(b, 6, c == 0 ? 0xffff : c);  // RFC 768: a computed 0 is sent as all ones
    return b;
}

bytes pattern(std::size_t n, uint8_t seed)
{
    bytes b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(i * 7 + seed);
    return b;
}

ip6 ipv6(const char* text)
{
    ip6 a{};
    if (inet_pton(AF_INET6, text, a.data()) != 1) std::abort();
    return a;
}

bytes ipv6_packet(const ipv6_fields& f, std::span<const uint8_t> payload)
{
    bytes b;
    put32(b, 0x60000000u);
    put16(b, static_cast<uint16_t>(payload.size()));
    b.push_back(f.next);
    b.push_back(f.hop_limit);
    put(b, f.src);
    put(b, f.dst);
    put(b, payload);
    return b;
}

bytes ipv6_extension(uint8_t next, std::size_t len, std::span<const uint8_t> rest, uint8_t segments_left)
{
    bytes b(len, 0);
    b[0] = next;
    b[1] = static_cast<uint8_t>(len / 8 - 1);
    if (segments_left != 0) {
        b[3] = segments_left;  // a routing header: type 0 at b[2], then addresses
    } else {
        b[2] = 1;  // PadN over the rest of the header
        b[3] = static_cast<uint8_t>(len - 4);
    }
    put(b, rest);
    return b;
}

bytes icmp6_message(const ip6& src, const ip6& dst, uint8_t type, uint8_t code, std::span<const uint8_t> body)
{
    bytes m{type, code, 0, 0};
    put(m, body);
    uint32_t acc = ones_sum(src);
    acc = ones_sum(dst, acc);
    acc += static_cast<uint32_t>(m.size() >> 16) + static_cast<uint32_t>(m.size() & 0xffff) + proto_icmp6;
    write16(m, 2, fold_checksum(ones_sum(m, acc)));
    return m;
}

bytes udp6_datagram(const ip6& src, const ip6& dst, uint16_t sport, uint16_t dport, std::span<const uint8_t> data)
{
    bytes b = unsummed_udp(sport, dport, data);
    uint32_t acc = ones_sum(src);
    acc = ones_sum(dst, acc);
    acc += static_cast<uint32_t>(b.size() >> 16) + static_cast<uint32_t>(b.size() & 0xffff) + proto_udp;
    const uint16_t c = fold_checksum(ones_sum(b, acc));
    write16(b, 6, c == 0 ? 0xffff : c);
    return b;
}

bytes nd_body(uint8_t flags, const ip6& target, uint8_t option_type, const mac& lladdr)
{
    bytes b{flags, 0, 0, 0};
    put(b, target);
    if (option_type != 0) {
        b.push_back(option_type);
        b.push_back(1);
        put(b, lladdr);
    }
    return b;
}

}  // namespace sbc::test
