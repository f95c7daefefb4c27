// Call admission control (CAC): the node-wide counts every worker's proxy admits new calls
// against (concurrent calls per trunk, per peer and for the node) and the per-trunk new-calls
// rate limiter. One object for the whole node (dataplane shared_state), handed to each
// worker's proxy with proxy::set_admission; the limits are not here but in the proxy tables
// (sip::trunk, sip::peer, proxy_tables::admission), so a reload changes them while the counts
// keep going. Any worker acquires and releases; the control core only reads.
//
// No lock: each count is one atomic word changed by a read-modify-write. Acquiring is a
// compare-and-swap loop that never moves a word past its limit (so a limit of 100 is 100 for
// the node, whatever the number of workers, and a refusal while full costs one load and no
// write); releasing is one fetch_sub. The rate limiter is GCRA (the generic cell rate
// algorithm of ATM, RFC 2697's token bucket seen from the other side): one word per trunk,
// its theoretical arrival time, advanced by compare-and-swap. Relaxed order is enough
// everywhere: each word stands alone (no other data is published through it), and every
// read-modify-write of one word is ordered in that word's modification order, which is what
// makes the counts exact.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "common/limits.h"

namespace sbc::sip {

/// Node-wide limits that are not a trunk's or a peer's ([admission] in sbc.toml). Read-only
/// in the proxy tables.
struct admission_policy {
    uint32_t max_calls = 0;        ///< concurrent calls on the node; 0: no limit
    uint16_t refuse_code = 503;    ///< the final response to a refused call
    uint32_t retry_after_s = 5;    ///< Retry-After of a refusal, where the code allows one (retry_after_allowed); 0: none
};

/// Whether RFC 3261 20.33 lets a response with `code` carry Retry-After: 404, 413, 480, 486,
/// 500, 503, 600 and 603 (when the called party or the service may be back).
constexpr bool retry_after_allowed(uint16_t code) noexcept
{
    return code == 404 || code == 413 || code == 480 || code == 486 || code == 500 || code == 503 || code == 600 ||
           code == 603;
}

/// Takes one unit of `count` unless it is at `limit` (0: no limit, always taken). Exact across
/// threads: the word never exceeds the limit, and a refusal writes nothing.
inline bool admission_take(std::atomic<uint32_t>& count, uint32_t limit) noexcept
{
    if (limit == 0) {
        count.fetch_add(1, std::memory_order_relaxed);
        return true;
    }
    uint32_t v = count.load(std::memory_order_relaxed);
    // Each failed exchange means another worker changed the word (progress for the node);
    // the loop ends at the limit or on success.
    while (v < limit)
        if (count.compare_exchange_weak(v, v + 1, std::memory_order_relaxed, std::memory_order_relaxed)) return true;
    return false;
}

/// Gives back one unit taken with admission_take.
inline void admission_give(std::atomic<uint32_t>& count) noexcept
{
    count.fetch_sub(1, std::memory_order_relaxed);
}

/// GCRA over one theoretical-arrival-time word (ns): a call at `now_ns` conforms when the
/// word is at most `now_ns + (burst - 1) * T`, T = 1 s / rate; the word then moves to
/// max(word, now) + T. `rate` calls per second on average, `burst` at once after a quiet
/// time. rate 0: no limit. Exact across threads (compare-and-swap); a refusal writes nothing.
inline bool gcra_conforms(std::atomic<uint64_t>& tat_ns, uint64_t now_ns, uint32_t rate, uint32_t burst) noexcept
{
    if (rate == 0) return true;
    const uint64_t t = 1'000'000'000ull / rate;
    const uint64_t tau = (burst > 1 ? burst - 1 : 0) * t;
    uint64_t tat = tat_ns.load(std::memory_order_relaxed);
    for (;;) {
        const uint64_t base = tat > now_ns ? tat : now_ns;
        if (base - now_ns > tau) return false;
        if (tat_ns.compare_exchange_weak(tat, base + t, std::memory_order_relaxed, std::memory_order_relaxed))
            return true;
    }
}

/// Why a new call was refused (counted per reason: proxy_counter admission_*).
enum class admission_refusal : uint8_t { none, trunk_calls, trunk_rate, node_calls };

/// The node-wide counts. Written by any worker (read-modify-write only), read by the control
/// core for reports. Trunk counts are by trunk index in the proxy tables; peer counts by peer
/// id (stable across snapshots).
struct admission {
    /// One cache line per trunk: its calls and its rate word change together, and no other
    /// trunk's calls bounce the line.
    struct alignas(64) trunk_counts {
        std::atomic<uint32_t> calls{0};
        std::atomic<uint64_t> tat_ns{0};  ///< GCRA theoretical arrival time
    };
    std::array<trunk_counts, max_trunks> trunks{};
    /// Calls on each peer: attempts under way on it and dialogs with it (what least_calls
    /// selects by and max_calls limits).
    std::array<std::atomic<uint32_t>, max_peers> peer_calls{};
    alignas(64) std::atomic<uint32_t> node_calls{0};

    [[nodiscard]] uint32_t trunk_calls(std::size_t trunk) const noexcept
    {
        return trunk < trunks.size() ? trunks[trunk].calls.load(std::memory_order_relaxed) : 0;
    }
    [[nodiscard]] uint32_t calls_on_peer(uint32_t id) const noexcept
    {
        return id < peer_calls.size() ? peer_calls[id].load(std::memory_order_relaxed) : 0;
    }
    [[nodiscard]] uint32_t calls() const noexcept { return node_calls.load(std::memory_order_relaxed); }

    /// A new call on trunk `trunk` (with its limits `max_calls`, `rate`, `burst`) under the node
    /// limit `node_max`: counted against the trunk and the node when admitted (give it back
    /// with release_call), nothing counted when refused. Concurrency first, then the rate, so
    /// that a call refused for concurrency spends no rate token.
    admission_refusal admit_call(uint16_t trunk, uint32_t max_calls, uint32_t rate, uint32_t burst, uint32_t node_max,
                                 uint64_t now_ms) noexcept
    {
        if (trunk >= trunks.size()) return admission_refusal::trunk_calls;
        trunk_counts& tc = trunks[trunk];
        if (!admission_take(tc.calls, max_calls)) return admission_refusal::trunk_calls;
        if (!admission_take(node_calls, node_max)) {
            admission_give(tc.calls);
            return admission_refusal::node_calls;
        }
        if (!gcra_conforms(tc.tat_ns, now_ms * 1'000'000ull, rate, burst)) {
            admission_give(node_calls);
            admission_give(tc.calls);
            return admission_refusal::trunk_rate;
        }
        return admission_refusal::none;
    }
    void release_call(uint16_t trunk) noexcept
    {
        if (trunk >= trunks.size()) return;
        admission_give(trunks[trunk].calls);
        admission_give(node_calls);
    }
    /// One more call on peer `id` unless it has `max_calls` (0: no limit).
    bool take_peer(uint32_t id, uint32_t max_calls) noexcept
    {
        return id < peer_calls.size() && admission_take(peer_calls[id], max_calls);
    }
    void give_peer(uint32_t id) noexcept
    {
        if (id < peer_calls.size()) admission_give(peer_calls[id]);
    }
};

}  // namespace sbc::sip
