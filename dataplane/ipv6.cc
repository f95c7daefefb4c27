// IPv6 stage: header validation, the destination check (our addresses and the groups Neighbor
// Discovery needs), a bounded walk of the extension headers (RFC 8200 4), and sorting by upper
// layer; and the reassembly of fragments (rte_ip_frag, in the worker's table that IPv4 uses
// too). ICMPv6 and UDP go on; TCP over IPv6 is counted and dropped until it is built. Worker
// only.
#include <cstring>

#include <rte_cycles.h>
#include <rte_ip.h>
#include <rte_ip_frag.h>

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
    uint32_t next_at = 6;   ///< where the field naming the upper layer is (a Parameter Problem's pointer)
    uint32_t problem = 0;   ///< ok false: the offset of the field at fault (0: none to point at)
    bool ok = false;
    bool fragment = false;  ///< a fragment header right after the IPv6 header: to reassemble
};

/// Walks the extension headers of the datagram at `ip` (`end` bytes: header and payload, all
/// in the first segment).
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
            // rte_ip_frag reassembles a fragment header that follows the IPv6 header only.
            c.fragment = c.offset == ipv6_header_len;
            c.ok = c.fragment;
            if (!c.ok) c.fail = drop_reason::ipv6_fragment;
            return c;
        }
        // A routing header still to be followed names another node: we are not a router, so
        // its type is one we cannot process (RFC 8200 4.4: Parameter Problem at the type).
        if (nh == ipv6_ext::routing && h[3] != 0) {
            c.fail = drop_reason::ipv6_bad_extension;
            c.problem = c.offset + 2;
            return c;
        }
        c.next_at = c.offset;
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

/// Passes a datagram whose headers `c` walked to the stage of its upper layer; false if none.
bool route_upper(rte_mbuf* m, uint16_t iface, const chain& c, l6_bursts& out) noexcept
{
    m->l3_len = c.offset;
    if (c.next == IPPROTO_UDP) {
        out.udp6.push(m, iface);
        return true;
    }
    if (c.next == IPPROTO_TCP) {
        out.tcp.push(m, iface);
        return true;
    }
    if (c.next != icmp6::proto) return false;
    out.icmp6.push(m, iface);
    return true;
}

}  // namespace

void ipv6_stage(worker& w, const snapshot& snap, sub_burst& b, l6_bursts& out) noexcept
{
    w.counters.entered(stage::ipv6, b.n);
    drop_tally tally;
    auto drop = [&tally](rte_mbuf* m, drop_reason r) { tally.drop(m, r); };
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
        if (avail > end) rte_pktmbuf_trim(m, static_cast<uint16_t>(avail - end));  // Ethernet padding
        if (!c.ok) {
            if (c.problem != 0 && send_icmp6_error(w, snap, m, ifc, icmp6::parameter_problem, 0, c.problem))
                tally.count(c.fail);
            else
                drop(m, c.fail);
            continue;
        }
        if (c.fragment) {
            m->l3_len = ipv6_header_len + sizeof(rte_ipv6_fragment_ext);  // as rte_ip_frag wants it
            out.frag6.push(m, b.iface[i]);
            continue;
        }
        if (route_upper(m, b.iface[i], c, out)) continue;
        // An upper layer nobody knows: Parameter Problem at the field that named it (RFC 8200
        // 4). "No next header" goes unanswered.
        const bool unknown = c.next != ipv6_ext::no_next;
        if (unknown && send_icmp6_error(w, snap, m, ifc, icmp6::parameter_problem, 1, c.next_at))
            tally.count(drop_reason::ipv6_protocol_unsupported);
        else
            drop(m, drop_reason::ipv6_protocol_unsupported);
    }
    tally.commit(w);
    b.n = 0;
}

void frag6_stage(worker& w, const snapshot& snap, l6_bursts& io) noexcept
{
    sub_burst& b = io.frag6;
    w.counters.entered(stage::frag6, b.n);
    if (w.frag_table == nullptr) {
        drop_all(w, b, drop_reason::frag_failed);
        return;
    }
    const uint64_t now = rte_rdtsc();
    uint32_t unsupported = 0, bad = 0, failed = 0;
    for (uint16_t i = 0; i < b.n; ++i) {
        rte_mbuf* m = b.pkts[i];
        auto* ip = rte_pktmbuf_mtod_offset(m, rte_ipv6_hdr*, m->l2_len);
        auto* fh = reinterpret_cast<rte_ipv6_fragment_ext*>(ip + 1);
        // Fragments the table gives up on (full, overlapping, timed out) land on the death
        // row, to be freed there: its growth is what failed.
        const uint32_t before = w.death_row.cnt;
        rte_mbuf* whole = rte_ipv6_frag_reassemble_packet(w.frag_table, &w.death_row, m, now, ip, fh);
        failed += w.death_row.cnt - before;
        if (whole == nullptr) continue;
        // The fragment header is gone: walk what follows the IPv6 header again, within the
        // first segment (the first fragment's, which holds every header before the upper layer).
        const auto* wip = rte_pktmbuf_mtod_offset(whole, const uint8_t*, whole->l2_len);
        const uint32_t end = ipv6_header_len + (uint32_t{wip[4]} << 8 | wip[5]);
        const uint32_t first = rte_pktmbuf_data_len(whole) - whole->l2_len;
        const chain c = walk(wip, end < first ? end : first, snap.ipv6_max_extension_headers);
        if (!c.ok || c.fragment) {
            rte_pktmbuf_free(whole);
            ++bad;
            continue;
        }
        if (!route_upper(whole, b.iface[i], c, io)) {
            rte_pktmbuf_free(whole);
            ++unsupported;
        }
    }
    if (unsupported) w.counters.drop(drop_reason::ipv6_protocol_unsupported, unsupported);
    if (bad) w.counters.drop(drop_reason::ipv6_bad_extension, bad);
    if (failed) w.counters.drop(drop_reason::frag_failed, failed);
    rte_ip_frag_free_death_row(&w.death_row, 3);
    b.n = 0;
}

}  // namespace sbc::dataplane
