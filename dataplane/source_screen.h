// Flood screening of UDP SIP before parsing (dataplane/source_guard.h has the data): each
// datagram's source is classified (trusted, untrusted, unknown), checked against the deny list
// and charged to its token bucket, so that a flood costs a hash lookup, not a parse; what is
// dropped is counted by reason (flood_*) and never reaches the SIP stage, nor gets an answer.
// Also how a worker reports a source for denial, and the malformed tally that leads to one.
// Worker only: no heap, locks, system calls or logging.
#pragma once

#include <cstdint>

#include <rte_ip.h>
#include <rte_udp.h>

#include "common/address.h"
#include "dataplane/source_guard.h"
#include "dataplane/worker.h"
#include "rtp/flow_table.h"

namespace sbc::dataplane {

/// Worker only: screens `b` (UDP SIP datagrams to trunk `trunks[i]`) against the published
/// flood policy; keeps in `b`, in order, what may be parsed, with its trunk in `kept[i]`.
/// Without a policy (or a guard, or proxy tables) everything is kept.
void screen_sources(worker& w, const snapshot& snap, sub_burst& b, const uint16_t* trunks, uint16_t* kept) noexcept;

/// The first stage's part of flood screening (classify, once per burst). For an IPv4 frame
/// that carries a plain UDP header (IHL 5, not a fragment) to a SIP trunk, it makes the
/// decisions that take no token: a denied source's datagram; while the unknown sources' shared
/// bucket is dry, one from a source that trunk does not allow; and, while that trunk's untrusted
/// sources together are over their rate (looked at only within a second of such a refusal),
/// one from a source the trunk allows but does not trust. Dropped there, such a
/// datagram costs no IPv4 or UDP stage, and is counted under its flood reason even if its IPv4
/// header had another fault. Everything else goes on to screen_sources, which decides as
/// before; tokens are taken only there, so nothing is charged twice.
class early_screen {
public:
    early_screen(worker& w, const snapshot& snap) noexcept;
    [[nodiscard]] bool active() const noexcept { return policy_ != nullptr; }
    enum class verdict : uint8_t { keep, denied, unknown_source, untrusted_trunk };
    /// What to do with a frame whose IPv4 header is at `l2`: keep it, or drop it as
    /// flood_denied, flood_unknown_source or flood_rate_untrusted_trunk. Only when active().
    /// Inline: during a flood it runs for every frame of the burst.
    verdict check(const rte_mbuf* m, uint16_t l2) noexcept;

private:
    /// The trunk on (dst_be, dport_be), as on the wire, or -1; the burst's last answer is kept
    /// (a flood is to one trunk address and port).
    int trunk_of(uint32_t dst_be, uint16_t dport_be) noexcept
    {
        if (!last_trunk_.set || last_trunk_.dst != dst_be || last_trunk_.port != dport_be)
            last_trunk_ = {dst_be, dport_be, true,
                           tables_->find_trunk(ip_address::v4(rte_be_to_cpu_32(dst_be)), rte_be_to_cpu_16(dport_be))};
        return last_trunk_.trunk;
    }
    bool unknown_dry() noexcept  ///< the shared bucket would refuse now (looked at once a burst)
    {
        if (unknown_dry_ < 0) unknown_dry_ = look_unknown_dry() ? 1 : 0;
        return unknown_dry_ != 0;
    }
    bool look_unknown_dry() noexcept;
    /// A trunk's untrusted bucket refused within the last trunk_flood_ms (looked at once a burst).
    bool trunk_flood() noexcept
    {
        if (trunk_flood_ < 0) trunk_flood_ = look_trunk_flood() ? 1 : 0;
        return trunk_flood_ != 0;
    }
    bool look_trunk_flood() noexcept;
    /// Whether trunk `trunk`'s untrusted sources together are over their rate now (trunk_flood()).
    bool trunk_over(uint16_t trunk) noexcept;
    uint32_t now() noexcept;  ///< the worker's ms clock, read once a burst
    static constexpr uint32_t trunk_flood_ms = 1000;

    worker& w_;
    const flood_policy* policy_ = nullptr;
    const sip::proxy_tables* tables_ = nullptr;
    const rtp::flow_table* flows_ = nullptr;
    int8_t unknown_dry_ = -1;  ///< the shared bucket, looked at once a burst (-1: not yet)
    int8_t trunk_flood_ = -1;  ///< likewise
    bool now_known_ = false;
    uint32_t now_ = 0;
    /// The burst's last denied source, with the address and port it sent to, as on the wire.
    struct {
        uint32_t src = 0, dst = 0;
        uint16_t port = 0;
        bool set = false;
    } last_denied_;
    /// The burst's last trunk lookup, on the address and port as on the wire.
    struct {
        uint32_t dst = 0;
        uint16_t port = 0;
        bool set = false;
        int trunk = -1;
    } last_trunk_;
};

inline early_screen::verdict early_screen::check(const rte_mbuf* m, uint16_t l2) noexcept
{
    constexpr verdict keep = verdict::keep;
    if (rte_pktmbuf_data_len(m) < l2 + sizeof(rte_ipv4_hdr) + sizeof(rte_udp_hdr)) return keep;
    const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, l2);
    // Version 4 and no options: the UDP header follows at a fixed place.
    if (ip->version_ihl != 0x45 || ip->next_proto_id != IPPROTO_UDP || rte_ipv4_frag_pkt_is_fragmented(ip)) return keep;
    const auto* udp = reinterpret_cast<const rte_udp_hdr*>(ip + 1);
    if (flows_ != nullptr && flows_->in_range(rte_be_to_cpu_16(udp->dst_port)))
        return keep;  // media: the UDP stage's order
    // A denied source floods: the burst's last denied source, address and port are dropped
    // again without a lookup (nothing the decision depends on changes within a burst).
    if (last_denied_.set && last_denied_.src == ip->src_addr && last_denied_.dst == ip->dst_addr &&
        last_denied_.port == udp->dst_port)
        return verdict::denied;
    // Most datagrams, a carrier's own among them, are from a source not denied while the
    // unknown sources' bucket still has tokens: nothing to drop here, so no trunk lookup (the
    // UDP stage makes it once).
    const ip_address src = ip_address::v4(rte_be_to_cpu_32(ip->src_addr));
    const uint64_t hash = src.hash();
    const bool denied = policy_->is_denied(src, hash);
    if (!denied && !unknown_dry() && !trunk_flood()) return keep;
    const int found = trunk_of(ip->dst_addr, udp->dst_port);
    if (found < 0) return keep;
    const auto trunk = static_cast<uint16_t>(found);
    const trust tr = classify(*tables_, trunk, src, hash);
    if (tr == trust::trusted) return keep;
    if (denied) {
        last_denied_ = {ip->src_addr, ip->dst_addr, udp->dst_port, true};
        return verdict::denied;
    }
    if (tr == trust::unknown) return unknown_dry() ? verdict::unknown_source : keep;
    return trunk_flood() && trunk_over(trunk) ? verdict::untrusted_trunk : keep;
}

/// Worker only: asks the control core to deny `src` for `why` (an event; a full ring is counted
/// as event_ring_full). The control core ignores (and counts) reports about trusted sources.
/// H3's scanner signatures call it with deny_reason::scanner for a scanner from an untrusted source.
void report_source(worker& w, const ip_address& src, deny_reason why) noexcept;

/// Worker only: a message from `src` on trunk `trunk` was malformed (it did not parse, or the
/// proxy rejected or dropped it as malformed); the deny_after_malformed-th within the window
/// reports the source (trusted sources are never reported).
void note_malformed(worker& w, const snapshot& snap, const ip_address& src, uint16_t trunk) noexcept;

}  // namespace sbc::dataplane
