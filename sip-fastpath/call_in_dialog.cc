// In-dialog requests and stateless responses in the call core: a request whose top Route is
// ours routed by its route set (RFC 3261 16.4; two of ours when we record-routed twice, RFC
// 5658), one of a topology-hidden dialog routed as the hiding stage decodes it, and a response
// to something we relayed statelessly sent where our Via says. Our Routes are read once per
// request (route_walk), the dialog looked up once. Worker only.
#include <cstring>

#include "sip-fastpath/call_core.h"
#include "sip-fastpath/call_targets.h"
#include "sip-fastpath/proxy_ids.h"
#include "sip-fastpath/stage_hiding.h"
#include "sip-fastpath/stage_oc.h"
#include "sip-fastpath/topology_hiding.h"

namespace sbc::sip {

namespace {

/// Our consecutive top Route entries of `m` (at most what the editor pops), the endpoint of
/// ours the last one names, and the next hop after them; with `want_th`, the last ;sbc-th=
/// among ours (a hidden dialog's route set).
void walk_routes(const proxy_tables& t, const message& m, bool want_th, route_walk& w) noexcept
{
    constexpr unsigned max_ours = 4;  // what the editor pops at most
    for (unsigned i = m.h_route; m.h_route != no_header && i < m.header_count && !w.route_left; ++i) {
        if (m.headers[i].id != header_id::route) continue;
        value_iter it(m.raw, m.headers[i].value);
        span v;
        error err = error::none;
        // The first Route's one element as the full check parsed it (first_route), if it did.
        const message::element_memo* kept = i == m.h_route ? first_route(m) : nullptr;
        while (it.next(v, err)) {
            const message::element_memo* k = kept;  // the header's first element only
            kept = nullptr;
            name_addr na;
            const bool parsed = k != nullptr || parse_name_addr(m.raw, v, na, error::bad_route) == error::none;
            if (k != nullptr) na = k->na;
            endpoint ep;
            route_th rt;
            route_th* want = want_th ? &rt : nullptr;
            if (parsed && w.ours < max_ours &&
                (k != nullptr ? is_our_route(t, m.raw, k->u, ep, want) : is_our_route(t, m.raw, na.uri_text, ep, want))) {
                ++w.ours;
                w.via_local = ep;
                if (rt.found) {
                    w.th = rt.value;
                    w.th_found = true;
                }
                continue;
            }
            w.route_left = true;
            w.have_next = parsed && (k != nullptr ? parsed_uri_target(m.raw, k->u, w.next)
                                                  : uri_target(m.raw, na.uri_text, w.next));
            break;
        }
        if (err != error::none) w.route_left = true;
    }
}

/// Our endpoint `local` (named by our Route, or the dialog's) moved to the address of its
/// trunk in the family of `next`, when they differ: a request leaves on IPv6 from our IPv6
/// address (a route set recorded once, by a peer on the same family, names one family only).
endpoint family_local(const proxy_tables& t, endpoint local, const ip_address& next) noexcept
{
    if (local.addr.family() == next.family()) return local;
    for (const trunk& tr : t.trunks)
        if (tr.owns(local.addr) && !tr.address_for(next).is_unspecified()) {
            local.addr = tr.address_for(next);
            break;
        }
    return local;
}

}  // namespace

bool call_core::forward_in_dialog(msg_ctx& c) noexcept
{
    const message& m = *c.m;
    const proxy_tables& t = c.t;
    const uint64_t call = hash_bytes(m.call_id());
    const uint32_t dl = dialogs_->find(call);
    const bool hidden = dl != none_slot && dialogs_->table.at(dl).hide != 0;
    // Our Route entries on top all go; the last one names our endpoint on the leg the request
    // leaves on. The next hop is the Route after them, else the Request-URI.
    route_walk w;
    walk_routes(t, m, hidden, w);
    if (w.ours == 0) return false;
    if (hidden && forward_hidden(c, w, dl)) return true;  // a topology-hidden dialog (stage_hiding.h)
    // Toward a caller that connected to us (TCP, TLS): on its connection, whatever its Contact
    // or our Route say (RFC 3261 18.1.1, RFC 5626: it may not be reachable otherwise). Toward a
    // peer the connection is left to the stream thread (connection 0: its persistent one to
    // that peer, which also carried the INVITE): simplest, and right after a reconnect.
    endpoint next = w.next;
    bool to_caller_conn = false;
    if (dl != none_slot) {
        const dialog_entry& de = dialogs_->table.at(dl);
        if (is_stream(de.caller.proto) && !de.caller.same_place(c.in.src)) {
            next = de.caller;
            to_caller_conn = true;
        }
    }
    // The Request-URI as the parser read it (m.ruri): not parsed again.
    if (!to_caller_conn && !w.have_next &&
        (w.route_left || m.errors.has(error::bad_request_uri) || !parsed_uri_target(m.raw, m.ruri, next)))
        next = endpoint{};
    if (next.addr.family() == ip_family::none) {  // a host name: the fast path does no DNS
        stats_->add(proxy_counter::rejected);
        if (m.req_method != method::ack) respond(c, 404, "Not Found (next hop is not an address)");  // RFC 3261 17
        return true;
    }
    // Only where the peers or a dialog we hold say a request may go: else any trunk source
    // could have us relay to any host (and its answer would be denied on the way back). A
    // peer is trusted with where its requests go (the callee's, before the 2xx too); toward a
    // peer is always fine; else the next hop must be a party of the dialog. A call without a
    // dialog entry (the table was full; or early, before its 2xx) keeps only the peer cases.
    if (!t.is_peer_address(c.in.src.addr) && !t.is_peer_address(next.addr) &&
        (dl == none_slot || !dialogs_->table.at(dl).party(next.addr))) {
        stats_->add(proxy_counter::in_dialog_refused);
        if (m.req_method == method::ack) return true;  // never answered (RFC 3261 17)
        if (dl == none_slot)
            respond(c, 481, {});
        else
            respond(c, 403, "Forbidden (next hop is not in this dialog)");
        return true;
    }
    stats_->add(proxy_counter::in_dialog);
    // Our Via: a stateless branch derived from the incoming one, and where to send the
    // response back (the request's source, which also covers callers behind NAT).
    char branch[32];
    const uint64_t key = upstream_key(m, c.in.src);
    const std::size_t branch_len = write_stateless_branch(branch, key);
    const endpoint local = leg_local(family_local(t, w.via_local, next.addr), next);
    char via[max_via_size];
    // RFC 7339: overload control advertised toward peers only (whose feedback we honour).
    const std::size_t via_len = write_via(via, local, std::string_view(branch, branch_len), c.in.src,
                                          t.oc.advertise && t.is_peer_address(next.addr));
    edits e;
    e.pop_routes = static_cast<uint8_t>(w.ours);
    e.decrement_max_forwards = true;
    e.push_via = std::string_view(via, via_len);  // RFC 3261 16.6 step 8, the ACK of a 2xx too
    // re-INVITE, UPDATE, the ACK of a late offer: from the caller it goes to leg B.
    const media_leg to = media_leg_of(dl, c.in.src, &t) == media_leg::a ? media_leg::b : media_leg::a;
    relay_request(c, e, local, next, key, call, to, dialog_stages(dl));
    return true;
}

bool call_core::forward_hidden(msg_ctx& c, const route_walk& w, uint32_t dl) noexcept
{
    const message& m = *c.m;
    const proxy_tables& t = c.t;
    if (dl == none_slot || dialogs_->table.at(dl).hide == 0) return false;
    const dialog_entry& de = dialogs_->table.at(dl);
    const uint64_t call = dialogs_->table.key(dl);  // the Call-ID hash the dialog is kept by
    th_scratch th;
    // One of our Routes may hold the route set of the side the request goes to, which it hid
    // from the sender; the Contact we wrote gives back the Request-URI it replaced.
    std::string_view routes, ruri;
    const bool bad = (w.th_found && !hiding::decode_routes(c, w.th, th, routes)) || !hiding::decode_ruri(c, m, th, ruri);
    if (bad) {
        stats_->add(proxy_counter::th_undecodable);
        if (m.req_method != method::ack) respond(c, 400, "Bad Request (unknown sbc-th)");
        return true;
    }
    // Which side sends it: the caller (its signalling address or Contact host), or the callee
    // (a peer, or the callee's Contact host).
    const bool from_caller = c.in.src.addr == de.caller.addr ||
                             (!de.caller_contact.is_unspecified() && c.in.src.addr == de.caller_contact);
    if (!from_caller && !t.is_peer_address(c.in.src.addr) && !de.party(c.in.src.addr)) {
        stats_->add(proxy_counter::in_dialog_refused);
        if (m.req_method != method::ack) respond(c, 403, "Forbidden (not a party of this dialog)");
        return true;
    }
    if (w.ours == 0 && ruri.empty()) {
        // Sent to our own address by a UA that ignores Record-Route and Contact: the other
        // side's target, the callee's Contact (kept) or the caller's signalling address.
        if (!hiding::names_us(t, m)) return false;
        if (from_caller) {
            ruri = hiding::target_of(*hiding_, dl);
            if (ruri.empty()) return false;  // nothing kept: 481, as before
        } else {
            char ep[64];
            const std::string_view scheme = de.caller.proto == transport::tls ? "sips:" : "sip:";
            const std::string_view addr(ep, format_endpoint(de.caller, ep));
            const std::string_view tail = de.caller.proto == transport::tcp ? ";transport=tcp" : "";
            if (scheme.size() + addr.size() + tail.size() <= th.ruri.size()) {
                char* p = th.ruri.data();
                for (std::string_view s : {scheme, addr, tail}) {
                    std::memcpy(p, s.data(), s.size());
                    p += s.size();
                }
                ruri = {th.ruri.data(), static_cast<std::size_t>(p - th.ruri.data())};
            }
        }
    }
    endpoint next = w.next;
    bool have_next = w.have_next;
    if (!w.route_left) {
        if (!routes.empty()) {
            have_next = hiding::first_route(routes, next);
        } else {
            const std::string_view target = ruri.empty() ? m.text(m.request_uri) : ruri;
            have_next = (from_caller && !ruri.empty() && hiding::kept_target(*hiding_, dl, ruri, next)) ||
                        uri_target(target, span{0, static_cast<uint16_t>(target.size())}, next);
        }
    }
    if (!from_caller && is_stream(de.caller.proto)) {
        next = de.caller;  // toward a caller on a stream: its connection (as forward_in_dialog)
        have_next = true;
    }
    if (!have_next || next.addr.family() == ip_family::none) {
        stats_->add(proxy_counter::rejected);
        if (m.req_method != method::ack) respond(c, 404, "Not Found (next hop is not an address)");
        return true;
    }
    if (!t.is_peer_address(c.in.src.addr) && !t.is_peer_address(next.addr) && !de.party(next.addr)) {
        stats_->add(proxy_counter::in_dialog_refused);
        if (m.req_method != method::ack) respond(c, 403, "Forbidden (next hop is not in this dialog)");
        return true;
    }
    stats_->add(w.ours != 0 ? proxy_counter::in_dialog : proxy_counter::th_no_route);
    endpoint via_local = w.via_local;
    if (w.ours == 0) {
        via_local = from_caller ? de.callee_local : de.caller_local;
        if (via_local.port == 0) via_local = c.in.local;
    }
    const endpoint local = leg_local(family_local(t, via_local, next.addr), next);
    char branch[32];
    const uint64_t bkey = upstream_key(m, c.in.src);
    const std::string_view br(branch, write_stateless_branch(branch, bkey));
    const bool advertise = t.oc.advertise && t.is_peer_address(next.addr);
    const bool hide_to = (de.hide & (from_caller ? dialog_entry::th_callee : dialog_entry::th_caller)) != 0;
    edits e;
    if (hide_to) {
        if (!hiding::hide_request(c, m, local, br, c.in.src, advertise, e, th)) {
            if (m.req_method != method::ack) respond(c, 513, {});
            return true;
        }
    } else {
        e.push_via = {th.via.data(), write_via(th.via, local, br, c.in.src, advertise)};
    }
    e.pop_routes = static_cast<uint8_t>(w.ours);
    e.push_route = routes;
    e.request_uri = ruri;
    e.decrement_max_forwards = true;
    relay_request(c, e, local, next, bkey, call, from_caller ? media_leg::b : media_leg::a, de.stages);
    return true;
}

void call_core::relay_request(msg_ctx& c, edits& e, const endpoint& local, const endpoint& next, uint64_t key,
                              uint64_t call, media_leg to, stage_mask stages) noexcept
{
    const message& m = *c.m;
    if (m.req_method == method::bye) dialog_bye_seen(c.t, call, c.now, c.in.src);
    out_message* d = c.out.next();
    if (d == nullptr) {
        stats_->add(proxy_counter::outbox_full);
        return;
    }
    if (!media_body(m, call, to, stages, e, c.now)) {
        respond(c, 488, "Not Acceptable Here (no media ports)");
        return;
    }
    const write_result r = edit_out(m, e, c.out, *d);  // large messages too (call_large.h)
    if (!r.ok()) return;
    c.out.commit(local, next, r.len);
    pending_track(c, next, key);  // a dead peer's silence answered 408, not left for 32 s
}

bool call_core::party_response(const msg_ctx& c) const noexcept
{
    // Only an answer to a request we forwarded statelessly (our stateless branch on top), from
    // a party of the dialog of its Call-ID.
    const message& m = *c.m;
    if (!m.is_response() || !m.has_top_via || !m.text(m.top_via.branch).starts_with(branch_stateless)) return false;
    const uint32_t d = dialogs_->find(hash_bytes(m.call_id()));
    if (d == none_slot || !dialogs_->table.at(d).party(c.in.src.addr)) return false;
    // And our Via must send it back to someone who may talk to us: else a party could have
    // us reflect whatever it writes to any host.
    bool found = false;
    const std::string_view back = param_value(m.text(m.top_via.params), "sbc-src", found);
    endpoint dst;
    if ((!found || !read_via_source(back, dst)) && !hidden_via_source(m, c.t.hiding_key, dst)) return false;
    if (dialogs_->table.at(d).party(dst.addr) || c.t.is_peer_address(dst.addr)) return true;
    for (const trunk& tr : c.t.trunks)
        if (tr.allows(dst.addr)) return true;
    return false;
}

bool call_core::relay_by_via(msg_ctx& c) noexcept
{
    // A response to something we forwarded statelessly: our Via says where it goes, in clear
    // (sbc-src) or, toward a hidden side, inside our hidden Via (the Vias below ours with it).
    const message& m = *c.m;
    pending_answered(m.text(m.top_via.branch));  // any answer, a provisional too: the peer is alive
    bool found = false;
    const std::string_view src = param_value(m.text(m.top_via.params), "sbc-src", found);
    const bool hidden = !found && has_hidden_via(m);
    if (!hidden && !has_second_via(m)) {
        stats_->add(proxy_counter::stale_responses);
        return true;  // consumed: nobody below us to relay it to
    }
    endpoint dst;
    if (!hidden && (!found || !read_via_source(src, dst))) return false;
    out_message* d = c.out.next();
    if (d == nullptr) {
        stats_->add(proxy_counter::outbox_full);
        return true;
    }
    edits e;
    e.pop_via = true;
    th_scratch th;
    if (hidden && !hiding::restore_vias(c, m, &dst, e, th)) return true;
    const uint64_t call = hash_bytes(m.call_id());
    const uint32_t dl = dialogs_->find(call);
    // From our endpoint on the leg it goes back on: the dialog knows both (a call whose legs
    // differ in trunk or transport); else where it arrived.
    endpoint from = c.in.local;
    bool hide_to = false;
    uint8_t hide = 0;
    if (dl != none_slot) {
        const dialog_entry& de = dialogs_->table.at(dl);
        const bool to_caller = de.caller.same_place(dst);
        const endpoint& leg = to_caller ? de.caller_local : de.callee_local;
        if (leg.port != 0) from = leg;
        hide = de.hide;
        hide_to = (hide & (to_caller ? dialog_entry::th_caller : dialog_entry::th_callee)) != 0;
    }
    if ((hidden || hide != 0) && !hiding::hide_response(c, m, from, hide_to, e, th)) return true;
    media_body(m, call, media_leg_of(dl, dst, nullptr), dialog_stages(dl), e, c.now);  // refused: unchanged
    via_splice ocs;  // RFC 7339: our feedback in the Via of a client that advertised oc
    if (oc::stamp_relayed(*oc_, m, ocs, *stats_)) e.via_params = &ocs;
    const write_result r = edit_out(m, e, c.out, *d);
    if (!r.ok()) return true;
    c.out.commit(leg_local(family_local(c.t, from, dst.addr), dst), dst, r.len);
    stats_->add(proxy_counter::relayed_stateless);
    if (m.cseq_method == method::bye && m.status >= 200) dialog_end(call, cdr_end::bye_caller, c.now);
    return true;
}

}  // namespace sbc::sip
