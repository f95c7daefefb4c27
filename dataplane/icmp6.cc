// ICMPv6 stage: echo replies and Neighbor Discovery for our addresses, answered in place (the
// fast path is the only ND speaker on the wire, as it is for ARP), what solicitations and
// advertisements teach about neighbours reported to the control core (which owns the neighbour
// table), and destination-unreachable and Packet Too Big about a datagram we sent turned into
// events (the latter sizes what we send next: path_mtu_table).
// Worker only.
#include <cstring>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "dataplane/checksum.h"
#include "dataplane/events.h"
#include "dataplane/ipv6_fragment.h"
#include "dataplane/nd.h"
#include "dataplane/sip_path.h"
#include "dataplane/sip_stage.h"
#include "dataplane/stages.h"

namespace sbc::dataplane {

namespace {

constexpr uint32_t ipv6_header_len = sizeof(rte_ipv6_hdr);

/// The IPv6 header's fields this stage reads and writes, at their offsets.
uint8_t* src_of(uint8_t* ip) noexcept { return ip + 8; }
uint8_t* dst_of(uint8_t* ip) noexcept { return ip + 24; }

void store_checksum(uint8_t* ip, uint8_t* msg, uint32_t len) noexcept
{
    msg[2] = msg[3] = 0;
    const uint16_t sum = ipv6_upper_checksum(src_of(ip), dst_of(ip), icmp6::proto, msg, len);
    std::memcpy(msg + 2, &sum, 2);
}

/// Rewrites the datagram at `ip` as one from `src` to `dst` carrying only the `len`-byte ICMPv6
/// message at `msg` (in the packet or not), moved behind the IPv6 header (dropping any extension
/// headers), and sets the frame's length to it. One-segment mbufs only. Returns where the message
/// now starts.
uint8_t* reframe(rte_mbuf* m, uint8_t* ip, const uint8_t* src, const uint8_t* dst, const uint8_t* msg, uint32_t len,
                 uint8_t hop_limit) noexcept
{
    uint8_t* out = ip + ipv6_header_len;
    if (out != msg) std::memmove(out, msg, len);
    const uint32_t vtc = rte_cpu_to_be_32(0x60000000u);
    std::memcpy(ip, &vtc, 4);
    ip[4] = static_cast<uint8_t>(len >> 8);
    ip[5] = static_cast<uint8_t>(len);
    ip[6] = icmp6::proto;
    ip[7] = hop_limit;
    std::memcpy(src_of(ip), src, 16);  // copies: never the packet's own fields
    std::memcpy(dst_of(ip), dst, 16);
    const uint32_t frame = m->l2_len + ipv6_header_len + len;
    m->data_len = static_cast<uint16_t>(frame);
    m->pkt_len = frame;
    m->l3_len = ipv6_header_len;
    m->ol_flags = 0;
    return out;
}

/// Sends the frame back where it came from, from our MAC to `to`.
void send_back(worker& w, rte_mbuf* m, const interface_info& ifc, const uint8_t* to) noexcept
{
    auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
    std::memcpy(eth->dst_addr.addr_bytes, to, RTE_ETHER_ADDR_LEN);
    std::memcpy(eth->src_addr.addr_bytes, ifc.mac.data(), RTE_ETHER_ADDR_LEN);
    tx_enqueue(w, m->port, m);
}

/// The Ethernet link-layer address option of type `want` among ND options `opts` (`len` bytes),
/// through `mac`; false when the options are malformed (a zero length, one past the end: RFC
/// 4861 7.1.1 wants the message dropped).
bool find_lladdr(const uint8_t* opts, uint32_t len, uint8_t want, const uint8_t*& mac) noexcept
{
    mac = nullptr;
    while (len >= 2) {
        const uint32_t olen = uint32_t{opts[1]} * 8;
        if (olen == 0 || olen > len) return false;
        if (opts[0] == want && olen >= 8) mac = opts + 2;
        opts += olen;
        len -= olen;
    }
    return len == 0;
}

void post_neighbour(worker& w, uint16_t iface, const uint8_t* ip, const uint8_t* mac) noexcept
{
    event e{};
    e.kind = event_kind::neighbour_seen;
    e.worker = static_cast<uint8_t>(w.id);
    e.iface = iface;
    e.ip = ip_address::v6(std::span<const uint8_t, 16>(ip, 16));
    std::memcpy(e.mac.data(), mac, 6);
    post_event(w, e);
}

enum class verdict : uint8_t { sent, consumed, invalid, not_for_us };

/// Whether the checksum of the `len`-byte ICMPv6 message at offset `off` of the chain `m` is
/// right (a reassembled datagram: rte_raw_cksum_mbuf over its segments).
bool chain_checksum_ok(const rte_mbuf* m, uint8_t* ip, uint32_t off, uint32_t len) noexcept
{
    uint16_t body = 0;
    if (rte_raw_cksum_mbuf(m, off, len, &body) != 0) return false;
    const uint32_t sum = uint32_t{body} + ipv6_pseudo_sum(src_of(ip), dst_of(ip), icmp6::proto, len);
    return static_cast<uint16_t>((sum & 0xffff) + (sum >> 16)) == 0xffff;
}

/// The echo reply to a reassembled echo request (an mbuf chain of `len` ICMPv6 bytes at `off`),
/// from `from`: copied out of the chain into the worker's scratch, answered there, and sent as
/// fragments of at most `mtu` bytes (ipv6_fragment.h). Frees `m` when it is sent; false (nothing sent, `m` kept) when
/// it could not be read or framed.
bool echo_fragments(worker& w, rte_mbuf* m, const interface_info& ifc, uint8_t* ip, uint32_t off, uint32_t len,
                    const ip_address& from, uint32_t mtu) noexcept
{
    auto& scratch = sip_state(w.id).scratch;
    if (len > scratch.size()) return false;
    auto* msg = reinterpret_cast<uint8_t*>(scratch.data());
    const void* p = rte_pktmbuf_read(m, off, len, msg);
    if (p == nullptr) return false;
    if (p != msg) std::memcpy(msg, p, len);  // it lay in one segment
    const ip_address to = ip_address::v6(std::span<const uint8_t, 16>(src_of(ip), 16));
    const auto src = from.v6_bytes(), dst = to.v6_bytes();
    msg[0] = icmp6::echo_reply;
    msg[2] = msg[3] = 0;
    const uint16_t sum = ipv6_upper_checksum(src.data(), dst.data(), icmp6::proto, msg, len);
    std::memcpy(msg + 2, &sum, 2);
    const auto* eth = rte_pktmbuf_mtod(m, const rte_ether_hdr*);
    std::array<rte_mbuf*, max_ipv6_fragments> frags;
    uint32_t n = 0;
    if (!frame_ipv6_fragments(w.pool, ifc, eth->src_addr.addr_bytes, from, to, icmp6::proto, {msg, len},
                              w.ipv6_fragment_id++, 64, 0, mtu, frags, n))
        return false;
    const uint16_t port = m->port;
    rte_pktmbuf_free(m);
    for (uint32_t i = 0; i < n; ++i) tx_enqueue(w, port, frags[i]);
    return true;
}

/// A Neighbor Solicitation (RFC 4861 7.2.3, 7.2.4): answered with a solicited advertisement
/// when it asks for one of our addresses; its sender learned when it says its MAC.
verdict solicitation(worker& w, rte_mbuf* m, uint16_t iface, const interface_info& ifc, uint8_t* ip, uint8_t* msg,
                     uint32_t len) noexcept
{
    const uint8_t* target = msg + 8;
    const uint8_t* sllao = nullptr;
    if (!find_lladdr(msg + icmp6::nd_message_len, len - icmp6::nd_message_len, icmp6::opt_source_lladdr, sllao))
        return verdict::invalid;
    const bool dad = is_unspecified6(src_of(ip));  // duplicate address detection (RFC 4862)
    // From the unspecified address: only to a solicited-node group and without a source MAC.
    if (dad && (sllao != nullptr || !is_multicast6(dst_of(ip)))) return verdict::invalid;
    if (!ifc.is_ours6(target)) return verdict::not_for_us;
    const ip_address sender = ip_address::v6(std::span<const uint8_t, 16>(src_of(ip), 16));
    if (!dad && sllao != nullptr && ifc.on_link(sender)) post_neighbour(w, iface, src_of(ip), sllao);

    // Read what the answer needs before it is written over the request.
    uint8_t our[16], to[16];
    std::array<uint8_t, 6> to_mac;
    std::memcpy(our, target, 16);
    std::memcpy(to, dad ? all_nodes.data() : src_of(ip), 16);
    if (dad)
        to_mac = multicast_mac6(all_nodes.data());
    else if (sllao != nullptr)
        std::memcpy(to_mac.data(), sllao, 6);
    else
        std::memcpy(to_mac.data(), rte_pktmbuf_mtod(m, rte_ether_hdr*)->src_addr.addr_bytes, 6);

    constexpr uint32_t na_len = icmp6::nd_message_len + icmp6::lladdr_option_len;
    uint8_t na[na_len] = {icmp6::neighbour_advertisement, 0, 0, 0,
                          static_cast<uint8_t>((dad ? 0 : icmp6::na_solicited) | icmp6::na_override)};
    std::memcpy(na + 8, our, 16);
    na[24] = icmp6::opt_target_lladdr;
    na[25] = 1;
    std::memcpy(na + 26, ifc.mac.data(), 6);
    // A solicitation without options is shorter than the answer: it grows into the tailroom.
    if (m->buf_len < m->data_off + m->l2_len + ipv6_header_len + na_len) return verdict::invalid;
    uint8_t* out = reframe(m, ip, our, to, na, na_len, icmp6::nd_hop_limit);
    store_checksum(ip, out, na_len);
    send_back(w, m, ifc, to_mac.data());
    return verdict::sent;
}

/// A Neighbor Advertisement (RFC 4861 7.2.5): its target learned when it carries the MAC.
verdict advertisement(worker& w, uint16_t iface, const interface_info& ifc, uint8_t* ip, uint8_t* msg,
                      uint32_t len) noexcept
{
    const uint8_t* target = msg + 8;
    const uint8_t* tllao = nullptr;
    if (!find_lladdr(msg + icmp6::nd_message_len, len - icmp6::nd_message_len, icmp6::opt_target_lladdr, tllao))
        return verdict::invalid;
    if (is_multicast6(dst_of(ip)) && (msg[4] & icmp6::na_solicited) != 0) return verdict::invalid;
    const ip_address t = ip_address::v6(std::span<const uint8_t, 16>(target, 16));
    if (tllao != nullptr && !ifc.is_ours6(target) && ifc.on_link(t)) post_neighbour(w, iface, target, tllao);
    return verdict::consumed;
}

void report_unreachable(worker& w, uint16_t iface, uint8_t* ip, const uint8_t* msg, uint32_t len) noexcept
{
    // ICMPv6 header (8), the original IPv6 header, and its UDP header when it is one.
    if (len < 8 + ipv6_header_len) return;
    const uint8_t* orig = msg + 8;
    event e{};
    e.kind = event_kind::icmp_unreachable;
    e.worker = static_cast<uint8_t>(w.id);
    e.iface = iface;
    e.ip = ip_address::v6(std::span<const uint8_t, 16>(src_of(ip), 16));
    e.icmp_type = msg[0];
    e.icmp_code = msg[1];
    e.orig_dst = ip_address::v6(std::span<const uint8_t, 16>(orig + 24, 16));
    e.orig_proto = orig[6];
    if (orig[6] == IPPROTO_UDP && len >= 8 + ipv6_header_len + sizeof(rte_udp_hdr)) {
        const auto* udp = reinterpret_cast<const rte_udp_hdr*>(orig + ipv6_header_len);
        e.orig_src_port = rte_be_to_cpu_16(udp->src_port);
        e.orig_dst_port = rte_be_to_cpu_16(udp->dst_port);
    }
    post_event(w, e);
}

/// A Packet Too Big about a datagram we sent (its quote starts with our source address): the
/// control core records the path MTU toward its destination (RFC 8201).
void report_too_big(worker& w, uint16_t iface, const interface_info& ifc, uint8_t* ip, const uint8_t* msg,
                    uint32_t len) noexcept
{
    if (len < 8 + ipv6_header_len || !ifc.is_ours6(msg + 8 + 8)) return;
    const uint32_t mtu = uint32_t{msg[4]} << 24 | uint32_t{msg[5]} << 16 | uint32_t{msg[6]} << 8 | msg[7];
    event e{};
    e.kind = event_kind::packet_too_big;
    e.worker = static_cast<uint8_t>(w.id);
    e.iface = iface;
    e.ip = ip_address::v6(std::span<const uint8_t, 16>(src_of(ip), 16));
    e.orig_dst = ip_address::v6(std::span<const uint8_t, 16>(msg + 8 + 24, 16));
    e.code = static_cast<uint16_t>(mtu > 65535 ? 65535 : mtu);
    post_event(w, e);
}

/// Takes one token of the worker's ICMPv6 error bucket (RFC 4443 2.4 f); false when it is dry.
bool error_token(worker& w, const snapshot& snap) noexcept
{
    if (snap.icmp6_error_rate == 0) return false;
    const uint64_t now = rte_rdtsc();
    const uint64_t cap = uint64_t{snap.icmp6_error_burst} * 1000;
    const uint64_t ms = (now - w.icmp6_error_tsc) / (w.tsc_per_ms != 0 ? w.tsc_per_ms : 1);
    if (ms != 0) {
        // rate per second is rate thousandths per millisecond
        const uint64_t add = ms * snap.icmp6_error_rate;
        w.icmp6_error_millitokens = add >= cap || w.icmp6_error_millitokens + add >= cap ? cap : w.icmp6_error_millitokens + add;
        w.icmp6_error_tsc = now;
    }
    if (w.icmp6_error_millitokens < 1000) return false;
    w.icmp6_error_millitokens -= 1000;
    return true;
}

}  // namespace

bool send_icmp6_error(worker& w, const snapshot& snap, rte_mbuf* m, const interface_info& ifc, uint8_t type,
                      uint8_t code, uint32_t pointer) noexcept
{
    auto* ip = rte_pktmbuf_mtod_offset(m, uint8_t*, m->l2_len);
    // Never about a datagram to a group or from no one (RFC 4443 2.4 e), nor one in pieces.
    if (m->nb_segs != 1 || is_multicast6(dst_of(ip)) || is_unspecified6(src_of(ip)) || !ifc.is_ours6(dst_of(ip)))
        return false;
    if (!error_token(w, snap)) {
        w.counters.icmp6_errors_suppressed.add(1);
        return false;
    }
    uint8_t from[16], to[16], to_mac[6];
    std::memcpy(from, dst_of(ip), 16);
    std::memcpy(to, src_of(ip), 16);
    std::memcpy(to_mac, rte_pktmbuf_mtod(m, rte_ether_hdr*)->src_addr.addr_bytes, 6);
    // As much of the datagram as fits in the minimum MTU with our headers in front (2.4 c).
    const uint32_t original = rte_pktmbuf_data_len(m) - m->l2_len;
    const uint32_t quoted = original < 1280 - ipv6_header_len - 8 ? original : 1280 - ipv6_header_len - 8;
    if (rte_pktmbuf_prepend(m, ipv6_header_len + 8) == nullptr) return false;
    ip = rte_pktmbuf_mtod_offset(m, uint8_t*, m->l2_len);  // the original now follows our headers
    uint8_t* msg = ip + ipv6_header_len;
    msg[0] = type;
    msg[1] = code;
    const uint32_t ptr = rte_cpu_to_be_32(pointer);
    std::memcpy(msg + 4, &ptr, 4);
    const uint32_t len = 8 + quoted;
    reframe(m, ip, from, to, msg, len, 64);
    store_checksum(ip, msg, len);
    if (!write_l2(m, ifc, to_mac, RTE_ETHER_TYPE_IPV6)) return false;
    w.counters.icmp6_errors_sent.add(1);
    tx_enqueue(w, m->port, m);
    return true;
}

void icmp6_stage(worker& w, const snapshot& snap, sub_burst& b) noexcept
{
    w.counters.entered(stage::icmp6, b.n);
    uint32_t truncated = 0, bad_sum = 0, unhandled = 0, invalid = 0, not_for_us = 0, no_buffer = 0;
    for (uint16_t i = 0; i < b.n; ++i) {
        rte_mbuf* m = b.pkts[i];
        const interface_info& ifc = snap.interfaces[b.iface[i]];
        auto* ip = rte_pktmbuf_mtod_offset(m, uint8_t*, m->l2_len);
        const uint32_t end = ipv6_header_len + (uint32_t{ip[4]} << 8 | ip[5]);
        const uint32_t len = end - m->l3_len;  // the upper-layer length, not payload_len
        uint8_t* msg = ip + m->l3_len;
        // One segment holds the whole message, or (reassembled) the chain does and the first
        // segment at least its first 8 bytes.
        const bool chained = m->nb_segs != 1;
        const uint32_t need = chained ? m->l3_len + 8 : end;
        if (len < 4 || rte_pktmbuf_data_len(m) < m->l2_len + need || rte_pktmbuf_pkt_len(m) < m->l2_len + end) {
            rte_pktmbuf_free(m);
            ++truncated;
            continue;
        }
        if (chained ? !chain_checksum_ok(m, ip, m->l2_len + m->l3_len, len)
                    : ipv6_upper_checksum(src_of(ip), dst_of(ip), icmp6::proto, msg, len) != 0) {
            rte_pktmbuf_free(m);
            ++bad_sum;
            continue;
        }
        const uint8_t type = msg[0];
        if (type == icmp6::echo_request && msg[1] == 0 && len >= 8) {
            // From the address it was sent to, or for a group from ours of the sender's scope.
            const ip_address from = is_multicast6(dst_of(ip)) ? ifc.source6_for(src_of(ip))
                                                               : ip_address::v6(std::span<const uint8_t, 16>(dst_of(ip), 16));
            // The path MTU toward the sender, when a router said it is less than the link's.
            const std::optional<uint32_t> path = w.shared->path_mtu.lookup(
                ip_address::v6(std::span<const uint8_t, 16>(src_of(ip), 16)));
            const uint32_t mtu = path && *path < ipv6_mtu ? *path : ipv6_mtu;
            if (chained || ipv6_header_len + len > mtu) {
                // Too big for one frame back: fragments at the source (routers never fragment IPv6).
                if (!echo_fragments(w, m, ifc, ip, m->l2_len + m->l3_len, len, from, mtu)) {
                    rte_pktmbuf_free(m);
                    ++no_buffer;
                }
                continue;
            }
            const auto src = from.v6_bytes();
            uint8_t to[16];
            std::memcpy(to, src_of(ip), 16);
            uint8_t to_mac[6];
            std::memcpy(to_mac, rte_pktmbuf_mtod(m, rte_ether_hdr*)->src_addr.addr_bytes, 6);
            uint8_t* out = reframe(m, ip, src.data(), to, msg, len, 64);
            out[0] = icmp6::echo_reply;
            store_checksum(ip, out, len);
            send_back(w, m, ifc, to_mac);
            continue;
        }
        verdict v = verdict::consumed;
        if (chained) {
            // Neighbor Discovery is never fragmented (RFC 6980), errors fit the minimum MTU.
            ++unhandled;
            rte_pktmbuf_free(m);
            continue;
        }
        if (type == icmp6::neighbour_solicitation || type == icmp6::neighbour_advertisement) {
            // RFC 4861 7.1: a hop limit of 255 proves it was not forwarded; a code of 0; room
            // for the target, which is never a group.
            if (ip[7] != icmp6::nd_hop_limit || msg[1] != 0 || len < icmp6::nd_message_len || is_multicast6(msg + 8))
                v = verdict::invalid;
            else if (type == icmp6::neighbour_solicitation)
                v = solicitation(w, m, b.iface[i], ifc, ip, msg, len);
            else
                v = advertisement(w, b.iface[i], ifc, ip, msg, len);
        } else if (type == icmp6::dest_unreachable) {
            report_unreachable(w, b.iface[i], ip, msg, len);
            // About a SIP datagram of ours: its attempt fails over at once (sip_stage.h).
            if (sip_unreachable(w, snap, m)) continue;
        } else if (type == icmp6::packet_too_big && msg[1] == 0) {
            report_too_big(w, b.iface[i], ifc, ip, msg, len);
        } else {
            ++unhandled;
            rte_pktmbuf_free(m);
            continue;
        }
        if (v == verdict::sent) continue;
        rte_pktmbuf_free(m);
        if (v == verdict::invalid) ++invalid;
        if (v == verdict::not_for_us) ++not_for_us;
    }
    if (truncated) w.counters.drop(drop_reason::icmp6_truncated, truncated);
    if (bad_sum) w.counters.drop(drop_reason::icmp6_bad_checksum, bad_sum);
    if (unhandled) w.counters.drop(drop_reason::icmp6_unhandled, unhandled);
    if (invalid) w.counters.drop(drop_reason::nd_invalid, invalid);
    if (not_for_us) w.counters.drop(drop_reason::nd_not_for_us, not_for_us);
    if (no_buffer) w.counters.drop(drop_reason::icmp6_no_buffer, no_buffer);
    b.n = 0;
}

}  // namespace sbc::dataplane
