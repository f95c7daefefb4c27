// Peer selection (see peer_select.h). Worker only.
#include "sip-fastpath/peer_select.h"

#include <algorithm>

namespace sbc::sip {

namespace {

bool was_tried(std::span<const uint32_t> tried, uint32_t id) noexcept
{
    return std::find(tried.begin(), tried.end(), id) != tried.end();
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
    auto up_peer = [&](const peer& pe) { return up_word(pe, health.word[pe.id].load(std::memory_order_relaxed)); };
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
    uint32_t best_prio = 0x10000, best_prio_sure = 0x10000;
    uint32_t n = 0, n_sure = 0;
    for (uint32_t p : members) {
        const peer& pe = t.peers[p];
        const uint32_t w = health.word[pe.id].load(std::memory_order_relaxed);
        if (!up_word(pe, w) || was_tried(tried, pe.id)) continue;
        if (pe.priority < best_prio) {
            best_prio = pe.priority;
            n = 0;
        }
        if (pe.priority == best_prio) ++n;
        if ((w & peer_state::suspect) != 0) continue;
        if (pe.priority < best_prio_sure) {
            best_prio_sure = pe.priority;
            n_sure = 0;
        }
        if (pe.priority == best_prio_sure) ++n_sure;
    }
    if (n == 0) return no_peer;
    const bool skip_suspect = n_sure != 0;
    if (skip_suspect) {
        best_prio = best_prio_sure;
        n = n_sure;
    }
    auto eligible = [&](uint32_t p) {
        const peer& pe = t.peers[p];
        if (pe.priority != best_prio) return false;
        const uint32_t w = health.word[pe.id].load(std::memory_order_relaxed);
        return up_word(pe, w) && !(skip_suspect && (w & peer_state::suspect) != 0) && !was_tried(tried, pe.id);
    };
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

}  // namespace sbc::sip
