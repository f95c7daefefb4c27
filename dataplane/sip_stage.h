// The SIP stage of a worker, in three steps (dataplane/sip_path.h): receive (sip_rx.cc: a UDP
// datagram to a trunk becomes a transport-neutral SIP input), dispatch (sip_dispatch.cc: to
// this worker's stateful proxy, or through a single-producer ring to the worker that owns its
// transaction or dialog), send (sip_tx.cc: what the proxy produced, framed for its transport).
// Also the per-iteration work: the handoff rings and the proxy's timers.
// Worker only: no heap, locks, system calls or logging.
#pragma once

#include <cstdint>

#include <rte_mbuf.h>

#include "dataplane/stages.h"

namespace sbc::dataplane {

/// Handles a sub-burst of validated UDP datagrams whose destination is a trunk of
/// snap.proxy: trunks[i] is the index of b.pkts[i]'s trunk (the caller found it; snap.proxy is
/// non-null). Consumes every mbuf.
void sip_stage(worker& w, const snapshot& snap, sub_burst& b, const uint16_t* trunks) noexcept;

/// An ICMP destination unreachable (single segment, l2_len and l3_len set, length checked)
/// quoting a UDP datagram sent from a trunk: the attempt named by the quoted Via branch is
/// failed over, here or on its owner worker. True when it took `m` (the caller must not
/// touch it again); false when the ICMP is not about SIP (the caller frees it).
bool sip_unreachable(worker& w, const snapshot& snap, rte_mbuf* m) noexcept;

/// A SIP datagram this worker framed (Ethernet, IPv4, UDP from one of its trunks) that never
/// left: its next hop stayed unresolved while it was held. The proxy learns that the message
/// could not be sent (a call whose INVITE it was is answered 503 at once, its peer not blamed);
/// what the proxy answers is sent. The caller still owns and frees `m`.
void sip_unsent(worker& w, const snapshot& snap, const rte_mbuf* m, uint64_t now_ms) noexcept;

/// Per-iteration SIP work: handed-off inputs from every other worker, then the proxy's
/// timers. `now_ms` is `now_tsc` in milliseconds (now_ms_of). Returns the number of messages
/// received and sent. 0 without snap.proxy.
uint32_t sip_poll(worker& w, const snapshot& snap, uint64_t now_tsc, uint64_t now_ms) noexcept;

}  // namespace sbc::dataplane
