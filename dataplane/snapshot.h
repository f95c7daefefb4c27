// The immutable snapshot that the control core publishes and workers read under RCU: everything
// a worker needs to decide about a packet that does not change per packet. Built by the control
// core (control/snapshot_build.cc), read by workers once per burst, freed after a grace period.
#pragma once

#include <array>
#include <bit>
#include <memory>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "common/address.h"
#include "common/limits.h"
#include "dataplane/rcu.h"
#include "sip-fastpath/proxy_tables.h"

namespace sbc::dataplane {

// common/limits.h; named here too, so that sbc::dataplane::max_interfaces keeps working.
using sbc::max_interfaces;
using sbc::max_interfaces_per_port;
constexpr uint16_t no_interface = 0xffff;
static_assert(max_interfaces < no_interface, "an interface index must differ from no_interface");

/// One configured interface as the dataplane sees it: a port, an optional VLAN, an address.
/// The address fields stay IPv4 words in host order: the packet path compares them with one
/// load and one mask per packet, and an IPv6 path will be a template over its own table rather
/// than a branch in this one. ip(), prefix() and gateway_ip() give the common vocabulary
/// (common/address.h) for everything else.
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

    /// The interface's own address.
    [[nodiscard]] sbc::ip_address ip() const noexcept { return sbc::ip_address::v4(address); }
    /// Its address with the prefix length of netmask ("198.18.0.1/24", host bits kept).
    [[nodiscard]] sbc::ip_prefix prefix() const noexcept
    {
        return sbc::ip_prefix{ip(), static_cast<uint8_t>(std::popcount(netmask))};
    }
    /// Its default gateway; unset (ip_family::none) when it has none.
    [[nodiscard]] sbc::ip_address gateway_ip() const noexcept
    {
        return gateway == 0 ? sbc::ip_address{} : sbc::ip_address::v4(gateway);
    }
};

/// The netmask (host order) of a prefix length 0..32.
[[nodiscard]] constexpr uint32_t netmask_of(unsigned len) noexcept
{
    return len == 0 ? 0 : len >= 32 ? ~uint32_t{0} : ~uint32_t{0} << (32 - len);
}

struct snapshot {
    rcu_head rcu{};              ///< for deferred free; must stay the first member
    uint64_t generation = 0;     ///< increases with every publish
    std::vector<interface_info> interfaces;
    /// Trunks, peers, routes, retry policy; null when the config has no SIP service.
    std::shared_ptr<const sip::proxy_tables> proxy;
    /// interface index by (port, vlan): by_port[port] lists the interfaces on that port.
    std::array<std::array<uint16_t, max_interfaces_per_port>, max_ports> by_port{};

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
    /// Returns how many interfaces it could not index (beyond max_interfaces, on a port id
    /// beyond max_ports, or beyond max_interfaces_per_port on one port): their frames would
    /// find no interface. The config refuses such files (control/config.cc), so a builder
    /// treats anything but 0 as an error.
    std::size_t index_interfaces() noexcept
    {
        for (auto& p : by_port) p.fill(no_interface);
        std::size_t unindexed = 0;
        for (std::size_t i = 0; i < interfaces.size(); ++i) {
            bool placed = false;
            if (i < max_interfaces && interfaces[i].port_id < by_port.size())
                for (auto& s : by_port[interfaces[i].port_id]) {
                    if (s == no_interface) {
                        s = static_cast<uint16_t>(i);
                        placed = true;
                        break;
                    }
                }
            if (!placed) ++unindexed;
        }
        return unindexed;
    }
};

// The deferred free finds the snapshot from its rcu_head, the first member.
static_assert(std::is_standard_layout_v<snapshot>, "snapshot must stay standard-layout");

/// Where the current snapshot is published. Workers read `current` with rcu::dereference.
struct snapshot_slot {
    snapshot* current = nullptr;
};

}  // namespace sbc::dataplane
