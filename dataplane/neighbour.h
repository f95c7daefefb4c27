// The neighbour table: next hop -> MAC (ARP for IPv4; IPv6 neighbour discovery is not built
// yet, so an IPv6 next hop is never found and never stored). One writer, the control core, which learns
// from the events workers send; many readers, the workers, which look up a next hop per burst
// or per packet without locks. Fixed capacity, open addressing, a sequence lock per slot.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/limits.h"
#include "common/address.h"

namespace sbc::dataplane {

using mac_addr = std::array<uint8_t, 6>;

class neighbour_table {
public:
    static constexpr std::size_t capacity = sbc::neighbour_capacity;  ///< power of two
    static constexpr std::size_t max_probe = 16;   ///< slots searched per lookup

    /// Any thread: the MAC for `ip`, or nullopt. Never blocks; a lookup racing a
    /// writer that keeps rewriting the same slot gives up after a few tries and misses.
    [[nodiscard]] std::optional<mac_addr> lookup(const ip_address& ip) const noexcept { return lookup_v4(ip.v4_host()); }

    /// Control core only: inserts or updates `ip`. Returns false when the table is full
    /// (no free slot within max_probe) or `ip` is not IPv4; the caller counts it.
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
    /// Control core only: every entry, for sbcctl and metrics.
    [[nodiscard]] std::vector<entry> entries() const;
    [[nodiscard]] std::size_t size() const noexcept { return size_; }

private:
    // Slots hold IPv4 addresses in host order (0: free); these take the public ip_address.
    [[nodiscard]] std::optional<mac_addr> lookup_v4(uint32_t ip) const noexcept;
    bool insert_v4(uint32_t ip, const mac_addr& mac, uint64_t now_ms) noexcept;
    bool remove_v4(uint32_t ip) noexcept;
    [[nodiscard]] std::optional<uint64_t> updated_ms_v4(uint32_t ip) const noexcept;

    struct slot {
        std::atomic<uint32_t> seq{0};  ///< odd while the writer rewrites the slot
        std::atomic<uint32_t> ip{0};   ///< 0 = free (0.0.0.0 is never a neighbour)
        std::atomic<uint64_t> mac{0};  ///< 48-bit MAC in the low bits
        std::atomic<uint64_t> updated_ms{0};
    };

    static std::size_t home(uint32_t ip) noexcept { return (ip * 2654435761u) & (capacity - 1); }
    void write(slot& s, uint32_t ip, uint64_t mac, uint64_t now_ms) noexcept;

    std::array<slot, capacity> slots_{};
    std::size_t size_ = 0;  ///< control core only
};

uint64_t pack_mac(const mac_addr& m) noexcept;
mac_addr unpack_mac(uint64_t v) noexcept;

}  // namespace sbc::dataplane
