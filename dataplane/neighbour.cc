// Neighbour table: lookups for any thread, updates for the control core (see neighbour.h).
#include "dataplane/neighbour.h"

#include <cstring>

namespace sbc::dataplane {

uint64_t pack_mac(const mac_addr& m) noexcept
{
    uint64_t v = 0;
    for (uint8_t b : m) v = (v << 8) | b;
    return v;
}

mac_addr unpack_mac(uint64_t v) noexcept
{
    // The first byte is the most significant of the 48: shifted to the top and byte-swapped,
    // it lands first in memory; one copy instead of six shifts (every SIP message sent does this).
    const uint64_t be = __builtin_bswap64(v << 16);
    mac_addr m;
    std::memcpy(m.data(), &be, m.size());
    return m;
}

namespace detail {

// Sequence lock (writer side). The release fence after the odd store keeps the field stores
// from moving above it; the final release store publishes them to a reader's acquire load.
template <class Key>
void neighbour_slots<Key>::write(slot& s, value ip, uint64_t word, uint64_t now_ms) noexcept
{
    uint32_t seq = s.seq.load(std::memory_order_relaxed);
    s.seq.store(seq + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    s.ip.store(ip);
    s.word.store(word, std::memory_order_relaxed);
    s.updated_ms.store(now_ms, std::memory_order_relaxed);
    s.seq.store(seq + 2, std::memory_order_release);
}

template <class Key>
std::optional<uint64_t> neighbour_slots<Key>::lookup(value ip) const noexcept
{
    if (Key::is_free(ip)) return std::nullopt;
    std::size_t i = home(ip);
    for (std::size_t n = 0; n < max_probe; ++n, i = (i + 1) & (capacity - 1)) {
        const slot& s = slots_[i];
        for (int attempt = 0; attempt < 4; ++attempt) {
            // Reader side of the sequence lock: acquire on the first load orders the field
            // loads after it; the acquire fence orders them before the second sequence load.
            uint32_t s1 = s.seq.load(std::memory_order_acquire);
            if (s1 & 1u) continue;
            const value sip = s.ip.load();
            const uint64_t word = s.word.load(std::memory_order_relaxed);
            std::atomic_thread_fence(std::memory_order_acquire);
            if (s.seq.load(std::memory_order_relaxed) != s1) continue;
            if (sip == ip) return word;
            if (Key::is_free(sip)) return std::nullopt;  // free slot ends the probe sequence
            break;
        }
    }
    return std::nullopt;
}

template <class Key>
bool neighbour_slots<Key>::insert(value ip, uint64_t word, uint64_t now_ms) noexcept
{
    if (Key::is_free(ip)) return false;
    std::size_t i = home(ip);
    slot* free_slot = nullptr;
    for (std::size_t n = 0; n < max_probe; ++n, i = (i + 1) & (capacity - 1)) {
        slot& s = slots_[i];
        const value sip = s.ip.load();
        if (sip == ip) {
            write(s, ip, word, now_ms);
            return true;
        }
        if (Key::is_free(sip)) {
            free_slot = &s;
            break;
        }
    }
    if (free_slot == nullptr) return false;
    write(*free_slot, ip, word, now_ms);
    ++size_;
    return true;
}

template <class Key>
bool neighbour_slots<Key>::remove(value ip) noexcept
{
    // Removal leaves no tombstone; entries after it in the probe chain are moved back so that
    // a lookup's "free slot ends the search" rule stays true (backward-shift deletion).
    if (Key::is_free(ip)) return false;
    std::size_t i = home(ip);
    std::size_t n = 0;
    for (; n < max_probe; ++n, i = (i + 1) & (capacity - 1)) {
        const value sip = slots_[i].ip.load();
        if (sip == ip) break;
        if (Key::is_free(sip)) return false;
    }
    if (n == max_probe) return false;
    std::size_t hole = i;
    for (std::size_t j = (hole + 1) & (capacity - 1);; j = (j + 1) & (capacity - 1)) {
        const value jip = slots_[j].ip.load();
        if (Key::is_free(jip)) break;
        std::size_t h = home(jip);
        // Move j into the hole when its home is not in (hole, j] cyclically.
        bool home_between = hole <= j ? (h > hole && h <= j) : (h > hole || h <= j);
        if (!home_between) {
            write(slots_[hole], jip, slots_[j].word.load(std::memory_order_relaxed),
                  slots_[j].updated_ms.load(std::memory_order_relaxed));
            hole = j;
        }
    }
    write(slots_[hole], value{}, 0, 0);
    --size_;
    return true;
}

template <class Key>
std::optional<uint64_t> neighbour_slots<Key>::updated_ms(value ip) const noexcept
{
    if (Key::is_free(ip)) return std::nullopt;
    std::size_t i = home(ip);
    for (std::size_t n = 0; n < max_probe; ++n, i = (i + 1) & (capacity - 1)) {
        const value sip = slots_[i].ip.load();
        if (sip == ip) return slots_[i].updated_ms.load(std::memory_order_relaxed);
        if (Key::is_free(sip)) return std::nullopt;
    }
    return std::nullopt;
}

template class neighbour_slots<neighbour_key4>;
template class neighbour_slots<neighbour_key6>;

}  // namespace detail

bool neighbour_table::insert(const ip_address& ip, const mac_addr& mac, uint64_t now_ms) noexcept
{
    if (ip.is_v4()) return v4_.insert(ip.v4_host(), pack_mac(mac), now_ms);
    return ip.is_v6() && v6_.insert(detail::neighbour_key6::of(ip), pack_mac(mac), now_ms);
}

bool neighbour_table::remove(const ip_address& ip) noexcept
{
    if (ip.is_v4()) return v4_.remove(ip.v4_host());
    return ip.is_v6() && v6_.remove(detail::neighbour_key6::of(ip));
}

std::optional<uint64_t> neighbour_table::updated_ms(const ip_address& ip) const noexcept
{
    if (ip.is_v4()) return v4_.updated_ms(ip.v4_host());
    return ip.is_v6() ? v6_.updated_ms(detail::neighbour_key6::of(ip)) : std::nullopt;
}

std::vector<neighbour_table::entry> neighbour_table::entries() const
{
    std::vector<entry> out;
    const auto add = [&out](const ip_address& ip, uint64_t word, uint64_t at) { out.push_back({ip, unpack_mac(word), at}); };
    v4_.for_each(add);
    v6_.for_each(add);
    return out;
}

std::size_t path_mtu_table::expire(uint64_t now_ms)
{
    std::vector<ip_address> old;
    slots_.for_each([&](const ip_address& ip, uint64_t, uint64_t at) {
        if (now_ms >= at + keep_ms) old.push_back(ip);
    });
    for (const auto& ip : old) slots_.remove(detail::neighbour_key6::of(ip));
    return old.size();
}

}  // namespace sbc::dataplane
