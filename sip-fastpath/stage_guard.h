// The guard stages, run on a request before any call exists (point "request in"): scanner
// signatures ([scanner]: a request from a source that is not trusted whose User-Agent, From or
// To names a scanning tool is dropped or refused, its source reported for denial) and overload
// shedding ([overload]: while the worker is overloaded, a share of new INVITEs and other
// out-of-dialog requests is refused, untrusted sources' first, shed_shares). Both decide and
// count; the core answers. Neither runs where the node configures it not: no signatures, no
// overload. Worker only: the scanner's Hyperscan scratch is the worker's that runs the call.
#pragma once

#include "sip-fastpath/overload_shed.h"
#include "sip-fastpath/stage.h"

namespace sbc::sip {

struct guard_stage {
    shed_credit untrusted;  ///< turns the worker's reduction into which new requests are refused
    shed_credit trusted;    ///< the same for trusted sources
};

namespace guard {

/// Peers, and the sources of a trunk marked trusted, on that trunk: the same rule as flood
/// protection's (dataplane/source_guard.h classify()).
bool trusted_source(const proxy_tables& t, const sip_input& in) noexcept;

/// What the scanner stage decided about a request.
struct scan {
    bool refused = false;   ///< matched: the request goes no further
    uint16_t answer = 0;    ///< refused: the code to answer with (0: dropped silently)
};
/// The scanner signatures on request `c.m` from a source that is not trusted; counted, and
/// `c.out.fault` set when [scanner] deny. Nothing when the node has no signatures.
scan screen(const msg_ctx& c) noexcept;

/// Whether a new INVITE or other out-of-dialog request is shed under `reduction` percent
/// (overload() of the worker); counted. `retransmission`: an INVITE being set up already,
/// never shed. With no reduction the credits are cleared and nothing is shed.
bool shed(guard_stage& s, const msg_ctx& c, uint8_t reduction, bool retransmission) noexcept;

}  // namespace guard
}  // namespace sbc::sip
