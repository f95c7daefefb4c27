// The RTP/RTCP relay stage over mbufs: for each UDP datagram addressed to one of our media
// ports, find its flow in the flow table, check or latch the sender, update the flow's
// counters (packets, bytes, RFC 3550 loss and jitter), and rewrite Ethernet, IPv4 and UDP in
// place to go out of our port facing the other leg towards that leg's far end, checksums
// fixed incrementally (or left to the NIC when the port offers UDP checksum offload).
//
// Threads: any worker (RCU read side: the caller is inside its read-side section, as every
// worker loop is). No heap, locks, system calls or logging; counters are summed per burst.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

#include <rte_mbuf.h>

#include "common/counter.h"
#include "common/counter_list.h"
#include "common/limits.h"
#include "common/counter.h"
#include "rtp/flow_table.h"
#include "rtp/media_egress.h"

namespace sbc::rtp {

/// Why the relay dropped a packet. Expanded into the enum, metric labels and help texts.
#define SBC_RELAY_DROPS(X)                                                                 \
    X(unknown_port, "RTP/RTCP to a media port with no call on it")                         \
    X(source_mismatch, "media from an address other than the latched (or, strict, SDP) one") \
    X(no_destination, "the other leg's address is not known yet (no SDP answer, no latch)")  \
    X(no_neighbour, "the other leg's next hop did not resolve while the packet was held, or the hold was full") \
    X(no_route, "the other leg's address is off-link and its interface has no gateway")    \
    X(too_short, "shorter than an RTP header (12 bytes) or an RTCP header (8 bytes)")

SBC_LIST_ENUM(relay_drop, SBC_RELAY_DROPS);
constexpr std::size_t relay_drop_count = list_size<relay_drop>;
std::string_view relay_drop_name(relay_drop r) noexcept;
std::string_view relay_drop_help(relay_drop r) noexcept;

/// What one worker's relay did, summed per burst. One writer (the worker); relaxed readers.
struct alignas(64) relay_counters {
    /// [side]: packets and bytes (UDP payload) relayed from leg A (0) and from leg B (1).
    std::array<sbc::single_writer<uint64_t>, 2> packets{};
    std::array<sbc::single_writer<uint64_t>, 2> bytes{};
    sbc::single_writer<uint64_t> rtcp_packets;
    std::array<sbc::single_writer<uint64_t>, relay_drop_count> drops{};
    sbc::single_writer<uint64_t> latched;  ///< far ends learned from packets
};

/// Resolves a next hop to a MAC for packets whose destination has not sent anything yet
/// (not latched). Returns false when unknown. Called at most once per such packet.
using neighbour_lookup_fn = bool (*)(const void* ctx, uint32_t next_hop, uint8_t mac[6]) noexcept;

/// What the relay needs besides the table and the egress: read-only for the life of the
/// dataplane. The egress (media_egress.h) rides the snapshot instead, so that a reload changes it.
struct relay_env {
    flow_table* table = nullptr;
    bool strict = false;              ///< [media] latching = "strict"
    neighbour_lookup_fn lookup = nullptr;
    const void* lookup_ctx = nullptr;
    uint64_t tsc_hz = 1;              ///< for RFC 3550 arrival times in timestamp units
};

/// Packets the relay rewrote, with the port each must leave on. A packet whose next hop has no
/// MAC yet (hop[i] not 0: that hop, host order, on interface iface[i]) has everything written
/// but its destination MAC: the caller holds it until ARP answers.
struct relay_out {
    std::array<rte_mbuf*, burst_size> pkts;
    std::array<uint16_t, burst_size> port;
    std::array<uint32_t, burst_size> hop;
    std::array<uint16_t, burst_size> iface;
    uint16_t n = 0;
};

/// The relay stage. `pkts` are validated IPv4/UDP datagrams (single segment, l2_len and
/// l3_len set, Ethernet header at the start) whose destination address is a media address
/// and port in range; `addr[i]` is that address's index. Each is either rewritten and put
/// in `out` (the caller transmits them, or holds those whose next hop is unresolved), or freed
/// and counted in `c`. n <= burst_size.
/// `egress` is the burst's snapshot's; `now_tsc` is the burst's arrival time; `now_ms` the
/// worker clock for inactivity.
void relay_burst(const relay_env& env, const media_egress_table& egress, rte_mbuf** pkts, const uint8_t* addr, uint16_t n, uint64_t now_tsc,
                 uint64_t now_ms, relay_out& out, relay_counters& c) noexcept;

}  // namespace sbc::rtp
