// Frame builders (see frames.h). Any thread.
#include "dataplane/frames.h"

#include <cstring>

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
}  // namespace

std::size_t build_arp(std::span<uint8_t> out, const arp_fields& f) noexcept
{
    const std::size_t len = (f.vlan != 0 ? 18 : 14) + 28;
    if (out.size() < len) return 0;
    uint8_t* p = out.data();
    p = put_mac(p, f.eth_dst);
    p = put_mac(p, f.sender_mac);
    if (f.vlan != 0) {
        p = put16(p, 0x8100);
        p = put16(p, f.vlan & 0x0fff);
    }
    p = put16(p, 0x0806);
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

}  // namespace sbc::dataplane
