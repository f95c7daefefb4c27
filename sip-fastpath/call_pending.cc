// In-dialog requests relayed toward a peer that are waiting for its answer (see
// call_pending.h): remembered when the core relays them, forgotten at the first response
// relay_by_via sees for them, answered 408 by us when the peer's no-answer timer runs out
// (on_tick) or an ICMP unreachable quotes them. Part of the call core. Worker only.
#include "sip-fastpath/call_pending.h"

#include <cstring>

#include "sip-fastpath/call_core.h"
#include "sip-fastpath/proxy_ids.h"
#include "sip-fastpath/sip_response.h"

namespace sbc::sip {

namespace {

/// The key write_stateless_branch writes: 12 hex digits.
constexpr uint64_t stateless_key_mask = (uint64_t{1} << 48) - 1;

/// The worker and key of our stateless branch at the start of `b` (a branch value, or the
/// rest of a quoted datagram from it); false when it is not one.
bool read_stateless(std::string_view b, uint64_t& worker, uint64_t& key) noexcept
{
    constexpr std::size_t o = branch_stateless.size();
    if (b.size() < o + 14 || !b.starts_with(branch_stateless)) return false;
    return get_hex(b.substr(o, 2), worker) && get_hex(b.substr(o + 2, 12), key);
}

}  // namespace

void call_core::pending_track(const msg_ctx& c, const endpoint& next, uint64_t key) noexcept
{
    const message& m = *c.m;
    // What a dead peer leaves its sender waiting on for 32 s (retransmitting, over UDP): a BYE,
    // re-INVITE or UPDATE toward a peer, on any transport (a TCP or TLS peer that dies silently
    // keeps its connection up for as long as the kernel's retransmissions last).
    if (m.req_method != method::bye && m.req_method != method::invite && m.req_method != method::update) return;
    const uint32_t peer = c.t.find_peer(next.addr, next.port);
    if (peer == no_peer && !c.t.is_peer_address(next.addr)) return;
    pending_table& p = *pending_;
    key &= stateless_key_mask;
    if (p.table.find(key) != none_slot) return;  // the sender's retransmission: the first deadline stands
    const uint32_t s = p.table.insert(key);
    if (s == none_slot) {
        c.stats.add(proxy_counter::in_dialog_untracked);
        return;
    }
    // The request as it arrived (its sender's Vias, none of ours), start line and headers: the
    // 408 is written from it only if the deadline comes.
    const std::size_t len = m.headers_end;
    if (len == 0 || len > pending_answer_size) {
        p.table.erase(s);
        c.stats.add(proxy_counter::in_dialog_untracked);
        return;
    }
    std::memcpy(p.request(s), m.raw.data(), len);
    pending_table::entry& e = p.table.at(s);
    e.sender = c.in.src;
    e.local = c.in.local;
    e.next = next;
    e.call = hash_bytes(m.call_id());
    e.len = static_cast<uint16_t>(len);
    e.bye = m.req_method == method::bye;
    if (p.timers.now() == 0) p.timers.start(c.now);
    p.timers.schedule(s, c.now + c.h.no_response_for(peer, c.t.retry.no_response_ms));
}

void call_core::pending_answered(std::string_view branch) noexcept
{
    uint64_t w = 0, key = 0;
    if (!read_stateless(branch, w, key) || w != worker_) return;
    if (const uint32_t s = pending_->table.find(key); s != none_slot) pending_->erase(s);
}

bool call_core::pending_unreachable(const call_env& e, std::string_view quoted, const endpoint& to) noexcept
{
    // The quote starts with our request: its top Via is ours.
    const std::size_t at = quoted.find(branch_stateless);
    uint64_t w = 0, key = 0;
    if (at == std::string_view::npos || !read_stateless(quoted.substr(at), w, key) || w != worker_) return false;
    const uint32_t s = pending_->table.find(key);
    if (s == none_slot || !pending_->table.at(s).next.same_place(to)) return false;
    pending_answer(e, s);
    return true;
}

void call_core::pending_expire(const call_env& e) noexcept
{
    pending_table& p = *pending_;
    if (p.timers.now() == 0) p.timers.start(e.now);
    p.timers.advance(e.now, [&](uint32_t s) { pending_answer(e, s); }, [&] { return e.out.room(1); });
}

void call_core::pending_answer(const call_env& e, uint32_t slot) noexcept
{
    pending_table& p = *pending_;
    const pending_table::entry pe = p.table.at(slot);
    e.stats.add(proxy_counter::in_dialog_timeouts);
    if (out_message* d = e.out.next()) {
        message& m = *aux_;
        parse(std::string_view(p.request(slot), pe.len), m);  // only on this rare path: a 408 of our own
        char tag[12];
        put_hex(tag, pe.call ^ worker_, 12);
        response_spec spec;
        spec.code = 408;
        spec.to_tag = std::string_view(tag, 12);
        if (const write_result r = build_response(m, spec, d->data); r.ok()) e.out.commit(pe.local, pe.sender, r.len);
    } else {
        e.stats.add(proxy_counter::outbox_full);
    }
    p.erase(slot);
    // The sender will not retry a BYE that got a final answer: the call is over here too.
    if (pe.bye) dialog_end(pe.call, sbc::cdr_end::bye_timeout, 0);
}

}  // namespace sbc::sip
