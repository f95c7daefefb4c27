// The stages of the worker pipeline. A received burst is classified into per-stage sub-bursts;
// each stage handles its whole sub-burst, sending (tx_enqueue), dropping (counted by reason) or
// passing packets on to the next stage. Worker only; no heap, locks, syscalls or logging.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "dataplane/worker.h"

namespace sbc::dataplane {

/// The next stages after IPv4 validation, filled by ipv4_stage and frag_stage.
struct l4_bursts {
    sub_burst icmp;
    sub_burst udp;
    sub_burst frag;
    sub_burst tcp;
};

/// The next stages after IPv6 validation, filled by ipv6_stage and frag6_stage.
struct l6_bursts {
    sub_burst icmp6;
    sub_burst frag6;
    sub_burst udp6;
    sub_burst tcp;  ///< to tcp_stage, as IPv4's (l3_len covers the extension headers)
};

/// Production processing of one received burst: Ethernet/VLAN classify, then ARP, IPv6 and
/// ICMPv6, IPv4, fragments, ICMP, UDP and TCP stages.
void process_burst(worker& w, const snapshot& snap, uint16_t port, rte_mbuf** pkts, uint16_t n) noexcept;

/// Per-iteration work of the production loop: handed-off SIP datagrams, proxy timers, media
/// session timers and the packets held for a next hop being resolved.
uint32_t poll_worker(worker& w, const snapshot& snap, uint64_t now_tsc) noexcept;

/// The production processor for run_loop.
struct production {
    void burst(worker& w, const snapshot& s, uint16_t port, rte_mbuf** p, uint16_t n) noexcept
    {
        process_burst(w, s, port, p, n);
    }
    uint32_t poll(worker& w, const snapshot& s, uint64_t now_tsc) noexcept { return poll_worker(w, s, now_tsc); }
};

/// Splits a received burst by EtherType after stripping Ethernet/802.1Q; sets m->l2_len,
/// m->vlan_tci and m->port on the frames it keeps (a drop writes nothing into its mbuf). Drops
/// what no interface takes, and a flood's SIP datagrams that early_screen
/// (source_screen.h) decides on (free_dropped). n is at most burst_size.
void classify(worker& w, const snapshot& snap, uint16_t port, rte_mbuf** pkts, uint16_t n,
              sub_burst& arp, sub_burst& ipv4, sub_burst& ipv6) noexcept;

/// Answers ARP requests for our addresses and reports every sender to the control core.
void arp_stage(worker& w, const snapshot& snap, sub_burst& b) noexcept;

/// Validates IPv4 headers (version, IHL, total length, checksum, destination) and sorts by
/// protocol and fragmentation; sets m->l3_len and trims Ethernet padding.
void ipv4_stage(worker& w, const snapshot& snap, sub_burst& b, l4_bursts& out) noexcept;

/// Validates IPv6 headers (version, payload length, a source that is not multicast, a
/// destination that is ours: our global or link-local address, all-nodes, or the solicited-node
/// group of either), walks the extension headers (at most snap.ipv6_max_extension_headers,
/// hop-by-hop first only, no routing header with segments left), trims Ethernet padding, sets
/// m->l3_len to the offset of the upper layer and passes ICMPv6 and UDP on (dataplane/ipv6.cc),
/// and fragments whose fragment header follows the IPv6 header to frag6 (any other is dropped,
/// counted). TCP over IPv6 is dropped and counted: not built yet.
void ipv6_stage(worker& w, const snapshot& snap, sub_burst& b, l6_bursts& out) noexcept;

/// Reassembles IPv6 fragments (rte_ip_frag, the worker's table); complete datagrams have the
/// headers after the IPv6 header walked again and go on to ICMPv6 or UDP (as mbuf chains).
void frag6_stage(worker& w, const snapshot& snap, l6_bursts& io) noexcept;

/// UDP over IPv6 (dataplane/udp6.cc): length and the mandatory checksum (over the UDP length,
/// not the IPv6 payload length, which counts extension headers), then datagrams to a trunk's
/// IPv6 address and port go to the SIP stage after flood screening (sources keyed per /64);
/// anything else gets port unreachable (rate-limited) and is counted as udp_port_closed.
void udp6_stage(worker& w, const snapshot& snap, sub_burst& b) noexcept;

/// ICMPv6 for our addresses (dataplane/icmp6.cc): answers echo requests and Neighbor
/// Solicitations for our addresses (RFC 4861 7.2.4, with our MAC as target link-layer address),
/// reports what solicitations and advertisements teach about neighbours and what destination
/// unreachable says about a datagram we sent to the control core; checks the checksum over the
/// upper-layer length and ND's hop limit of 255. Drops the rest, counted.
void icmp6_stage(worker& w, const snapshot& snap, sub_burst& b) noexcept;

/// Answers the IPv6 datagram in `m` (received on `ifc`, one segment, its IPv6 header at
/// m->l2_len) with the ICMPv6 error `type`/`code` (`pointer`: a Parameter Problem's offset;
/// 0 otherwise), quoting as much of it as fits in 1,280 bytes, in place (dataplane/icmp6.cc).
/// Not for a datagram to a group, from the unspecified address or in fragments, nor over the
/// worker's rate ([ipv6] icmp_error_rate, counted icmp6_errors_suppressed): then returns
/// false and `m` is the caller's to drop. True: `m` was sent (icmp6_errors_sent).
bool send_icmp6_error(worker& w, const snapshot& snap, rte_mbuf* m, const interface_info& ifc, uint8_t type,
                      uint8_t code, uint32_t pointer) noexcept;

/// Reassembles IPv4 fragments (rte_ip_frag); complete datagrams go on to ICMP or UDP.
void frag_stage(worker& w, const snapshot& snap, l4_bursts& io) noexcept;

/// Answers echo requests; turns destination-unreachable into events; drops the rest.
void icmp_stage(worker& w, const snapshot& snap, sub_burst& b) noexcept;

/// Validates UDP length and checksum, then hands datagrams to the SIP stage when they are for a
/// trunk's address and port (sip_rx.cc); anything else is counted as udp_port_closed.
void udp_stage(worker& w, const snapshot& snap, sub_burst& b) noexcept;

/// TCP for our addresses, IPv4 or IPv6 (told apart by the version nibble; the IPv6 stage
/// sets l3_len past the extension headers): from a source a trunk listening on TCP or TLS allows (to its port),
/// or from a peer's address, goes to the kernel through the stream thread (dataplane/tcp.cc);
/// anything else is dropped and counted before a SYN can open anything.
void tcp_stage(worker& w, const snapshot& snap, sub_burst& b) noexcept;

/// The datagram an ICMP error quotes (RFC 792: its IPv4 header and at least 8 bytes after it).
struct icmp_quote {
    uint32_t src = 0;             ///< host order
    uint32_t dst = 0;
    uint8_t proto = 0;
    uint16_t src_port = 0;        ///< UDP only
    uint16_t dst_port = 0;
    std::string_view payload;     ///< what is quoted after the UDP header (UDP only)
};

/// Reads the quote of the ICMP message at `icmp` (`len` bytes, header included); false when
/// it is too short to hold one.
bool read_icmp_quote(const uint8_t* icmp, uint32_t len, icmp_quote& q) noexcept;

/// Drops a whole sub-burst for one reason (counted once).
void drop_all(worker& w, sub_burst& b, drop_reason r) noexcept;

/// A stage's drops by reason over one sub-burst, counted once at its end (the IP stages: many
/// reasons, few drops).
struct drop_tally {
    std::array<uint16_t, drop_reason_count> n{};
    void drop(rte_mbuf* m, drop_reason r) noexcept
    {
        rte_pktmbuf_free(m);
        count(r);
    }
    /// Counts `r` for a packet that was not served but did not need freeing (answered with an error).
    void count(drop_reason r, uint32_t k = 1) noexcept { n[static_cast<std::size_t>(r)] += static_cast<uint16_t>(k); }
    void commit(worker& w) const noexcept
    {
        for (std::size_t r = 0; r < drop_reason_count; ++r)
            if (n[r] != 0) w.counters.drops[r].add(n[r]);
    }
};

/// Writes our Ethernet header (and 802.1Q tag when the interface has a VLAN) in front of the
/// L3 packet that starts at m's data + m->l2_len, for `dst`; keeps the frame's total shape right.
/// Returns false when there is no headroom (never for frames we received). The interface's
/// form of packet/l2.h's write_l2, which the RTP relay calls with its egress; `ethertype` of
/// the L3 packet, IPv4 unless told.
bool write_l2(rte_mbuf* m, const interface_info& ifc, const uint8_t* dst_mac,
              uint16_t ethertype = RTE_ETHER_TYPE_IPV4) noexcept;

}  // namespace sbc::dataplane
