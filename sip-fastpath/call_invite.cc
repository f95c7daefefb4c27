// A new call in the call core: a new INVITE taken (100 Trying, route, the checks that refuse
// it, the INVITE kept as every attempt sends it), an out-of-dialog request forwarded, and the
// attempts across the peers of a region and then the next region. The INVITE is edited once,
// when it is taken (Max-Forwards down, the offer anchored: stage_media.h); an attempt, and each
// retransmission of it, splices our Via and Record-Route into the kept copy by its index. When
// the attempt's stages edit it (outbound rules, topology hiding), the first attempt is edited
// from the INVITE as taken (invite_source), a later one from a parse of the kept copy.
// What comes back to a setup is in call_events.cc. Worker only.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "sip-fastpath/call_core.h"
#include "sip-fastpath/call_targets.h"
#include "sip-fastpath/canary_match.h"
#include "sip-fastpath/proxy_ids.h"
#include "sip-fastpath/route_match.h"
#include "sip-fastpath/sip_response.h"
#include "sip-fastpath/stage_cdr.h"
#include "sip-fastpath/stage_guard.h"
#include "sip-fastpath/stage_hiding.h"
#include "sip-fastpath/stage_rules.h"

namespace sbc::sip {

namespace {

std::string_view user_of(std::string_view raw, span uri_text)
{
    uri u;
    if (!parse_uri(raw, uri_text, u)) return {};
    return u.user.in(raw);
}

/// Our endpoint toward peer `pe`: its trunk's, on its transport (trunk::leg_local: the UDP
/// port number when the trunk does not listen on that transport); `fallback`'s address and
/// port when the trunk is not in the tables.
endpoint peer_local(const proxy_tables& t, const peer& pe, const endpoint& fallback) noexcept
{
    if (pe.trunk < t.trunks.size()) return t.trunks[pe.trunk].leg_local(pe.proto, pe.address);
    return endpoint{fallback.addr, fallback.port, pe.proto, 0};
}

/// Our Record-Route values for a call that came in at `up` on trunk `in` and leaves at
/// `down` toward peer `pe` (null: not in the tables).
struct record_routes {
    std::array<char, max_record_route_size> top;     ///< the downstream (peer's) side
    std::array<char, max_record_route_size> second;  ///< the upstream side, when doubled
    std::size_t top_len = 0;
    std::size_t second_len = 0;
};

std::size_t write_rr(std::span<char> out, const endpoint& local, std::string_view host, uint8_t worker) noexcept
{
    const std::size_t n = write_record_route(out, local, host, worker);
    return n != 0 || host.empty() ? n : write_record_route(out, local, worker);  // an FQDN too long: the address
}

/// One Record-Route when both legs are the same endpoint of ours presenting the same name;
/// otherwise two (RFC 5658 double record-routing): the top one names us on the downstream
/// leg, the second on the upstream leg, each with its own host, port and transport, so that
/// each side's route set reaches us on its own leg. A name that differs alone also doubles:
/// the caller is not made to resolve the name we present to peers. Hosts: downstream the
/// region's FQDN, else the peer trunk's, else the address; upstream the arrival trunk's FQDN,
/// else the address.
void write_record_routes(const proxy_tables& t, uint16_t in, const endpoint& up, const peer* pe,
                         const endpoint& down, uint8_t worker, record_routes& rr) noexcept
{
    std::string_view down_host;
    if (pe != nullptr) {
        if (pe->region < t.regions.size()) down_host = t.regions[pe->region].fqdn;
        if (down_host.empty() && pe->trunk < t.trunks.size()) down_host = t.trunks[pe->trunk].fqdn;
    }
    const std::string_view up_host = in < t.trunks.size() ? std::string_view(t.trunks[in].fqdn) : std::string_view{};
    rr.top_len = write_rr(rr.top, down, down_host, worker);
    rr.second_len = 0;
    if (!up.same_place(down) || up_host != down_host) rr.second_len = write_rr(rr.second, up, up_host, worker);
}

/// Whether an edit produced (or failed to produce for want of room) a message too big for the
/// leg toward `to`: over our buffers on any transport, over a datagram on UDP.
bool too_big_for(const write_result& w, const endpoint& to) noexcept
{
    return w.err == error::no_space || (w.ok() && !is_stream(to.proto) && w.len > max_udp_payload);
}

/// Where the header lines of `m` start.
uint32_t header_start(const message& m) noexcept
{
    return static_cast<uint32_t>(m.start_line.end()) + ((m.raw[m.start_line.end()] == '\r') ? 2U : 1U);
}

/// The index of the kept INVITE: `m`'s parts where edit() moved them (`sh`).
invite_index index_of(const proxy_tables& t, const message& m, const edit_shifts& sh) noexcept
{
    auto at = [&](span s) { return s.len == 0 ? span{} : span{static_cast<uint16_t>(sh.moved(s.off)), s.len}; };
    invite_index ix;
    ix.request_uri = at(m.request_uri);
    if (m.h_from != no_header) {
        ix.from = at(m.headers[m.h_from].value);
        ix.from_uri = at(m.from.uri_text);
    }
    if (m.h_to != no_header) ix.to = at(m.headers[m.h_to].value);
    if (m.h_call_id != no_header) ix.call_id = at(m.headers[m.h_call_id].value);
    if (const name_addr* c = first_contact(m)) ix.contact_uri = at(c->uri_text);
    ix.cseq = m.cseq;
    const uint32_t first = header_start(m);
    ix.via_at = static_cast<uint16_t>(sh.moved(m.h_via != no_header ? m.headers[m.h_via].line.off : first));
    if (m.h_via != no_header) {
        unsigned last = m.h_via;
        while (last + 1u < m.header_count && m.headers[last + 1].id == header_id::via) ++last;
        bool one_run = true;
        for (unsigned i = last + 1; i < m.header_count && one_run; ++i) one_run = m.headers[i].id != header_id::via;
        if (one_run) {
            const uint32_t b = sh.moved(m.headers[m.h_via].value.off);
            ix.vias = span{static_cast<uint16_t>(b), static_cast<uint16_t>(sh.moved(m.headers[last].value.end()) - b)};
        }
    }
    ix.rr_at = static_cast<uint16_t>(sh.moved(m.h_record_route != no_header ? m.headers[m.h_record_route].line.off : first));
    ix.ruri = ruri_parts_of(t, m, [&](uint32_t off) { return sh.moved(off); });
    return ix;
}

/// The kept INVITE `kept` (indexed by `ix`) with our Via and Record-Route line(s) spliced in,
/// as edit() would have pushed them, and its Request-URI replaced by `ruri` unless that is
/// empty, into `d` (an outbox large buffer when over max_out_size).
write_result splice_attempt(std::string_view kept, const invite_index& ix, std::string_view ruri, std::string_view via,
                            const record_routes& rr, outbox& out, out_message& d) noexcept
{
    constexpr std::string_view via_name = "Via: ", rr_name = "Record-Route: ", crlf = "\r\n";
    const std::size_t via_line = via_name.size() + via.size() + crlf.size();
    std::size_t rr_lines = rr_name.size() + rr.top_len + crlf.size();
    if (rr.second_len != 0) rr_lines += rr_name.size() + rr.second_len + crlf.size();
    const std::size_t total = kept.size() + via_line + rr_lines + (ruri.empty() ? 0 : ruri.size() - ix.request_uri.len);
    std::span<char> to(d.data);
    if (total > max_out_size) {
        to = out.take_large();
        if (to.size() < total) return {error::no_space, 0};
        d.large = to.data();
    }
    char* w = to.data();
    auto put = [&](std::string_view s) {
        std::memcpy(w, s.data(), s.size());
        w += s.size();
    };
    auto put_via = [&] {
        put(via_name);
        put(via);
        put(crlf);
    };
    auto put_rr = [&] {
        put(rr_name);
        put({rr.top.data(), rr.top_len});
        put(crlf);
        if (rr.second_len == 0) return;
        put(rr_name);
        put({rr.second.data(), rr.second_len});
        put(crlf);
    };
    // At one offset the Via goes first (the editor's order for the same edits).
    const bool via_first = ix.via_at <= ix.rr_at;
    const std::size_t a = via_first ? ix.via_at : ix.rr_at;
    const std::size_t b = via_first ? ix.rr_at : ix.via_at;
    if (ruri.empty()) {
        put(kept.substr(0, a));
    } else {  // the start line's URI; our lines go after the start line
        put(kept.substr(0, ix.request_uri.off));
        put(ruri);
        put(kept.substr(ix.request_uri.end(), a - ix.request_uri.end()));
    }
    if (via_first) put_via(); else put_rr();
    put(kept.substr(a, b - a));
    if (via_first) put_rr(); else put_via();
    put(kept.substr(b));
    return {error::none, static_cast<uint32_t>(w - to.data())};
}

}  // namespace

int call_core::route_group(const msg_ctx& c, bool count, uint16_t* route_index) noexcept
{
    // The first route whose pattern matches its field, else the default route.
    const message& m = *c.m;
    const proxy_tables& t = c.t;
    int route = -1;
    if (t.matcher) {
        const std::array<std::string_view, match_field_count> values{
            m.ruri.user.in(m.raw), user_of(m.raw, m.from.uri_text), user_of(m.raw, m.to.uri_text),
            c.in.trunk < t.trunks.size() ? std::string_view(t.trunks[c.in.trunk].name) : std::string_view{}};
        route = t.matcher->match(worker_, values);
    }
    if (route < 0) route = t.default_route;
    if (count)
        (stats_->invites_by_route[route >= 0 && static_cast<std::size_t>(route) < proxy_stats::max_counted
                                             ? static_cast<std::size_t>(route)
                                             : proxy_stats::max_counted]).bump();
    if (route < 0 || static_cast<std::size_t>(route) >= t.routes.size() ||
        t.routes[static_cast<std::size_t>(route)].peer_group >= t.groups.size()) {
        stats_->add(proxy_counter::no_route);
        respond(c, 404, "Not Found (no route)");
        return -1;
    }
    if (route_index != nullptr) *route_index = static_cast<uint16_t>(route);
    return t.routes[static_cast<std::size_t>(route)].peer_group;
}

void call_core::forward_out_of_dialog(msg_ctx& c) noexcept
{
    // Outside a dialog and not an INVITE: routed like one, forwarded statelessly once to the
    // group's first choice.
    const message& m = *c.m;
    const proxy_tables& t = c.t;
    const int group = route_group(c, false);
    if (group < 0) return;
    const peer_group& g = t.groups[static_cast<std::size_t>(group)];
    for (uint16_t r : g.regions) {
        const uint32_t p = select_peer(t, c.h, {.region = r, .sel = g.sel, .call_hash = hash_bytes(m.call_id())}, select_);
        if (p == no_peer) continue;
        out_message* d = c.out.next();
        if (d == nullptr) return;
        char branch[32];
        char via[max_via_size];
        const endpoint to = t.peers[p].remote();
        const endpoint local = peer_local(t, t.peers[p], c.in.local);
        edits e;
        e.push_via = std::string_view(
            via, write_via(via, local, {branch, write_stateless_branch(branch, upstream_key(m, c.in.src))}, c.in.src,
                           t.oc.advertise));
        e.decrement_max_forwards = true;
        const write_result w = edit_out(rules::apply_out(*rules_, c, p, m), e, c.out, *d);  // outbound rules
        if (too_big_for(w, to)) {
            stats_->add(proxy_counter::send_failed_too_big);
            respond(c, 513, {});
            return;
        }
        if (w.ok()) {
            c.out.commit(local, to, w.len);
            stats_->add(proxy_counter::relayed_stateless);
        }
        return;
    }
    stats_->add(proxy_counter::exhausted);
    respond(c, 503, {}, true, t.retry.retry_after_s);
}

void call_core::new_invite(msg_ctx& c) noexcept
{
    const uint64_t key = upstream_key(*c.m, c.in.src);
    if (const uint32_t known = find_setup(key); known != none_slot) {
        // A retransmitted INVITE: repeat what the caller last heard from us.
        stats_->add(proxy_counter::retransmissions_absorbed);
        const call_setup& s = setups_->at(known);
        if ((s.state == setup_state::completed || s.state == setup_state::lingering) && s.final_len != 0) {
            if (out_message* d = c.out.next()) {
                std::memcpy(d->data.data(), store_of(known) + s.invite_len, s.final_len);
                c.out.commit(s.local, s.caller, s.final_len);
            }
        } else if (s.state != setup_state::lingering) {
            respond(c, 100, {});
        }
        return;
    }
    // Point "request in": the guards, then the inbound rules (routes see the normalised numbers).
    if (guard::shed(*guard_, c, overload(), false)) {
        respond(c, 503, "Service Unavailable (overloaded)", true, c.t.overload.retry_after_s);
        cdr_refused(c, 503);
        return;
    }
    c.m = rules::apply_in(*rules_, c);
    stats_->add(proxy_counter::invites);
    if (c.in.trunk < proxy_stats::max_counted) stats_->invites_by_trunk[c.in.trunk].bump();
    if (c.h.draining()) {
        // Draining for a rolling update: existing calls go on, new ones go elsewhere.
        stats_->add(proxy_counter::refused_draining);
        respond(c, 503, "Service Unavailable (draining)", true, c.t.retry.retry_after_s);
        cdr_refused(c, 503);
        return;
    }
    uint16_t route = no_fallback;
    const int group = route_group(c, true, &route);
    if (group < 0) {
        cdr_refused(c, 404);  // route_group answered it
        return;
    }
    if (refuse_new_invite(c, route)) return;
    const message& m = *c.m;
    const uint32_t slot = setups_->insert(key);
    stats_->setups_active.set(setups_->size());
    call_setup& s = setups_->at(slot);
    const auto gen = static_cast<uint16_t>(s.gen + 1);
    s = call_setup{};
    s.gen = gen;
    s.callid_hash = hash_bytes(m.call_id());
    s.stages = call_stages(c.t, c.in.trunk, route, node());
    if (const std::optional<ip_address> ct = contact_address(m)) s.caller_contact = *ct;
    if ((s.stages & stage::canary) != 0) {
        // Which canary peers this call may go to (and will, first): one scan per field.
        const std::array<std::string_view, match_field_count> values{
            m.ruri.user.in(m.raw), user_of(m.raw, m.from.uri_text), user_of(m.raw, m.to.uri_text), {}};
        s.canary_mask = c.t.canaries->match(worker_, values);
    }
    s.caller = c.in.src;
    s.local = c.in.local;
    s.trunk = c.in.trunk;
    s.admitted = true;  // admit() counted it
    s.group = static_cast<uint16_t>(group);
    s.route = route;  // its fallback, if any (call_events.cc)
    s.state = setup_state::calling;
    invite_source src;
    if (!keep_invite(c, slot, route, src)) return;
    if ((s.stages & stage::cdr) != 0) cdr::setup_started(*cdr_, slot, m, c.in, worker_, route, s.callid_hash);
    respond(c, 100, {});  // at once: the caller stops retransmitting
    next_attempt(c, slot, failure_cause::none, &src);
}

bool call_core::refuse_new_invite(msg_ctx& c, uint16_t route) noexcept
{
    const message& m = *c.m;
    const uint32_t retry_after_s = c.t.retry.retry_after_s;
    uint16_t code = 0;
    if (m.raw.size() > max_udp_message) {
        // More than we keep or forward: refused for its size (no peer could take it).
        stats_->add(proxy_counter::send_failed_too_big);
        respond(c, code = 513, {});
    } else if (m.raw.size() > max_out_size && !large_free()) {
        // Larger than a setup's own buffer, and every large one is held by a call being set up
        // (call_large.h): a temporary condition, 503 (RFC 3261 21.5.4) rather than 513.
        stats_->add(proxy_counter::large_busy);
        respond(c, code = 503, "Service Unavailable (large messages busy)", true, retry_after_s);
    } else if (setups_->full()) {
        stats_->add(proxy_counter::table_full);
        respond(c, code = 503, "Service Unavailable (call table full)", true, retry_after_s);
    } else if (!admit(c)) {  // over a trunk or node limit: refused, counted
        code = c.t.admission.refuse_code;
    }
    if (code == 0) return false;
    cdr_refused(c, code, route);
    return true;
}

bool call_core::keep_invite(msg_ctx& c, uint32_t slot, uint16_t route, invite_source& src) noexcept
{
    // The INVITE as every attempt sends it, edited once: Max-Forwards down (RFC 3261 16.6) and
    // the offer anchored toward the callee's leg (ports for it now: a call we cannot anchor is
    // refused before it rings anyone). Into the setup's store, a large buffer when it needs one.
    const message& m = *c.m;
    call_setup& s = setups_->at(slot);
    edits e;
    e.decrement_max_forwards = true;
    uint16_t code = 0;
    std::string_view reason;
    edit_shifts sh;
    write_result w{error::no_space, 0};
    if (!media_body(m, s.callid_hash, media_leg::b, s.stages, e, c.now)) {
        stats_->add(proxy_counter::table_full);
        code = 503;
        reason = "Service Unavailable (no media ports)";
    } else {
        w = edit(m, e, {store_of(slot), store_room(slot)}, sh);
        if (w.err == error::no_space && s.large == no_large) {
            if (take_large(slot)) {
                w = edit(m, e, {store_of(slot), store_room(slot)}, sh);
            } else {
                code = 503;  // counted large_busy
                reason = "Service Unavailable (large messages busy)";
            }
        }
        if (code == 0 && (!w.ok() || !sh.complete || w.len > max_udp_message)) {
            stats_->add(proxy_counter::send_failed_too_big);
            code = 513;
        }
    }
    if (code != 0) {
        release(slot);  // gives back the admission counts and a large buffer
        respond(c, code, reason, code == 503, c.t.retry.retry_after_s);
        cdr_refused(c, code, route);
        return false;
    }
    s.invite_len = static_cast<uint16_t>(w.len);
    s.inv = index_of(c.t, m, sh);
    src.m = &m;
    src.kept = e;
    return true;
}

bool call_core::send_invite(const call_env& e, uint32_t slot, const invite_source* src) noexcept
{
    call_setup& s = setups_->at(slot);
    out_message* d = e.out.next();
    if (d == nullptr) {
        stats_->add(proxy_counter::outbox_full);
        return false;
    }
    char branch[branch_stateful_len];
    write_branch(branch, txn_id{worker_, slot, s.gen, static_cast<uint8_t>(s.attempt & 0xf)});
    const endpoint local = s.out_local;
    char via[max_via_size];
    const std::size_t via_len = write_via(via, local, {branch, branch_stateful_len}, s.caller, e.t.oc.advertise);
    // Record-Route so that in-dialog requests come back through us, to this worker: one, or
    // two when the legs differ (write_record_routes). The peer is found again by address:
    // a retransmission may run under a newer snapshot.
    const uint32_t pi = e.t.find_peer(s.peer.addr, s.peer.port);
    record_routes rr;
    write_record_routes(e.t, s.trunk, s.local, pi != no_peer ? &e.t.peers[pi] : nullptr, local, worker_, rr);
    write_result w;
    if ((s.attempt_stages & (stage::rules_out | stage::hide_callee)) == 0) {
        const std::string_view kept(store_of(slot), s.invite_len);
        char ruri[max_retarget_size];
        w = splice_attempt(kept, s.inv, retargeted(e.t, kept, s.inv.ruri, s.peer, pi, ruri), {via, via_len}, rr, e.out, *d);
    } else {
        edits ed;
        ed.push_via = std::string_view(via, via_len);
        ed.record_route = std::string_view(rr.top.data(), rr.top_len);
        ed.record_route_2 = std::string_view(rr.second.data(), rr.second_len);
        w = edit_invite(e, slot, {branch, branch_stateful_len}, ed, *d, src);
        if (s.state != setup_state::calling) return false;  // answered (topology hiding did not fit)
    }
    if (too_big_for(w, s.peer)) {
        // With our Via and Record-Route it no longer fits its leg: no peer could receive it.
        // The caller hears now, rather than after every peer's no-response timer, and no peer
        // is blamed for it.
        stats_->add(proxy_counter::send_failed_too_big);
        respond_upstream(e, slot, s.cancelled ? 487 : 513, false, 0);
        return false;
    }
    if (!w.ok()) return false;
    e.out.commit(local, s.peer, w.len);
    return true;
}

write_result call_core::edit_invite(const call_env& e, uint32_t slot, std::string_view branch, edits& ed,
                                    out_message& d, const invite_source* src) noexcept
{
    call_setup& s = setups_->at(slot);
    const message* inv = nullptr;
    if (src != nullptr && src->m != nullptr) {
        // The first attempt: the INVITE as taken, with the kept copy's edits made again in
        // the same pass (rules never name Max-Forwards or the body: managed_header). These are
        // the edits keep_invite makes; one it gains must be copied here too.
        inv = src->m;
        ed.decrement_max_forwards = src->kept.decrement_max_forwards;
        ed.replace_body = src->kept.replace_body;
        ed.body = src->kept.body;
        ed.content_type = src->kept.content_type;
    } else {
        // A later attempt: the kept copy parsed (once per attempt sent).
        if (parse({store_of(slot), s.invite_len}, *aux_) != error::none || !aux_->is_request())
            return {error::bad_start_line, 0};
        inv = aux_.get();
    }
    const uint32_t p = e.t.find_peer(s.peer.addr, s.peer.port);
    if ((s.attempt_stages & stage::rules_out) != 0 && p != no_peer) inv = &rules::apply_out_edits(*rules_, e, p, *inv, ed);
    th_scratch th;  // the hidden forms the edits point into, until edit_out wrote them
    if ((s.attempt_stages & stage::hide_callee) != 0 && p != no_peer &&
        !hiding::on_attempt(e, p, *inv, branch, s.out_local, s.caller, ed, th)) {
        respond_upstream(e, slot, s.cancelled ? 487 : 513, false, 0);
        return {error::no_space, 0};
    }
    // The message being edited (after any outbound number rule) names the SBC: retargeted.
    char ruri[max_retarget_size];
    if (s.inv.ruri.ours)
        ed.request_uri = retargeted(e.t, inv->raw, ruri_parts_of(e.t, *inv, [](uint32_t off) { return off; }), s.peer, p, ruri);
    return edit_out(*inv, ed, e.out, d);
}

void call_core::next_attempt(const call_env& e, uint32_t slot, failure_cause why, const invite_source* src) noexcept
{
    call_setup& s = setups_->at(slot);
    const proxy_tables& t = e.t;
    switch (why) {
    case failure_cause::code: stats_->add(proxy_counter::retries_code); break;
    case failure_cause::timeout: stats_->add(proxy_counter::retries_timeout); break;
    case failure_cause::icmp: stats_->add(proxy_counter::retries_icmp); break;
    case failure_cause::none: break;
    }
    peer_put(s.peer_id);
    uint32_t p = no_peer;
    bool saw_full = false;  // a peer at its max_calls was passed over
    // A call that fell back counts its attempts in the fallback group from fallback_base.
    if (s.group < t.groups.size() && s.attempt - s.fallback_base < t.retry.max_attempts && s.n_tried < max_tried) {
        const peer_group& g = t.groups[s.group];
        const uint8_t start_region = s.region_pos;
        while (s.region_pos < g.regions.size()) {
            p = pick_peer(e, slot, g.regions[s.region_pos], false, saw_full);
            if (p != no_peer) break;
            ++s.region_pos;
        }
        if (p != no_peer && s.region_pos != start_region && s.attempt != s.fallback_base)
            stats_->add(proxy_counter::failover_region);
        if (p == no_peer && s.attempt == s.fallback_base && !saw_full) {
            // Every peer is marked down: rather than refuse the call, try them anyway in the
            // usual order (the marks are a guess from failures; a peer may be back already).
            // Not when peers that are up are only full: that is a refusal, below.
            for (uint8_t r = 0; r < g.regions.size() && p == no_peer; ++r) {
                p = pick_peer(e, slot, g.regions[r], true, saw_full);
                if (p != no_peer) s.region_pos = r;
            }
            if (p != no_peer) stats_->add(proxy_counter::all_down_tried);
        }
    }
    if (p == no_peer && saw_full) {
        // Every peer left was at its call limit: the admission answer, never a full peer.
        stats_->add(proxy_counter::admission_peers_full);
        if (s.trunk < proxy_stats::max_counted) stats_->refused_by_trunk[s.trunk].bump();
        const uint16_t code = s.cancelled ? 487 : t.admission.refuse_code;
        const bool retry_after = retry_after_allowed(code) && t.admission.retry_after_s != 0;
        respond_upstream(e, slot, code, retry_after, t.admission.retry_after_s,
                         s.cancelled ? std::string_view{} : "peer call limit");
        return;
    }
    if (p == no_peer) {
        // Every candidate failed (or none is up): the best answer we can give.
        if (fallback_exhausted(e, slot)) return;  // the primary group's answer
        stats_->add(proxy_counter::exhausted);
        respond_upstream(e, slot, 503, true, t.retry.retry_after_s);
        return;
    }
    const peer& pe = t.peers[p];
    if (select_.oc_diverted) stats_->add(proxy_counter::oc_diverted);  // the last selection chose p
    s.peer = pe.remote();  // connection 0: the stream thread's connection to the peer
    s.out_local = peer_local(t, pe, s.local);
    s.peer_id = pe.id;
    s.tried[s.n_tried++] = pe.id;
    ++s.attempt;
    s.attempt_stages = s.stages | attempt_stages(t, p);  // point "before an attempt": its peer's stages
    s.th_hidden = (s.attempt_stages & stage::hide_callee) != 0;
    if ((s.stages & stage::cdr) != 0) cdr::attempt_sent(*cdr_, slot, pe.id, e.now);
    s.state = setup_state::calling;
    stats_->active_by_peer[pe.id].bump();  // pick_peer counted it node-wide
    s.rt_interval = timer_t1_ms;
    // Timer A only on UDP (RFC 3261 17.1.1.2): a stream delivers or loses the connection.
    // Timer B and the no-response failover run on every transport.
    s.t_retransmit = is_stream(s.peer.proto) ? 0 : e.now + timer_t1_ms;
    // The peer's learned timer (control/peer_timer.h), else retry.no_response_ms.
    s.t_no_response = e.now + e.h.no_response_for(s.peer_id, t.retry.no_response_ms);
    s.t_attempt_sent = e.now;
    s.t_give_up = e.now + timer_b_ms;
    s.t_release = 0;
    // Refused before it left (too big): the caller has its answer, and the peer no attempt.
    if (!send_invite(e, slot, src) && s.state != setup_state::calling) return;
    stats_->attempts_by_peer[pe.id].bump();
    arm(slot);
}

void call_core::failure(const call_env& e, uint32_t slot, failure_cause why, uint16_t code) noexcept
{
    const call_setup& s = setups_->at(slot);
    const cdr_outcome o = why == failure_cause::timeout ? cdr_outcome::timeout
                          : why == failure_cause::icmp
                              ? (is_stream(s.peer.proto) ? cdr_outcome::connection : cdr_outcome::icmp)
                          : s.cancelled ? cdr_outcome::cancelled
                                        : cdr_outcome::code;
    cdr_attempt_end(slot, o, code, e.now);
    if (s.peer_id == no_peer) return;
    e.out.event(peer_event{peer_event_kind::failed, why, code, s.peer_id});
    const std::size_t cls =
        why == failure_cause::timeout ? 3 : why == failure_cause::icmp ? 4 : code >= 600 ? 2 : code >= 500 ? 1 : 0;
    stats_->failures_by_peer[s.peer_id][cls].bump();
}

}  // namespace sbc::sip
