// Peer selection (see peer_select.h). Worker only.
#include "sip-fastpath/peer_select.h"

#include <algorithm>

namespace sbc::sip {

namespace {

bool was_tried(std::span<const uint32_t> tried, uint32_t id) noexcept
{
    return std::find(tried.begin(), tried.end(), id) != tried.end();
}

/// select_peer's last step: one of the `n` eligible peers of `members` (`eligible(p)`), by the
/// group's selector.
template <class Eligible>
uint32_t pick(const proxy_tables& t, std::span<const uint32_t> members, selector sel, uint32_t n, uint16_t region,
              uint64_t call_hash, select_state& st, std::span<const std::atomic<uint32_t>> active,
              Eligible&& eligible) noexcept
{
    uint32_t pick_index = 0;  // the pick_index-th eligible peer
    switch (sel) {
    case selector::srv: {
        // RFC 2782: zero-weight entries first, running sums, uniform r in [0, sum], the first
        // entry whose running sum reaches r. All zero: every entry is equally likely.
        uint64_t sum = 0;
        for (uint32_t p : members)
            if (eligible(p)) sum += t.peers[p].weight;
        if (sum == 0) {
            pick_index = static_cast<uint32_t>(st.next() % n);
            break;
        }
        const uint64_t r = st.next() % (sum + 1);
        uint64_t running = 0;
        // Zero weights first: they win only when r is 0.
        for (int pass = 0; pass < 2; ++pass) {
            for (uint32_t p : members) {
                if (!eligible(p)) continue;
                const uint16_t w = t.peers[p].weight;
                if ((pass == 0) != (w == 0)) continue;
                running += w;
                if (running >= r) return p;
            }
        }
        return no_peer;  // unreachable: the running sum reaches sum >= r
    }
    case selector::round_robin: pick_index = st.rr[region % st.rr.size()]++ % n; break;
    case selector::hash_call_id: pick_index = static_cast<uint32_t>(call_hash % n); break;
    case selector::least_calls: {
        uint32_t best = no_peer, best_calls = 0xffffffff;
        for (uint32_t p : members) {
            if (!eligible(p)) continue;
            const uint32_t id = t.peers[p].id;
            const uint32_t calls = id < active.size() ? active[id].load(std::memory_order_relaxed) : 0;
            if (calls < best_calls) {
                best_calls = calls;
                best = p;
            }
        }
        return best;
    }
    }
    for (uint32_t p : members) {
        if (!eligible(p)) continue;
        if (pick_index == 0) return p;
        --pick_index;
    }
    return no_peer;
}

}  // namespace

uint32_t select_peer(const proxy_tables& t, const peer_health& health, uint16_t region, selector sel,
                     std::span<const uint32_t> tried, uint64_t call_hash, select_state& st,
                     std::span<const std::atomic<uint32_t>> active, bool ignore_down, uint64_t canary_mask) noexcept
{
    if (region >= t.regions.size()) return no_peer;
    auto matched = [&](const peer& pe) { return pe.canary < max_canaries && ((canary_mask >> pe.canary) & 1) != 0; };
    // One relaxed load of the health word per candidate and pass: a worker that sees a flip
    // one call late only picks another first choice (the control core is the only writer).
    auto up_word = [&](const peer& pe, uint32_t w) {
        const uint32_t out = ignore_down ? (peer_state::draining | peer_state::disabled) : peer_state::unavailable;
        if ((w & out) != 0) return false;
        // A canary takes only the calls that match its pattern. The bit is set before the
        // snapshot with the pattern is published and cleared before the one without it, so a
        // worker between the two errs on the side of keeping other calls away.
        return (w & peer_state::canary) == 0 || matched(pe);
    };
    // A peer at its call limit (admission.h) is passed over like a down one. The count is
    // node-wide and read relaxed: a peer that fills up between this load and the proxy's
    // take is refused there, and the proxy selects again.
    st.n_full = 0;
    auto full = [&](const peer& pe) {
        return pe.max_calls != 0 && pe.id < active.size() && active[pe.id].load(std::memory_order_relaxed) >= pe.max_calls;
    };
    auto up_peer = [&](const peer& pe) {
        return up_word(pe, health.word[pe.id].load(std::memory_order_relaxed)) && !full(pe);
    };
    const auto& members = t.regions[region].peers;
    if (canary_mask != 0) {
        // Matching calls go to a matching canary first: the lowest priority value among them.
        uint32_t best = no_peer;
        for (uint32_t p : members) {
            const peer& pe = t.peers[p];
            if (!matched(pe) || (health.word[pe.id].load(std::memory_order_relaxed) & peer_state::canary) == 0) continue;
            if (!up_peer(pe) || was_tried(tried, pe.id)) continue;
            if (best == no_peer || pe.priority < t.peers[best].priority) best = p;
        }
        if (best != no_peer) return best;
    }
    // Candidates: available, untried, of the lowest priority value among those. A suspect peer
    // (silent or unreachable once, nothing heard since) is a candidate only when every other
    // available, untried peer of the region is suspect too: then the region's order holds as
    // if none were (the call stays in its region rather than fail over on a guess).
    // RFC 7339 (client): a peer under an oc reduction of N% is passed over for N% of the calls
    // while another candidate (of the same suspect level) is not passed over; when every one is,
    // the reductions are set aside and the call goes as usual: no call is lost to a reduction
    // while a peer can take it. One draw per selection, made only when a candidate has a
    // reduction (so selection without oc draws exactly as before).
    st.oc_diverted = false;
    uint32_t oc_draw = 0xffffffff;  // not drawn yet
    auto oc_skip = [&](const peer& pe) {
        const uint8_t r = health.oc_reduction_of(pe.id);
        if (r == 0) return false;
        if (oc_draw == 0xffffffff) oc_draw = static_cast<uint32_t>(st.next() % 100);
        return oc_draw < r;
    };
    uint32_t best_prio = 0x10000, best_prio_sure = 0x10000;
    uint32_t n = 0, n_sure = 0;
    // The same among the candidates oc does not pass over, and the best priority it passes over.
    uint32_t open_prio = 0x10000, open_prio_sure = 0x10000, oc_prio = 0x10000, oc_prio_sure = 0x10000;
    uint32_t n_open = 0, n_open_sure = 0;
    auto count = [](uint32_t prio, uint32_t& best, uint32_t& k) {
        if (prio < best) {
            best = prio;
            k = 0;
        }
        if (prio == best) ++k;
    };
    for (uint32_t p : members) {
        const peer& pe = t.peers[p];
        const uint32_t w = health.word[pe.id].load(std::memory_order_relaxed);
        if (!up_word(pe, w) || was_tried(tried, pe.id)) continue;
        if (full(pe)) {
            if (st.n_full < st.full.size()) st.full[st.n_full] = pe.id;
            ++st.n_full;
            continue;
        }
        if (pe.priority < best_prio) {
            best_prio = pe.priority;
            n = 0;
        }
        if (pe.priority == best_prio) ++n;
        const bool oc_out = oc_skip(pe);
        if (!oc_out) count(pe.priority, open_prio, n_open);
        else oc_prio = std::min<uint32_t>(oc_prio, pe.priority);
        if ((w & peer_state::suspect) != 0) continue;
        if (pe.priority < best_prio_sure) {
            best_prio_sure = pe.priority;
            n_sure = 0;
        }
        if (pe.priority == best_prio_sure) ++n_sure;
        if (!oc_out) count(pe.priority, open_prio_sure, n_open_sure);
        else oc_prio_sure = std::min<uint32_t>(oc_prio_sure, pe.priority);
    }
    if (n == 0) return no_peer;
    const bool skip_suspect = n_sure != 0;
    if (skip_suspect) {
        best_prio = best_prio_sure;
        n = n_sure;
        open_prio = open_prio_sure;
        n_open = n_open_sure;
        oc_prio = oc_prio_sure;
    }
    const bool skip_oc = n_open != 0 && oc_prio != 0x10000;
    if (skip_oc) {
        st.oc_diverted = oc_prio <= open_prio;  // passed over a peer this call could have gone to
        best_prio = open_prio;
        n = n_open;
    }
    auto eligible = [&](uint32_t p) {
        const peer& pe = t.peers[p];
        if (pe.priority != best_prio) return false;
        const uint32_t w = health.word[pe.id].load(std::memory_order_relaxed);
        return up_word(pe, w) && !(skip_suspect && (w & peer_state::suspect) != 0) && !was_tried(tried, pe.id) &&
               !full(pe) && !(skip_oc && oc_skip(pe));
    };
    return pick(t, members, sel, n, region, call_hash, st, active, eligible);
}

}  // namespace sbc::sip
