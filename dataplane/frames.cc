// Frame builders (see frames.h). Any thread.
#include "dataplane/frames.h"

#include <cstring>

#include "dataplane/checksum.h"

namespace sbc::dataplane {

namespace {
uint8_t* put16(uint8_t* p, uint16_t v) noexcept
{
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
    return p + 2;
}
uint8_t* put32(uint8_t* p, uint32_t v) noexcept
{
    p = put16(p, static_cast<uint16_t>(v >> 16));
    return put16(p, static_cast<uint16_t>(v));
}
uint8_t* put_mac(uint8_t* p, const mac_addr& m) noexcept
{
    std::memcpy(p, m.data(), 6);
    return p + 6;
}
/// The Ethernet header, with an 802.1Q tag when `vlan` is not 0.
uint8_t* put_eth(uint8_t* p, const mac_addr& dst, const mac_addr& src, uint16_t vlan, uint16_t ethertype) noexcept
{
    p = put_mac(p, dst);
    p = put_mac(p, src);
    if (vlan != 0) {
        p = put16(p, 0x8100);
        p = put16(p, vlan & 0x0fff);
    }
    return put16(p, ethertype);
}
}  // namespace

std::size_t build_arp(std::span<uint8_t> out, const arp_fields& f) noexcept
{
    const std::size_t len = (f.vlan != 0 ? 18 : 14) + 28;
    if (out.size() < len) return 0;
    uint8_t* p = put_eth(out.data(), f.eth_dst, f.sender_mac, f.vlan, 0x0806);
    p = put16(p, 1);       // Ethernet
    p = put16(p, 0x0800);  // IPv4
    *p++ = 6;
    *p++ = 4;
    p = put16(p, f.op);
    p = put_mac(p, f.sender_mac);
    p = put32(p, f.sender_ip);
    p = put_mac(p, f.target_mac);
    put32(p, f.target_ip);
    return len;
}

std::size_t build_nd(std::span<uint8_t> out, const nd_fields& f) noexcept
{
    constexpr uint16_t icmp_len = icmp6::nd_message_len + icmp6::lladdr_option_len;
    const std::size_t l2 = f.vlan != 0 ? 18 : 14;
    const std::size_t len = l2 + 40 + icmp_len;
    if (out.size() < len) return 0;
    uint8_t* p = put_eth(out.data(), f.eth_dst, f.src_mac, f.vlan, 0x86dd);
    p = put32(p, 0x60000000u);  // version 6, traffic class 0, flow label 0
    p = put16(p, icmp_len);
    *p++ = icmp6::proto;
    *p++ = icmp6::nd_hop_limit;
    std::memcpy(p, f.src.data(), 16);
    std::memcpy(p + 16, f.dst.data(), 16);
    p += 32;
    uint8_t* icmp = p;
    *p++ = f.type;
    *p++ = 0;      // code
    p = put16(p, 0);  // checksum, below
    *p++ = f.type == icmp6::neighbour_advertisement ? f.flags : 0;
    *p++ = 0;
    p = put16(p, 0);  // reserved
    std::memcpy(p, f.target.data(), 16);
    p += 16;
    *p++ = f.type == icmp6::neighbour_advertisement ? icmp6::opt_target_lladdr : icmp6::opt_source_lladdr;
    *p++ = 1;  // option length in units of 8 bytes
    put_mac(p, f.src_mac);
    const uint16_t sum = ipv6_upper_checksum(f.src.data(), f.dst.data(), icmp6::proto, icmp, icmp_len);
    std::memcpy(icmp + 2, &sum, 2);  // stored as computed: the sum is over the bytes as they lie
    return len;
}

}  // namespace sbc::dataplane
