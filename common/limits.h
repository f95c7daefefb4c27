// The sizes of sbc's fixed tables, and the defaults of the sizes the operator may set, in one
// place: the config refuses what these cannot hold (docs/config.md, "Limits"), and the tables
// that hold it are declared with these names. Plain constants: any thread, any layer.
//
// A limit that changes here changes a table's size everywhere it is used; the static_asserts
// at the end say which other types each one must still fit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace sbc {

// --- Fixed table sizes ---

/// Worker lcores. Sizes the worker-to-worker SIP handoff rings (worker::handoff_in/out), the
/// per-worker views of the control core and the media flow table's worker slices.
inline constexpr unsigned max_workers = 64;

/// Configured [[interface]]s: the snapshot's interface index is a uint16_t.
inline constexpr std::size_t max_interfaces = 32;

/// DPDK ports (distinct devices); also the highest port id + 1 a worker can index (worker::tx
/// and the snapshot's by_port are arrays indexed by port id).
inline constexpr uint16_t max_ports = 32;

/// Interfaces (VLANs or the untagged one) on one port: the snapshot's by_port slots.
inline constexpr std::size_t max_interfaces_per_port = 4;

/// Peers in the proxy tables, static and learned from DNS together: the size of the
/// peer_health array of atomic words indexed by peer id.
inline constexpr std::size_t max_peers = 4096;

/// Canary peers at once: a call's matching canaries are one 64-bit mask.
inline constexpr std::size_t max_canaries = 64;

/// Trunks (and routes) whose INVITEs are counted one by one (sip::proxy_stats); the config
/// refuses more trunks, and routes past this many are counted together with calls that
/// matched no route.
inline constexpr std::size_t max_counted = 256;

/// Trunks: each is counted on its own, so no more than are counted.
inline constexpr std::size_t max_trunks = max_counted;

/// [[region]]s: a peer and a peer group name their region by a uint16_t index.
inline constexpr std::size_t max_regions = std::numeric_limits<uint16_t>::max();

/// [[peer_group]]s: a route names its peer group by a uint16_t index.
inline constexpr std::size_t max_peer_groups = std::numeric_limits<uint16_t>::max();

/// Media addresses in [media]: the relay's egress table and the flow table's address index.
inline constexpr unsigned max_media_addresses = 64;

/// Entries of the neighbour (ARP) table; a power of two (open addressing with a mask).
inline constexpr std::size_t neighbour_capacity = 1024;

/// Packets a worker takes from one RX queue at once, and the TX buffer's flush threshold.
inline constexpr uint16_t burst_size = 32;

/// Entries of the workers-to-control-core event ring; a power of two (rte_ring).
inline constexpr unsigned event_ring_size = 4096;

/// Entries of each worker-to-worker SIP handoff ring; a power of two (rte_ring).
inline constexpr unsigned handoff_ring_size = 4096;

// --- Defaults of the sizes the operator sets ([limits], [media], [dpdk], [[interface]]) ---
// Read by the config (control/config.h) and by the dataplane's own option structs alike.

/// [dpdk] memory_mb: EAL memory without hugepages.
inline constexpr unsigned default_memory_mb = 1024;
/// [dpdk] mbufs_per_worker: each worker's packet buffer pool.
inline constexpr unsigned default_mbufs_per_worker = 16384;
/// [dpdk] rx_ring / tx_ring: descriptors per RX and per TX queue.
inline constexpr unsigned default_rx_ring = 1024;
inline constexpr unsigned default_tx_ring = 1024;
/// Entries of each ring to and from the stream thread, and the bytes of one stream message buffer.
inline constexpr unsigned default_stream_ring = 1024;
inline constexpr unsigned default_stream_message_bytes = 16384;
/// [[interface]] dscp_sip / dscp_rtp: CS3 for signalling, EF for media (RFC 4594).
inline constexpr uint8_t default_dscp_sip = 24;
inline constexpr uint8_t default_dscp_rtp = 46;
/// The IPv4 TOS byte of a DSCP (ECN bits 0).
constexpr uint8_t tos_of_dscp(uint8_t dscp) noexcept { return static_cast<uint8_t>(dscp << 2); }

/// [limits] transactions_per_worker: SIP call setups under way (and lingering) per worker.
inline constexpr uint32_t default_transactions_per_worker = 262144;
/// [limits] dialogs_per_worker: established calls per worker.
inline constexpr uint32_t default_dialogs_per_worker = 131072;
/// [media] sessions_per_worker: calls with media per worker.
inline constexpr uint32_t default_media_sessions_per_worker = 65536;

// --- What each limit must still fit ---

// Events carry the worker id in a uint8_t, and so does each worker's sip::proxy.
static_assert(max_workers - 1 <= std::numeric_limits<uint8_t>::max(), "worker ids must fit a uint8_t");
// The snapshot's interface index is a uint16_t, and 0xffff means "no interface".
static_assert(max_interfaces < std::numeric_limits<uint16_t>::max(), "interface indices must fit a uint16_t");
static_assert(max_interfaces_per_port <= max_interfaces, "a port cannot carry more interfaces than there are");
// DPDK port ids are uint16_t.
static_assert(max_ports <= std::numeric_limits<uint16_t>::max(), "port ids must fit a uint16_t");
// Canary slots are bits of one uint64_t mask, and a peer's slot is a uint8_t (0xff: none).
static_assert(max_canaries <= 64, "canary slots must fit a 64-bit mask");
// Peer ids are uint32_t and 0xffffffff means "no peer".
static_assert(max_peers < std::numeric_limits<uint32_t>::max(), "peer ids must fit a uint32_t");
// A peer names the trunk its calls leave from in a uint16_t.
static_assert(max_trunks <= std::numeric_limits<uint16_t>::max(), "trunk indices must fit a uint16_t");
// Media address indices are a uint8_t in a port pair.
static_assert(max_media_addresses <= 256, "media address indices must fit a uint8_t");
static_assert((neighbour_capacity & (neighbour_capacity - 1)) == 0, "neighbour_capacity must be a power of two");
static_assert((event_ring_size & (event_ring_size - 1)) == 0, "rte_ring sizes are powers of two");
static_assert((handoff_ring_size & (handoff_ring_size - 1)) == 0, "rte_ring sizes are powers of two");

}  // namespace sbc
