// Call setup in the proxy: a new INVITE (100 Trying, route, first peer), its attempts across
// the peers of a region and then the next region, the responses to each attempt (relay,
// retry, or give up with the best answer), CANCEL, and the timers of a setup. Worker only.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "sip-fastpath/canary_match.h"
#include "sip-fastpath/proxy_cdr.h"
#include "sip-fastpath/proxy_ids.h"
#include "sip-fastpath/proxy_internal.h"
#include "sip-fastpath/route_match.h"
#include "sip-fastpath/sip_editor.h"
#include "sip-fastpath/sip_numbers.h"
#include "sip-fastpath/sip_response.h"
#include "sip-fastpath/topology_hiding.h"

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
    if (pe.trunk < t.trunks.size()) return t.trunks[pe.trunk].leg_local(pe.proto);
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

proxy_counter send_failed_counter(send_failure why) noexcept
{
    switch (why) {
    case send_failure::too_big: return proxy_counter::send_failed_too_big;
    case send_failure::unresolved: return proxy_counter::send_failed_unresolved;
    case send_failure::no_route: return proxy_counter::send_failed_no_route;
    case send_failure::no_buffer: return proxy_counter::send_failed_no_buffer;
    case send_failure::no_connection: return proxy_counter::send_failed_no_connection;
    }
    return proxy_counter::send_failed_no_buffer;
}

}  // namespace

int proxy::route_group(const proxy_tables& t, const sip_input& a, bool count, outbox& out,
                       uint16_t* route_index) noexcept
{
    // The first route whose pattern matches its field, else the default route.
    const message& m = *msg_;
    int route = -1;
    if (t.matcher) {
        const std::array<std::string_view, match_field_count> values{
            m.ruri.user.in(m.raw), user_of(m.raw, m.from.uri_text), user_of(m.raw, m.to.uri_text),
            a.trunk < t.trunks.size() ? std::string_view(t.trunks[a.trunk].name) : std::string_view{}};
        route = t.matcher->match(worker_, values);
    }
    if (route < 0) route = t.default_route;
    if (count)
        sw_bump(stats_->invites_by_route[route >= 0 && static_cast<std::size_t>(route) < proxy_stats::max_counted
                                            ? static_cast<std::size_t>(route)
                                            : proxy_stats::max_counted]);
    if (route < 0 || static_cast<std::size_t>(route) >= t.routes.size() ||
        t.routes[static_cast<std::size_t>(route)].peer_group >= t.groups.size()) {
        stats_->add(proxy_counter::no_route);
        respond(a, 404, "Not Found (no route)", out);
        return -1;
    }
    if (route_index != nullptr) *route_index = static_cast<uint16_t>(route);
    return t.routes[static_cast<std::size_t>(route)].peer_group;
}

void proxy::forward_out_of_dialog(const proxy_tables& t, const peer_health& h, const sip_input& a, outbox& out) noexcept
{
    // Outside a dialog and not an INVITE: routed like one, forwarded statelessly once to the
    // group's first choice.
    const message& m = *msg_;
    const int group = route_group(t, a, false, out);
    if (group < 0) return;
    const peer_group& g = t.groups[static_cast<std::size_t>(group)];
    for (uint16_t r : g.regions) {
        const uint32_t p = select_peer(t, h, r, g.sel, {}, hash_bytes(m.call_id()), select_);
        if (p == no_peer) continue;
        out_message* d = out.next();
        if (d == nullptr) return;
        char branch[32];
        char via[max_via_size];
        const endpoint to = t.peers[p].remote();
        const endpoint local = peer_local(t, t.peers[p], a.local);
        edits e;
        e.push_via = std::string_view(
            via, write_via(via, local, {branch, write_stateless_branch(branch, upstream_key(m, a.src))}, a.src,
                           t.oc.advertise));
        e.decrement_max_forwards = true;
        const write_result w = edit_out(rules_out(t, p, m), e, out, *d);  // outbound rules (proxy_rules.cc)
        if (too_big_for(w, to)) {
            stats_->add(proxy_counter::send_failed_too_big);
            respond(a, 513, {}, out);
            return;
        }
        if (w.ok()) {
            out.commit(local, to, w.len);
            stats_->add(proxy_counter::relayed_stateless);
        }
        return;
    }
    stats_->add(proxy_counter::exhausted);
    respond(a, 503, {}, out, true, t.retry.retry_after_s);
}

void proxy::new_invite(const proxy_tables& t, const peer_health& h, const sip_input& a, outbox& out) noexcept
{
    const message& m = *msg_;
    const uint64_t key = upstream_key(m, a.src);
    const uint32_t known = find_setup(key);
    if (known != none_slot) {
        // A retransmitted INVITE: repeat what the caller last heard from us.
        stats_->add(proxy_counter::retransmissions_absorbed);
        setup& s = setups_->at(known);
        if ((s.state == setup_state::completed || s.state == setup_state::lingering) && s.final_len != 0) {
            if (out_message* d = out.next()) {
                std::memcpy(d->data.data(), store_of(known) + s.invite_len, s.final_len);
                out.commit(s.local, s.caller, s.final_len);
            }
        } else if (s.state != setup_state::lingering) {
            respond(a, 100, {}, out);
        }
        return;
    }
    stats_->add(proxy_counter::invites);
    if (a.trunk < proxy_stats::max_counted) sw_bump(stats_->invites_by_trunk[a.trunk]);
    if (h.draining()) {
        // Draining for a rolling update: existing calls go on, new ones go elsewhere.
        stats_->add(proxy_counter::refused_draining);
        respond(a, 503, "Service Unavailable (draining)", out, true, t.retry.retry_after_s);
        if (cdr_) cdr_refused(a, 503);
        return;
    }
    uint16_t route_index = no_fallback;
    const int route_group_index = route_group(t, a, true, out, &route_index);
    if (route_group_index < 0) {
        if (cdr_) cdr_refused(a, 404);  // route_group answered it
        return;
    }
    const auto group = static_cast<uint16_t>(route_group_index);

    if (m.raw.size() > max_udp_message) {
        // More than we keep or forward: refused for its size (no peer could take it).
        stats_->add(proxy_counter::send_failed_too_big);
        respond(a, 513, {}, out);
        if (cdr_) cdr_refused(a, 513, route_index);
        return;
    }
    if (m.raw.size() > max_out_size && !large_free()) {
        // Larger than a setup's own buffer, and every large one is held by a call being set up
        // (proxy_large.cc): a temporary condition, 503 (RFC 3261 21.5.4) rather than 513.
        stats_->add(proxy_counter::large_busy);
        respond(a, 503, "Service Unavailable (large messages busy)", out, true, t.retry.retry_after_s);
        if (cdr_) cdr_refused(a, 503, route_index);
        return;
    }
    if (setups_->full()) {
        stats_->add(proxy_counter::table_full);
        respond(a, 503, "Service Unavailable (call table full)", out, true, t.retry.retry_after_s);
        if (cdr_) cdr_refused(a, 503, route_index);
        return;
    }
    if (!admit(t, a, out)) {  // over a trunk or node limit: refused, counted
        if (cdr_) cdr_refused(a, t.admission.refuse_code, route_index);
        return;
    }
    if (media_ != nullptr) {
        // Ports for the offer now (send_invite finds them again): a call we cannot anchor
        // is refused before it rings anyone.
        edits probe;
        if (!media_body(m, hash_bytes(m.call_id()), media_leg::b, probe)) {
            stats_->add(proxy_counter::table_full);
            adm_->release_call(a.trunk);
            respond(a, 503, "Service Unavailable (no media ports)", out, true, t.retry.retry_after_s);
            if (cdr_) cdr_refused(a, 503, route_index);
            return;
        }
    }
    const uint32_t slot = setups_->insert(key);
    stats_->setups_active.store(setups_->size(), std::memory_order_relaxed);
    setup& s = setups_->at(slot);
    const uint16_t gen = static_cast<uint16_t>(s.gen + 1);
    s = setup{};
    s.gen = gen;
    s.callid_hash = hash_bytes(m.call_id());
    if (const std::optional<ip_address> c = contact_address(m)) s.caller_contact = *c;
    if (t.canaries) {
        // Which canary peers this call may go to (and will, first): one scan per field.
        const std::array<std::string_view, match_field_count> values{
            m.ruri.user.in(m.raw), user_of(m.raw, m.from.uri_text), user_of(m.raw, m.to.uri_text), {}};
        s.canary_mask = t.canaries->match(worker_, values);
    }
    s.caller = a.src;
    s.local = a.local;
    s.trunk = a.trunk;
    s.admitted = true;  // admit() counted it
    s.group = group;
    s.route = route_index;  // its fallback, if any (proxy_fallback.cc)
    s.state = setup_state::calling;
    s.invite_len = static_cast<uint16_t>(m.raw.size());
    take_large(slot, m.raw.size());  // checked free above (large_free)
    std::memcpy(store_of(slot), m.raw.data(), m.raw.size());
    if (cdr_) cdr_setup_started(slot, a, route_index);

    respond(a, 100, {}, out);  // at once: the caller stops retransmitting
    first_attempt_ = true;
    next_attempt(t, h, slot, failure_cause::none, a.now_ms, out);
    first_attempt_ = false;
}

bool proxy::send_invite(const proxy_tables& t, uint32_t slot, uint64_t now, outbox& out) noexcept
{
    setup& s = setups_->at(slot);
    out_message* d = out.next();
    if (d == nullptr) {
        stats_->add(proxy_counter::outbox_full);
        return false;
    }
    // The first attempt edits the INVITE just parsed; later ones re-parse the stored copy.
    const message* inv = msg_;
    if (!first_attempt_) {
        const std::string_view stored(store_of(slot), s.invite_len);
        if (parse(stored, *aux_) != error::none || !aux_->is_request()) return false;
        inv = aux_.get();
    }
    // Outbound header and number rules toward this attempt's peer (proxy_rules.cc).
    if (const uint32_t to = t.find_peer(s.peer.addr, s.peer.port); to != no_peer) inv = &rules_out(t, to, *inv);
    char branch[branch_stateful_len];
    write_branch(branch, txn_id{worker_, slot, s.gen, static_cast<uint8_t>(s.attempt & 0xf)});
    const endpoint local = s.out_local;
    char via[max_via_size];
    const std::size_t via_len = write_via(via, local, {branch, branch_stateful_len}, s.caller, t.oc.advertise);
    // Record-Route so that in-dialog requests come back through us, to this worker: one, or
    // two when the legs differ (write_record_routes). The peer is found again by address:
    // a retransmission may run under a newer snapshot.
    const uint32_t pi = t.find_peer(s.peer.addr, s.peer.port);
    record_routes rr;
    write_record_routes(t, s.trunk, s.local, pi != no_peer ? &t.peers[pi] : nullptr, local, worker_, rr);
    edits e;
    e.push_via = std::string_view(via, via_len);
    e.record_route = std::string_view(rr.top.data(), rr.top_len);
    e.record_route_2 = std::string_view(rr.second.data(), rr.second_len);
    e.decrement_max_forwards = true;
    th_scratch th;  // topology hiding toward the peer's side (proxy_hiding.cc)
    if (!th_invite(t, slot, *inv, {branch, branch_stateful_len}, local, e, th)) {
        respond_upstream(slot, s.cancelled ? 487 : 513, false, 0, now, out);
        return false;
    }
    if (!media_body(*inv, s.callid_hash, media_leg::b, e)) return false;
    const write_result w = edit_out(*inv, e, out, *d);
    if (too_big_for(w, s.peer)) {
        // With our Via and Record-Route it no longer fits its leg: no peer could receive it.
        // The caller hears now, rather than after every peer's no-response timer, and no peer
        // is blamed for it.
        stats_->add(proxy_counter::send_failed_too_big);
        respond_upstream(slot, s.cancelled ? 487 : 513, false, 0, now, out);
        return false;
    }
    if (!w.ok()) return false;
    out.commit(local, s.peer, w.len);
    return true;
}

void proxy::next_attempt(const proxy_tables& t, const peer_health& h, uint32_t slot, failure_cause why,
                         uint64_t now, outbox& out) noexcept
{
    setup& s = setups_->at(slot);
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
            p = pick_peer(t, h, slot, g.regions[s.region_pos], false, saw_full);
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
                p = pick_peer(t, h, slot, g.regions[r], true, saw_full);
                if (p != no_peer) s.region_pos = r;
            }
            if (p != no_peer) stats_->add(proxy_counter::all_down_tried);
        }
    }
    if (p == no_peer && saw_full) {
        // Every peer left was at its call limit: the admission answer, never a full peer.
        stats_->add(proxy_counter::admission_peers_full);
        if (s.trunk < proxy_stats::max_counted) sw_bump(stats_->refused_by_trunk[s.trunk]);
        const uint16_t code = s.cancelled ? 487 : t.admission.refuse_code;
        const bool retry_after = retry_after_allowed(code) && t.admission.retry_after_s != 0;
        respond_upstream(slot, code, retry_after, t.admission.retry_after_s, now, out,
                         s.cancelled ? std::string_view{} : "peer call limit");
        return;
    }
    if (p == no_peer) {
        // Every candidate failed (or none is up): the best answer we can give.
        if (fallback_exhausted(slot, now, out)) return;  // the primary group's answer
        stats_->add(proxy_counter::exhausted);
        respond_upstream(slot, 503, true, t.retry.retry_after_s, now, out);
        return;
    }
    const peer& pe = t.peers[p];
    if (select_.oc_diverted) stats_->add(proxy_counter::oc_diverted);  // the last selection chose p
    s.peer = pe.remote();  // connection 0: the stream thread's connection to the peer
    s.out_local = peer_local(t, pe, s.local);
    s.peer_id = pe.id;
    s.tried[s.n_tried++] = pe.id;
    ++s.attempt;
    if (cdr_) cdr_attempt_sent(slot, pe.id, now);
    s.state = setup_state::calling;
    bump(stats_->active_by_peer[pe.id], +1);  // pick_peer counted it node-wide
    s.rt_interval = timer_t1_ms;
    // Timer A only on UDP (RFC 3261 17.1.1.2): a stream delivers or loses the connection.
    // Timer B and the no-response failover run on every transport.
    s.t_retransmit = is_stream(s.peer.proto) ? 0 : now + timer_t1_ms;
    // The peer's learned timer (control/peer_timer.h), else retry.no_response_ms.
    s.t_no_response = now + h.no_response_for(s.peer_id, t.retry.no_response_ms);
    s.t_attempt_sent = now;
    s.t_give_up = now + timer_b_ms;
    s.t_release = 0;
    // Refused before it left (too big): the caller has its answer, and the peer no attempt.
    if (!send_invite(t, slot, now, out) && s.state != setup_state::calling) return;
    bump(stats_->attempts_by_peer[pe.id], +1);
    arm(slot);
}

void proxy::failure(uint32_t slot, failure_cause why, uint16_t code, outbox& out, uint64_t now) noexcept
{
    const setup& s = setups_->at(slot);
    if (cdr_) {
        const cdr_outcome o = why == failure_cause::timeout ? cdr_outcome::timeout
                              : why == failure_cause::icmp
                                  ? (is_stream(s.peer.proto) ? cdr_outcome::connection : cdr_outcome::icmp)
                                  : s.cancelled ? cdr_outcome::cancelled : cdr_outcome::code;
        cdr_attempt_end(slot, o, code, now);
    }
    if (s.peer_id == no_peer) return;
    out.event(peer_event{peer_event_kind::failed, why, code, s.peer_id});
    std::size_t cls = why == failure_cause::timeout ? 3 : why == failure_cause::icmp ? 4 : code >= 600 ? 2 : code >= 500 ? 1 : 0;
    bump(stats_->failures_by_peer[s.peer_id][cls], +1);
}

void proxy::send_to_peer_simple(uint32_t slot, std::string_view meth, std::string_view to_value, outbox& out) noexcept
{
    // CANCEL or hop-by-hop ACK to the current peer, built from the stored INVITE (RFC 3261
    // 9.1 and 17.1.1.3): same Request-URI, our Via of this attempt, From, Call-ID, CSeq number.
    setup& s = setups_->at(slot);
    out_message* d = out.next();
    if (d == nullptr) return;
    const std::string_view stored(store_of(slot), s.invite_len);
    parse(stored, *aux_);
    const message& inv = *aux_;
    if (inv.h_from == no_header || inv.h_to == no_header || inv.h_call_id == no_header) return;
    char branch[branch_stateful_len];
    write_branch(branch, txn_id{worker_, slot, s.gen, static_cast<uint8_t>(s.attempt & 0xf)});
    const endpoint local = s.out_local;
    char via[max_via_size];
    // As the INVITE's Via (RFC 3261 9.1, 17.1.1.3), oc advertised alike.
    std::size_t via_len = write_via(via, local, {branch, branch_stateful_len}, s.caller, oc_.policy.advertise);
    if (s.th_hidden) via_len = without_via_source({via, via_len});  // topology hiding: no caller in it
    writer w(d->data);
    w.put(meth);
    w.put(" ");
    w.put(inv.text(inv.request_uri));
    w.put(" SIP/2.0\r\nVia: ");
    w.put({via, via_len});
    w.put("\r\nMax-Forwards: 70\r\nFrom: ");
    w.put(inv.text(inv.headers[inv.h_from].value));
    w.put("\r\nTo: ");
    w.put(to_value.empty() ? inv.text(inv.headers[inv.h_to].value) : to_value);
    w.put("\r\nCall-ID: ");
    w.put(inv.call_id());
    w.put("\r\nCSeq: ");
    w.put_uint(inv.cseq);
    w.put(" ");
    w.put(meth);
    w.put("\r\nContent-Length: 0\r\n\r\n");
    const write_result r = w.result();
    if (r.ok()) out.commit(local, s.peer, r.len);
}

void proxy::respond_upstream(uint32_t slot, uint16_t code, bool retry_after, uint32_t retry_after_s, uint64_t now,
                             outbox& out, std::string_view reason) noexcept
{
    setup& s = setups_->at(slot);
    const std::string_view stored(store_of(slot), s.invite_len);
    parse(stored, *aux_);
    char tag[12];
    put_hex(tag, s.callid_hash ^ setups_->key(slot), 12);
    response_spec spec;
    spec.code = code;
    spec.to_tag = std::string_view(tag, 12);
    spec.has_retry_after = retry_after;
    spec.retry_after = retry_after_s;
    char phrase[64];
    if (!reason.empty()) spec.reason = admission_reason(phrase, code, reason);
    via_splice oc;  // RFC 7339: our feedback, for a caller that advertised oc
    if (aux_->has_top_via && oc_stamp(*aux_, aux_->top_via, oc)) spec.top_via = &oc;
    char* store = store_of(slot) + s.invite_len;
    // Kept no larger than an outbox message's own buffer, where it is repeated from.
    const std::size_t room = store_room(slot) - s.invite_len;
    const write_result r = build_response(*aux_, spec, {store, room < max_out_size ? room : max_out_size});
    s.final_len = r.ok() ? static_cast<uint16_t>(r.len) : 0;
    if (out_message* d = out.next()) {
        if (s.final_len != 0) {
            std::memcpy(d->data.data(), store, s.final_len);
            out.commit(s.local, s.caller, s.final_len);
        } else if (const write_result once = build_response(*aux_, spec, d->data); once.ok()) {
            out.commit(s.local, s.caller, once.len);  // an INVITE near our limit leaves no room to keep it: sent once
        }
    }
    stats_->add(proxy_counter::calls_failed);
    if (cdr_) cdr_final(slot, code, cdr_final_by::sbc);
    await_ack(slot, now);
}

void proxy::await_ack(uint32_t slot, uint64_t now) noexcept
{
    // A final non-2xx went upstream: the call is over (its media, peer and admission counts
    // go), the final is repeated on UDP until the ACK (Timer G), and the setup lingers for it.
    setup& s = setups_->at(slot);
    if (cdr_) cdr_setup_end(slot, now);  // before the media goes: its figures are in the record
    media_end(s.callid_hash);
    peer_put(s.peer_id);
    call_done(slot);
    s.state = setup_state::completed;
    s.t_no_response = s.t_give_up = 0;
    s.rt_interval = timer_t1_ms;
    s.t_retransmit = retransmits_final(s) ? now + timer_t1_ms : 0;
    s.t_release = now + final_wait_ack_ms;
    arm(slot);
}

bool proxy::upstream_edits(const proxy_tables& t, const setup& s, edits& e, th_scratch& th) noexcept
{
    e.pop_via = true;
    // Topology hiding: the caller's Vias back, and hidden toward a hidden caller (proxy_hiding.cc).
    const bool hide_in = s.trunk < t.trunks.size() && t.trunks[s.trunk].topology_hiding;
    if (!th_response(t, s.local, hide_in ? 1 : 0, nullptr, e, th)) return false;
    media_body(*msg_, s.callid_hash, media_leg::a, e);  // refused: the answer goes on unchanged
    return true;
}

void proxy::relay_upstream(uint32_t slot, outbox& out) noexcept
{
    // The peer's response, our Via removed, to the caller; finals are kept for retransmission.
    setup& s = setups_->at(slot);
    if (!has_second_via(*msg_) && !has_hidden_via(*msg_)) {
        stats_->add(proxy_counter::stale_responses);  // only our Via: meant for us, not the caller
        return;
    }
    out_message* d = out.next();
    if (d == nullptr) {
        stats_->add(proxy_counter::outbox_full);
        return;
    }
    edits e;
    th_scratch th;
    if (!upstream_edits(*tables_, s, e, th)) return;
    via_splice oc;  // RFC 7339: our feedback in the caller's Via, when it advertised oc
    if (oc_stamp_relayed(oc)) e.via_params = &oc;
    const write_result r = edit_out(*msg_, e, out, *d);
    if (!r.ok()) return;
    out.commit(s.local, s.caller, r.len);
    if (msg_->status >= 300 && d->large == nullptr && r.len <= store_room(slot) - s.invite_len) {
        std::memcpy(store_of(slot) + s.invite_len, d->data.data(), r.len);
        s.final_len = static_cast<uint16_t>(r.len);
    } else if (msg_->status >= 300) {
        s.final_len = 0;  // not kept (no room): nor is an earlier one (proxy_fallback.cc) repeated
    }
}

void proxy::invite_response(const proxy_tables& t, const peer_health& h, uint32_t slot, const sip_input& a,
                            outbox& out) noexcept
{
    setup& s = setups_->at(slot);
    const message& m = *msg_;
    const uint16_t code = m.status;
    if (s.state == setup_state::completed || s.state == setup_state::lingering) {
        // A retransmitted final of this attempt: ACK it again, nothing goes upstream.
        if (code >= 300) send_to_peer_simple(slot, "ACK", m.text(m.headers[m.h_to].value), out);
        return;
    }
    if (s.state == setup_state::calling && s.t_attempt_sent != 0 && s.peer_id != no_peer) {
        // The attempt's first response: the peer's response time, for its no-answer timer.
        // Measured from the first copy: after a Timer A retransmission it may be long (the
        // first lost), which only lengthens the timer, never fails over too soon.
        const uint64_t ms = a.now_ms > s.t_attempt_sent ? a.now_ms - s.t_attempt_sent : 0;
        peer_event ev{peer_event_kind::responded, failure_cause::none, code, s.peer_id};
        ev.rtt_us = static_cast<uint32_t>(std::min<uint64_t>(ms, UINT32_MAX / 1000) * 1000);
        out.event(ev);
        s.t_attempt_sent = 0;
    }
    if (code < 200) {
        s.t_retransmit = 0;
        s.t_no_response = 0;  // the peer is alive
        if (code == 100) {
            if (s.state == setup_state::calling) s.state = setup_state::proceeding;
        } else {
            s.provisional = true;
            s.state = setup_state::ringing;
            s.t_give_up = a.now_ms + timer_c_ms;
            relay_upstream(slot, out);
            if (cdr_) cdr_provisional(slot, a.now_ms);
        }
        if (s.cancelled && !s.cancel_sent) {
            send_to_peer_simple(slot, "CANCEL", {}, out);
            s.cancel_sent = true;
        }
        arm(slot);
        return;
    }
    if (code < 300) {
        out.event(peer_event{peer_event_kind::answered, failure_cause::none, code, s.peer_id});
        relay_upstream(slot, out);
        stats_->add(proxy_counter::calls_answered);
        const uint32_t peer_id = s.peer_id;
        if (peer_id != no_peer) bump(stats_->active_by_peer[peer_id], -1);
        s.peer_id = no_peer;
        // The dialog takes over the peer's node-wide count (not given back and taken again:
        // another worker could fill the peer in between) and the trunk's and node's.
        const uint32_t d = dialog_started(s.callid_hash, peer_id, s.trunk, s.admitted);
        if (cdr_) cdr_answered(slot, d, code, a.now_ms);
        s.admitted = false;
        dialog_parties(slot);
        media_dialog_started(slot);
        // Done: 2xx retransmissions are relayed statelessly (our Via names the caller), and
        // the caller stopped repeating its INVITE at our 100 Trying, so nothing needs the slot.
        release(slot);
        return;
    }
    // A final failure: ACK it hop by hop, then retry elsewhere or pass it on.
    send_to_peer_simple(slot, "ACK", m.text(m.headers[m.h_to].value), out);
    if (cdr_) cdr_attempt_end(slot, s.cancelled ? cdr_outcome::cancelled : cdr_outcome::code, code, a.now_ms);
    const bool retryable = t.retry.retry_on(code) && !s.cancelled && (!s.provisional || t.retry.after_provisional);
    if (t.retry.retry_on(code)) failure(slot, failure_cause::code, code, out, a.now_ms);
    else out.event(peer_event{peer_event_kind::answered, failure_cause::none, code, s.peer_id});
    if (retryable) {
        next_attempt(t, h, slot, failure_cause::code, a.now_ms, out);
        return;
    }
    if (fall_back(t, h, slot, code, a.now_ms, out)) return;  // the route's fallback group takes the call
    if (!has_second_via(m) && !has_hidden_via(m)) {
        // A broken peer answered with our Via only: the caller still gets the verdict, built
        // from the INVITE we keep.
        respond_upstream(slot, code, false, 0, a.now_ms, out);
        return;
    }
    relay_upstream(slot, out);
    if (cdr_) {
        cdr_final(slot, code, cdr_final_by::peer);
        cdr_setup_end(slot, a.now_ms);  // before the media goes: its figures are in the record
    }
    media_end(s.callid_hash);
    stats_->add(s.cancelled ? proxy_counter::calls_cancelled : proxy_counter::calls_failed);
    peer_put(s.peer_id);
    call_done(slot);
    s.state = setup_state::completed;
    s.t_no_response = s.t_give_up = 0;
    s.rt_interval = timer_t1_ms;
    s.t_retransmit = retransmits_final(s) ? a.now_ms + timer_t1_ms : 0;
    s.t_release = a.now_ms + final_wait_ack_ms;
    arm(slot);
}

void proxy::on_cancel(const sip_input& a, outbox& out) noexcept
{
    const message& m = *msg_;
    const uint32_t slot = find_setup(upstream_key(m, a.src));
    if (slot == none_slot) {
        respond(a, 481, {}, out);
        return;
    }
    respond(a, 200, {}, out);  // the CANCEL itself; the INVITE's 487 follows
    setup& s = setups_->at(slot);
    if (s.state == setup_state::completed || s.state == setup_state::lingering || s.cancelled) return;
    s.cancelled = true;
    // CANCEL may only follow a provisional (RFC 3261 9.1); until one arrives it waits.
    if (s.state != setup_state::calling) {
        send_to_peer_simple(slot, "CANCEL", {}, out);
        s.cancel_sent = true;
    }
    // If the peer never answers the CANCEL, the caller still gets its 487.
    s.t_no_response = a.now_ms + 2 * timer_t1_ms * 4;
    arm(slot);
}

void proxy::on_icmp_unreachable(const proxy_tables& t, const peer_health& h, std::string_view quoted, const endpoint& to,
                                uint64_t now_ms, outbox& out) noexcept
{
    if (pending_unreachable(quoted, to, out)) return;  // a BYE, re-INVITE, UPDATE relayed statelessly
    // The quoted datagram starts with our request: find our branch in it.
    const std::size_t at = quoted.find(branch_stateful);
    if (at == std::string_view::npos || quoted.size() < at + branch_stateful_len) return;
    txn_id id;
    if (!read_branch(quoted.substr(at, branch_stateful_len), id) || id.worker != worker_ || id.slot >= n_setups_)
        return;
    setup& s = setups_->at(id.slot);
    if (s.gen != id.gen || (s.attempt & 0xf) != id.attempt || !s.peer.same_place(to)) return;
    if (s.state == setup_state::ringing && !t.retry.after_provisional) {
        // It rang already (never a second ringing phone), and the callee is out of reach (its
        // stream connection was lost): the caller gets a final answer now, not at Timer C.
        failure(id.slot, failure_cause::icmp, 0, out, now_ms);
        respond_upstream(id.slot, s.cancelled ? 487 : 503, false, 0, now_ms, out);
        return;
    }
    if (s.state != setup_state::calling && s.state != setup_state::proceeding && s.state != setup_state::ringing)
        return;
    failure(id.slot, failure_cause::icmp, 0, out, now_ms);
    if (s.cancelled) {
        respond_upstream(id.slot, 487, false, 0, now_ms, out);
        return;
    }
    next_attempt(t, h, id.slot, failure_cause::icmp, now_ms, out);
}

void proxy::fire(const proxy_tables& t, const peer_health& h, uint32_t slot, uint64_t now, outbox& out) noexcept
{
    setup& s = setups_->at(slot);
    if (s.state == setup_state::free) return;
    if (s.t_release != 0 && now >= s.t_release &&
        (s.state == setup_state::completed || s.state == setup_state::lingering)) {
        release(slot);
        return;
    }
    if (s.state == setup_state::completed) {
        // Retransmit our final upstream until the ACK (Timer G), doubling up to T2.
        if (s.t_retransmit != 0 && now >= s.t_retransmit && s.final_len != 0) {
            if (out_message* d = out.next()) {
                std::memcpy(d->data.data(), store_of(slot) + s.invite_len, s.final_len);
                out.commit(s.local, s.caller, s.final_len);
                stats_->add(proxy_counter::retransmits_sent);
            }
            s.rt_interval = s.rt_interval * 2 > timer_t2_ms ? timer_t2_ms : s.rt_interval * 2;
            s.t_retransmit = now + s.rt_interval;
        }
        arm(slot);
        return;
    }
    if (s.cancelled && s.t_no_response != 0 && now >= s.t_no_response) {
        // The peer never answered our CANCEL with a final: the caller gets its 487 from us.
        respond_upstream(slot, 487, false, 0, now, out);
        return;
    }
    if (s.state == setup_state::calling && s.t_no_response != 0 && now >= s.t_no_response) {
        failure(slot, failure_cause::timeout, 0, out, now);
        next_attempt(t, h, slot, failure_cause::timeout, now, out);
        return;
    }
    if (s.t_give_up != 0 && now >= s.t_give_up) {
        if (s.state == setup_state::ringing) {
            // Rang too long (Timer C): stop the callee, tell the caller.
            send_to_peer_simple(slot, "CANCEL", {}, out);
            if (cdr_) cdr_attempt_end(slot, cdr_outcome::timeout, 0, now);
            respond_upstream(slot, 408, false, 0, now, out);
            return;
        }
        failure(slot, failure_cause::timeout, 0, out, now);
        next_attempt(t, h, slot, failure_cause::timeout, now, out);
        return;
    }
    if (s.state == setup_state::calling && s.t_retransmit != 0 && now >= s.t_retransmit) {
        // Timer A: the INVITE again, doubling, until anything is heard.
        if (send_invite(t, slot, now, out))
            stats_->add(proxy_counter::retransmits_sent);
        else if (s.state != setup_state::calling)
            return;  // refused as too big (the snapshot changed our Record-Route): answered
        s.rt_interval *= 2;
        s.t_retransmit = now + s.rt_interval;
    }
    arm(slot);
}

void proxy::on_send_failed(const proxy_tables& t, const peer_health&, std::string_view sent, const endpoint& to,
                           send_failure why, uint64_t now_ms, outbox& out) noexcept
{
    stats_->add(send_failed_counter(why));
    // Our own output, parsed again: an attempt's INVITE shares its branch with its CANCEL and
    // ACK, and only the INVITE ends the call. (A body cut short does not matter here.)
    message& m = *aux_;
    parse(sent, m);
    if (!m.is_request() || !m.has_top_via || m.req_method == method::ack) return;  // responses, ACKs: counted
    txn_id id;
    if (read_branch(m.text(m.top_via.branch), id)) {
        if (m.req_method != method::invite || id.worker != worker_ || id.slot >= n_setups_) return;
        setup& s = setups_->at(id.slot);
        if (s.state != setup_state::calling && s.state != setup_state::proceeding) return;
        if (s.gen != id.gen || (s.attempt & 0xf) != id.attempt || !s.peer.same_place(to)) return;  // a stale attempt
        if (cdr_)
            cdr_attempt_end(id.slot, why == send_failure::no_connection ? cdr_outcome::connection : cdr_outcome::not_sent, 0,
                            now_ms);
        // Not the peer's failure: no peer event, nothing against its health. Nor is another
        // peer likely to fare better from this box, and the caller should not wait for it.
        respond_upstream(id.slot, s.cancelled ? 487 : why == send_failure::too_big ? 513 : 503, false, 0, now_ms, out);
        return;
    }
    // A request relayed statelessly (in-dialog, or outside a dialog and not an INVITE): too
    // big is final for it, so its sender hears 513; other causes may pass, it retransmits.
    if (why != send_failure::too_big || !has_second_via(m)) return;
    bool found = false;
    endpoint sender;
    if (!read_via_source(param_value(m.text(m.top_via.params), "sbc-src", found), sender) || !found) return;
    // Our endpoint on the sender's leg: the dialog's, else the trunk of the peer it is, else
    // the trunk that allows it.
    const uint64_t call = hash_bytes(m.call_id());
    endpoint from{};
    if (const uint32_t dl = dialogs_->find(call); dl != none_slot) {
        const dialog_table::entry& de = dialogs_->table.at(dl);
        from = de.caller.same_place(sender) ? de.caller_local : de.callee_local;
    }
    if (from.port == 0) {
        if (const uint32_t p = t.find_peer(sender.addr, sender.port); p != no_peer && t.peers[p].trunk < t.trunks.size()) {
            from = t.trunks[t.peers[p].trunk].leg_local(sender.proto);
        } else {
            for (const trunk& tr : t.trunks)
                if (tr.allows(sender.addr)) {
                    from = tr.leg_local(sender.proto);
                    break;
                }
        }
    }
    if (from.port == 0) return;
    out_message* d = out.next();
    if (d == nullptr) {
        stats_->add(proxy_counter::outbox_full);
        return;
    }
    char tag[12];
    put_hex(tag, call ^ worker_, 12);
    response_spec spec;
    spec.code = 513;
    spec.to_tag = std::string_view(tag, 12);
    const write_result r = build_response(m, spec, d->data);
    if (!r.ok()) return;
    // build_response repeats every Via line; the first is ours (the editor pushes it as a
    // header of its own), which the sender must not see.
    const std::string_view text(d->data.data(), r.len);
    const std::size_t ours = text.find("\r\n") + 2;
    const std::size_t next = text.find("\r\n", ours) + 2;
    if (text.substr(ours, 5) != "Via: " || next < ours || next > r.len) return;
    std::memmove(d->data.data() + ours, d->data.data() + next, r.len - next);
    out.commit(leg_local(from, sender), sender, r.len - static_cast<uint32_t>(next - ours));
}

}  // namespace sbc::sip
