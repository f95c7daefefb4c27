// The immutable snapshot that the control core publishes and workers read under RCU: everything
// a worker needs to decide about a packet that does not change per packet. Built by the control
// core (control/snapshot_build.cc), read by workers once per burst, freed after a grace period.
#pragma once

#include <array>
#include <memory>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "dataplane/rcu.h"
#include "sip-fastpath/proxy_tables.h"

namespace sbc::dataplane {

constexpr std::size_t max_interfaces = 32;
constexpr uint16_t no_interface = 0xffff;

/// One configured interface as the dataplane sees it: a port, an optional VLAN, an address.
struct interface_info {
    uint16_t port_id = 0;
    uint16_t vlan = 0;           ///< 0: untagged
    uint32_t address = 0;        ///< host byte order
    uint32_t netmask = 0;        ///< host byte order
    uint32_t gateway = 0;        ///< host byte order, 0 = none
    std::array<uint8_t, 6> mac{};
    std::string name;

    [[nodiscard]] bool on_link(uint32_t ip) const noexcept { return (ip & netmask) == (address & netmask); }
    /// The address to resolve to reach `ip`: itself when on-link, else the gateway (0: unreachable).
    [[nodiscard]] uint32_t next_hop(uint32_t ip) const noexcept { return on_link(ip) ? ip : gateway; }
};

struct snapshot {
    rcu_head rcu{};              ///< for deferred free; must stay the first member
    uint64_t generation = 0;     ///< increases with every publish
    std::vector<interface_info> interfaces;
    /// Trunks, peers, routes, retry policy; null when the config has no SIP service.
    std::shared_ptr<const sip::proxy_tables> proxy;
    /// interface index by (port, vlan): port_vlan_index[port] lists the interfaces on that port.
    std::array<std::array<uint16_t, 4>, 32> by_port{};

    /// Index of the interface for frames on `port` with `vlan` (0 untagged), or no_interface.
    [[nodiscard]] uint16_t find_interface(uint16_t port, uint16_t vlan) const noexcept
    {
        if (port >= by_port.size()) return no_interface;
        for (uint16_t idx : by_port[port]) {
            if (idx == no_interface) break;
            if (interfaces[idx].vlan == vlan) return idx;
        }
        return no_interface;
    }

    /// Fills by_port from interfaces; the builder calls it once after filling interfaces.
    void index_interfaces() noexcept
    {
        for (auto& p : by_port) p.fill(no_interface);
        for (uint16_t i = 0; i < interfaces.size(); ++i) {
            auto& slots = by_port[interfaces[i].port_id % by_port.size()];
            for (auto& s : slots) {
                if (s == no_interface) {
                    s = i;
                    break;
                }
            }
        }
    }
};

// The deferred free finds the snapshot from its rcu_head, the first member.
static_assert(std::is_standard_layout_v<snapshot>, "snapshot must stay standard-layout");

/// Where the current snapshot is published. Workers read `current` with rcu::dereference.
struct snapshot_slot {
    snapshot* current = nullptr;
};

}  // namespace sbc::dataplane
