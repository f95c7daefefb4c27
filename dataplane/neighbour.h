// The neighbour table: next hop -> MAC, learned by ARP for IPv4 and by Neighbor Discovery for
// IPv6; and the IPv6 path MTU table, the same store keyed by destination. One writer, the control core, which learns from the events workers send; many readers,
// the workers, which look up a next hop per burst or per packet without locks. Two fixed-size
// open-addressing tables of the same code, one per family (an IPv4 lookup never touches the
// IPv6 one), each slot under its own sequence lock.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "common/limits.h"
#include "common/address.h"

namespace sbc::dataplane {

using mac_addr = std::array<uint8_t, 6>;

uint64_t pack_mac(const mac_addr& m) noexcept;
mac_addr unpack_mac(uint64_t v) noexcept;

namespace detail {

/// IPv4 keys: the host-order address in one word (0: a free slot; 0.0.0.0 is never a neighbour).
struct neighbour_key4 {
    using value = uint32_t;
    struct cell {
        std::atomic<uint32_t> w{0};
        [[nodiscard]] value load() const noexcept { return w.load(std::memory_order_relaxed); }
        void store(value v) noexcept { w.store(v, std::memory_order_relaxed); }
    };
    static value of(const ip_address& a) noexcept { return a.v4_host(); }
    static ip_address address(value v) noexcept { return ip_address::v4(v); }
    static bool is_free(value v) noexcept { return v == 0; }
    static std::size_t hash(value v) noexcept { return v * 2654435761u; }
};

/// IPv6 keys: the 16 bytes in two words (all zero: a free slot; :: is never a neighbour).
struct neighbour_key6 {
    struct value {
        uint64_t hi = 0, lo = 0;
        friend bool operator==(const value&, const value&) noexcept = default;
    };
    struct cell {
        std::atomic<uint64_t> hi{0}, lo{0};
        [[nodiscard]] value load() const noexcept
        {
            return {hi.load(std::memory_order_relaxed), lo.load(std::memory_order_relaxed)};
        }
        void store(value v) noexcept
        {
            hi.store(v.hi, std::memory_order_relaxed);
            lo.store(v.lo, std::memory_order_relaxed);
        }
    };
    static value of(const ip_address& a) noexcept
    {
        const auto b = a.v6_bytes();
        value v;
        std::memcpy(&v.hi, b.data(), 8);
        std::memcpy(&v.lo, b.data() + 8, 8);
        return v;
    }
    static ip_address address(value v) noexcept
    {
        std::array<uint8_t, 16> b;
        std::memcpy(b.data(), &v.hi, 8);
        std::memcpy(b.data() + 8, &v.lo, 8);
        return ip_address::v6(b);
    }
    static bool is_free(value v) noexcept { return (v.hi | v.lo) == 0; }
    static std::size_t hash(value v) noexcept
    {
        // Neighbours on a link share their first 96 bits or so and differ in the last bytes:
        // those, as a number, go through IPv4's multiplicative hash (consecutive addresses take
        // consecutive-free slots, as IPv4's do); the rest is mixed in (MurmurHash3's finaliser).
        const uint32_t tail = __builtin_bswap32(static_cast<uint32_t>(v.lo >> 32));  // bytes 12..15
        uint64_t rest = v.hi ^ (v.lo & 0xffffffffu);
        rest ^= rest >> 33;
        rest *= 0xff51afd7ed558ccdull;
        rest ^= rest >> 33;
        return static_cast<uint32_t>(tail ^ static_cast<uint32_t>(rest)) * 2654435761u;
    }
};

/// One family's slots; the public neighbour_table below is the interface.
template <class Key>
class neighbour_slots {
public:
    static constexpr std::size_t capacity = sbc::neighbour_capacity;  ///< power of two
    static constexpr std::size_t max_probe = 16;                      ///< slots searched per lookup
    using value = typename Key::value;

    /// The 64-bit word stored for `ip` (a packed MAC, a path MTU).
    [[nodiscard]] std::optional<uint64_t> lookup(value ip) const noexcept;
    bool insert(value ip, uint64_t word, uint64_t now_ms) noexcept;
    bool remove(value ip) noexcept;
    [[nodiscard]] std::optional<uint64_t> updated_ms(value ip) const noexcept;
    template <class Fn>
    void for_each(Fn&& fn) const
    {
        for (const slot& s : slots_) {
            const value ip = s.ip.load();
            if (!Key::is_free(ip))
                fn(Key::address(ip), s.word.load(std::memory_order_relaxed), s.updated_ms.load(std::memory_order_relaxed));
        }
    }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }

private:
    struct slot {
        std::atomic<uint32_t> seq{0};  ///< odd while the writer rewrites the slot
        typename Key::cell ip;
        std::atomic<uint64_t> word{0};  ///< what is stored for ip
        std::atomic<uint64_t> updated_ms{0};
    };
    static std::size_t home(value ip) noexcept { return Key::hash(ip) & (capacity - 1); }
    static void write(slot& s, value ip, uint64_t word, uint64_t now_ms) noexcept;

    std::array<slot, capacity> slots_{};
    std::size_t size_ = 0;  ///< control core only
};

extern template class neighbour_slots<neighbour_key4>;
extern template class neighbour_slots<neighbour_key6>;

}  // namespace detail

class neighbour_table {
public:
    static constexpr std::size_t capacity = sbc::neighbour_capacity;  ///< per family
    static constexpr std::size_t max_probe = detail::neighbour_slots<detail::neighbour_key4>::max_probe;

    /// Any thread: the MAC for `ip` (IPv4 or IPv6), or nullopt. Never blocks; a lookup racing
    /// a writer that keeps rewriting the same slot gives up after a few tries and misses.
    [[nodiscard]] std::optional<mac_addr> lookup(const ip_address& ip) const noexcept
    {
        const std::optional<uint64_t> w = ip.is_v4()   ? v4_.lookup(ip.v4_host())
                                          : ip.is_v6() ? v6_.lookup(detail::neighbour_key6::of(ip))
                                                       : std::nullopt;
        if (!w) return std::nullopt;
        return unpack_mac(*w);
    }

    /// Control core only: inserts or updates `ip`. Returns false when the table of its family
    /// is full (no free slot within max_probe) or `ip` is unset or unspecified; the caller counts it.
    bool insert(const ip_address& ip, const mac_addr& mac, uint64_t now_ms) noexcept;

    /// Control core only: removes `ip`; returns whether it was there.
    bool remove(const ip_address& ip) noexcept;

    /// Control core only: when `ip` was last inserted or refreshed, or nullopt.
    [[nodiscard]] std::optional<uint64_t> updated_ms(const ip_address& ip) const noexcept;

    struct entry {
        ip_address ip;
        mac_addr mac;
        uint64_t updated_ms;
    };
    /// Control core only: every entry, IPv4 first, for sbcctl and metrics.
    [[nodiscard]] std::vector<entry> entries() const;
    [[nodiscard]] std::size_t size() const noexcept { return v4_.size() + v6_.size(); }

private:
    detail::neighbour_slots<detail::neighbour_key4> v4_;
    detail::neighbour_slots<detail::neighbour_key6> v6_;
};

/// The path MTU toward IPv6 destinations that sent us Packet Too Big (RFC 8201), the same
/// store as the neighbour table: written by the control core from the workers' events, read by
/// workers when they size what they send over IPv6. A destination not in it gets the link MTU.
class path_mtu_table {
public:
    static constexpr uint32_t min_mtu = 1280;     ///< IPv6's minimum (RFC 8200 5): never below it
    static constexpr uint64_t keep_ms = 600'000;  ///< then the link MTU is tried again (RFC 8201 5.3)

    /// Any thread: the path MTU recorded for `dst`, or nullopt.
    [[nodiscard]] std::optional<uint32_t> lookup(const ip_address& dst) const noexcept
    {
        if (!dst.is_v6()) return std::nullopt;
        const auto w = slots_.lookup(detail::neighbour_key6::of(dst));
        if (!w) return std::nullopt;
        return static_cast<uint32_t>(*w);
    }
    /// Control core only: records `mtu` for `dst`, raised to min_mtu; false when the table is
    /// full or `dst` is not IPv6.
    bool record(const ip_address& dst, uint32_t mtu, uint64_t now_ms) noexcept
    {
        if (!dst.is_v6()) return false;
        return slots_.insert(detail::neighbour_key6::of(dst), mtu < min_mtu ? min_mtu : mtu, now_ms);
    }
    /// Control core only: forgets what is older than keep_ms; returns how many went.
    std::size_t expire(uint64_t now_ms);
    [[nodiscard]] std::size_t size() const noexcept { return slots_.size(); }

private:
    detail::neighbour_slots<detail::neighbour_key6> slots_;
};

}  // namespace sbc::dataplane
