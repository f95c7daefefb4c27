// IPv6 stage: header validation, the destination check (our addresses and the groups Neighbor
// Discovery needs), a bounded walk of the extension headers (RFC 8200 4), and sorting by upper
// layer. Only ICMPv6 goes on today; fragments, UDP and TCP over IPv6 are counted and dropped
// until they are built. Worker only.
#include <cstring>

#include <rte_ip.h>

#include "dataplane/nd.h"
#include "dataplane/stages.h"

namespace sbc::dataplane {

namespace {

constexpr uint32_t ipv6_header_len = sizeof(rte_ipv6_hdr);  // 40
/// m->l3_len has 9 bits: the IPv6 header and its extension headers must end within 511 bytes.
constexpr uint32_t max_l3_len = 511;

/// Whether `dst` is for this interface: one of our unicast addresses, all-nodes, or the
/// solicited-node group of one of them.
bool is_for_us(const interface_info& ifc, const uint8_t* dst) noexcept
{
    if (!is_multicast6(dst)) return ifc.is_ours6(dst);
    if (std::memcmp(dst, all_nodes.data(), 16) == 0) return true;
    const auto g = ifc.address6.addr.v6_bytes(), ll = ifc.link_local6.v6_bytes();
    return is_solicited_node_of(dst, g.data()) || is_solicited_node_of(dst, ll.data());
}

/// The outcome of walking the extension headers.
struct chain {
    uint8_t next = 0;       ///< the upper layer's protocol
    uint32_t offset = 0;    ///< where it starts, from the IPv6 header
    drop_reason fail{};     ///< set when `ok` is false
    bool ok = false;
};

/// Walks the extension headers of the datagram at `ip` (`end` bytes: header and payload).
chain walk(const uint8_t* ip, uint32_t end, unsigned limit) noexcept
{
    chain c;
    c.next = ip[6];
    c.offset = ipv6_header_len;
    unsigned count = 0;
    for (;;) {
        const uint8_t nh = c.next;
        if (nh != ipv6_ext::hop_by_hop && nh != ipv6_ext::routing && nh != ipv6_ext::destination &&
            nh != ipv6_ext::fragment)
            break;
        if (++count > limit) {
            c.fail = drop_reason::ipv6_extension_chain_too_long;
            return c;
        }
        if (c.offset + 8 > end || (nh == ipv6_ext::hop_by_hop && c.offset != ipv6_header_len)) {
            c.fail = drop_reason::ipv6_bad_extension;
            return c;
        }
        const uint8_t* h = ip + c.offset;
        if (nh == ipv6_ext::fragment) {
            c.fail = drop_reason::ipv6_fragment;
            return c;
        }
        // A routing header still to be followed names another node: we are not a router.
        if (nh == ipv6_ext::routing && h[3] != 0) {
            c.fail = drop_reason::ipv6_bad_extension;
            return c;
        }
        c.next = h[0];
        c.offset += (uint32_t{h[1]} + 1) * 8;
        if (c.offset > end) {
            c.fail = drop_reason::ipv6_bad_extension;
            return c;
        }
    }
    if (c.offset > max_l3_len) {
        c.fail = drop_reason::ipv6_extension_chain_too_long;
        return c;
    }
    c.ok = true;
    return c;
}

}  // namespace

void ipv6_stage(worker& w, const snapshot& snap, sub_burst& b, sub_burst& icmp6) noexcept
{
    w.counters.entered(stage::ipv6, b.n);
    std::array<uint16_t, drop_reason_count> drops{};
    auto drop = [&](rte_mbuf* m, drop_reason r) {
        rte_pktmbuf_free(m);
        ++drops[static_cast<std::size_t>(r)];
    };
    for (uint16_t i = 0; i < b.n; ++i) {
        rte_mbuf* m = b.pkts[i];
        const interface_info& ifc = snap.interfaces[b.iface[i]];
        const uint32_t avail = rte_pktmbuf_data_len(m) - m->l2_len;
        if (avail < ipv6_header_len) {
            drop(m, drop_reason::ipv6_truncated);
            continue;
        }
        const auto* ip = rte_pktmbuf_mtod_offset(m, const uint8_t*, m->l2_len);
        if ((ip[0] >> 4) != 6) {
            drop(m, drop_reason::ipv6_bad_version);
            continue;
        }
        const uint32_t end = ipv6_header_len + (uint32_t{ip[4]} << 8 | ip[5]);
        if (end > avail) {
            drop(m, drop_reason::ipv6_truncated);
            continue;
        }
        if (is_multicast6(ip + 8)) {
            drop(m, drop_reason::ipv6_bad_source);
            continue;
        }
        if (!ifc.has_v6() || !is_for_us(ifc, ip + 24)) {
            drop(m, drop_reason::ipv6_not_for_us);
            continue;
        }
        const chain c = walk(ip, end, snap.ipv6_max_extension_headers);
        if (!c.ok) {
            drop(m, c.fail);
            continue;
        }
        if (avail > end) rte_pktmbuf_trim(m, static_cast<uint16_t>(avail - end));  // Ethernet padding
        m->l3_len = c.offset;
        if (c.next == icmp6::proto) {
            icmp6.push(m, b.iface[i]);
            continue;
        }
        drop(m, drop_reason::ipv6_protocol_unsupported);
    }
    for (std::size_t r = 0; r < drop_reason_count; ++r)
        if (drops[r] != 0) w.counters.drops[r].add(drops[r]);
    b.n = 0;
}

}  // namespace sbc::dataplane
