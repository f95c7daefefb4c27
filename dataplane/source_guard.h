// Flood protection before SIP parsing, the data: how much a source is trusted, a token bucket,
// the bounded table of per-source buckets and malformed tallies that each worker keeps, the
// flood limits ([flood] of sbc.toml) and why a source is denied.
//   trust        trusted (a peer's address, or allowed by a trunk marked trusted): rate-limited,
//                never denied; untrusted (allowed by a trunk that is not trusted): rate-limited
//                and denied over its rate, and all of one trunk's together share one bucket
//                per worker (a flood with forged sources from an open trunk's range: each
//                source new, each with a full bucket of its own); unknown (allowed by no
//                trunk, no peer): one small aggregate bucket per worker, since only dialog
//                parties' responses may come from there.
//   source_table fixed capacity, set-associative (8 ways): a lookup probes one set; a full set
//                evicts its least recently used entry (the caller counts evictions).
// Header-only and free of DPDK types, so that the unit tier tests it without EAL. Worker only
// for the tables and buckets (each worker owns its own: no heap, locks, system calls or
// logging); the limits and classify() are read by any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/address.h"
#include "common/counter.h"
#include "sip-fastpath/proxy_tables.h"

namespace sbc::dataplane {

/// How much a source is trusted (see the file comment).
enum class trust : uint8_t { unknown, untrusted, trusted };

/// Why a source is denied. The labels are stable (metrics, `sbcctl deny list`).
enum class deny_reason : uint8_t {
    rate,         ///< an untrusted source over its rate
    malformed,    ///< [flood] deny_after_malformed malformed messages within malformed_window_s
    scanner,      ///< a scanner signature matched on a message from an untrusted source
    by_operator,  ///< `sbcctl deny add`
    count_
};
constexpr std::size_t deny_reason_count = static_cast<std::size_t>(deny_reason::count_);

/// "rate", "malformed", "scanner", "operator". Any thread.
constexpr std::string_view deny_reason_name(deny_reason r) noexcept
{
    constexpr std::array<std::string_view, deny_reason_count> names{"rate", "malformed", "scanner", "operator"};
    return static_cast<std::size_t>(r) < names.size() ? names[static_cast<std::size_t>(r)] : "unknown";
}

/// The limits workers apply, per source and per worker, in messages per second; a rate of 0
/// means no limit. Defaults (docs/config.md) are generous enough that no legitimate call of
/// the e2e tier or the load scripts is ever dropped; operators tighten untrusted_rate.
struct flood_limits {
    static constexpr uint32_t default_trusted_rate = 100000;
    static constexpr uint32_t default_trusted_burst = 200000;
    static constexpr uint32_t default_untrusted_rate = 2000;
    static constexpr uint32_t default_untrusted_burst = 2000;
    static constexpr uint32_t default_untrusted_trunk_rate = 10000;
    // A second's worth at once would be parsed and forwarded back to back: 10,000 INVITEs
    // overloaded a worker for 50 ms and shed trusted calls (docs/benchmarks.md).
    static constexpr uint32_t default_untrusted_trunk_burst = 2000;
    static constexpr uint32_t default_unknown_rate = 50;
    static constexpr uint32_t default_unknown_burst = 100;
    static constexpr uint32_t default_deny_after_malformed = 10;
    static constexpr uint32_t default_malformed_window_ms = 10000;

    uint32_t trusted_rate = default_trusted_rate;
    uint32_t trusted_burst = default_trusted_burst;
    uint32_t untrusted_rate = default_untrusted_rate;
    uint32_t untrusted_burst = default_untrusted_burst;
    uint32_t untrusted_trunk_rate = default_untrusted_trunk_rate;  ///< aggregate of one trunk's untrusted sources, per worker
    uint32_t untrusted_trunk_burst = default_untrusted_trunk_burst;
    uint32_t unknown_rate = default_unknown_rate;      ///< aggregate of every unknown source, per worker
    uint32_t unknown_burst = default_unknown_burst;
    uint32_t deny_after_malformed = default_deny_after_malformed;  ///< 0: never denied for malformed messages
    uint32_t malformed_window_ms = default_malformed_window_ms;

    friend bool operator==(const flood_limits&, const flood_limits&) = default;
};

/// What flood limits and deny lists key a source by: an IPv4 address itself (a /32), an IPv6
/// source's /64 (one host owns a /64 and picks any address in it, RFC 4291 2.5.1). Any thread.
[[nodiscard]] inline ip_address flood_key(const ip_address& src) noexcept
{
    return src.is_v6() ? src.masked(64) : src;
}

/// The trust of `src` arriving on trunk `trunk` of `t`: the proxy's own rule (it accepts a
/// trunk's sources on that trunk and peers anywhere), with the trunk's `trusted` mark; `hash` is
/// src.hash(), for a caller that has it already. Any thread. Always inlined: the first stage
/// asks it for every datagram of a flood.
[[gnu::always_inline]] inline trust classify(const sip::proxy_tables& t, uint16_t trunk, const ip_address& src,
                                             uint64_t hash) noexcept
{
    if (t.is_peer_address(src, hash)) return trust::trusted;
    if (trunk >= t.trunks.size() || !t.trunks[trunk].allows(src)) return trust::unknown;
    return t.trunks[trunk].trusted ? trust::trusted : trust::untrusted;
}
[[gnu::always_inline]] inline trust classify(const sip::proxy_tables& t, uint16_t trunk, const ip_address& src) noexcept
{
    return classify(t, trunk, src, src.hash());
}

/// The trust of `src` wherever it arrives (the control core's check before denying it): trusted
/// when it is a peer's address or a trusted trunk allows it. Any thread.
inline bool trusted_anywhere(const sip::proxy_tables& t, const ip_address& src) noexcept
{
    if (t.is_peer_address(src)) return true;
    for (const auto& tr : t.trunks)
        if (tr.trusted && tr.allows(src)) return true;
    return false;
}

/// A token bucket in thousandths of a token, refilled from the owner's millisecond clock
/// (its low 32 bits: differences stay right across a wrap). One owner.
struct token_bucket {
    uint32_t milli = 0;  ///< tokens x 1000
    uint32_t at_ms = 0;  ///< when it was last refilled

    /// Full (`burst` tokens) at `now_ms`.
    void fill(uint32_t now_ms, uint32_t burst) noexcept
    {
        milli = cap(burst);
        at_ms = now_ms;
    }
    /// Takes one token at `now_ms` after refilling `rate` tokens per second up to `burst`;
    /// false (nothing taken) when less than one is left. A rate of 0 always gives.
    bool take(uint32_t now_ms, uint32_t rate, uint32_t burst) noexcept
    {
        if (rate == 0) return true;
        const uint64_t t = refilled(now_ms, rate, burst);
        at_ms = now_ms;
        const bool ok = t >= 1000;
        milli = static_cast<uint32_t>(ok ? t - 1000 : t);
        return ok;
    }

    /// Whether take() at `now_ms` would fail (less than one token after the refill); changes
    /// nothing.
    [[nodiscard]] bool dry(uint32_t now_ms, uint32_t rate, uint32_t burst) const noexcept
    {
        return rate != 0 && refilled(now_ms, rate, burst) < 1000;
    }

private:
    /// The thousandths of a token at `now_ms`: rate tokens per second = rate thousandths per
    /// millisecond since at_ms, up to `burst` tokens.
    [[nodiscard]] uint64_t refilled(uint32_t now_ms, uint32_t rate, uint32_t burst) const noexcept
    {
        const uint64_t t = milli + uint64_t{now_ms - at_ms} * rate;
        return t > cap(burst) ? cap(burst) : t;
    }
    static uint32_t cap(uint32_t burst) noexcept
    {
        const uint64_t c = uint64_t{burst == 0 ? 1 : burst} * 1000;
        return c > 0xffffffffull ? 0xffffffffu : static_cast<uint32_t>(c);
    }
};

/// A worker's aggregate bucket: full at its first use (it is made before the clock it counts
/// in has a value), and never dry before that. One owner.
struct aggregate_bucket {
    token_bucket bucket;
    bool started = false;

    bool take(uint32_t now_ms, uint32_t rate, uint32_t burst) noexcept
    {
        if (!started) {
            bucket.fill(now_ms, burst);
            started = true;
        }
        return bucket.take(now_ms, rate, burst);
    }
    [[nodiscard]] bool dry(uint32_t now_ms, uint32_t rate, uint32_t burst) const noexcept
    {
        return started && bucket.dry(now_ms, rate, burst);
    }
};

/// One source a worker has seen.
struct source_entry {
    ip_address addr;             ///< ip_family::none: a free slot
    token_bucket bucket;
    uint32_t used_ms = 0;        ///< last packet (least recently used goes first)
    uint32_t malformed_since_ms = 0;  ///< start of the current malformed window
    uint32_t reported_ms = 0;    ///< last report to the control core (one per second at most)
    uint16_t malformed = 0;      ///< malformed messages in the window
    bool reported = false;       ///< reported_ms is meaningful
};

/// What find_or_insert() did.
enum class slot_result : uint8_t { found, inserted, evicted };

/// Sources by address: `capacity` entries in sets of `ways`, probed one set per lookup.
/// The owning worker only; fixed size, no heap.
template <std::size_t capacity = 8192, std::size_t ways = 8>
class basic_source_table {
    static_assert((capacity & (capacity - 1)) == 0 && capacity % ways == 0, "capacity: a power of two, whole sets");

public:
    static constexpr std::size_t sets = capacity / ways;

    /// The entry of `src` (refreshing its use), or a new one in its set: a free slot, else the
    /// least recently used one, overwritten (`r` says which). A new entry is zeroed; the caller
    /// fills its bucket.
    source_entry& find_or_insert(const ip_address& src, uint32_t now_ms, slot_result& r) noexcept
    {
        source_entry* set = &slots_[(src.hash() % sets) * ways];
        source_entry* victim = nullptr;
        for (std::size_t i = 0; i < ways; ++i) {
            source_entry& e = set[i];
            if (e.addr == src && e.addr.family() != ip_family::none) {
                e.used_ms = now_ms;
                r = slot_result::found;
                return e;
            }
            if (e.addr.family() == ip_family::none) {
                if (victim == nullptr || victim->addr.family() != ip_family::none) victim = &e;
            } else if (victim == nullptr ||
                       (victim->addr.family() != ip_family::none && now_ms - e.used_ms > now_ms - victim->used_ms)) {
                victim = &e;
            }
        }
        r = victim->addr.family() == ip_family::none ? slot_result::inserted : slot_result::evicted;
        *victim = source_entry{};
        victim->addr = src;
        victim->used_ms = now_ms;
        return *victim;
    }

    /// The entry of `src`, or null. Tests and reports.
    [[nodiscard]] const source_entry* find(const ip_address& src) const noexcept
    {
        const source_entry* set = &slots_[(src.hash() % sets) * ways];
        for (std::size_t i = 0; i < ways; ++i)
            if (set[i].addr.family() != ip_family::none && set[i].addr == src) return &set[i];
        return nullptr;
    }

private:
    std::array<source_entry, capacity> slots_{};
};

using source_table = basic_source_table<>;

/// A worker's flood state: its source table, the aggregate buckets (unknown sources; each
/// trunk's untrusted sources), and what it counts besides drops. Written by its worker only;
/// the counters are read by the control core (single_writer, relaxed).
struct source_guard {
    source_table table;
    aggregate_bucket unknown;  ///< every unknown source
    /// Per trunk index: its untrusted sources together. A reload that renumbers trunks hands a
    /// bucket to another trunk: at worst it starts less than full, and refills within a second.
    std::array<aggregate_bucket, max_trunks> untrusted_trunk{};
    /// When one of those buckets last refused (low 32 bits of the worker's ms clock), so that the
    /// first stage looks for them only during such a flood and for a second after it.
    uint32_t untrusted_trunk_dry_ms = 0;
    bool untrusted_trunk_dry_seen = false;
    /// Per trunk index: its untrusted sources' messages those buckets refused (what the worker
    /// counts as flood_rate_untrusted_trunk, by trunk), for sbc_trunk_flood_dropped_total.
    std::array<sbc::single_writer<uint64_t>, max_trunks> untrusted_trunk_dropped{};
    sbc::single_writer<uint64_t> evictions;  ///< entries overwritten in a full set
    sbc::single_writer<uint64_t> reports;    ///< sources reported to the control core for denial
};

}  // namespace sbc::dataplane
