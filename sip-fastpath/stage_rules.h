// The header and number rules stage (sip-fastpath/sip_rules.h; [[trunk]] and [[region]] rules):
// inbound rules on a new INVITE or other out-of-dialog request before it is routed (point
// "request in": routes see the normalised numbers), outbound rules on each INVITE sent toward a
// peer (point "before an attempt"). Its own state: the worker's PCRE2 match data and two
// buffers with their parsed messages, allocated with the proxy at start. A call's stage set
// holds it only where its trunk, its source's region or its peer configure rules. Worker only.
#pragma once

#include <array>

#include "sip-fastpath/sip_rules.h"
#include "sip-fastpath/stage.h"

namespace sbc::sip {

struct rules_stage {
    rule_work work;
    // As large as any message the engine parses (sip_span.h), so that rules apply to a large
    // INVITE too; what the proxy then does with its size is the proxy's own affair.
    std::array<char, max_message_size> in_buf;
    std::array<char, max_message_size> out_buf;
    message in_msg;  ///< the request as the inbound rules made it (the call goes on with it)
    message out_msg; ///< the copy the outbound rules make toward a peer
    rule_edits out_edits;  ///< or their changes as line edits (apply_out_edits), text in out_buf
};

namespace rules {

/// Whether rules apply inbound to a request on trunk `trunk` from peer index `from_peer`
/// (no_peer: not a peer).
bool any_in(const proxy_tables& t, uint16_t trunk, uint32_t from_peer) noexcept;
/// Whether rules apply outbound toward peer index `p`.
bool any_out(const proxy_tables& t, uint32_t p) noexcept;

/// Request in: the inbound rules of the trunk, then of the sending peer's region, applied to
/// `c.m`; returns the rewritten request (parsed again only where the rules changed it,
/// parse_rewritten) or `c.m` itself.
const message* apply_in(rules_stage& s, const msg_ctx& c) noexcept;
/// Before an attempt: `m` as it goes to peer index `p`, the outbound rules of its region, then
/// of its trunk, applied; `m` itself when none changed it.
const message& apply_out(rules_stage& s, const call_env& e, uint32_t p, const message& m) noexcept;
/// The same for an INVITE the attempt edits next: where the rules changed only headers, their
/// changes go into `ed` (ed.lines, valid until the next call) and `m` itself is returned, not
/// copied or parsed again; a number rule's rewrite returns the rewritten copy as apply_out.
const message& apply_out_edits(rules_stage& s, const call_env& e, uint32_t p, const message& m, edits& ed) noexcept;

}  // namespace rules
}  // namespace sbc::sip
