// Call setup in the proxy, its first half: a new INVITE (100 Trying, route, first peer), an
// out-of-dialog request, and the attempts across the peers of a region and then the next
// region, until one answers or the setup fails. What comes back to a setup (responses,
// CANCEL, ICMP, send failures, timers) is in proxy_setup_events.cc. Worker only.
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

}  // namespace sbc::sip
