// IPv4 fragmentation of a UDP datagram the SBC originates that is larger than the interface
// MTU (a SIP INVITE grown past 1,500 bytes by our Via and Record-Route, a 200 OK with a large
// SDP). Hand-written into plain mbufs rather than rte_ipv4_fragment_packet: that needs the
// whole datagram in an mbuf chain first, direct and indirect pools, and an Ethernet header
// prepended to each fragment afterwards; here each fragment is one fresh mbuf from the
// worker's own pool, written once from the proxy's buffer (which is in cache), with its IPv4
// checksum computed from the values and the UDP checksum over the whole payload where it lies.
// Any thread, on mbufs it owns; no heap, locks or system calls.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include <rte_mbuf.h>

#include "common/address.h"
#include "dataplane/snapshot.h"
#include "dataplane/udp_frame.h"

namespace sbc::dataplane {

/// Largest UDP payload of one IPv4 datagram (65,535 less the IPv4 and UDP headers).
constexpr uint32_t max_udp4_payload = 65535 - udp4_headers;
/// Bytes of the UDP datagram (header and payload) each fragment but the last carries at
/// `mtu`: what fits after a 20-byte IPv4 header, rounded down to the 8-byte unit of offsets.
constexpr uint32_t fragment_step(uint32_t mtu) noexcept { return (mtu - 20) & ~7u; }
/// Fragments of the largest datagram at the smallest MTU we fragment for (1,280).
constexpr uint32_t max_fragments = (max_udp4_payload + 8 + fragment_step(1280) - 1) / fragment_step(1280);

enum class fragment_result : uint8_t {
    ok,
    too_big,    ///< the payload exceeds max_udp4_payload, or the addresses are not IPv4
    no_buffer,  ///< the pool had too few mbufs for every fragment (none taken)
};

/// Frames the UDP datagram carrying `payload` from `src` to `dst` as IPv4 fragments of at
/// most `mtu` bytes each (1280..9000; IPv4 header included, Ethernet not), all with id
/// `ip_id`, none with DF, each with its own header checksum; the UDP checksum covers the whole
/// datagram. Takes the mbufs from `pool` in one bulk allocation, writes our Ethernet (+802.1Q)
/// header for `dst_mac` on `ifc` in front of each, and puts them in order in `out`, setting
/// `n`. On failure nothing is left allocated and `n` is 0.
fragment_result frame_udp4_fragments(rte_mempool* pool, const interface_info& ifc, const uint8_t* dst_mac,
                                     const endpoint& src, const endpoint& dst, std::string_view payload,
                                     uint16_t ip_id, uint32_t mtu, std::span<rte_mbuf*, max_fragments> out,
                                     uint32_t& n) noexcept;

/// Whether the IPv4 packet at `ip` is a fragment other than the first (offset not 0): what
/// the hold for ARP (sip_unsent) must not read as a SIP datagram.
bool is_later_fragment(const void* ip) noexcept;

}  // namespace sbc::dataplane
