// The call record stage (common/call_record.h, stage_cdr.h): filled while a call is set
// up and while its dialog lives, handed to the cdr_sink once when it ends. When each field is
// filled:
//  - invite_ms, trunk, route, Call-ID (cut to cdr_callid_size, callid_cut), From and To user
//    parts: when the new INVITE is taken (after the inbound header and number rules);
//  - attempts: each INVITE sent to a peer (sent_ms), and its outcome when the peer answers
//    (answered, code), stays silent (timeout), is unreachable (icmp; connection on TCP/TLS, or
//    when no connection could be had), when the caller cancelled while it was under way
//    (cancelled) or when it never left the SBC (not_sent);
//  - first_provisional_ms, answer_ms: when a provisional above 100 and the 2xx were relayed
//    (at least 1 once they happened: 0 means never);
//  - final_code, final_by: the final response the caller got, the peer's (relayed; after a
//    route fallback whose group ran out, the primary group's answer) or the SBC's own;
//  - end, end_ms: failed or cancelled when the final non-2xx goes upstream; for an answered
//    call, bye_caller or bye_callee from whoever sent the first BYE (end_ms: that BYE),
//    bye_timeout when that BYE got no answer (408 from us, or no answer at all: end_ms is
//    still the BYE), media_timeout when the media went silent (end_ms: when we sent our
//    BYEs); drain for calls still up when the worker stopped (and for an answered call the
//    dialog table had no room for: its end is never seen, so it is handed over when answered);
//    refused for a new INVITE refused before any attempt (draining, no route, too big, table
//    full, admission, no media ports, overload shed, no peer to try at all);
//  - media: from the media hook just before the call's media is torn down.
// A retransmitted INVITE finds its setup and makes no record; a retransmitted INVITE that was
// refused is recognised by its transaction key among the last few refused (stage_cdr.h).
// Worker only; no heap, locks or system calls: records live in tables allocated by
// set_cdr_sink, and the sink copies each one out.
#include "sip-fastpath/stage_cdr.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "sip-fastpath/sip_uri.h"

namespace sbc::sip {

cdr_stage::cdr_stage(cdr_sink* s, uint32_t n_setup, uint32_t n_dialog)
    : sink(s), n_setups(n_setup), n_dialogs(n_dialog), setups(alloc.allocate(n_setup == 0 ? 1 : n_setup)),
      dialogs(alloc.allocate(n_dialog == 0 ? 1 : n_dialog)), refused(new uint64_t[cdr_refused_keys]())
{
    // Records are constructed when a call takes the slot (untouched pages cost no memory
    // until then); the live flags are what a scan at the worker's end reads, for slots the
    // tables say are used, each of which a call constructed.
}

cdr_stage::~cdr_stage()
{
    alloc.deallocate(setups, n_setups == 0 ? 1 : n_setups);
    alloc.deallocate(dialogs, n_dialogs == 0 ? 1 : n_dialogs);
}

namespace cdr {

namespace {

std::string_view user_part(std::string_view raw, span uri_text) noexcept
{
    uri u;
    if (!parse_uri(raw, uri_text, u)) return {};
    return u.user.in(raw);
}

template <std::size_t N>
uint8_t copy_cut(std::array<char, N>& to, std::string_view from, bool* cut = nullptr) noexcept
{
    const std::size_t n = std::min(from.size(), N);
    std::memcpy(to.data(), from.data(), n);
    if (cut != nullptr) *cut = from.size() > N;
    return static_cast<uint8_t>(n);
}

/// Milliseconds from `from` to `now`, saturated to 32 bits.
uint32_t since(uint64_t from, uint64_t now) noexcept
{
    const uint64_t d = now > from ? now - from : 0;
    return d > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(d);
}

/// The new INVITE `m` from `a` into a fresh (value-initialised) record.
void start_record(call_record& r, const message& m, const sip_input& a, uint8_t worker, uint16_t route) noexcept
{
    r.invite_ms = a.now_ms;
    r.trunk = a.trunk;
    r.route = route;
    r.worker = worker;
    r.callid_len = copy_cut(r.callid, m.call_id(), &r.callid_cut);
    r.from_len = copy_cut(r.from_user, user_part(m.raw, m.from.uri_text));
    r.to_len = copy_cut(r.to_user, user_part(m.raw, m.to.uri_text));
}

}  // namespace

namespace {

/// Hands `c` over (its media figures filled in first) and marks it done.
void emit(cdr_stage& s, cdr_call& c) noexcept
{
    c.live = false;
    call_record& r = c.rec;
    if (s.media != nullptr) r.has_media = s.media->call_figures(c.callid_hash, std::span<cdr_media, 2>(r.media));
    s.sink->call_ended(r);
}

}  // namespace

void refused(cdr_stage& s, const message& m, const sip_input& in, uint8_t worker, uint16_t code, uint16_t route) noexcept
{
    const uint64_t key = upstream_key(m, in.src);
    uint64_t& seen = s.refused[key % cdr_refused_keys];
    if (seen == key) return;  // its retransmission: the refusal was recorded
    seen = key;
    cdr_call c{};  // on the stack: handed over at once
    start_record(c.rec, m, in, worker, route);
    c.callid_hash = hash_bytes(m.call_id());
    c.rec.end = cdr_end::refused;
    c.rec.final_code = code;
    c.rec.final_by = cdr_final_by::sbc;
    c.live = true;
    emit(s, c);
}

void setup_started(cdr_stage& s, uint32_t slot, const message& m, const sip_input& in, uint8_t worker, uint16_t route,
                   uint64_t call) noexcept
{
    cdr_call* c = new (&s.setups[slot]) cdr_call{};
    start_record(c->rec, m, in, worker, route);
    c->callid_hash = call;
    c->live = true;
}

void attempt_sent(cdr_stage& s, uint32_t slot, uint32_t peer_id, uint64_t now) noexcept
{
    cdr_call& c = s.setups[slot];
    if (!c.live) return;
    call_record& r = c.rec;
    if (r.attempts_total < UINT8_MAX) ++r.attempts_total;
    c.attempt_open = r.n_attempts < cdr_max_attempts;
    if (!c.attempt_open) return;  // counted, not kept
    cdr_attempt& at = r.attempts[r.n_attempts++];
    at = cdr_attempt{};
    at.peer_id = peer_id;
    at.sent_ms = since(r.invite_ms, now);
}

void attempt_end(cdr_stage& s, uint32_t slot, cdr_outcome o, uint16_t code, uint64_t now) noexcept
{
    cdr_call& c = s.setups[slot];
    if (!c.live || !c.attempt_open) return;
    c.attempt_open = false;
    cdr_attempt& at = c.rec.attempts[c.rec.n_attempts - 1];
    at.outcome = o;
    at.code = code;
    at.ended_ms = since(c.rec.invite_ms, now);
}

void provisional(cdr_stage& s, uint32_t slot, uint64_t now) noexcept
{
    call_record& r = s.setups[slot].rec;
    if (s.setups[slot].live && r.first_provisional_ms == 0)
        r.first_provisional_ms = std::max<uint32_t>(1, since(r.invite_ms, now));
}

void final_answer(cdr_stage& s, uint32_t slot, uint16_t code, cdr_final_by by) noexcept
{
    cdr_call& c = s.setups[slot];
    if (!c.live) return;
    c.rec.final_code = code;
    c.rec.final_by = by;
}

void setup_end(cdr_stage& s, uint32_t slot, bool cancelled, uint64_t now) noexcept
{
    cdr_call& c = s.setups[slot];
    if (!c.live) return;
    // An attempt still under way when the caller got its answer: the caller cancelled, or it
    // never left the SBC (too big, no route, no buffer).
    attempt_end(s, slot, cancelled ? cdr_outcome::cancelled : cdr_outcome::not_sent, 0, now);
    // No attempt made (every peer down, disabled or at its call limit): refused by the SBC.
    c.rec.end = cancelled ? cdr_end::cancelled : c.rec.attempts_total == 0 ? cdr_end::refused : cdr_end::failed;
    c.rec.end_ms = since(c.rec.invite_ms, now);
    emit(s, c);
}

void answered(cdr_stage& s, uint32_t slot, uint32_t d, uint16_t code, uint64_t now) noexcept
{
    cdr_call& c = s.setups[slot];
    if (!c.live) return;
    attempt_end(s, slot, cdr_outcome::answered, code, now);
    c.rec.final_code = code;
    c.rec.final_by = cdr_final_by::peer;
    c.rec.answer_ms = std::max<uint32_t>(1, since(c.rec.invite_ms, now));
    if (d == none_slot) {
        // No dialog entry: its end will never be seen here. Handed over now, as the drain
        // hands over a call it stops following.
        c.rec.end = cdr_end::drain;
        c.rec.end_ms = c.rec.answer_ms;
        emit(s, c);
        return;
    }
    cdr_call* dc = new (&s.dialogs[d]) cdr_call{c};
    dc->live = true;
    c.live = false;
}

void bye(cdr_stage& s, uint32_t d, const dialog_entry& de, const endpoint& from, const proxy_tables* t,
         uint64_t now) noexcept
{
    cdr_call& c = s.dialogs[d];
    if (!c.live || c.bye_from != 0) return;
    // The caller's signalling address; else its host when that is no peer (a UA that sends
    // from another port); anything else is the callee's side.
    const bool caller =
        from.same_place(de.caller) || (from.addr == de.caller.addr && (t == nullptr || !t->is_peer_address(from.addr)));
    c.bye_from = caller ? 1 : 2;
    c.bye_ms = now;
}

void dialog_end(cdr_stage& s, uint32_t d, cdr_end why, uint64_t now, uint64_t clock) noexcept
{
    cdr_call& c = s.dialogs[d];
    if (!c.live) return;
    call_record& r = c.rec;
    if (why == cdr_end::bye_caller) why = c.bye_from == 2 ? cdr_end::bye_callee : cdr_end::bye_caller;
    r.end = why;
    // A BYE ends the call when it was sent, answered or not; media inactivity and the drain
    // when the SBC acted.
    const bool by_bye = c.bye_from != 0 && why != cdr_end::media_timeout && why != cdr_end::drain;
    const uint64_t at = by_bye ? c.bye_ms : now != 0 ? now : clock;
    r.end_ms = std::max(since(r.invite_ms, at), r.answer_ms);
    emit(s, c);
}

void drain(cdr_stage& s, const setup_table& setups, const dialog_table& dialogs, uint64_t now) noexcept
{
    for (uint32_t slot = 0; slot < s.n_setups; ++slot) {
        if (!setups.used(slot) || !s.setups[slot].live) continue;
        cdr_call& c = s.setups[slot];
        attempt_end(s, slot, cdr_outcome::cancelled, 0, now);  // abandoned with the worker
        c.rec.end = cdr_end::drain;
        c.rec.end_ms = since(c.rec.invite_ms, now);
        emit(s, c);
    }
    for (uint32_t d = 0; d < s.n_dialogs; ++d)
        if (dialogs.table.used(d) && s.dialogs[d].live) dialog_end(s, d, cdr_end::drain, now, now);
}

}  // namespace cdr
}  // namespace sbc::sip
