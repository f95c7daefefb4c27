// Route fallback on failure classes (sip-fastpath/route_fallback.h): a final response in a
// route's fallback codes, from an attempt in the route's own group, moves the call once to the
// route's fallback group, where its selection, failover and retries apply as in any group;
// should that group run out of peers, the caller gets the answer the primary group gave (what
// it would have had without a fallback), not 503. Never after a provisional other than 100:
// a phone that rang is not moved. Worker only.
#include <cstring>

#include "sip-fastpath/proxy_internal.h"
#include "sip-fastpath/sip_editor.h"
#include "sip-fastpath/topology_hiding.h"

namespace sbc::sip {

bool proxy::fall_back(const proxy_tables& t, const peer_health& h, uint32_t slot, uint16_t code, uint64_t now,
                      outbox& out) noexcept
{
    setup& s = setups_->at(slot);
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
    if ((has_second_via(*msg_) || has_hidden_via(*msg_)) && upstream_edits(t, s, e, th)) {  // as relay_upstream
        // The setup's store (proxy_large.cc), kept no larger than an outbox message's buffer.
        const std::size_t room = store_room(slot) - s.invite_len;
        const std::span<char> store(store_of(slot) + s.invite_len, room < max_out_size ? room : max_out_size);
        if (const write_result r = edit(*msg_, e, store); r.ok()) s.final_len = static_cast<uint16_t>(r.len);
    }
    if (cdr_) cdr_final(slot, code, cdr_final_by::peer);  // what the caller gets should the group run out
    stats_->add(proxy_counter::fallbacks);
    if (s.route < proxy_stats::max_counted) sw_bump(stats_->fallbacks_by_route[s.route]);
    s.route = no_fallback;
    s.group = f.group;
    s.region_pos = 0;
    s.fallback_base = s.attempt;  // at least 1: the attempt that got `code`
    next_attempt(t, h, slot, failure_cause::none, now, out);
    return true;
}

bool proxy::fallback_exhausted(uint32_t slot, uint64_t now, outbox& out) noexcept
{
    setup& s = setups_->at(slot);
    if (s.fallback_base == 0 || s.final_len == 0 || s.cancelled) return false;
    out_message* d = out.next();
    if (d == nullptr) {
        stats_->add(proxy_counter::outbox_full);  // the caller's retransmission gets it (completed below)
    } else {
        std::memcpy(d->data.data(), store_of(slot) + s.invite_len, s.final_len);
        out.commit(s.local, s.caller, s.final_len);
    }
    stats_->add(proxy_counter::fallback_exhausted);
    stats_->add(proxy_counter::calls_failed);
    await_ack(slot, now);  // as a relayed final ends a call: ACK awaited, final repeated on UDP
    return true;
}

}  // namespace sbc::sip
