// The RFC 7339 overload control stage ([overload_control]), both ways: as a server, our
// feedback stamped into the Via of every response sent or relayed to a client that advertised
// `oc` (the point where a response leaves); as a client, a peer's feedback in our Via of its
// response (point "response in") passed to the control core as an event. Its own state: the
// worker's oc_server (the reduction it asks for, what it last said and heard). While there is
// nothing to say it costs one relaxed load per response; a peer's feedback is read only from
// our own Via when the node advertises. Worker only.
#pragma once

#include "sip-fastpath/overload_control.h"
#include "sip-fastpath/stage.h"

namespace sbc::sip {

struct oc_stage {
    oc_server server;
};

namespace oc {

/// `out` gets the splice that stamps our feedback into Via element `v` of `m` (the client's)
/// when the client advertised oc and there is something to say now; false otherwise.
bool stamp(oc_stage& s, const message& m, const via& v, via_splice& out, proxy_stats& st) noexcept;
/// The same for a response `m` relayed upstream: the client's Via is its second one.
bool stamp_relayed(oc_stage& s, const message& m, via_splice& out, proxy_stats& st) noexcept;
/// A response `c.m` from a peer: its feedback in our Via goes to the control core.
void from_peer(oc_stage& s, const msg_ctx& c) noexcept;

}  // namespace oc
}  // namespace sbc::sip
