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

namespace {

/// What select_peer asks of each peer of the region: one relaxed load of its health word per
/// look (a worker that sees a flip one call late only picks another first choice; the control
/// core is the only writer), its call count against its limit, its oc reduction.
struct screen {
    const proxy_tables& t;
    const peer_health& health;
    const selection& q;
    select_state& st;
    uint32_t oc_draw = 0xffffffff;  // not drawn yet: one draw per selection, only when needed

    [[nodiscard]] uint32_t word(const peer& pe) const noexcept
    {
        return health.word[pe.id].load(std::memory_order_relaxed);
    }
    [[nodiscard]] bool matched(const peer& pe) const noexcept
    {
        return pe.canary < max_canaries && ((q.canary_mask >> pe.canary) & 1) != 0;
    }
    [[nodiscard]] bool up(const peer& pe, uint32_t w) const noexcept
    {
        const uint32_t out = q.ignore_down ? (peer_state::draining | peer_state::disabled) : peer_state::unavailable;
        if ((w & out) != 0) return false;
        // A canary takes only the calls that match its pattern. The bit is set before the
        // snapshot with the pattern is published and cleared before the one without it, so a
        // worker between the two errs on the side of keeping other calls away.
        return (w & peer_state::canary) == 0 || matched(pe);
    }
    /// At its call limit (admission.h): passed over like a down peer. The count is node-wide
    /// and read relaxed: a peer that fills up between this load and the proxy's take is
    /// refused there, and the proxy selects again.
    [[nodiscard]] bool full(const peer& pe) const noexcept
    {
        return pe.max_calls != 0 && pe.id < q.active.size() &&
               q.active[pe.id].load(std::memory_order_relaxed) >= pe.max_calls;
    }
    [[nodiscard]] bool tried(const peer& pe) const noexcept { return was_tried(q.tried, pe.id); }
    /// Passed over for its oc reduction on this call (the draw is made once, on first need).
    bool oc_skip(const peer& pe) noexcept
    {
        const uint8_t r = health.oc_reduction_of(pe.id);
        if (r == 0) return false;
        if (oc_draw == 0xffffffff) oc_draw = static_cast<uint32_t>(st.next() % 100);
        return oc_draw < r;
    }
};

/// Matching calls go to a matching canary first: the lowest priority value among them.
uint32_t canary_first(screen& s, std::span<const uint32_t> members) noexcept
{
    uint32_t best = no_peer;
    for (uint32_t p : members) {
        const peer& pe = s.t.peers[p];
        if (!s.matched(pe) || (s.word(pe) & peer_state::canary) == 0) continue;
        if (!s.up(pe, s.word(pe)) || s.full(pe) || s.tried(pe)) continue;
        if (best == no_peer || pe.priority < s.t.peers[best].priority) best = p;
    }
    return best;
}

/// The lowest priority value among some candidates, and how many have it.
struct tier {
    uint32_t prio = 0x10000;
    uint32_t n = 0;
    void count(uint32_t p) noexcept
    {
        if (p < prio) {
            prio = p;
            n = 0;
        }
        if (p == prio) ++n;
    }
};

/// The candidates' tiers: available and untried (`any`), of those the ones oc does not pass
/// over (`open`) and the best priority it passes over (`oc_prio`); the same among the peers
/// that are not suspect (`sure`...). Full peers go to st.full.
struct tally {
    tier any, open, sure, open_sure;
    uint32_t oc_prio = 0x10000, oc_prio_sure = 0x10000;
};

tally count_candidates(screen& s, std::span<const uint32_t> members) noexcept
{
    tally c;
    for (uint32_t p : members) {
        const peer& pe = s.t.peers[p];
        const uint32_t w = s.word(pe);
        if (!s.up(pe, w) || s.tried(pe)) continue;
        if (s.full(pe)) {
            if (s.st.n_full < s.st.full.size()) s.st.full[s.st.n_full] = pe.id;
            ++s.st.n_full;
            continue;
        }
        c.any.count(pe.priority);
        const bool oc_out = s.oc_skip(pe);
        if (!oc_out) c.open.count(pe.priority);
        else c.oc_prio = std::min<uint32_t>(c.oc_prio, pe.priority);
        if ((w & peer_state::suspect) != 0) continue;
        c.sure.count(pe.priority);
        if (!oc_out) c.open_sure.count(pe.priority);
        else c.oc_prio_sure = std::min<uint32_t>(c.oc_prio_sure, pe.priority);
    }
    return c;
}

}  // namespace

uint32_t select_peer(const proxy_tables& t, const peer_health& health, const selection& q, select_state& st) noexcept
{
    if (q.region >= t.regions.size()) return no_peer;
    st.n_full = 0;
    st.oc_diverted = false;
    screen s{t, health, q, st};
    const auto& members = t.regions[q.region].peers;
    if (q.canary_mask != 0)
        if (const uint32_t p = canary_first(s, members); p != no_peer) return p;
    // Candidates: available, untried, of the lowest priority value among those. A suspect peer
    // (silent or unreachable once, nothing heard since) is a candidate only when every other
    // available, untried peer of the region is suspect too: then the region's order holds as
    // if none were (the call stays in its region rather than fail over on a guess).
    // RFC 7339 (client): a peer under an oc reduction of N% is passed over for N% of the calls
    // while another candidate (of the same suspect level) is not passed over; when every one is,
    // the reductions are set aside and the call goes as usual: no call is lost to a reduction
    // while a peer can take it (so selection without oc draws exactly as before).
    const tally c = count_candidates(s, members);
    if (c.any.n == 0) return no_peer;
    const bool skip_suspect = c.sure.n != 0;
    tier best = skip_suspect ? c.sure : c.any;
    const tier open = skip_suspect ? c.open_sure : c.open;
    const uint32_t oc_prio = skip_suspect ? c.oc_prio_sure : c.oc_prio;
    const bool skip_oc = open.n != 0 && oc_prio != 0x10000;
    if (skip_oc) {
        st.oc_diverted = oc_prio <= open.prio;  // passed over a peer this call could have gone to
        best = open;
    }
    auto eligible = [&](uint32_t p) {
        const peer& pe = t.peers[p];
        if (pe.priority != best.prio) return false;
        const uint32_t w = s.word(pe);
        return s.up(pe, w) && !(skip_suspect && (w & peer_state::suspect) != 0) && !s.tried(pe) && !s.full(pe) &&
               !(skip_oc && s.oc_skip(pe));
    };
    return pick(t, members, q.sel, best.n, q.region, q.call_hash, st, q.active, eligible);
}

}  // namespace sbc::sip
