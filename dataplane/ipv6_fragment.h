// IPv6 fragmentation at the source (RFC 8200 4.5): routers never fragment IPv6, so a datagram
// sbcd originates that does not fit the path goes out as fragments it writes itself. Like the
// IPv4 one (udp_fragment.h), each fragment is one fresh mbuf from the worker's pool written once
// from a contiguous buffer, with our Ethernet (+802.1Q) header in front. Today it carries echo
// replies to reassembled echo requests; SIP over IPv6 will use it for large datagrams.
// Any thread, on mbufs it owns; no heap, locks or system calls.
#pragma once

#include <cstdint>
#include <span>

#include <rte_mbuf.h>

#include "common/address.h"
#include "dataplane/snapshot.h"

namespace sbc::dataplane {

/// The MTU sbcd sends IPv6 at (the interface MTU; never below the IPv6 minimum of 1,280).
constexpr uint32_t ipv6_mtu = 1500;
/// Bytes of the upper-layer datagram each fragment but the last carries at `mtu`: what fits
/// after the IPv6 header (40) and the fragment header (8), rounded down to the 8-byte unit.
constexpr uint32_t ipv6_fragment_step(uint32_t mtu) noexcept { return (mtu - 48) & ~7u; }
/// Fragments of the largest IPv6 payload (65,535 bytes) at the IPv6 minimum MTU.
constexpr uint32_t max_ipv6_fragments = (65535 + ipv6_fragment_step(1280) - 1) / ipv6_fragment_step(1280);

/// Frames the upper-layer datagram `data` (its header included, checksum already right) from
/// `src` to `dst` with next header `proto` as IPv6 fragments of at most `mtu` bytes each
/// (1280..9000, IPv6 header included), with identification `id`, hop limit `hop_limit` and
/// traffic class `tclass`. Takes the mbufs from `pool` in one bulk allocation, writes our
/// Ethernet header for `dst_mac` on `ifc` in front of each and puts them in order in `out`,
/// setting `n`. Returns false (nothing left allocated, `n` 0) when `data` is empty or larger
/// than an IPv6 payload can be, the addresses are not IPv6, or the pool is short.
bool frame_ipv6_fragments(rte_mempool* pool, const interface_info& ifc, const uint8_t* dst_mac, const ip_address& src,
                          const ip_address& dst, uint8_t proto, std::span<const uint8_t> data, uint32_t id,
                          uint8_t hop_limit, uint8_t tclass, uint32_t mtu, std::span<rte_mbuf*, max_ipv6_fragments> out,
                          uint32_t& n) noexcept;

}  // namespace sbc::dataplane
