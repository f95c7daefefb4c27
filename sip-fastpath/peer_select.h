// Choosing the peer for the next attempt of a call: within one region, among peers that are
// available and not yet tried, by the group's selector (RFC 2782 by default). Worker only
// (the selection state is per worker); pure over the tables and health words.
#pragma once

#include <cstdint>
#include <atomic>
#include <span>
#include <string_view>

#include "sip-fastpath/proxy_tables.h"

namespace sbc::sip {

/// Per-worker selection state: a random generator and round-robin positions.
struct select_state {
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    std::array<uint32_t, 64> rr{};  ///< round-robin position per region (modulo 64)
    /// Peers passed over by the last select_peer because they were at their max_calls (a
    /// region's untried, available peers; at most full.size() recorded, n_full counts all).
    std::array<uint32_t, 8> full{};
    uint32_t n_full = 0;
    /// Whether the last select_peer passed over a peer under an RFC 7339 oc reduction
    /// (peer_health::oc_reduction) for this call: the call was diverted.
    bool oc_diverted = false;

    /// xorshift64*: fast, and good enough to spread calls by weight.
    uint64_t next() noexcept
    {
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        return rng * 2685821657736338717ull;
    }
};

/// What one selection asks for: region `region`'s peers, by the group's selector `sel`.
/// `tried` holds peer ids already tried for the call (stable across snapshots); `call_hash` is
/// used by hash_call_id; `active` (may be empty) holds the node-wide calls per peer id
/// (admission::peer_calls), for least_calls and max_calls. With `ignore_down`, peers marked
/// down by health checks count as available (the last resort when no peer is up).
/// `canary_mask` holds the canary slots whose pattern the call matched (canary_matcher).
struct selection {
    uint16_t region = 0;
    selector sel = selector::srv;
    std::span<const uint32_t> tried = {};
    uint64_t call_hash = 0;
    std::span<const std::atomic<uint32_t>> active = {};
    bool ignore_down = false;
    uint64_t canary_mask = 0;
};

/// Picks a peer for a call: the available, untried peers of the region's lowest priority
/// value, chosen by the selector.
/// A suspect peer (peer_state::suspect) is passed over while another available, untried peer
/// of the region is not suspect, whatever its priority; when all are suspect they are chosen
/// as usual (with or without `ignore_down`), so a region is never left on a suspicion.
/// A peer whose health word has the canary bit takes only calls whose canary_mask has its
/// slot, and such a matching canary peer is chosen before any other of the region (the
/// operator wants these calls to test it). A peer with a max_calls that has that many calls is
/// passed over like an unavailable one (with `ignore_down` too), and recorded in st.full. A
/// peer under an RFC 7339 oc reduction of N% (peer_health::oc_reduction) is passed over for N%
/// of the calls (random, from `st`) while another candidate is not passed over; when all are,
/// the call goes as if none had a reduction (st.oc_diverted tells whether this call was
/// diverted). Returns a peer index or no_peer.
uint32_t select_peer(const proxy_tables& t, const peer_health& health, const selection& q, select_state& st) noexcept;

/// 64-bit FNV-1a, for Call-ID and branch keys.
constexpr uint64_t hash_bytes(std::string_view s) noexcept
{
    uint64_t h = 1469598103934665603ull;
    for (char c : s) {
        h ^= static_cast<uint8_t>(c);
        h *= 1099511628211ull;
    }
    return h;
}

}  // namespace sbc::sip
