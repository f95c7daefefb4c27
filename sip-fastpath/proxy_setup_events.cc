// Call setup in the proxy, its second half: what comes back to a setup. The responses to each
// attempt (relay, retry on the next peer, or give up with the best answer), the ACK awaited
// after a final, CANCEL, ICMP unreachable and send failures for an attempt in flight, and the
// setup's timers. The attempts themselves are in proxy_call.cc. Worker only.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "sip-fastpath/proxy_cdr.h"
#include "sip-fastpath/proxy_ids.h"
#include "sip-fastpath/proxy_internal.h"
#include "sip-fastpath/sip_editor.h"
#include "sip-fastpath/sip_numbers.h"
#include "sip-fastpath/sip_response.h"
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

}  // namespace

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
