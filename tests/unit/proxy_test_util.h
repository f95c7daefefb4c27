// The proxy tables most proxy unit tests run against: trunk "core" 198.18.0.1:5060 allowing
// 198.18.0.0/24 (the caller 198.18.0.2), peers in regions "region1" (198.18.1.11, .12) and
// "region2" (198.18.2.21), one group "cloud" over the regions, the default route to it, retry
// on 408/503/504 or 1000 ms of silence, four attempts. Test code only.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

#include "sip-fastpath/proxy_tables.h"

namespace sbc::sip::testutil {

constexpr uint32_t ip(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
    return (uint32_t{a} << 24) | (uint32_t{b} << 16) | (uint32_t{c} << 8) | d;
}

inline const endpoint sbc_ep = endpoint::udp4(ip(198, 18, 0, 1), 5060);
inline const endpoint caller = endpoint::udp4(ip(198, 18, 0, 2), 5060);
inline const endpoint r1a = endpoint::udp4(ip(198, 18, 1, 11), 5060);
inline const endpoint r1b = endpoint::udp4(ip(198, 18, 1, 12), 5060);
inline const endpoint r2a = endpoint::udp4(ip(198, 18, 2, 21), 5060);

/// A peer of the tables: where it is, its region's index, its priority (lower first).
struct peer_at {
    endpoint ep;
    uint16_t region = 0;
    uint16_t priority = 10;
};

/// The tables above with `peers` (named p0, p1, ... in order) in `regions` regions.
inline std::shared_ptr<proxy_tables> make_tables(std::initializer_list<peer_at> peers, uint16_t regions)
{
    auto t = std::make_shared<proxy_tables>();
    trunk tr;
    tr.name = "core";
    tr.address = sbc_ep.addr;
    tr.port = sbc_ep.port;
    tr.allow = {ip_prefix{ip_address::v4(ip(198, 18, 0, 0)), 24}};
    t->trunks.push_back(tr);
    t->regions.resize(regions);
    for (uint16_t r = 0; r < regions; ++r) t->regions[r].name = "region" + std::to_string(r + 1);
    for (const peer_at& pa : peers) {
        peer p;
        p.id = static_cast<uint32_t>(t->peers.size());
        p.name = "p" + std::to_string(p.id);
        p.address = pa.ep.addr;
        p.port = pa.ep.port;
        p.priority = pa.priority;
        p.weight = 50;
        p.region = pa.region;
        t->regions[pa.region].peers.push_back(p.id);
        t->peers.push_back(p);
    }
    t->index_peers();
    peer_group g;
    g.name = "cloud";
    for (uint16_t r = 0; r < regions; ++r) g.regions.push_back(r);
    t->groups.push_back(g);
    route rt;
    rt.name = "default";
    t->routes.push_back(rt);
    t->default_route = 0;
    for (uint16_t c : {408, 503, 504}) t->retry.codes.set(c);
    t->retry.no_response_ms = 1000;
    t->retry.max_attempts = 4;
    return t;
}

/// An SDP body offering one audio stream at `addr`:`port` (PCMU).
inline std::string sdp_of(const char* addr, int port)
{
    return std::string("v=0\r\no=- 1 1 IN IP4 ") + addr + "\r\ns=-\r\nc=IN IP4 " + addr + "\r\nt=0 0\r\nm=audio " +
           std::to_string(port) + " RTP/AVP 0\r\na=sendrecv\r\n";
}

/// A message's header block `head` (each line ended) closed with `body`: Content-Type for SDP
/// when there is one, Content-Length, the blank line.
inline std::string with_body(std::string head, const std::string& body)
{
    if (!body.empty()) head += "Content-Type: application/sdp\r\n";
    return head + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace sbc::sip::testutil
