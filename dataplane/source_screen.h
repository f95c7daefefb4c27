// Flood screening of UDP SIP before parsing (dataplane/source_guard.h has the data): each
// datagram's source is classified (trusted, untrusted, unknown), checked against the deny list
// and charged to its token bucket, so that a flood costs a hash lookup, not a parse; what is
// dropped is counted by reason (flood_*) and never reaches the SIP stage, nor gets an answer.
// Also how a worker reports a source for denial, and the malformed tally that leads to one.
// Worker only: no heap, locks, system calls or logging.
#pragma once

#include <cstdint>

#include "common/address.h"
#include "dataplane/source_guard.h"
#include "dataplane/worker.h"

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
    verdict check(const rte_mbuf* m, uint16_t l2) noexcept;

private:
    /// check()'s decision once a frame needs one: its trunk, its source's trust, the buckets.
    verdict decide(const ip_address& src, const ip_address& dst, uint16_t dport, bool denied) noexcept;
    bool unknown_dry() noexcept;  ///< the shared bucket would refuse now (looked at once a burst)
    /// A trunk's untrusted bucket refused within the last trunk_flood_ms (looked at once a burst).
    bool trunk_flood() noexcept;
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
};

/// Worker only: asks the control core to deny `src` for `why` (an event; a full ring is counted
/// as event_ring_full). The control core ignores (and counts) reports about trusted sources.
/// H3's scanner signatures call it with deny_reason::scanner for a scanner from an untrusted source.
void report_source(worker& w, const ip_address& src, deny_reason why) noexcept;

/// Worker only: a message from `src` on trunk `trunk` was malformed (it did not parse, or the
/// proxy rejected or dropped it as malformed); the deny_after_malformed-th within the window
/// reports the source (trusted sources are never reported).
void note_malformed(worker& w, const snapshot& snap, const ip_address& src, uint16_t trunk) noexcept;

}  // namespace sbc::dataplane
