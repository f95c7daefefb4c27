// Call admission in the call core (admission.h): a new INVITE counted against its trunk and
// the node or refused with the configured answer, and each attempt's peer counted or passed
// over when full. The counts are kept for every call (they are the node's gauges); the limits
// are what a trunk, a peer or [admission] configures. Worker only; the counts it changes are
// the node's (atomic read-modify-write, no lock), the counters it adds to are this worker's.
#include <algorithm>
#include <cstring>

#include "sip-fastpath/call_core.h"
#include "sip-fastpath/sip_response.h"

namespace sbc::sip {

std::string_view admission_reason(std::span<char, 64> buf, uint16_t code, std::string_view why) noexcept
{
    const std::string_view phrase = default_reason(code);
    std::size_t n = 0;
    auto put = [&](std::string_view s) {
        const std::size_t k = std::min(s.size(), buf.size() - n);
        std::memcpy(buf.data() + n, s.data(), k);
        n += k;
    };
    put(phrase);
    put(" (");
    put(why);
    put(")");
    return {buf.data(), n};
}

bool call_core::admit(const msg_ctx& c) noexcept
{
    const proxy_tables& t = c.t;
    const sip_input& a = c.in;
    const trunk* tr = a.trunk < t.trunks.size() ? &t.trunks[a.trunk] : nullptr;
    const admission_refusal why =
        adm_->admit_call(a.trunk, tr != nullptr ? tr->max_calls : 0, tr != nullptr ? tr->calls_per_second : 0,
                         tr != nullptr ? tr->calls_burst : 1, t.admission.max_calls, a.now_ms);
    if (why == admission_refusal::none) return true;
    std::string_view what;
    switch (why) {
    case admission_refusal::trunk_calls:
        stats_->add(proxy_counter::admission_trunk_calls);
        what = "trunk call limit";
        break;
    case admission_refusal::trunk_rate:
        stats_->add(proxy_counter::admission_trunk_rate);
        what = "trunk call rate";
        break;
    case admission_refusal::node_calls:
        stats_->add(proxy_counter::admission_node_calls);
        what = "node call limit";
        break;
    case admission_refusal::none: break;
    }
    if (a.trunk < proxy_stats::max_counted) stats_->refused_by_trunk[a.trunk].bump();
    const uint16_t code = t.admission.refuse_code;
    char phrase[64];
    respond(c, code, admission_reason(phrase, code, what),
            retry_after_allowed(code) && t.admission.retry_after_s != 0, t.admission.retry_after_s);
    return false;
}

uint32_t call_core::pick_peer(const call_env& e, uint32_t slot, uint16_t region, bool ignore_down,
                              bool& saw_full) noexcept
{
    const proxy_tables& t = e.t;
    call_setup& s = setups_->at(slot);
    const peer_group& g = t.groups[s.group];
    // Bounded by the tried list: a peer that filled up between selection and its count joins it.
    while (s.n_tried < max_tried) {
        const selection q{region, g.sel, {s.tried.data(), s.n_tried}, s.callid_hash, adm_->peer_calls, ignore_down,
                          s.canary_mask};
        const uint32_t p = select_peer(t, e.h, q, select_);
        for (uint32_t i = 0; i < std::min<uint32_t>(select_.n_full, select_.full.size()); ++i)
            stats_->full_skips_by_peer[select_.full[i]].bump();
        if (select_.n_full != 0) {
            saw_full = true;
            stats_->add(proxy_counter::admission_peer_skips, select_.n_full);
        }
        if (p == no_peer) return no_peer;
        const peer& pe = t.peers[p];
        if (adm_->take_peer(pe.id, pe.max_calls)) return p;
        // Another worker took its last call since selection: passed over like a full one.
        saw_full = true;
        stats_->full_skips_by_peer[pe.id].bump();
        stats_->add(proxy_counter::admission_peer_skips);
        s.tried[s.n_tried++] = pe.id;
    }
    return no_peer;
}

void call_core::peer_put(uint32_t& peer_id) noexcept
{
    if (peer_id == no_peer) return;
    stats_->active_by_peer[peer_id].move(-1);
    adm_->give_peer(peer_id);
    peer_id = no_peer;
}

void call_core::call_done(uint32_t slot) noexcept
{
    call_setup& s = setups_->at(slot);
    if (!s.admitted) return;
    s.admitted = false;
    adm_->release_call(s.trunk);
}

}  // namespace sbc::sip
