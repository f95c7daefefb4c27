// The guard stages (stage_guard.h). Worker only: no heap, no locks.
#include "sip-fastpath/stage_guard.h"

#include "sip-fastpath/scanner_match.h"

namespace sbc::sip::guard {

static_assert(std::tuple_size_v<decltype(proxy_stats::scanner_matches)> == 2 * scanner_field_count,
              "scanner_matches counts each field of each set");

bool trusted_source(const proxy_tables& t, const sip_input& in) noexcept
{
    if (t.is_peer_address(in.src.addr)) return true;
    return in.trunk < t.trunks.size() && t.trunks[in.trunk].trusted && t.trunks[in.trunk].allows(in.src.addr);
}

scan screen(const msg_ctx& c) noexcept
{
    if (!c.t.scanner || trusted_source(c.t, c.in)) return {};  // trusted sources are never matched
    const scanner_matcher& sm = *c.t.scanner;
    const scanner_hit hit = sm.match(c.worker, *c.m);
    if (!hit.matched) return {};
    c.stats.scanner_matches[(hit.builtin ? 0 : scanner_field_count) + static_cast<std::size_t>(hit.field)].bump();
    const scanner_policy& p = sm.policy();
    if (p.deny) c.out.fault = source_fault::scanner;
    // An ACK is never answered (RFC 3261 17.1.1.3); nor is anything under drop.
    if (p.action == scanner_action::respond && c.m->req_method != method::ack) {
        c.stats.add(proxy_counter::scanner_answered);
        return {true, p.respond_code};
    }
    c.stats.add(proxy_counter::scanner_dropped);
    return {true, 0};
}

bool shed(guard_stage& s, const msg_ctx& c, uint8_t reduction, bool retransmission) noexcept
{
    if (reduction == 0) {
        s.untrusted.refuse(0);
        s.trusted.refuse(0);
        return false;
    }
    if (retransmission) return false;  // answered from its state
    // Untrusted sources are shed first: twice the reduction, so that at 50 % all of theirs
    // and none of the trusted ones are refused; trusted sources only past that.
    const bool trusted = trusted_source(c.t, c.in);
    const shed_share share = shed_shares(reduction);
    if (!(trusted ? s.trusted.refuse(share.trusted) : s.untrusted.refuse(share.untrusted))) return false;
    if (c.m->req_method == method::invite) {
        // Offered, like a call refused while draining (sbc_sip_invites_total counts both).
        c.stats.add(proxy_counter::invites);
        if (c.in.trunk < proxy_stats::max_counted) c.stats.invites_by_trunk[c.in.trunk].bump();
    }
    c.stats.add(proxy_counter::shed_overload);
    return true;
}

}  // namespace sbc::sip::guard
