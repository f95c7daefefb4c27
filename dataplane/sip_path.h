// The three steps of the SIP stage and what they share (internal to dataplane/sip_*.cc):
//   receive  (sip_rx.cc)       a UDP datagram becomes a transport-neutral SIP input, with its
//                              trunk found once, and the sender's next hop gleaned;
//   dispatch (sip_dispatch.cc) the owning worker is chosen from the identifiers we minted; the
//                              decoded input crosses a handoff ring to it, or the proxy here
//                              handles it; handed-off inputs and the proxy's timers are polled;
//   send     (sip_tx.cc)       what the proxy produced is framed for its transport and sent,
//                              its peer verdicts posted to the control core.
// Worker only: no heap, locks, system calls or logging.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include <rte_mbuf.h>

#include "common/address.h"
#include "dataplane/neighbour.h"
#include "dataplane/stages.h"

namespace sbc::dataplane {

/// A decoded SIP input: what the receive step learned from the frame's headers, so that they
/// are never read again. It lives on the receiving worker's stack; only when the input crosses
/// a handoff ring is it copied into the headroom of the mbuf that holds the message (the ring
/// carries the mbuf pointer). `src`: the sender (a message) or the quoted datagram's
/// destination (an unreachable); `off`/`len`: the SIP bytes (or the quoted payload) in the mbuf.
struct sip_handoff {
    enum class kind : uint8_t { message, unreachable };
    endpoint src;
    endpoint local;
    uint64_t now_ms = 0;
    uint32_t off = 0;
    uint32_t len = 0;
    uint16_t trunk = 0;
    uint16_t iface = no_interface;  ///< the interface it arrived on
    mac_addr src_mac{};             ///< the frame's source MAC (the sender's next hop)
    kind what = kind::message;
};
static_assert(sizeof(sip_handoff) <= RTE_PKTMBUF_HEADROOM, "the decoded input lives in the mbuf's headroom");

/// The headroom of `m` where a handed-off input travels, or null when it has too little.
inline sip_handoff* handoff_of(rte_mbuf* m) noexcept
{
    if (m->data_off < sizeof(sip_handoff)) return nullptr;
    return static_cast<sip_handoff*>(m->buf_addr);
}

/// What the SIP stage keeps per worker besides the proxy and the message it parses into.
/// Indexed by worker id; only that worker touches its entry (cache-line aligned, never shared).
struct alignas(64) sip_worker_state {
    sip::message message;             ///< what the receive step parses into, for dispatch and the proxy
    uint16_t ip_id = 0;               ///< IPv4 identification of the packets this worker originates
    uint32_t ip6_id = 0;              ///< IPv6 fragment identification of the datagrams it fragments
    uint64_t last_tick_ms = 0;        ///< when the proxy's timers last ran
    uint64_t now_ms = 0;              ///< the worker clock of the burst or poll being handled
    /// The input being handled (null between inputs): the send step answers its sender at the
    /// MAC the frame came from when the neighbour table does not know it yet (a first INVITE's
    /// 100 Trying), looked at only on a neighbour-table miss.
    const sip_handoff* answering = nullptr;
    /// TSC cycles spent on SIP work (the receive step after flood screening, dispatch, the
    /// proxy, its timers, the send step): what overload detection measures (overload.h), since
    /// shedding new calls relieves only this, never frames dropped before parsing.
    uint64_t sip_cycles = 0;
    std::array<char, 65536> scratch;  ///< a multi-segment datagram linearised for the parser (rare: last)
    /// A UDP datagram over IPv6 too large for its path, header and payload written whole
    /// before it is cut into fragments (the send step; never the input's scratch, which the
    /// proxy may still read while what it produced is sent).
    std::array<char, 65536> tx_scratch;
};
/// Every worker's SIP stage state, indexed by worker id (sip_rx.cc).
extern std::array<sip_worker_state, max_workers> sip_states;
inline sip_worker_state& sip_state(unsigned worker) noexcept { return sip_states[worker]; }

/// Per-burst tallies, added to the worker's counters once.
struct sip_tally {
    uint32_t handoff_full = 0;
    uint32_t no_buffer = 0;
    uint32_t too_big = 0;
    uint32_t no_interface = 0;
    uint32_t no_neighbour = 0;
    uint32_t not_trunk = 0;
    uint32_t unreadable = 0;
    uint32_t no_transport = 0;
    uint32_t stream_full = 0;
    uint32_t sent = 0;
    uint32_t fragments = 0;  ///< IPv4 fragments of datagrams over the MTU (udp_fragment.h)
    uint32_t handed_off = 0; ///< inputs handed to their owner worker
    uint32_t handed_in = 0;  ///< inputs taken from other workers' handoff rings

    void commit(worker& w) const noexcept;
};

uint64_t now_ms_of(const worker& w, uint64_t tsc) noexcept;

// --- receive (sip_rx.cc)

/// Decodes a validated UDP datagram to trunk `trunk` that arrived on interface `iface`.
void decode_datagram(const rte_mbuf* m, uint16_t iface, uint16_t trunk, uint64_t now_ms, sip_handoff& in) noexcept;
/// The SIP bytes of a decoded input: in place for one segment, linearised into the worker's
/// scratch otherwise; empty when they cannot be read (counted as unreadable).
std::string_view input_bytes(worker& w, const rte_mbuf* m, const sip_handoff& in, sip_tally& t) noexcept;
/// Learns the MAC of the on-link sender of `in` into the worker's own table (the send step
/// reaches it at once) and tells the control core when the neighbour table does not know it yet.
void glean_sender(worker& w, const snapshot& snap, const sip_handoff& in) noexcept;
/// A reply to one of the control core's OPTIONS probes (our probe branch on the top Via, from
/// a peer's address): posted as an event; true when `msg` was one.
bool take_probe_reply(worker& w, const snapshot& snap, const sip::message& msg, const ip_address& src) noexcept;

/// An ICMP unreachable about a datagram we sent from a trunk, decoded once.
struct sip_quote {
    endpoint to;                ///< where the quoted datagram went
    std::string_view payload;   ///< what is quoted of its SIP text
    uint32_t off = 0;           ///< the payload's offset in the mbuf
};
/// Decodes the quote of an ICMP unreachable (single segment, l2_len and l3_len set) when it
/// is about a UDP datagram sent from one of snap's trunks; false otherwise.
bool decode_sip_quote(const snapshot& snap, const rte_mbuf* m, sip_quote& q) noexcept;

// --- dispatch (sip_dispatch.cc)

/// Handles the input `in` decoded from `m`: hands it (copied into m's headroom) to its owner
/// worker when that is another one and `check_owner`, else gives it to this worker's proxy and
/// sends what it produced. Consumes m.
void dispatch_input(worker& w, const snapshot& snap, rte_mbuf* m, const sip_handoff& in, bool check_owner,
                    sip_tally& t) noexcept;

// --- send (sip_tx.cc)

/// Sends what the proxy put in the outbox, posts its peer events, and clears it.
void flush_outbox(worker& w, const snapshot& snap, sip_tally& t) noexcept;

}  // namespace sbc::dataplane
