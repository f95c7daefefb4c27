// The RTP/RTCP relay stage (see relay.h): lookup by direct index, latching, RFC 3550
// accounting, and the in-place rewrite of Ethernet, IPv4 and UDP towards the other leg.
// Any worker, RCU read side; no heap, locks, system calls or logging; tallies per burst.
#include "common/counter.h"
#include "rtp/relay.h"

#include <cstring>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_prefetch.h>
#include <rte_udp.h>

#include "packet/l2.h"

namespace sbc::rtp {

namespace {

constexpr auto drop_texts = SBC_LIST_TEXTS(relay_drop, SBC_RELAY_DROPS);

/// RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') over 16-bit words, for a 32-bit field.
inline uint32_t sum_replace32(uint32_t acc, uint32_t old_be, uint32_t new_be) noexcept
{
    acc += (~old_be >> 16) & 0xffff;
    acc += ~old_be & 0xffff;
    acc += new_be >> 16;
    acc += new_be & 0xffff;
    return acc;
}
inline uint32_t sum_replace16(uint32_t acc, uint16_t old_be, uint16_t new_be) noexcept
{
    return acc + static_cast<uint16_t>(~old_be) + new_be;
}
inline uint16_t fold(uint32_t acc) noexcept
{
    acc = (acc & 0xffff) + (acc >> 16);
    acc = (acc & 0xffff) + (acc >> 16);
    return static_cast<uint16_t>(acc);
}

struct tally {
    std::array<uint32_t, relay_drop_count> drops{};
    std::array<uint64_t, 2> packets{}, bytes{};
    uint32_t rtcp = 0, latched = 0;
    void drop(relay_drop r) noexcept { ++drops[static_cast<std::size_t>(r)]; }
};

inline uint64_t mac_word(const uint8_t* m) noexcept
{
    uint64_t v = 0;
    for (int i = 0; i < 6; ++i) v = v << 8 | m[i];
    return v | mac_known;
}
inline void mac_bytes(uint64_t v, uint8_t* m) noexcept
{
    for (int i = 5; i >= 0; --i) {
        m[i] = static_cast<uint8_t>(v);
        v >>= 8;
    }
}

/// Whether a datagram on an RTP port is RTCP (rtcp-mux, RFC 5761 section 4: packet types
/// 192..223 cannot be RTP payload types with the marker bit as used in practice).
inline bool muxed_rtcp(const uint8_t* p) noexcept { return p[1] >= 192 && p[1] <= 223; }

/// Where a rewritten datagram leaves: its port, and when its next hop's MAC is still unknown
/// (hop not 0), that hop and the interface it is on.
struct egress_to {
    uint16_t port = 0;
    uint16_t iface = 0;
    uint32_t hop = 0;
};

// relay_one's steps, each forced inline: one function to the compiler, as before the split
// (the rtp bench's packets per second did not move: docs/benchmarks.md).

/// Latching: whether the sender may send on this leg (side `side`, RTP or RTCP `k`); learns
/// the far end (and its MAC) from the first packet, or, strict, from the SDP's address.
[[gnu::always_inline]] inline bool latch(const relay_env& env, media_stream& st, uint8_t flags, unsigned side, unsigned k,
                                         uint32_t src_ip, uint16_t src_port, const rte_ether_hdr* eth, tally& t) noexcept
{
    const uint64_t far = st.far[side][k].load(std::memory_order_relaxed);
    const bool from_far = far_ip(far) == src_ip && far_port(far) == src_port && (far & far_flag::known) != 0;
    if ((flags & stream_flag::strict) != 0 || env.strict) {
        if (!from_far) return false;
        if ((far & far_flag::latched) == 0) {
            st.far[side][k].store(far | far_flag::latched, std::memory_order_relaxed);
            st.far_mac[side].store(mac_word(eth->src_addr.addr_bytes), std::memory_order_relaxed);
            ++t.latched;
        }
        return true;
    }
    if ((far & far_flag::latched) == 0) {
        // Symmetric latching: the first packet fixes the far end (NAT-friendly, RFC 4961).
        st.far[side][k].store(pack_far(src_ip, src_port, far_flag::known | far_flag::latched), std::memory_order_relaxed);
        st.far_mac[side].store(mac_word(eth->src_addr.addr_bytes), std::memory_order_relaxed);
        ++t.latched;
        return true;
    }
    return from_far;
}

/// The counters of the flow arriving here (this worker is its only writer), and RFC 3550 loss
/// and jitter for RTP.
[[gnu::always_inline]] inline void account(const relay_env& env, const media_stream& st, flow_stats& fs,
                                           const uint8_t* payload, uint32_t len, bool rtcp, uint64_t now_tsc,
                                           uint64_t now_ms) noexcept
{
    fs.packets.bump();
    fs.bytes.add(uint64_t{len});
    fs.last_ms.set(now_ms);
    if (rtcp || (payload[0] >> 6) != 2) return;
    const uint16_t seq = static_cast<uint16_t>(payload[2] << 8 | payload[3]);
    const uint32_t ts = uint32_t{payload[4]} << 24 | uint32_t{payload[5]} << 16 | uint32_t{payload[6]} << 8 | payload[7];
    if (!fs.started) fs.payload_type.set(payload[1] & 0x7f);  // the call record's codec
    const auto clock_hz = static_cast<double>(st.clock_hz.load(std::memory_order_relaxed));
    const double units = static_cast<double>(now_tsc) * (clock_hz / static_cast<double>(env.tsc_hz));
    rtp_account(fs, seq, ts, static_cast<uint32_t>(static_cast<uint64_t>(units)));
}

/// The destination MAC toward far end `dst` of the other leg (side `os`): the one latched from
/// its packets, else the neighbour table's for its next hop. An unknown MAC leaves `dmac` zero
/// and sets `to`'s hop and interface for the caller to hold the packet until ARP answers.
/// False (counted) when the far end is off-link and its interface has no gateway.
[[gnu::always_inline]] inline bool next_mac(const relay_env& env, const media_stream& st, const media_egress& e,
                                            unsigned os, uint64_t dst, uint32_t our, uint8_t dmac[6], egress_to* to,
                                            tally& t) noexcept
{
    const uint64_t mw = st.far_mac[os].load(std::memory_order_relaxed);
    if ((mw & mac_known) != 0) {
        mac_bytes(mw, dmac);
        return true;
    }
    const uint32_t hop = ((far_ip(dst) ^ our) & e.netmask) == 0 ? far_ip(dst) : e.gateway;
    if (hop == 0) {
        t.drop(relay_drop::no_route);
        return false;
    }
    // Unknown: rewritten all the same, for the caller to hold until ARP answers.
    if (env.lookup == nullptr || !env.lookup(env.lookup_ctx, hop, dmac)) {
        to->hop = hop;
        to->iface = e.iface;
    }
    return true;
}

/// Rewrites IPv4 and UDP in place (source our address and port, destination the far end, TOS
/// the egress's): the NIC's checksums where the port offers them, else RFC 1624 updates, which
/// never read the payload.
[[gnu::always_inline]] inline void rewrite_l3l4(rte_mbuf* m, rte_ipv4_hdr* ip, rte_udp_hdr* udp, const media_egress& e,
                                                uint32_t new_src, uint32_t new_dst, uint16_t new_sport,
                                                uint16_t new_dport) noexcept
{
    // The TOS byte: the egress interface's dscp_rtp, whatever the sender marked.
    uint16_t old_w0, new_w0;  // the header's first 16-bit word: version/IHL and TOS
    std::memcpy(&old_w0, ip, sizeof(old_w0));
    const uint8_t w0[2] = {ip->version_ihl, e.tos};
    std::memcpy(&new_w0, w0, sizeof(new_w0));
    ip->type_of_service = e.tos;
    if (e.tx_udp_cksum) {
        ip->src_addr = new_src;
        ip->dst_addr = new_dst;
        udp->src_port = new_sport;
        udp->dst_port = new_dport;
        m->l3_len = static_cast<uint16_t>((ip->version_ihl & 0x0f) * 4);
        m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_UDP_CKSUM;
        if (e.tx_ip_cksum) {
            m->ol_flags |= RTE_MBUF_F_TX_IP_CKSUM;
            ip->hdr_checksum = 0;
        }
        udp->dgram_cksum = rte_ipv4_phdr_cksum(ip, m->ol_flags);
        if (!e.tx_ip_cksum) {
            ip->hdr_checksum = 0;
            ip->hdr_checksum = rte_ipv4_cksum(ip);
        }
        return;
    }
    uint32_t ip_acc = static_cast<uint16_t>(~ip->hdr_checksum);
    ip_acc = sum_replace32(ip_acc, ip->src_addr, new_src);
    ip_acc = sum_replace32(ip_acc, ip->dst_addr, new_dst);
    ip_acc = sum_replace16(ip_acc, old_w0, new_w0);  // TOS is not in the UDP pseudo-header
    ip->hdr_checksum = static_cast<uint16_t>(~fold(ip_acc));
    if (udp->dgram_cksum != 0) {
        uint32_t acc = static_cast<uint16_t>(~udp->dgram_cksum);
        acc = sum_replace32(acc, ip->src_addr, new_src);
        acc = sum_replace32(acc, ip->dst_addr, new_dst);
        acc = sum_replace16(acc, udp->src_port, new_sport);
        acc = sum_replace16(acc, udp->dst_port, new_dport);
        uint16_t c = static_cast<uint16_t>(~fold(acc));
        udp->dgram_cksum = c == 0 ? 0xffff : c;  // 0 means "no checksum" in UDP over IPv4
    }
    ip->src_addr = new_src;
    ip->dst_addr = new_dst;
    udp->src_port = new_sport;
    udp->dst_port = new_dport;
}

/// Handles one datagram; returns true when it was rewritten for transmission as `*to` says.
[[gnu::always_inline]] inline bool relay_one(const relay_env& env, const media_egress_table& egress, rte_mbuf* m,
                                             unsigned addr_in, uint64_t now_tsc, uint64_t now_ms, tally& t,
                                             egress_to* to) noexcept
{
    flow_table& table = *env.table;
    auto* ip = rte_pktmbuf_mtod_offset(m, rte_ipv4_hdr*, m->l2_len);
    auto* udp = rte_pktmbuf_mtod_offset(m, rte_udp_hdr*, m->l2_len + m->l3_len);
    const uint16_t dport = rte_be_to_cpu_16(udp->dst_port);
    const flow_ref ref = table.lookup(addr_in, dport);
    if (!ref.found()) {
        t.drop(relay_drop::unknown_port);
        return false;
    }
    media_stream& st = table.stream(ref.stream);
    const uint8_t flags = st.flags.load(std::memory_order_acquire);
    if ((flags & stream_flag::active) == 0) {
        t.drop(relay_drop::unknown_port);
        return false;
    }
    const uint32_t len = static_cast<uint32_t>(rte_be_to_cpu_16(udp->dgram_len)) - sizeof(rte_udp_hdr);
    const auto* payload = reinterpret_cast<const uint8_t*>(udp + 1);
    const bool rtcp = ref.rtcp != 0 || (len >= 8 && muxed_rtcp(payload));
    if (len < (rtcp ? 8u : 12u)) {
        t.drop(relay_drop::too_short);
        return false;
    }
    const unsigned side = ref.side, os = other(side), k = ref.rtcp;
    flow_stats& fs = table.stats(addr_in, dport);
    if (!latch(env, st, flags, side, k, rte_be_to_cpu_32(ip->src_addr), rte_be_to_cpu_16(udp->src_port),
               rte_pktmbuf_mtod(m, const rte_ether_hdr*), t)) {
        t.drop(relay_drop::source_mismatch);
        fs.dropped.bump();
        return false;
    }
    account(env, st, fs, payload, len, rtcp, now_tsc, now_ms);

    // Where it goes: our port facing the other leg -> that leg's far end.
    const uint64_t dst = st.far[os][k].load(std::memory_order_relaxed);
    if ((dst & far_flag::known) == 0 || far_ip(dst) == 0) {
        t.drop(relay_drop::no_destination);
        return false;
    }
    const unsigned addr_out = st.addr[os].load(std::memory_order_relaxed);
    const media_egress& e = egress[addr_out];
    const uint32_t our = table.address(addr_out);
    uint8_t dmac[6] = {};
    if (!next_mac(env, st, e, os, dst, our, dmac, to, t)) return false;
    // L2: the egress interface may differ in its VLAN tag from the one the frame came on.
    if (!packet::write_l2(m, e.vlan, e.mac, dmac)) {
        t.drop(relay_drop::no_route);  // no headroom: cannot happen for received frames
        return false;
    }
    // L3/L4 in place; ip and udp pointers still hold (only the L2 part moved).
    rewrite_l3l4(m, ip, udp, e, rte_cpu_to_be_32(our), rte_cpu_to_be_32(far_ip(dst)),
                 rte_cpu_to_be_16(static_cast<uint16_t>(st.port[os].load(std::memory_order_relaxed) + k)),
                 rte_cpu_to_be_16(far_port(dst)));
    ++t.packets[side];
    t.bytes[side] += len;
    if (rtcp) ++t.rtcp;
    to->port = e.port_id;
    return true;
}

}  // namespace

std::string_view relay_drop_name(relay_drop r) noexcept { return drop_texts.name(r); }
std::string_view relay_drop_help(relay_drop r) noexcept { return drop_texts.help(r); }

void relay_burst(const relay_env& env, const media_egress_table& egress, rte_mbuf** pkts, const uint8_t* addr,
                 uint16_t n, uint64_t now_tsc, uint64_t now_ms, relay_out& out, relay_counters& c) noexcept
{
    // Two prefetch passes before any work: every packet's index entry and flow counters
    // (their addresses need no lookup), then every stream record. With 100,000 flows and
    // more each is a cache miss; issued together they overlap instead of stalling in turn
    // (measured by the rtp benchmark: 2.6 -> 4.2 Mpps at 100,000 flows, docs/benchmarks.md).
    flow_table& table = *env.table;
    std::array<uint16_t, burst_size> dports;
    for (uint16_t i = 0; i < n; ++i) {
        const rte_mbuf* m = pkts[i];
        const auto* udp = rte_pktmbuf_mtod_offset(m, const rte_udp_hdr*, m->l2_len + m->l3_len);
        dports[i] = rte_be_to_cpu_16(udp->dst_port);
        if (!table.in_range(dports[i]) || addr[i] >= table.address_count()) continue;
        rte_prefetch0(table.index_address(addr[i], dports[i]));
        rte_prefetch0(&table.stats(addr[i], dports[i]));
    }
    for (uint16_t i = 0; i < n; ++i) {
        const flow_ref r = table.lookup(addr[i], dports[i]);
        if (r.found()) rte_prefetch0(&table.stream(r.stream));
    }
    tally t;
    for (uint16_t i = 0; i < n; ++i) {
        rte_mbuf* m = pkts[i];
        egress_to to;
        if (relay_one(env, egress, m, addr[i], now_tsc, now_ms, t, &to)) {
            out.pkts[out.n] = m;
            out.port[out.n] = to.port;
            out.hop[out.n] = to.hop;
            out.iface[out.n] = to.iface;
            ++out.n;
        } else {
            rte_pktmbuf_free(m);
        }
    }
    for (std::size_t r = 0; r < relay_drop_count; ++r)
        if (t.drops[r] != 0) c.drops[r].add(t.drops[r]);
    for (unsigned s = 0; s < 2; ++s) {
        if (t.packets[s] != 0) c.packets[s].add(t.packets[s]);
        if (t.bytes[s] != 0) c.bytes[s].add(t.bytes[s]);
    }
    if (t.rtcp != 0) c.rtcp_packets.add(t.rtcp);
    if (t.latched != 0) c.latched.add(t.latched);
}

}  // namespace sbc::rtp
