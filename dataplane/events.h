// Rare events that workers push to the control core through one multi-producer rte_ring:
// neighbours seen in ARP or ND, next hops that need resolving, ICMP errors from peers, IPv6
// Packet Too Big, and the
// proxy's verdicts on peers (failed, answered) for the control core's passive health, and
// replies to the control core's OPTIONS probes; and from the stream thread, peers' connections
// failing or coming back.
// Workers enqueue (never block: a full ring is counted and the event dropped); the control
// core dequeues.
#pragma once

#include <array>
#include <cstdint>

#include "common/limits.h"
#include "common/address.h"
#include "sip-fastpath/proxy.h"

namespace sbc::dataplane {

enum class event_kind : uint8_t {
    neighbour_seen = 1,     ///< ARP from `ip` with `mac` on interface `iface`
    neighbour_needed = 2,   ///< a packet for next hop `ip` found no MAC
    icmp_unreachable = 3,   ///< ICMP destination unreachable about a datagram we sent
    peer_failed = 4,        ///< an attempt to peer `peer_id` failed: `cause` (and `code`)
    peer_answered = 5,      ///< peer `peer_id` answered an attempt with final `code`
    probe_reply = 6,        ///< a reply `code` to our OPTIONS probe `probe_seq` of peer `peer_id`;
                            ///< code 0: ICMP unreachable about the probe
    peer_connection_failed = 7,  ///< (stream thread) a TCP/TLS connection to peer `peer_id` failed
                                 ///< or was lost; `code`: its streams::conn_reason
    peer_connection_up = 8,      ///< (stream thread) a connection to peer `peer_id` is up again
    peer_responded = 9,     ///< peer `peer_id` sent the first response (`code`) to an attempt,
                            ///< `rtt_us` after its INVITE: a sample of its response time
    peer_overload = 16,     ///< peer `peer_id` sent RFC 7339 feedback: `code` percent fewer new
                            ///< calls for `oc_validity_ms` (0 ends it), `oc_seq` (has_oc_seq)
    source_report = 10,     ///< source `ip` should be denied; `code`: its dataplane::deny_reason
                            ///< (dataplane/source_screen.h)
    packet_too_big = 17,    ///< ICMPv6 Packet Too Big from `ip` about our datagram to `orig_dst`:
                            ///< the path takes `code` bytes (its MTU field, at most 65535)
};

/// One event. Plain data copied into the ring; addresses in the shared vocabulary.
struct event {
    event_kind kind{};
    uint8_t worker = 0;
    uint16_t iface = 0;
    uint8_t icmp_type = 0;
    uint8_t icmp_code = 0;
    uint8_t orig_proto = 0;
    sip::failure_cause cause = sip::failure_cause::none;  ///< peer_failed
    ip_address ip;                    ///< neighbour_seen/needed: the neighbour; icmp_unreachable: the sender
    std::array<uint8_t, 6> mac{};     ///< neighbour_seen
    uint16_t code = 0;                ///< peer_failed (cause code), peer_answered, probe_reply: SIP status
    ip_address orig_dst;              ///< icmp_unreachable: destination of the datagram that failed
    uint16_t orig_src_port = 0;
    uint16_t orig_dst_port = 0;
    uint32_t peer_id = 0;             ///< peer_failed, peer_answered, probe_reply: index into peer_health
    uint32_t probe_seq = 0;           ///< probe_reply: the sequence number from the probe's branch
    uint32_t probe_rx_tsc8 = 0;       ///< probe_reply: the worker's rte_rdtsc() >> 8 at receipt (low 32 bits)
    uint32_t rtt_us = 0;              ///< peer_responded: the attempt's response time
    uint32_t oc_validity_ms = 0;      ///< peer_overload: how long the reduction holds
    uint32_t oc_seq_hi = 0;           ///< peer_overload: the peer's oc-seq (10^-5 units), high word
    uint32_t oc_seq_lo = 0;           ///< and low word (two words: the event stays 4-byte aligned)
    bool has_oc_seq = false;          ///< peer_overload: the peer sent an oc-seq
};
static_assert(sizeof(event) % 4 == 0 && sizeof(event) <= 128, "event is a ring element: a multiple of 4 bytes, small");

using sbc::event_ring_size;

}  // namespace sbc::dataplane
