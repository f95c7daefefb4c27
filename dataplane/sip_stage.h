// The SIP stage of a worker: UDP datagrams addressed to a trunk go through this worker's
// stateful proxy (sip::proxy), or, when the transaction or dialog they belong to is another
// worker's, through a single-producer ring to that worker; what the proxy produces is framed
// (Ethernet, 802.1Q, IPv4, UDP) into fresh mbufs and sent, and its peer verdicts go to the
// control core as events. Also the per-iteration work: draining the handoff rings and the
// proxy's timers. Worker only: no heap, locks, system calls or logging.
#pragma once

#include <cstdint>

#include <rte_mbuf.h>

#include "dataplane/stages.h"

namespace sbc::dataplane {

/// Largest IPv4 packet we send. SIP over UDP larger than the path MTU must go over TCP
/// (RFC 3261 18.1.1); until the TCP transport exists such messages are dropped and counted
/// (sip_too_big) rather than fragmented.
constexpr uint32_t sip_mtu = 1500;

/// Handles a sub-burst of validated UDP datagrams whose destination is a trunk of
/// snap.proxy (the caller checked, snap.proxy is non-null). Consumes every mbuf.
void sip_stage(worker& w, const snapshot& snap, sub_burst& b) noexcept;

/// An ICMP destination unreachable (single segment, l2_len and l3_len set, length checked)
/// quoting a UDP datagram sent from a trunk: the attempt named by the quoted Via branch is
/// failed over, here or on its owner worker. True when it took `m` (the caller must not
/// touch it again); false when the ICMP is not about SIP (the caller frees it).
bool sip_unreachable(worker& w, const snapshot& snap, rte_mbuf* m) noexcept;

/// Per-iteration SIP work: handed-off datagrams from every other worker, then the proxy's
/// timers. Returns the number of messages received and sent. 0 without snap.proxy.
uint32_t sip_poll(worker& w, const snapshot& snap, uint64_t now_tsc) noexcept;

}  // namespace sbc::dataplane
