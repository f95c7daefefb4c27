// How relayed media leaves through each media address: its port, VLAN, MACs, subnet, TOS byte
// and the port's checksum offloads. One table per snapshot (dataplane/snapshot.h), built by the
// control core with the rest of the snapshot (control/snapshot_build.cc, so that `sbcctl
// reload` applies a dscp_rtp change), read by every worker's relay (rtp/relay.cc) once per
// packet through the snapshot of its burst. Immutable once published. No DPDK types.
#pragma once

#include <array>
#include <cstdint>

#include "common/limits.h"

namespace sbc::rtp {

/// How to leave through one media address.
struct media_egress {
    uint16_t port_id = 0;
    uint16_t vlan = 0;          ///< 0: untagged
    uint8_t mac[6]{};
    uint32_t netmask = 0;       ///< host order
    uint32_t gateway = 0;       ///< host order, 0: none
    uint16_t iface = 0;         ///< the interface's index in the snapshot (for next hops held for ARP)
    bool tx_udp_cksum = false;  ///< the port computes UDP checksums (RTE_ETH_TX_OFFLOAD_UDP_CKSUM)
    bool tx_ip_cksum = false;   ///< the port computes IPv4 header checksums
    uint8_t tos = tos_of_dscp(default_dscp_rtp);  ///< IPv4 TOS byte of what leaves here: the interface's dscp_rtp (EF)

    bool operator==(const media_egress&) const = default;
};

/// By media address index ([media] addresses, in order).
using media_egress_table = std::array<media_egress, max_media_addresses>;

}  // namespace sbc::rtp
