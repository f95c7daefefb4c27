// What a worker does about a next hop whose MAC the control core has not published yet:
//   learned_neighbours  the MACs it saw its own senders use (the source MAC of a SIP datagram
//                       from an on-link sender), so that a message relayed toward that sender
//                       a moment later (the callee's 180 toward a new caller) needs no wait
//                       for the control core;
//   basic_neighbour_hold the packets it holds per unresolved next hop while the control core
//                       runs ARP, as the kernel's unresolved queue does: sent as soon as the
//                       MAC is known, dropped (and counted by the caller) only when the hold
//                       is full or the next hop stays unresolved past hold_ms.
// Header-only and free of DPDK types (the packet is a template parameter), so that the unit
// tier tests it without EAL. Worker only: each worker owns its own; fixed capacity, no heap,
// locks, system calls or logging.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "dataplane/neighbour.h"

namespace sbc::dataplane {

namespace detail {
/// The learned tables' keys: an IPv4 address (host order) or an IPv6 one (its 16 bytes).
using v6_bytes = std::array<uint8_t, 16>;
[[nodiscard]] inline bool is_zero(uint32_t ip) noexcept { return ip == 0; }
[[nodiscard]] inline bool is_zero(const v6_bytes& ip) noexcept
{
    uint64_t w[2];
    std::memcpy(w, ip.data(), 16);
    return (w[0] | w[1]) == 0;
}
[[nodiscard]] inline uint32_t mix(uint32_t ip) noexcept { return ip * 2654435761u; }
[[nodiscard]] inline uint32_t mix(const v6_bytes& ip) noexcept
{
    uint64_t w[2];
    std::memcpy(w, ip.data(), 16);
    const uint64_t h = (w[0] ^ w[1]) * 0x9e3779b97f4a7c15ull;  // the interface identifier mixed with the prefix
    return static_cast<uint32_t>(h >> 32);
}
}  // namespace detail

/// MACs a worker learned from frames it received, by address (`Ip`: an IPv4 address in host
/// order, or IPv6's 16 bytes): direct-mapped, a newer sender replaces an older one in its slot.
/// An entry is trusted for ttl_ms; the neighbour table, when it knows the address, always wins
/// (the caller looks there first).
template <class Ip>
class basic_learned_neighbours {
public:
    static constexpr std::size_t capacity = 256;  ///< power of two
    static constexpr uint64_t ttl_ms = 60'000;

    void learn(const Ip& ip, uint16_t iface, const mac_addr& mac, uint64_t now_ms) noexcept
    {
        if (detail::is_zero(ip)) return;
        entry& e = slots_[slot_of(ip)];
        e.ip = ip;
        e.iface = iface;
        e.mac = mac;
        e.at_ms = now_ms;
    }

    /// The MAC `ip` used on interface `iface` within ttl_ms, or null.
    [[nodiscard]] const mac_addr* find(const Ip& ip, uint16_t iface, uint64_t now_ms) const noexcept
    {
        const entry& e = slots_[slot_of(ip)];
        if (detail::is_zero(ip) || e.ip != ip || e.iface != iface || now_ms - e.at_ms > ttl_ms) return nullptr;
        return &e.mac;
    }

private:
    struct entry {
        Ip ip{};  ///< zero: empty
        uint16_t iface = 0;
        mac_addr mac{};
        uint64_t at_ms = 0;
    };
    static std::size_t slot_of(const Ip& ip) noexcept { return detail::mix(ip) >> 24 & (capacity - 1); }
    std::array<entry, capacity> slots_{};
};
using learned_neighbours = basic_learned_neighbours<uint32_t>;
using learned_neighbours6 = basic_learned_neighbours<detail::v6_bytes>;

/// What kind of packet is held: on expiry a SIP message goes back to the proxy (a request it
/// could not send is answered, not blamed on the peer), media is only counted.
enum class held_kind : uint8_t { sip, media };

/// Outcome of hold().
enum class hold_result : uint8_t {
    held,      ///< queued behind other packets for the same next hop
    new_hop,   ///< queued as the first for its next hop: the caller asks the control core to resolve it
    full,      ///< not queued (the hop's queue or the table is full): the caller drops and counts it
};

/// Packets held per unresolved next hop (IPv4 or IPv6): `hops` next hops at a time, `per_hop` packets
/// each (a handful: the kernel's unresolved queue holds 3 by default), for at most the hold
/// time the caller gives poll(). A neighbour on the link answers ARP in well under a
/// millisecond; the hold is shorter than the kernel's 3 s on purpose (see max_hold_ms).
template <class Packet, std::size_t hops = 16, std::size_t per_hop = 8>
class basic_neighbour_hold {
public:
    /// The longest hold: a next hop silent this long is treated as unreachable for what waits
    /// on it (the control core's ARP retries go on; SIP resends). The worker holds for half the
    /// proxy's no-response time when that is shorter, so that an INVITE stuck behind ARP is
    /// answered as unsendable (503) before its peer could be blamed for silence.
    static constexpr uint64_t max_hold_ms = 500;

    /// Queues `p` (already framed, waiting only for its destination MAC) for next hop `hop`
    /// on interface `iface`, to leave through DPDK port `port`.
    hold_result hold(const ip_address& hop, uint16_t iface, uint16_t port, Packet p, held_kind kind, uint64_t now_ms) noexcept
    {
        entry* free_entry = nullptr;
        for (entry& e : entries_) {
            if (e.n != 0 && e.hop == hop && e.iface == iface) {
                if (e.n == per_hop) return hold_result::full;
                e.pkts[e.n] = {p, port, kind};
                ++e.n;
                ++held_;
                return hold_result::held;
            }
            if (e.n == 0 && free_entry == nullptr) free_entry = &e;
        }
        if (free_entry == nullptr) return hold_result::full;
        free_entry->hop = hop;
        free_entry->iface = iface;
        free_entry->since_ms = now_ms;
        free_entry->pkts[0] = {p, port, kind};
        free_entry->n = 1;
        ++held_;
        return hold_result::new_hop;
    }

    /// Releases what can go: for each next hop held, `lookup(hop, iface)` returns its MAC (a
    /// `const uint8_t*`, null while unknown); every packet of a resolved hop goes to
    /// `send(packet, port, mac)`, and every packet of a hop whose first packet waited longer
    /// than `hold_ms` to `expire(packet, kind)`. Costs one compare when nothing is held.
    /// Returns how many packets left the hold.
    template <class Lookup, class Send, class Expire>
    uint32_t poll(uint64_t now_ms, uint64_t hold_ms, Lookup&& lookup, Send&& send, Expire&& expire) noexcept
    {
        if (held_ == 0) return 0;
        uint32_t done = 0;
        for (entry& e : entries_) {
            if (e.n == 0) continue;
            const uint8_t* mac = lookup(e.hop, e.iface);
            if (mac == nullptr && now_ms - e.since_ms <= hold_ms) continue;
            for (uint8_t i = 0; i < e.n; ++i) {
                if (mac != nullptr)
                    send(e.pkts[i].p, e.pkts[i].port, mac);
                else
                    expire(e.pkts[i].p, e.pkts[i].kind);
            }
            done += e.n;
            held_ -= e.n;
            e.n = 0;
        }
        return done;
    }

    /// Packets held right now.
    [[nodiscard]] uint32_t held() const noexcept { return held_; }

private:
    struct item {
        Packet p{};
        uint16_t port = 0;
        held_kind kind = held_kind::sip;
    };
    struct entry {
        ip_address hop;
        uint16_t iface = 0;
        uint8_t n = 0;  ///< 0: free
        uint64_t since_ms = 0;
        std::array<item, per_hop> pkts{};
    };
    static_assert(per_hop < 256, "a hop's count is a uint8_t");
    std::array<entry, hops> entries_{};
    uint32_t held_ = 0;
};

}  // namespace sbc::dataplane
