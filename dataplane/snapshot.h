// The immutable snapshot that the control core publishes and workers read under RCU: everything
// a worker needs to decide about a packet that does not change per packet. Built by the control
// core (control/snapshot_build.cc), read by workers once per burst, freed after a grace period.
#pragma once

#include <array>
#include <memory>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "common/address.h"
#include "common/limits.h"
#include "dataplane/nd.h"
#include "dataplane/rcu.h"
#include "rtp/media_egress.h"
#include "sip-fastpath/proxy_tables.h"

namespace sbc::dataplane {

// common/limits.h; named here too, so that sbc::dataplane::max_interfaces keeps working.
using sbc::max_interfaces;
using sbc::max_interfaces_per_port;
constexpr uint16_t no_interface = 0xffff;
static_assert(max_interfaces < no_interface, "an interface index must differ from no_interface");

/// One configured interface as the dataplane sees it: a port, an optional VLAN, an IPv4 address
/// and optionally an IPv6 one. The addresses are in the common vocabulary (common/address.h).
/// The IPv4 packet path reads them through the *_v4 accessors below, inline on host-order
/// words: one load of the address and a mask shifted from the prefix length, nothing stored
/// twice; the IPv6 stages (dataplane/ipv6.cc) through the *6 ones.
struct interface_info {
    uint16_t port_id = 0;
    uint16_t vlan = 0;           ///< 0: untagged
    /// Our address on this interface with its prefix length, as configured: host bits kept
    /// ("198.18.0.1/24"), so that address.addr is the address itself.
    sbc::ip_prefix address;
    /// The default gateway, same family as `address`, inside its prefix; unset
    /// (ip_family::none) when the interface has none.
    sbc::ip_address gateway;
    /// Our IPv6 address with its prefix length, host bits kept ("2001:db8::1/64"); unset
    /// (ip_family::none) when the interface does not run IPv6.
    sbc::ip_prefix address6;
    /// Our link-local address (fe80:: and the MAC as modified EUI-64, dataplane/nd.h), set
    /// exactly when address6 is: Neighbor Discovery and routers speak to it.
    sbc::ip_address link_local6;
    /// The IPv6 default gateway: a link-local address or one inside address6's prefix; unset
    /// when there is none.
    sbc::ip_address gateway6;
    std::array<uint8_t, 6> mac{};
    std::string name;
    /// The IPv4 TOS byte (DSCP << 2, ECN 0) of what we send from here: SIP (UDP datagrams and
    /// their fragments, OPTIONS probes, TCP/TLS sockets) and relayed RTP/RTCP. The config's
    /// dscp_sip and dscp_rtp (defaults CS3 and EF).
    uint8_t tos_sip = tos_of_dscp(default_dscp_sip);
    uint8_t tos_rtp = tos_of_dscp(default_dscp_rtp);

    /// Whether `ip` is inside our prefix of its family (for IPv6 also: link-local); an address
    /// of a family the interface does not run never is.
    [[nodiscard]] bool on_link(const sbc::ip_address& ip) const noexcept
    {
        if (ip.is_v4()) return on_link_v4(ip.v4_host());  // IPv4 inline, no masked() calls
        return has_v6() && ip.is_v6() && (address6.contains(ip) || is_link_local6(ip.v6_bytes().data()));
    }
    /// The neighbour to resolve to reach `ip`: `ip` itself when on-link, else the gateway of
    /// its family; unset when unreachable (no gateway, or a family the interface does not run).
    [[nodiscard]] sbc::ip_address next_hop(const sbc::ip_address& ip) const noexcept
    {
        if (on_link(ip)) return ip;
        if (ip.is_v4()) return address.addr.is_v4() ? gateway : sbc::ip_address{};
        return ip.is_v6() && has_v6() ? gateway6 : sbc::ip_address{};
    }
    /// Whether the interface runs IPv6.
    [[nodiscard]] bool has_v6() const noexcept { return address6.addr.is_v6(); }
    /// Whether the 16 bytes at `a` are one of our IPv6 unicast addresses (global or link-local).
    [[nodiscard]] bool is_ours6(const uint8_t* a) const noexcept
    {
        if (!has_v6()) return false;
        const auto g = address6.addr.v6_bytes(), ll = link_local6.v6_bytes();
        return std::memcmp(a, g.data(), 16) == 0 || std::memcmp(a, ll.data(), 16) == 0;
    }
    /// Our address to answer `peer` from: the link-local one for a link-local peer, else the global.
    [[nodiscard]] sbc::ip_address source6_for(const uint8_t* peer) const noexcept
    {
        return is_link_local6(peer) ? link_local6 : address6.addr;
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
    /// The longest chain of IPv6 extension headers the IPv6 stage walks before the upper
    /// layer ([ipv6] max_extension_headers); a longer one is dropped and counted.
    uint8_t ipv6_max_extension_headers = 8;
    /// ICMPv6 errors each worker may send ([ipv6] icmp_error_rate per second, icmp_error_burst
    /// at once; RFC 4443 2.4 f); rate 0: none.
    uint32_t icmp6_error_rate = 100;
    uint32_t icmp6_error_burst = 10;
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
