// Per-worker counters: what each worker received, sent, dropped (by reason) and how busy it was.
// Written by exactly one worker (its owner), read by the control core and the HTTP thread.
// No DPDK types here, so the unit tier can test it without EAL.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/counter_list.h"
#include "common/counter.h"

namespace sbc::dataplane {

/// Why a packet was dropped. Expanded once into the enum, the metric label and the help text.
#define SBC_DROP_REASONS(X)                                                              \
    X(eth_truncated, "frame shorter than its Ethernet or 802.1Q header")                 \
    X(vlan_unknown, "802.1Q tag of a VLAN that no interface uses")                        \
    X(ethertype_unsupported, "EtherType other than IPv4, IPv6 and ARP")                   \
    X(arp_malformed, "ARP that is not Ethernet/IPv4 or is truncated")                    \
    X(arp_not_for_us, "ARP request for an address that is not ours")                      \
    X(ipv4_truncated, "IPv4 header longer than the frame")                               \
    X(ipv4_bad_version, "IP version other than 4")                                        \
    X(ipv4_bad_header_length, "IPv4 IHL below 5 or beyond the total length")             \
    X(ipv4_bad_total_length, "IPv4 total length beyond the frame or below the header")   \
    X(ipv4_bad_checksum, "IPv4 header checksum wrong")                                    \
    X(ipv4_not_for_us, "IPv4 destination that is not one of our addresses")             \
    X(ipv4_protocol_unsupported, "IP protocol other than ICMP, UDP and TCP")              \
    X(frag_failed, "IPv4 or IPv6 fragment that could not be reassembled (table full, overlap, timed out)") \
    X(icmp_truncated, "ICMP shorter than its header")                                     \
    X(icmp_bad_checksum, "ICMP checksum wrong")                                           \
    X(icmp_unhandled, "ICMP type that we neither answer nor report")                     \
    X(ipv6_truncated, "IPv6 header or payload length beyond the frame")                  \
    X(ipv6_bad_version, "IP version other than 6 under the IPv6 EtherType")               \
    X(ipv6_bad_source, "IPv6 source that is multicast")                                   \
    X(ipv6_not_for_us, "IPv6 destination that is neither our address nor a group we joined") \
    X(ipv6_bad_extension, "IPv6 extension header beyond the payload, hop-by-hop not first, or a routing header with segments left") \
    X(ipv6_extension_chain_too_long, "IPv6 extension headers beyond [ipv6] max_extension_headers or 472 bytes") \
    X(ipv6_fragment, "IPv6 fragment whose fragment header follows other extension headers (not reassembled)") \
    X(ipv6_protocol_unsupported, "IPv6 upper layer other than ICMPv6 and UDP (TCP over IPv6 is not built yet)") \
    X(icmp6_truncated, "ICMPv6 shorter than its header or its message")                   \
    X(icmp6_bad_checksum, "ICMPv6 checksum wrong")                                        \
    X(icmp6_unhandled, "ICMPv6 type that we neither answer nor report (also a reassembled one other than echo)") \
    X(icmp6_no_buffer, "ICMPv6 echo reply not sent: too few mbufs for its fragments")        \
    X(nd_invalid, "Neighbor Discovery with a hop limit other than 255, a code, a multicast target or a bad option (RFC 4861 7.1)") \
    X(nd_not_for_us, "Neighbor Solicitation for an address that is not ours")             \
    X(udp_truncated, "UDP header or length beyond the IP payload")                       \
    X(udp6_no_checksum, "UDP over IPv6 without a checksum (RFC 8200 8.1 makes it mandatory)") \
    X(udp_bad_checksum, "UDP checksum wrong")                                             \
    X(udp_port_closed, "UDP to a port nobody listens on")                                 \
    X(neighbour_unknown, "next hop with no MAC: ARP unanswered while the packet was held, or no route") \
    X(neighbour_hold_full, "packet for a next hop being resolved: its hold (8 per hop, 16 hops) was full") \
    X(tx_full, "transmit queue full")                                                     \
    X(event_ring_full, "event for the control core lost: ring full")                      \
    X(sip_handoff_full, "SIP datagram for another worker lost: its handoff ring was full") \
    X(sip_no_buffer, "SIP message not sent: no mbuf free in the worker's pool")         \
    X(sip_too_big, "SIP message not sent: larger than one UDP datagram (65,507 bytes)")   \
    X(sip_no_interface, "SIP message not sent: no interface has its source address")       \
    X(sip_unreadable, "SIP datagram dropped: its segments could not be read into one buffer") \
    X(sip_no_transport, "SIP message for a TCP or TLS leg while no stream thread runs") \
    X(sip_stream_full, "SIP message for a TCP or TLS leg lost: the ring to the stream thread was full") \
    X(tcp_no_streams, "TCP while no trunk or peer uses TCP or TLS")                       \
    X(tcp_not_allowed, "TCP from a source no trunk allows and no peer has, or to a closed port") \
    X(tcp_truncated, "TCP header beyond the IP payload")                                  \
    X(kernel_ring_full, "TCP segment for the kernel lost: the exception ring was full") \
    X(flood_unknown_source, "UDP SIP from a source no trunk allows and no peer has, over [flood] unknown_rate (before parsing)") \
    X(flood_rate_trusted, "UDP SIP from a trusted source over [flood] trusted_rate (before parsing; never denied)") \
    X(flood_rate_untrusted, "UDP SIP from an untrusted source over [flood] untrusted_rate (before parsing; reported for denial)") \
    X(flood_rate_untrusted_trunk, "UDP SIP from an untrusted source while its trunk's untrusted sources together are over [flood] untrusted_trunk_rate (before parsing; not reported)") \
    X(flood_denied, "UDP SIP from a source on the deny list (before parsing)")

SBC_LIST_ENUM(drop_reason, SBC_DROP_REASONS);
constexpr std::size_t drop_reason_count = list_size<drop_reason>;

/// Stable metric label of a drop reason ("ipv4_bad_checksum").
std::string_view drop_reason_name(drop_reason r) noexcept;
/// One-line operator explanation of a drop reason.
std::string_view drop_reason_help(drop_reason r) noexcept;

/// Stages of the worker pipeline; each counts the packets it took in.
#define SBC_STAGES(X) X(eth) X(arp) X(ipv4) X(frag) X(icmp) X(udp) X(sip) X(tcp) X(ipv6) X(frag6) X(icmp6) X(udp6)

enum class stage : uint8_t {
#define SBC_X(name) name,
    SBC_STAGES(SBC_X)
#undef SBC_X
};

constexpr std::size_t stage_count = 0
#define SBC_X(name) +1
    SBC_STAGES(SBC_X)
#undef SBC_X
    ;

std::string_view stage_name(stage s) noexcept;

/// A single-writer counter (common/counter.h): the owning worker adds, anyone reads, relaxed.
using counter = sbc::single_writer<uint64_t>;

/// Everything one worker counts. Cache-line aligned so two workers never share a line.
struct alignas(64) worker_counters {
    counter rx_packets;
    counter rx_bytes;
    counter tx_packets;
    counter tx_bytes;
    std::array<counter, stage_count> stage_packets;
    std::array<counter, drop_reason_count> drops;
    counter events_sent;   ///< events pushed to the control core
    counter neighbour_held;      ///< packets held for a next hop while ARP resolved it
    counter neighbour_released;  ///< held packets sent once their next hop resolved
    counter sip_fragments_sent;  ///< IPv4 fragments of SIP datagrams over the MTU (udp_fragment.h)
    counter icmp6_errors_sent;        ///< ICMPv6 errors sent about what we received (dataplane/icmp6.cc)
    counter icmp6_errors_suppressed;  ///< ICMPv6 errors not sent: over [ipv6] icmp_error_rate
    counter sip_handed_off;  ///< SIP inputs handed to the worker that owns their call (handoff ring)
    counter sip_handed_in;   ///< SIP inputs taken from other workers' handoff rings
    counter cdr_records;   ///< call records handed to the control core (dataplane/cdr_out.h)
    counter cdr_dropped;   ///< call records lost: the ring to the control core was full
    counter loops;         ///< loop iterations
    counter busy_loops;    ///< iterations that received or sent something
    counter busy_cycles;   ///< TSC cycles spent in busy iterations
    counter total_cycles;  ///< TSC cycles since the loop started

    void drop(drop_reason r, uint64_t n = 1) noexcept { drops[static_cast<std::size_t>(r)].add(n); }
    void entered(stage s, uint64_t n) noexcept { stage_packets[static_cast<std::size_t>(s)].add(n); }
};

/// A plain copy of counters, summed over workers or taken from one; what the control core
/// renders for sbcctl and /metrics.
struct counters_view {
    uint64_t rx_packets = 0;
    uint64_t rx_bytes = 0;
    uint64_t tx_packets = 0;
    uint64_t tx_bytes = 0;
    std::array<uint64_t, stage_count> stage_packets{};
    std::array<uint64_t, drop_reason_count> drops{};
    uint64_t events_sent = 0;
    uint64_t neighbour_held = 0;
    uint64_t neighbour_released = 0;
    uint64_t sip_fragments_sent = 0;
    uint64_t icmp6_errors_sent = 0;
    uint64_t icmp6_errors_suppressed = 0;
    uint64_t sip_handed_off = 0;
    uint64_t sip_handed_in = 0;
    uint64_t cdr_records = 0;
    uint64_t cdr_dropped = 0;
    uint64_t loops = 0;
    uint64_t busy_loops = 0;
    uint64_t busy_cycles = 0;
    uint64_t total_cycles = 0;

    [[nodiscard]] uint64_t drops_total() const noexcept;
    /// Busy share in percent, 0..100; 0 when nothing was measured yet.
    [[nodiscard]] double busy_percent() const noexcept;
};

/// Reads one worker's counters.
counters_view snapshot_of(const worker_counters& c) noexcept;
/// Adds b into a.
void accumulate(counters_view& a, const counters_view& b) noexcept;
/// b - a, field by field (for rates between two readings).
counters_view difference(const counters_view& a, const counters_view& b) noexcept;

}  // namespace sbc::dataplane
