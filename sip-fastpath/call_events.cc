// What comes back to a call setup in the call core: the responses to each attempt (relayed,
// retried on the next peer, handed to the route's fallback group, or given up with the best
// answer), the ACK awaited after a final, CANCEL, ICMP unreachable and send failures for an
// attempt in flight, and the setup's timers. The kept INVITE is read by its index
// (call_state.h): our CANCEL and ACK are written from it without a parse. The attempts
// themselves are in call_invite.cc. Worker only.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "sip-fastpath/call_core.h"
#include "sip-fastpath/call_targets.h"
#include "sip-fastpath/proxy_ids.h"
#include "sip-fastpath/sip_numbers.h"
#include "sip-fastpath/sip_response.h"
#include "sip-fastpath/stage_cdr.h"
#include "sip-fastpath/stage_hiding.h"
#include "sip-fastpath/stage_oc.h"
#include "sip-fastpath/topology_hiding.h"

namespace sbc::sip {

namespace {

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

/// Whether a response of an attempt can go to the caller: a Via below ours, or ours hidden
/// (the caller's Vias inside it, stage_hiding.h).
bool relayable(const message& m, const call_setup& s) noexcept
{
    return has_second_via(m) || (s.th_hidden && has_hidden_via(m));
}

}  // namespace

void call_core::send_to_peer_simple(const call_env& e, uint32_t slot, std::string_view meth,
                                    std::string_view to_value) noexcept
{
    // CANCEL or hop-by-hop ACK to the current peer, written from the kept INVITE's index (RFC
    // 3261 9.1 and 17.1.1.3): same Request-URI, our Via of this attempt, From, Call-ID, CSeq number.
    const call_setup& s = setups_->at(slot);
    const invite_index& ix = s.inv;
    if (ix.from.len == 0 || ix.to.len == 0 || ix.call_id.len == 0) return;
    out_message* d = e.out.next();
    if (d == nullptr) {
        stats_->add(proxy_counter::outbox_full);
        return;
    }
    const std::string_view kept(store_of(slot), s.invite_len);
    char branch[branch_stateful_len];
    write_branch(branch, txn_id{worker_, slot, s.gen, static_cast<uint8_t>(s.attempt & 0xf)});
    char via[max_via_size];
    // As the INVITE's Via (RFC 3261 9.1, 17.1.1.3), oc advertised alike.
    std::size_t via_len = write_via(via, s.out_local, {branch, branch_stateful_len}, s.caller, e.t.oc.advertise);
    if (s.th_hidden) via_len = without_via_source({via, via_len});  // topology hiding: no caller in it
    // The Request-URI as the attempt's INVITE had it: retargeted to this peer when it named us.
    char ruri[max_retarget_size];
    const std::string_view to_peer =
        retargeted(e.t, kept, ix.ruri, s.peer, e.t.find_peer(s.peer.addr, s.peer.port), ruri);
    writer w(d->data);
    w.put(meth);
    w.put(" ");
    w.put(to_peer.empty() ? ix.request_uri.in(kept) : to_peer);
    w.put(" SIP/2.0\r\nVia: ");
    w.put({via, via_len});
    w.put("\r\nMax-Forwards: 70\r\nFrom: ");
    w.put(ix.from.in(kept));
    w.put("\r\nTo: ");
    w.put(to_value.empty() ? ix.to.in(kept) : to_value);
    w.put("\r\nCall-ID: ");
    w.put(ix.call_id.in(kept));
    w.put("\r\nCSeq: ");
    w.put_uint(ix.cseq);
    w.put(" ");
    w.put(meth);
    w.put("\r\nContent-Length: 0\r\n\r\n");
    const write_result r = w.result();
    if (r.ok()) e.out.commit(s.out_local, s.peer, r.len);
}

void call_core::respond_upstream(const call_env& e, uint32_t slot, uint16_t code, bool retry_after,
                                 uint32_t retry_after_s, std::string_view reason) noexcept
{
    // Our own final to the caller: built from the kept INVITE (a failure path, parsed again).
    call_setup& s = setups_->at(slot);
    parse({store_of(slot), s.invite_len}, *aux_);
    char tag[12];
    put_hex(tag, s.callid_hash ^ setups_->key(slot), 12);
    response_spec spec;
    spec.code = code;
    spec.to_tag = std::string_view(tag, 12);
    spec.has_retry_after = retry_after;
    spec.retry_after = retry_after_s;
    char phrase[64];
    if (!reason.empty()) spec.reason = admission_reason(phrase, code, reason);
    via_splice ocs;  // RFC 7339: our feedback, for a caller that advertised oc
    if (aux_->has_top_via && oc::stamp(*oc_, *aux_, aux_->top_via, ocs, *stats_)) spec.top_via = &ocs;
    char* store = store_of(slot) + s.invite_len;
    // Kept no larger than an outbox message's own buffer, where it is repeated from.
    const std::size_t room = store_room(slot) - s.invite_len;
    const write_result r = build_response(*aux_, spec, {store, room < max_out_size ? room : max_out_size});
    s.final_len = r.ok() ? static_cast<uint16_t>(r.len) : 0;
    if (out_message* d = e.out.next()) {
        if (s.final_len != 0) {
            std::memcpy(d->data.data(), store, s.final_len);
            e.out.commit(s.local, s.caller, s.final_len);
        } else if (const write_result once = build_response(*aux_, spec, d->data); once.ok()) {
            e.out.commit(s.local, s.caller, once.len);  // an INVITE near our limit leaves no room to keep it: sent once
        }
    }
    stats_->add(proxy_counter::calls_failed);
    cdr_final(slot, code, false);
    await_ack(e, slot);
}

void call_core::await_ack(const call_env& e, uint32_t slot) noexcept
{
    // A final non-2xx went upstream: the call is over (its media, peer and admission counts
    // go), the final is repeated on UDP until the ACK (Timer G), and the setup lingers for it.
    call_setup& s = setups_->at(slot);
    cdr_setup_end(slot, e.now);  // before the media goes: its figures are in the record
    if ((s.stages & stage::media) != 0) media_end(s.callid_hash, e.now);
    peer_put(s.peer_id);
    call_done(slot);
    s.state = setup_state::completed;
    s.t_no_response = s.t_give_up = 0;
    s.rt_interval = timer_t1_ms;
    s.t_retransmit = retransmits_final(s) ? e.now + timer_t1_ms : 0;
    s.t_release = e.now + final_wait_ack_ms;
    arm(slot);
}

bool call_core::upstream_edits(const msg_ctx& c, uint32_t slot, edits& e, th_scratch& th) noexcept
{
    const call_setup& s = setups_->at(slot);
    e.pop_via = true;
    if ((s.attempt_stages & stage::hiding) != 0) {
        // Topology hiding: the caller's Vias back (from the kept INVITE, which holds them as
        // they came, else from our hidden Via), and hidden toward a hidden caller.
        if (s.th_hidden && s.inv.vias.len != 0) {
            e.push_via = std::string_view(store_of(slot) + s.inv.vias.off, s.inv.vias.len);
        } else if (s.th_hidden && !hiding::restore_vias(c, *c.m, nullptr, e, th)) {
            return false;
        }
        if (!hiding::hide_response(c, *c.m, s.local, (s.attempt_stages & stage::hide_caller) != 0, e, th)) return false;
    }
    media_body(*c.m, s.callid_hash, media_leg::a, s.stages, e, c.now);  // refused: the answer goes on unchanged
    return true;
}

void call_core::relay_upstream(const msg_ctx& c, uint32_t slot) noexcept
{
    // The peer's response, our Via removed, to the caller; finals are kept for retransmission.
    call_setup& s = setups_->at(slot);
    const message& m = *c.m;
    if (!relayable(m, s)) {
        stats_->add(proxy_counter::stale_responses);  // only our Via: meant for us, not the caller
        return;
    }
    out_message* d = c.out.next();
    if (d == nullptr) {
        stats_->add(proxy_counter::outbox_full);
        return;
    }
    edits e;
    th_scratch th;
    if (!upstream_edits(c, slot, e, th)) return;
    via_splice ocs;  // RFC 7339: our feedback in the caller's Via, when it advertised oc
    if (oc::stamp_relayed(*oc_, m, ocs, *stats_)) e.via_params = &ocs;
    const write_result r = edit_out(m, e, c.out, *d);
    if (!r.ok()) return;
    c.out.commit(s.local, s.caller, r.len);
    if (m.status >= 300 && d->large == nullptr && r.len <= store_room(slot) - s.invite_len) {
        std::memcpy(store_of(slot) + s.invite_len, d->data.data(), r.len);
        s.final_len = static_cast<uint16_t>(r.len);
    } else if (m.status >= 300) {
        s.final_len = 0;  // not kept (no room): nor is an earlier one (fall_back) repeated
    }
}

void call_core::invite_response(msg_ctx& c, uint32_t slot) noexcept
{
    call_setup& s = setups_->at(slot);
    const message& m = *c.m;
    const uint16_t code = m.status;
    if (s.state == setup_state::completed || s.state == setup_state::lingering) {
        // A retransmitted final of this attempt: ACK it again, nothing goes upstream.
        if (code >= 300) send_to_peer_simple(c, slot, "ACK", m.text(m.headers[m.h_to].value));
        return;
    }
    if (s.state == setup_state::calling && s.t_attempt_sent != 0 && s.peer_id != no_peer) {
        // The attempt's first response: the peer's response time, for its no-answer timer.
        // Measured from the first copy: after a Timer A retransmission it may be long (the
        // first lost), which only lengthens the timer, never fails over too soon.
        const uint64_t ms = c.now > s.t_attempt_sent ? c.now - s.t_attempt_sent : 0;
        peer_event ev{peer_event_kind::responded, failure_cause::none, code, s.peer_id};
        ev.rtt_us = static_cast<uint32_t>(std::min<uint64_t>(ms, UINT32_MAX / 1000) * 1000);
        c.out.event(ev);
        s.t_attempt_sent = 0;
    }
    if (code < 200)
        invite_provisional(c, slot);
    else if (code < 300)
        invite_answered(c, slot);
    else
        invite_failed(c, slot);
}

void call_core::invite_provisional(msg_ctx& c, uint32_t slot) noexcept
{
    call_setup& s = setups_->at(slot);
    s.t_retransmit = 0;
    s.t_no_response = 0;  // the peer is alive
    if (c.m->status == 100) {
        if (s.state == setup_state::calling) s.state = setup_state::proceeding;
    } else {
        s.provisional = true;
        s.state = setup_state::ringing;
        s.t_give_up = c.now + timer_c_ms;
        relay_upstream(c, slot);
        if ((s.stages & stage::cdr) != 0 && cdr_) cdr::provisional(*cdr_, slot, c.now);
    }
    if (s.cancelled && !s.cancel_sent) {
        send_to_peer_simple(c, slot, "CANCEL", {});
        s.cancel_sent = true;
    }
    arm(slot);
}

void call_core::invite_answered(msg_ctx& c, uint32_t slot) noexcept
{
    call_setup& s = setups_->at(slot);
    c.out.event(peer_event{peer_event_kind::answered, failure_cause::none, c.m->status, s.peer_id});
    relay_upstream(c, slot);
    stats_->add(proxy_counter::calls_answered);
    dialog_up(c, slot);
    // Done: 2xx retransmissions are relayed statelessly (our Via names the caller), and the
    // caller stopped repeating its INVITE at our 100 Trying, so nothing needs the slot.
    release(slot);
}

void call_core::invite_failed(msg_ctx& c, uint32_t slot) noexcept
{
    // A final failure: ACK it hop by hop, then retry elsewhere, fall back, or pass it on.
    call_setup& s = setups_->at(slot);
    const message& m = *c.m;
    const uint16_t code = m.status;
    const proxy_tables& t = c.t;
    send_to_peer_simple(c, slot, "ACK", m.text(m.headers[m.h_to].value));
    cdr_attempt_end(slot, s.cancelled ? cdr_outcome::cancelled : cdr_outcome::code, code, c.now);
    const bool retryable = t.retry.retry_on(code) && !s.cancelled && (!s.provisional || t.retry.after_provisional);
    if (t.retry.retry_on(code))
        failure(c, slot, failure_cause::code, code);
    else
        c.out.event(peer_event{peer_event_kind::answered, failure_cause::none, code, s.peer_id});
    if (retryable) {
        next_attempt(c, slot, failure_cause::code);
        return;
    }
    if ((s.stages & stage::fallback) != 0 && fall_back(c, slot, code)) return;  // the route's fallback group
    if (!relayable(m, s)) {
        // A broken peer answered with our Via only: the caller still gets the verdict, built
        // from the INVITE we keep.
        respond_upstream(c, slot, code, false, 0);
        return;
    }
    relay_upstream(c, slot);
    cdr_final(slot, code, true);
    stats_->add(s.cancelled ? proxy_counter::calls_cancelled : proxy_counter::calls_failed);
    await_ack(c, slot);
}

bool call_core::fall_back(msg_ctx& c, uint32_t slot, uint16_t code) noexcept
{
    call_setup& s = setups_->at(slot);
    const proxy_tables& t = c.t;
    // s.route is no_fallback once the call fell back: never a second time (no chains, no loops).
    if (s.route >= t.routes.size() || s.provisional || s.cancelled) return false;
    const route_fallback& f = t.routes[s.route].fallback;
    if (!f.applies(code) || f.group >= t.groups.size() || f.group == s.group) return false;
    // Keep the primary group's answer as the caller would have had it (our Via removed), in
    // the final's place after the INVITE: sent should the fallback group run out of peers.
    // A later final relayed or built for the caller takes its place.
    s.final_len = 0;
    edits e;
    th_scratch th;
    if (relayable(*c.m, s) && upstream_edits(c, slot, e, th)) {  // as relay_upstream
        // The setup's store (call_large.h), kept no larger than an outbox message's buffer.
        const std::size_t room = store_room(slot) - s.invite_len;
        const std::span<char> store(store_of(slot) + s.invite_len, room < max_out_size ? room : max_out_size);
        if (const write_result r = edit(*c.m, e, store); r.ok()) s.final_len = static_cast<uint16_t>(r.len);
    }
    cdr_final(slot, code, true);  // what the caller gets should the group run out
    stats_->add(proxy_counter::fallbacks);
    if (s.route < proxy_stats::max_counted) stats_->fallbacks_by_route[s.route].bump();
    s.route = no_fallback;
    s.group = f.group;
    s.region_pos = 0;
    s.fallback_base = s.attempt;  // at least 1: the attempt that got `code`
    next_attempt(c, slot, failure_cause::none);
    return true;
}

bool call_core::fallback_exhausted(const call_env& e, uint32_t slot) noexcept
{
    call_setup& s = setups_->at(slot);
    if (s.fallback_base == 0 || s.final_len == 0 || s.cancelled) return false;
    out_message* d = e.out.next();
    if (d == nullptr) {
        stats_->add(proxy_counter::outbox_full);  // the caller's retransmission gets it (completed below)
    } else {
        std::memcpy(d->data.data(), store_of(slot) + s.invite_len, s.final_len);
        e.out.commit(s.local, s.caller, s.final_len);
    }
    stats_->add(proxy_counter::fallback_exhausted);
    stats_->add(proxy_counter::calls_failed);
    await_ack(e, slot);  // as a relayed final ends a call: ACK awaited, final repeated on UDP
    return true;
}

void call_core::on_cancel(const msg_ctx& c) noexcept
{
    const uint32_t slot = find_setup(upstream_key(*c.m, c.in.src));
    if (slot == none_slot) {
        respond(c, 481, {});
        return;
    }
    respond(c, 200, {});  // the CANCEL itself; the INVITE's 487 follows
    call_setup& s = setups_->at(slot);
    if (s.state == setup_state::completed || s.state == setup_state::lingering || s.cancelled) return;
    s.cancelled = true;
    // CANCEL may only follow a provisional (RFC 3261 9.1); until one arrives it waits.
    if (s.state != setup_state::calling) {
        send_to_peer_simple(c, slot, "CANCEL", {});
        s.cancel_sent = true;
    }
    // If the peer never answers the CANCEL, the caller still gets its 487.
    s.t_no_response = c.now + 2 * timer_t1_ms * 4;
    arm(slot);
}

void call_core::on_icmp_unreachable(const proxy_tables& t, const peer_health& h, std::string_view quoted,
                                    const endpoint& to, uint64_t now_ms, outbox& out) noexcept
{
    const call_env e = env(t, h, out, now_ms);
    if (pending_unreachable(e, quoted, to)) return;  // a BYE, re-INVITE, UPDATE relayed statelessly
    // The quoted datagram starts with our request: find our branch in it.
    const std::size_t at = quoted.find(branch_stateful);
    if (at == std::string_view::npos || quoted.size() < at + branch_stateful_len) return;
    txn_id id;
    if (!read_branch(quoted.substr(at, branch_stateful_len), id) || id.worker != worker_ || id.slot >= n_setups_)
        return;
    call_setup& s = setups_->at(id.slot);
    if (s.gen != id.gen || (s.attempt & 0xf) != id.attempt || !s.peer.same_place(to)) return;
    if (s.state == setup_state::ringing && !t.retry.after_provisional) {
        // It rang already (never a second ringing phone), and the callee is out of reach (its
        // stream connection was lost): the caller gets a final answer now, not at Timer C.
        failure(e, id.slot, failure_cause::icmp, 0);
        respond_upstream(e, id.slot, s.cancelled ? 487 : 503, false, 0);
        return;
    }
    if (s.state != setup_state::calling && s.state != setup_state::proceeding && s.state != setup_state::ringing)
        return;
    failure(e, id.slot, failure_cause::icmp, 0);
    if (s.cancelled) {
        respond_upstream(e, id.slot, 487, false, 0);
        return;
    }
    next_attempt(e, id.slot, failure_cause::icmp);
}

void call_core::fire(const call_env& e, uint32_t slot) noexcept
{
    call_setup& s = setups_->at(slot);
    const uint64_t now = e.now;
    if (s.state == setup_state::free) return;
    if (s.t_release != 0 && now >= s.t_release &&
        (s.state == setup_state::completed || s.state == setup_state::lingering)) {
        release(slot);
        return;
    }
    if (s.state == setup_state::completed) {
        // Retransmit our final upstream until the ACK (Timer G), doubling up to T2.
        if (s.t_retransmit != 0 && now >= s.t_retransmit && s.final_len != 0) {
            if (out_message* d = e.out.next()) {
                std::memcpy(d->data.data(), store_of(slot) + s.invite_len, s.final_len);
                e.out.commit(s.local, s.caller, s.final_len);
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
        respond_upstream(e, slot, 487, false, 0);
        return;
    }
    if (s.state == setup_state::calling && s.t_no_response != 0 && now >= s.t_no_response) {
        failure(e, slot, failure_cause::timeout, 0);
        next_attempt(e, slot, failure_cause::timeout);
        return;
    }
    if (s.t_give_up != 0 && now >= s.t_give_up) {
        if (s.state == setup_state::ringing) {
            // Rang too long (Timer C): stop the callee, tell the caller.
            send_to_peer_simple(e, slot, "CANCEL", {});
            cdr_attempt_end(slot, cdr_outcome::timeout, 0, now);
            respond_upstream(e, slot, 408, false, 0);
            return;
        }
        failure(e, slot, failure_cause::timeout, 0);
        next_attempt(e, slot, failure_cause::timeout);
        return;
    }
    if (s.state == setup_state::calling && s.t_retransmit != 0 && now >= s.t_retransmit) {
        // Timer A: the INVITE again, doubling, until anything is heard.
        if (send_invite(e, slot))
            stats_->add(proxy_counter::retransmits_sent);
        else if (s.state != setup_state::calling)
            return;  // refused as too big (the snapshot changed our Record-Route): answered
        s.rt_interval *= 2;
        s.t_retransmit = now + s.rt_interval;
    }
    arm(slot);
}

void call_core::on_send_failed(const proxy_tables& t, const peer_health& h, std::string_view sent, const endpoint& to,
                               send_failure why, uint64_t now_ms, outbox& out) noexcept
{
    const call_env e = env(t, h, out, now_ms);
    stats_->add(send_failed_counter(why));
    // Our own output, parsed again: an attempt's INVITE shares its branch with its CANCEL and
    // ACK, and only the INVITE ends the call. (A body cut short does not matter here.)
    message& m = *aux_;
    parse(sent, m);
    if (!m.is_request() || !m.has_top_via || m.req_method == method::ack) return;  // responses, ACKs: counted
    txn_id id;
    if (read_branch(m.text(m.top_via.branch), id)) {
        if (m.req_method != method::invite || id.worker != worker_ || id.slot >= n_setups_) return;
        call_setup& s = setups_->at(id.slot);
        if (s.state != setup_state::calling && s.state != setup_state::proceeding) return;
        if (s.gen != id.gen || (s.attempt & 0xf) != id.attempt || !s.peer.same_place(to)) return;  // a stale attempt
        cdr_attempt_end(id.slot, why == send_failure::no_connection ? cdr_outcome::connection : cdr_outcome::not_sent, 0,
                        now_ms);
        // Not the peer's failure: no peer event, nothing against its health. Nor is another
        // peer likely to fare better from this box, and the caller should not wait for it.
        respond_upstream(e, id.slot, s.cancelled ? 487 : why == send_failure::too_big ? 513 : 503, false, 0);
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
        const dialog_entry& de = dialogs_->table.at(dl);
        from = de.caller.same_place(sender) ? de.caller_local : de.callee_local;
    }
    if (from.port == 0) {
        if (const uint32_t p = t.find_peer(sender.addr, sender.port); p != no_peer && t.peers[p].trunk < t.trunks.size()) {
            from = t.trunks[t.peers[p].trunk].leg_local(sender.proto, sender.addr);
        } else {
            for (const trunk& tr : t.trunks)
                if (tr.allows(sender.addr)) {
                    from = tr.leg_local(sender.proto, sender.addr);
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
