// The call core's dispatch (call_core.h): a message in, through the source check and the
// verdict, to a request or a response; OPTIONS to the SBC itself; our own answers; the
// setups' and dialogs' timers; the worker's configuration of its stages. A new call is in
// call_invite.cc, what comes back to it in call_events.cc, dialogs and in-dialog requests in
// call_dialog.cc and call_in_dialog.cc. Worker only.
#include "sip-fastpath/call_core.h"

#include <cstring>

#include "sip-fastpath/call_large.h"
#include "sip-fastpath/call_pending.h"
#include "sip-fastpath/call_targets.h"
#include "sip-fastpath/proxy_ids.h"
#include "sip-fastpath/sip_response.h"
#include "sip-fastpath/sip_verdict.h"
#include "sip-fastpath/stage_cdr.h"
#include "sip-fastpath/stage_guard.h"
#include "sip-fastpath/stage_hiding.h"
#include "sip-fastpath/stage_media.h"
#include "sip-fastpath/stage_oc.h"
#include "sip-fastpath/stage_rules.h"

namespace sbc::sip {

call_core::call_core(uint8_t worker, uint32_t setups, uint32_t dialogs, uint64_t seed)
    : worker_(worker),
      n_setups_(setups),
      setups_(std::make_unique<setup_table>(setups)),
      buffers_(new char[std::size_t{setups} * max_out_size]),
      large_(std::make_unique<large_store>(large_setups_per_worker)),
      dialogs_(std::make_unique<dialog_table>(dialogs)),
      timers_(setups),
      stats_(std::make_unique<proxy_stats>()),
      aux_(std::make_unique<message>()),
      pending_(std::make_unique<pending_table>(dialogs < max_pending_in_dialog ? dialogs : max_pending_in_dialog)),
      own_admission_(std::make_unique<admission>()),
      rules_(std::make_unique<rules_stage>()),
      hiding_(std::make_unique<hiding_stage>(dialogs)),
      guard_(std::make_unique<guard_stage>()),
      oc_(std::make_unique<oc_stage>())
{
    adm_ = own_admission_.get();
    select_.rng ^= seed * 0x9E3779B97F4A7C15ull + worker;
    if (select_.rng == 0) select_.rng = 1;
}

call_core::~call_core() = default;

void call_core::reset() noexcept
{
    for (uint32_t s = 0; s < n_setups_; ++s)
        if (setups_->used(s)) release(s);
    for (uint32_t d = 0; d < dialogs_->table.capacity(); ++d)
        if (dialogs_->table.used(d)) dialog_end(dialogs_->table.key(d), cdr_end::drain, timers_.now());
    for (uint32_t p = 0; p < pending_->table.capacity(); ++p)
        if (pending_->table.used(p)) pending_->erase(p);
    timers_.clear();
    dialogs_->timers.clear();
    pending_->timers.clear();
}

uint32_t call_core::setups_unarmed() const noexcept
{
    uint32_t n = 0;
    for (uint32_t s = 0; s < n_setups_; ++s)
        if (setups_->used(s) && !timers_.armed(s)) ++n;
    return n;
}

call_env call_core::env(const proxy_tables& t, const peer_health& h, outbox& out, uint64_t now) noexcept
{
    return call_env{t, h, out, *stats_, now, worker_};
}

node_stages call_core::node() const noexcept
{
    node_stages n;
    if (media_) n.mask |= stage::media;
    if (cdr_) n.mask |= stage::cdr;
    return n;
}

void call_core::set_media(media_hook* m)
{
    media_ = m != nullptr ? std::make_unique<media_stage>(m, dialogs_->table.capacity()) : nullptr;
    if (cdr_) cdr_->media = m;
}

void call_core::set_cdr_sink(cdr_sink* s)
{
    if (s == nullptr) {
        cdr_.reset();
        return;
    }
    cdr_ = std::make_unique<cdr_stage>(s, n_setups_, dialogs_->table.capacity());
    cdr_->media = media_ ? media_->hook : nullptr;
}

void call_core::cdr_drain(uint64_t now_ms) noexcept
{
    if (cdr_) cdr::drain(*cdr_, *setups_, *dialogs_, now_ms);
}

void call_core::set_admission(admission* a) noexcept
{
    adm_ = a != nullptr ? a : own_admission_.get();
}

void call_core::set_overload(uint8_t percent) noexcept
{
    oc_->server.reduction.store(percent > 100 ? 100 : percent, std::memory_order_relaxed);
}

uint8_t call_core::overload() const noexcept
{
    return oc_->server.reduction.load(std::memory_order_relaxed);
}

void call_core::release(uint32_t slot) noexcept
{
    call_setup& s = setups_->at(slot);
    timers_.cancel(slot);
    peer_put(s.peer_id);
    call_done(slot);
    give_back_large(slot);
    s.state = setup_state::free;
    setups_->erase(slot);
    stats_->setups_active.set(setups_->size());
}

void call_core::arm(uint32_t slot) noexcept
{
    const call_setup& s = setups_->at(slot);
    uint64_t due = 0;
    for (uint64_t t : {s.t_retransmit, s.t_no_response, s.t_give_up, s.t_release})
        if (t != 0 && (due == 0 || t < due)) due = t;
    if (due == 0)
        timers_.cancel(slot);
    else
        timers_.schedule(slot, due);
}

/// What sbcd answers an OPTIONS addressed to itself with (RFC 3261 section 11.2). Allow: the
/// methods it relays, out of dialog (forward_out_of_dialog takes any method) and in dialog
/// by Route; REGISTER and PUBLISH are left out, as a trunk SBC adds no Path and is no
/// registrar or presence server. Accept: the one body it reads and rewrites, SDP (other
/// bodies are relayed untouched). Supported: the option tags whose methods and headers it
/// relays end to end without a part in them, so a UA behind it can rely on them: 100rel
/// (PRACK, RSeq, RAck, RFC 3262) and timer (Session-Expires, refreshes by re-INVITE or
/// UPDATE, RFC 4028); it anchors the SDP these carry like any other offer or answer.
constexpr std::string_view self_capabilities =
    "Allow: INVITE, ACK, BYE, CANCEL, OPTIONS, PRACK, UPDATE, INFO, REFER, NOTIFY, SUBSCRIBE, MESSAGE\r\n"
    "Accept: application/sdp\r\n"
    "Supported: 100rel, timer\r\n";

void call_core::respond(const msg_ctx& c, uint16_t code, std::string_view reason, bool retry_after,
                        uint32_t retry_after_s, std::string_view extra) noexcept
{
    out_message* d = c.out.next();
    if (d == nullptr) {
        stats_->add(proxy_counter::outbox_full);
        return;
    }
    const message& m = *c.m;
    char tag[12];
    put_hex(tag, hash_bytes(m.call_id()) ^ worker_, 12);
    response_spec spec;
    spec.code = code;
    spec.reason = reason;
    spec.to_tag = std::string_view(tag, 12);
    spec.has_retry_after = retry_after;
    spec.retry_after = retry_after_s;
    spec.extra = extra;
    via_splice ocs;  // RFC 7339: our feedback, for a client that advertised oc
    if (m.has_top_via && oc::stamp(*oc_, m, m.top_via, ocs, *stats_)) spec.top_via = &ocs;
    const write_result r = build_response(m, spec, d->data);
    if (r.ok()) c.out.commit(c.in.local, c.in.src, r.len);
}

void call_core::on_message(const proxy_tables& t, const peer_health& h, const sip_input& in, const message& m,
                           outbox& out) noexcept
{
    msg_ctx c{env(t, h, out, in.now_ms), in, &m};
    oc_->server.refresh(t.oc, in.now_ms);
    // Only trunk sources and known peers may talk to us, and a dialog's party answering what
    // we forwarded to it; others get no answer at all.
    if (in.trunk < t.trunks.size() && !t.trunks[in.trunk].allows(in.src.addr) && !t.is_peer_address(in.src.addr) &&
        !party_response(c)) {
        stats_->add(proxy_counter::source_denied);
        return;
    }
    proxy_policy policy;
    policy.full_check = m.is_request() && !m.to.has_tag;  // see proxy_policy
    const verdict v = proxy_verdict(m, policy);
    if (m.is_response()) {
        stats_->add(proxy_counter::responses);
        if (v.act != action::forward) {
            stats_->add(proxy_counter::malformed_dropped);
            out.fault = source_fault::malformed;
            return;
        }
        on_response(c);
        return;
    }
    stats_->add(proxy_counter::requests);
    // Before any answer: a scanner learns nothing (stage_guard.h).
    if (const guard::scan s = guard::screen(c); s.refused) {
        if (s.answer != 0) respond(c, s.answer, {});
        return;
    }
    if (v.act == action::respond) {
        stats_->add(proxy_counter::rejected);
        out.fault = source_fault::malformed;
        respond(c, v.code, v.reason);
        return;
    }
    if (v.act == action::drop) {
        stats_->add(proxy_counter::malformed_dropped);
        out.fault = source_fault::malformed;
        return;
    }
    on_request(c);
}

void call_core::on_request(msg_ctx& c) noexcept
{
    const message& m = *c.m;
    // A request whose top Route is ours is routed by the route set (in-dialog, RFC 3261
    // 16.4); this also covers ACK for 2xx and every request a peer sends back to the caller.
    if (m.h_route != no_header && forward_in_dialog(c)) return;
    const bool has_to_tag = m.to.has_tag;
    if (has_to_tag && m.h_route == no_header) {
        // Topology hiding: in-dialog without a Route, to our address or the Contact we wrote
        // (a UA that ignores Record-Route): by the dialog.
        const uint32_t dl = dialogs_->find(hash_bytes(m.call_id()));
        if ((dialog_stages(dl) & stage::hiding) != 0 && forward_hidden(c, route_walk{}, dl)) return;
    }
    switch (m.req_method) {
    case method::invite:
        if (has_to_tag) break;
        new_invite(c);
        return;
    case method::cancel: on_cancel(c); return;
    case method::ack: on_ack(c); return;
    default: break;
    }
    if (m.req_method == method::options && !has_to_tag && m.ruri.user.empty()) {
        self_options(c);  // OPTIONS to the SBC itself (no user part): its own health answer
        return;
    }
    if (has_to_tag) {
        // In-dialog without our Route: not a dialog we are in.
        respond(c, 481, {});
        return;
    }
    const uint8_t reduction = overload();
    if (guard::shed(*guard_, c, reduction, false)) {  // stage_guard.h
        respond(c, 503, "Service Unavailable (overloaded)", true, c.t.overload.retry_after_s);
        return;
    }
    c.m = rules::apply_in(*rules_, c);  // header and number rules, before routing (stage_rules.h)
    forward_out_of_dialog(c);
}

void call_core::on_ack(const msg_ctx& c) noexcept
{
    const uint32_t s = find_setup(upstream_key(*c.m, c.in.src));
    if (s != none_slot && setups_->at(s).state == setup_state::completed) {
        call_setup& st = setups_->at(s);
        st.state = setup_state::lingering;
        st.t_retransmit = 0;
        st.t_release = c.now + linger_ms;
        arm(s);
    }
    stats_->add(proxy_counter::acks_absorbed);
}

void call_core::self_options(const msg_ctx& c) noexcept
{
    if (!c.h.draining() && !c.h.overloaded()) {
        stats_->add(proxy_counter::options_answered);
        respond(c, c.t.self.healthy_code, {}, false, 0, self_capabilities);
        return;
    }
    const uint16_t code = c.t.self.unavailable_code;
    if (code == 0) {
        stats_->add(proxy_counter::options_unanswered);  // [self] draining_code = "none": silence
        return;
    }
    stats_->add(proxy_counter::options_answered);
    std::string_view reason;  // other codes: the standard phrase
    if (code == 503) reason = c.h.draining() ? "Service Unavailable (draining)" : "Service Unavailable (overloaded)";
    respond(c, code, reason, code == 503, c.t.retry.retry_after_s, self_capabilities);
}

void call_core::on_response(msg_ctx& c) noexcept
{
    const message& m = *c.m;
    oc::from_peer(*oc_, c);  // RFC 7339 feedback from a peer, whatever the response answers
    txn_id id;
    if (m.has_top_via && read_branch(m.text(m.top_via.branch), id) && id.worker == worker_ && id.slot < n_setups_) {
        const call_setup& s = setups_->at(id.slot);
        if (s.state != setup_state::free && s.gen == id.gen && s.attempt == id.attempt &&
            m.cseq_method == method::invite) {
            invite_response(c, id.slot);
            return;
        }
        if (m.cseq_method == method::cancel) return;  // 200 to our CANCEL: nothing to do
        if (m.status >= 200 && m.status < 300 && m.cseq_method == method::invite) {
            // A 2xx retransmission after the setup ended (or from an abandoned attempt):
            // proxies forward 2xx statelessly; our Via's sbc-src names the caller.
            if (!relay_by_via(c)) stats_->add(proxy_counter::stale_responses);
            return;
        }
        stats_->add(proxy_counter::stale_responses);
        return;
    }
    if (m.has_top_via && relay_by_via(c)) return;
    stats_->add(proxy_counter::stale_responses);
}

void call_core::on_tick(const proxy_tables& t, const peer_health& h, uint64_t now_ms, outbox& out) noexcept
{
    const call_env e = env(t, h, out, now_ms);
    oc_->server.refresh(t.oc, now_ms);
    if (timers_.now() == 0) timers_.start(now_ms);
    timers_.advance(now_ms, [&](uint32_t slot) { fire(e, slot); }, [&] { return out.room(); });
    if (media_) {
        // Calls whose media went silent: a BYE to both sides, then the dialog ends (its media too).
        std::array<uint64_t, 8> calls;
        // Two BYEs per call: ask only for as many calls as the outbox has room for.
        const std::size_t room = out.n + 2 * calls.size() <= outbox_capacity ? calls.size() : (outbox_capacity - out.n) / 2;
        const uint32_t n = media_->hook->silent_calls(now_ms, {calls.data(), room});
        for (uint32_t i = 0; i < n; ++i) {
            const uint32_t d = dialogs_->find(calls[i]);
            if (d == none_slot) continue;  // still being set up (ringing without early media)
            media::byes(*media_, d, dialogs_->table.key(d), worker_, out, *stats_);
            dialog_end(calls[i], sbc::cdr_end::media_timeout, now_ms);
        }
    }
    pending_expire(e);
    if (dialogs_->timers.now() == 0) dialogs_->timers.start(now_ms);
    dialogs_->timers.advance(
        now_ms,
        [&](uint32_t slot) {
            // A BYE that never got its 200: the dialog is over anyway.
            if (dialogs_->table.used(slot)) dialog_end(dialogs_->table.key(slot), cdr_end::bye_timeout, now_ms);
        },
        [] { return true; });
}

std::size_t call_core::write_stateless_branch(char* out, uint64_t key) const noexcept
{
    return sip::write_stateless_branch(out, worker_, key);
}

// Stage hooks the core calls at the points of a call.

bool call_core::media_body(const message& m, uint64_t call, media_leg to, stage_mask stages, edits& e,
                           uint64_t now) noexcept
{
    return (stages & stage::media) == 0 || !media_ || media::body(*media_, m, call, to, e, now);
}

void call_core::media_end(uint64_t call, uint64_t now) noexcept
{
    if (media_) media_->hook->call_ended(call, now);
}

void call_core::cdr_refused(const msg_ctx& c, uint16_t code, uint16_t route) noexcept
{
    if (cdr_) cdr::refused(*cdr_, *c.m, c.in, worker_, code, route);
}

void call_core::cdr_attempt_end(uint32_t slot, cdr_outcome o, uint16_t code, uint64_t now) noexcept
{
    if (cdr_ && (setups_->at(slot).stages & stage::cdr) != 0) cdr::attempt_end(*cdr_, slot, o, code, now);
}

void call_core::cdr_final(uint32_t slot, uint16_t code, bool by_peer) noexcept
{
    if (cdr_ && (setups_->at(slot).stages & stage::cdr) != 0)
        cdr::final_answer(*cdr_, slot, code, by_peer ? cdr_final_by::peer : cdr_final_by::sbc);
}

void call_core::cdr_setup_end(uint32_t slot, uint64_t now) noexcept
{
    if (cdr_ && (setups_->at(slot).stages & stage::cdr) != 0)
        cdr::setup_end(*cdr_, slot, setups_->at(slot).cancelled, now);
}

}  // namespace sbc::sip
