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

#include "common/address.h"
#include "common/limits.h"
#include "dataplane/rcu.h"
#include "rtp/media_egress.h"
#include "sip-fastpath/proxy_tables.h"

namespace sbc::dataplane {

// common/limits.h; named here too, so that sbc::dataplane::max_interfaces keeps working.
using sbc::max_interfaces;
using sbc::max_interfaces_per_port;
constexpr uint16_t no_interface = 0xffff;
static_assert(max_interfaces < no_interface, "an interface index must differ from no_interface");

/// One configured interface as the dataplane sees it: a port, an optional VLAN, an address.
/// The address is in the common vocabulary (common/address.h), so that IPv6 adds code, not
/// fields. The IPv4 packet path reads it through the *_v4 accessors below, inline on host-order
/// words: one load of the address and a mask shifted from the prefix length, nothing stored
/// twice. An IPv6 path will be a template over accessors of its own, not a branch in these.
struct interface_info {
    uint16_t port_id = 0;
    uint16_t vlan = 0;           ///< 0: untagged
    /// Our address on this interface with its prefix length, as configured: host bits kept
    /// ("198.18.0.1/24"), so that address.addr is the address itself.
    sbc::ip_prefix address;
    /// The default gateway, same family as `address`, inside its prefix; unset
    /// (ip_family::none) when the interface has none.
    sbc::ip_address gateway;
    std::array<uint8_t, 6> mac{};
    std::string name;
    /// The IPv4 TOS byte (DSCP << 2, ECN 0) of what we send from here: SIP (UDP datagrams and
    /// their fragments, OPTIONS probes, TCP/TLS sockets) and relayed RTP/RTCP. The config's
    /// dscp_sip and dscp_rtp (defaults CS3 and EF).
    uint8_t tos_sip = tos_of_dscp(default_dscp_sip);
    uint8_t tos_rtp = tos_of_dscp(default_dscp_rtp);

    /// Whether `ip` is inside our prefix; an address of another family never is.
    [[nodiscard]] bool on_link(const sbc::ip_address& ip) const noexcept
    {
        return ip.is_v4() ? on_link_v4(ip.v4_host()) : address.contains(ip);  // IPv4 inline, no masked() calls
    }
    /// The neighbour to resolve to reach `ip`: `ip` itself when on-link, else the gateway;
    /// unset when unreachable (no gateway, or `ip` of another family than ours).
    [[nodiscard]] sbc::ip_address next_hop(const sbc::ip_address& ip) const noexcept
    {
        if (on_link(ip)) return ip;
        return ip.family() == address.addr.family() ? gateway : sbc::ip_address{};
    }

    /// Our IPv4 address in host order; 0 when the interface is not IPv4.
    [[nodiscard]] uint32_t v4() const noexcept { return address.addr.v4_host(); }
    /// The host-order IPv4 netmask of our prefix length (meaningful for IPv4 interfaces only).
    [[nodiscard]] uint32_t v4_mask() const noexcept { return sbc::ipv4_netmask(address.len); }
    /// on_link() for a host-order IPv4 address: the packet path's one compare. False on an
    /// interface that is not IPv4.
    [[nodiscard]] bool on_link_v4(uint32_t ip) const noexcept
    {
        return address.addr.is_v4() && ((ip ^ v4()) & v4_mask()) == 0;
    }
    /// next_hop() for a host-order IPv4 address; 0 when unreachable.
    [[nodiscard]] uint32_t next_hop_v4(uint32_t ip) const noexcept { return on_link_v4(ip) ? ip : gateway.v4_host(); }
};

struct snapshot {
    rcu_head rcu{};              ///< for deferred free; must stay the first member
    uint64_t generation = 0;     ///< increases with every publish
    std::vector<interface_info> interfaces;
    /// Trunks, peers, routes, retry policy; null when the config has no SIP service.
    std::shared_ptr<const sip::proxy_tables> proxy;
    /// How relayed media leaves through each [media] address (port, VLAN, MACs, subnet, the
    /// interface's dscp_rtp as TOS): built with the rest of the snapshot, so that a reload
    /// changes it (dataplane/rtp_stage.h media_egress_of). Unused without [media].
    rtp::media_egress_table media_egress{};
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
