// The proxy's guards before it handles a request: scanner signatures (a request from a source
// that is not trusted whose User-Agent, From or To names a scanning tool is dropped or
// refused, and its source reported for denial), and overload shedding (while the worker is
// overloaded, a share of new INVITEs and other out-of-dialog requests is refused with 503
// and Retry-After, untrusted sources' first (shed_shares); in-dialog requests, responses, ACK and CANCEL never come here).
// Worker only: the scanner's Hyperscan scratch is this proxy's worker's (worker_), the one that
// runs this call, also for an input another worker handed off. No heap, no locks.
#include "sip-fastpath/proxy_internal.h"
#include "sip-fastpath/scanner_match.h"

namespace sbc::sip {

static_assert(std::tuple_size_v<decltype(proxy_stats::scanner_matches)> == 2 * scanner_field_count,
              "scanner_matches counts each field of each set");

/// Peers, and the sources of a trunk marked trusted, on that trunk: the same rule as flood
/// protection's (dataplane/source_guard.h classify()).
static bool trusted_source(const proxy_tables& t, const sip_input& a) noexcept
{
    if (t.is_peer_address(a.src.addr)) return true;
    return a.trunk < t.trunks.size() && t.trunks[a.trunk].trusted && t.trunks[a.trunk].allows(a.src.addr);
}

bool proxy::scanner_refused(const proxy_tables& t, const sip_input& a, outbox& out) noexcept
{
    if (!t.scanner) return false;
    // Trusted sources are never matched.
    if (trusted_source(t, a)) return false;
    const scanner_matcher& sm = *t.scanner;
    const scanner_hit hit = sm.match(worker_, *msg_);
    if (!hit.matched) return false;
    sw_bump(stats_->scanner_matches[(hit.builtin ? 0 : scanner_field_count) + static_cast<std::size_t>(hit.field)]);
    const scanner_policy& p = sm.policy();
    if (p.deny) out.fault = source_fault::scanner;
    // An ACK is never answered (RFC 3261 17.1.1.3); nor is anything under drop.
    if (p.action == scanner_action::respond && msg_->req_method != method::ack) {
        stats_->add(proxy_counter::scanner_answered);
        respond(a, p.respond_code, {}, out);
    } else {
        stats_->add(proxy_counter::scanner_dropped);
    }
    return true;
}

bool proxy::overload_shed(const proxy_tables& t, const sip_input& a, outbox& out) noexcept
{
    const uint8_t reduction = overload();
    if (reduction == 0) {
        shed_.refuse(0);
        shed_trusted_.refuse(0);
        return false;
    }
    const message& m = *msg_;
    // A retransmitted INVITE of a call already being set up is answered from its state.
    if (m.req_method == method::invite && find_setup(upstream_key(m, a.src)) != none_slot) return false;
    // Untrusted sources are shed first: twice the reduction, so that at 50 % all of theirs
    // and none of the trusted ones are refused; trusted sources only past that.
    const bool trusted = trusted_source(t, a);
    const shed_share share = shed_shares(reduction);
    if (!(trusted ? shed_trusted_.refuse(share.trusted) : shed_.refuse(share.untrusted))) return false;
    if (m.req_method == method::invite) {
        // Offered, like a call refused while draining (sbc_sip_invites_total counts both).
        stats_->add(proxy_counter::invites);
        if (a.trunk < proxy_stats::max_counted) sw_bump(stats_->invites_by_trunk[a.trunk]);
    }
    stats_->add(proxy_counter::shed_overload);
    respond(a, 503, "Service Unavailable (overloaded)", out, true, t.overload.retry_after_s);
    return true;
}

}  // namespace sbc::sip
