// The worker's side of SIP capture (see capture_filter.h for the contract with the control
// core): which messages a running capture selects, and the copies of their frames as on the
// wire. Called by the SIP stage: capture_input() once per SIP input the worker owns, after it
// is parsed and before the proxy sees it; capture_wanted() for each message of the outbox;
// capture_frame()/capture_fragments() once a selected message is framed. Worker only: no heap,
// locks, system calls or logging; a copy that finds no mbuf or no ring room is counted and lost.
#pragma once

#include <string_view>

#include <rte_mbuf.h>

#include "dataplane/capture_filter.h"
#include "dataplane/sip_path.h"
#include "sip-fastpath/proxy.h"

namespace sbc::dataplane {

/// The published filter, or null when no capture runs (one load).
inline const capture_filter* capture_now(const worker& w) noexcept { return rcu::dereference(w.shared->capture.current); }

/// Whether the input `in` (decoded from `m`; `msg` parsed from it, or null when it did not
/// parse) matches `f`; when it does, its frame is copied (UDP: Ethernet, IPv4 and UDP headers
/// as received; a reassembled datagram as one IPv4 packet with its length fixed and its
/// fragment fields cleared). Every message the proxy produces from this input is then selected
/// too, until capture_input_done().
bool capture_input(worker& w, const capture_filter& f, const rte_mbuf* m, const sip_handoff& in,
                   const sip::message* msg) noexcept;
/// The input's outbox has been sent: later messages (timers) are matched on their own.
void capture_input_done(worker& w) noexcept;

/// Whether the outgoing message `d` is selected: produced from a selected input, or matching
/// `f` on its own (parsed again, with its receiver as its other side).
bool capture_wanted(worker& w, const capture_filter& f, const sip::out_message& d) noexcept;

/// Copies the framed datagram `m` (one segment, as it will be sent).
void capture_frame(worker& w, const capture_filter& f, const rte_mbuf* m) noexcept;
/// Copies a datagram sent as IPv4 fragments as the one packet it was before fragmentation:
/// the headers of `first` (the first fragment) with the length and fragment fields of the
/// whole, then `payload`.
void capture_fragments(worker& w, const capture_filter& f, const rte_mbuf* first, std::string_view payload) noexcept;

}  // namespace sbc::dataplane
