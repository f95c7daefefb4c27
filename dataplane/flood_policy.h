// What the control core tells every worker about floods: the limits of [flood] and the set of
// denied sources, one immutable object published under RCU (as the snapshot is, but on its
// own: a denial or an expiry publishes this small object, not the whole snapshot).
//   writer   the control core only (control/control_deny.cc): builds a fresh object,
//            publish_flood_policy() exchanges it into the slot and frees the old one after a
//            grace period (call_rcu);
//   readers  workers, per burst, with rcu::dereference, between two quiescent states; no lock.
// A null slot means no flood protection (what a runtime without a control core has).
// No DPDK types (liburcu only): the unit tier builds and reads it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "common/address.h"
#include "dataplane/rcu.h"
#include "dataplane/source_guard.h"

namespace sbc::dataplane {

struct flood_policy {
    rcu_head rcu{};  ///< for deferred free; must stay the first member
    flood_limits limits;
    /// Denied addresses, open addressing (ip_family::none: empty), a power of two at least
    /// twice their number, so that a probe ends at an empty slot.
    std::vector<ip_address> denied_slots;
    std::size_t denied = 0;

    /// Fills denied_slots from `addrs` (each once). Writer only, before publishing.
    void set_denied(const std::vector<ip_address>& addrs)
    {
        std::size_t n = 8;
        while (n < addrs.size() * 2 + 1) n *= 2;
        denied_slots.assign(n, ip_address{});
        denied = 0;
        for (const auto& a : addrs) {
            for (std::size_t i = a.hash() & (n - 1);; i = (i + 1) & (n - 1)) {
                if (denied_slots[i].family() == ip_family::none) {
                    denied_slots[i] = a;
                    ++denied;
                    break;
                }
                if (denied_slots[i] == a) break;
            }
        }
    }

    /// Whether `src` is denied: one hash and a short probe; nothing when the set is empty.
    [[nodiscard]] bool is_denied(const ip_address& src) const noexcept { return is_denied(src, src.hash()); }
    /// The same, with `hash` = src.hash() already at hand.
    [[nodiscard]] bool is_denied(const ip_address& src, uint64_t hash) const noexcept
    {
        if (denied == 0) return false;
        const std::size_t mask = denied_slots.size() - 1;
        for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
            const ip_address& a = denied_slots[i];
            if (a.family() == ip_family::none) return false;
            if (a == src) return true;
        }
    }
};

static_assert(std::is_standard_layout_v<flood_policy>, "flood_policy is freed from its rcu_head, the first member");

/// Where the current flood policy is published (shared_state::flood). Owns the last one: the
/// runtime's teardown, after the workers stopped, deletes it.
struct flood_policy_slot {
    flood_policy* current = nullptr;

    flood_policy_slot() = default;
    flood_policy_slot(const flood_policy_slot&) = delete;
    flood_policy_slot& operator=(const flood_policy_slot&) = delete;
    ~flood_policy_slot() { delete current; }
};

namespace detail {
inline void free_flood_policy(rcu_head* head)
{
    delete reinterpret_cast<flood_policy*>(head);  // rcu is the first member
}
}  // namespace detail

/// Control core only: publishes `fresh` (null: flood protection off); the old object is freed
/// after every worker has passed a quiescent state.
inline void publish_flood_policy(flood_policy_slot& slot, std::unique_ptr<flood_policy> fresh)
{
    flood_policy* old = rcu::exchange(slot.current, fresh.release());
    if (old != nullptr) rcu::defer(&old->rcu, detail::free_flood_policy);
}

}  // namespace sbc::dataplane
