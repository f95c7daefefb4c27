// Rare events that workers push to the control core through one multi-producer rte_ring:
// neighbours seen in ARP, next hops that need resolving, ICMP errors from peers, and the
// proxy's verdicts on peers (failed, answered) for the control core's passive health, and
// replies to the control core's OPTIONS probes.
// Workers enqueue (never block: a full ring is counted and the event dropped); the control
// core dequeues.
#pragma once

#include <array>
#include <cstdint>

namespace sbc::dataplane {

enum class event_kind : uint8_t {
    neighbour_seen = 1,     ///< ARP from `ip` with `mac` on interface `iface`
    neighbour_needed = 2,   ///< a packet for next hop `ip` found no MAC
    icmp_unreachable = 3,   ///< ICMP destination unreachable about a datagram we sent
    peer_failed = 4,        ///< an attempt to peer `peer_id` failed: `cause` (and `code`)
    peer_answered = 5,      ///< peer `peer_id` answered an attempt with final `code`
    probe_reply = 6,        ///< a reply `code` to our OPTIONS probe `probe_seq` of peer `peer_id`;
                            ///< code 0: ICMP unreachable about the probe
};

/// Why an attempt failed (peer_failed); the values of sip::failure_cause.
enum class peer_cause : uint8_t { none = 0, code = 1, timeout = 2, icmp = 3 };

struct event {
    event_kind kind{};
    uint8_t worker = 0;
    uint16_t iface = 0;
    union {
        uint32_t ip = 0;              ///< host order: neighbour, or the ICMP sender
        uint32_t probe_rx_tsc8;       ///< probe_reply: the worker's rte_rdtsc() >> 8 at receipt (low 32 bits)
    };
    std::array<uint8_t, 6> mac{};     ///< neighbour_seen
    uint8_t icmp_type = 0;
    uint8_t icmp_code = 0;
    union {
        uint32_t orig_dst = 0;        ///< icmp_unreachable: destination of the datagram that failed
        uint32_t probe_seq;           ///< probe_reply: the sequence number from the probe's branch
    };
    uint16_t orig_src_port = 0;
    uint16_t orig_dst_port = 0;
    uint8_t orig_proto = 0;
    peer_cause cause = peer_cause::none;  ///< peer_failed
    uint16_t code = 0;                ///< peer_failed (cause code) and peer_answered: SIP status
    uint32_t peer_id = 0;             ///< peer_failed, peer_answered: index into peer_health
};
static_assert(sizeof(event) == 32, "event is a ring element of 32 bytes");

constexpr unsigned event_ring_size = 4096;

}  // namespace sbc::dataplane
