// In-dialog requests relayed toward a peer that are waiting for its answer (see
// proxy_pending.h): remembered when forward_in_dialog sends them, forgotten at the first
// response relay_by_via sees for them, answered 408 by us when the peer's no-answer timer
// runs out (on_tick) or an ICMP unreachable quotes them. Worker only.
#include "sip-fastpath/proxy_pending.h"

#include <cstring>

#include "sip-fastpath/proxy_ids.h"
#include "sip-fastpath/proxy_internal.h"
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

void proxy::pending_track(const proxy_tables& t, const peer_health& h, const sip_input& a, const endpoint& next,
                          uint64_t key) noexcept
{
    const message& m = *msg_;
    // What a dead peer leaves its sender waiting on for 32 s (retransmitting, over UDP): a BYE,
    // re-INVITE or UPDATE toward a peer, on any transport (a TCP or TLS peer that dies silently
    // keeps its connection up for as long as the kernel's retransmissions last).
    if (m.req_method != method::bye && m.req_method != method::invite && m.req_method != method::update) return;
    const uint32_t peer = t.find_peer(next.addr, next.port);
    if (peer == no_peer && !t.is_peer_address(next.addr)) return;
    pending_table& p = *pending_;
    key &= stateless_key_mask;
    if (p.table.find(key) != none_slot) return;  // the sender's retransmission: the first deadline stands
    const uint32_t s = p.table.insert(key);
    if (s == none_slot) {
        stats_->add(proxy_counter::in_dialog_untracked);
        return;
    }
    // The request as it arrived (its sender's Vias, none of ours), start line and headers: the
    // 408 is written from it only if the deadline comes.
    const std::size_t len = m.headers_end;
    if (len == 0 || len > pending_answer_size) {
        p.table.erase(s);
        stats_->add(proxy_counter::in_dialog_untracked);
        return;
    }
    std::memcpy(p.request(s), m.raw.data(), len);
    const uint64_t call = hash_bytes(m.call_id());
    pending_table::entry& e = p.table.at(s);
    e.sender = a.src;
    e.local = a.local;
    e.next = next;
    e.call = call;
    e.len = static_cast<uint16_t>(len);
    e.bye = m.req_method == method::bye;
    if (p.timers.now() == 0) p.timers.start(a.now_ms);
    p.timers.schedule(s, a.now_ms + h.no_response_for(peer, t.retry.no_response_ms));
}

void proxy::pending_answered(std::string_view branch) noexcept
{
    uint64_t w = 0, key = 0;
    if (!read_stateless(branch, w, key) || w != worker_) return;
    if (const uint32_t s = pending_->table.find(key); s != none_slot) pending_->erase(s);
}

bool proxy::pending_unreachable(std::string_view quoted, const endpoint& to, outbox& out) noexcept
{
    // The quote starts with our request: its top Via is ours.
    const std::size_t at = quoted.find(branch_stateless);
    uint64_t w = 0, key = 0;
    if (at == std::string_view::npos || !read_stateless(quoted.substr(at), w, key) || w != worker_) return false;
    const uint32_t s = pending_->table.find(key);
    if (s == none_slot || !pending_->table.at(s).next.same_place(to)) return false;
    pending_answer(s, out);
    return true;
}

void proxy::pending_expire(uint64_t now_ms, outbox& out) noexcept
{
    pending_table& p = *pending_;
    if (p.timers.now() == 0) p.timers.start(now_ms);
    p.timers.advance(now_ms, [&](uint32_t s) { pending_answer(s, out); }, [&] { return out.room(1); });
}

void proxy::pending_answer(uint32_t slot, outbox& out) noexcept
{
    pending_table& p = *pending_;
    const pending_table::entry e = p.table.at(slot);
    stats_->add(proxy_counter::in_dialog_timeouts);
    if (out_message* d = out.next()) {
        message& m = *aux_;
        parse(std::string_view(p.request(slot), e.len), m);  // what forward_in_dialog parsed already
        char tag[12];
        put_hex(tag, e.call ^ worker_, 12);
        response_spec spec;
        spec.code = 408;
        spec.to_tag = std::string_view(tag, 12);
        if (const write_result r = build_response(m, spec, d->data); r.ok()) out.commit(e.local, e.sender, r.len);
    } else {
        stats_->add(proxy_counter::outbox_full);
    }
    p.erase(slot);
    // The sender will not retry a BYE that got a final answer: the call is over here too.
    if (e.bye) dialog_end(e.call, sbc::cdr_end::bye_timeout);
}

}  // namespace sbc::sip
