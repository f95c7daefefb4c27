// The header and number rules stage (stage_rules.h). Worker only: no heap.
#include "sip-fastpath/stage_rules.h"

namespace sbc::sip::rules {

static_assert(max_rules <= proxy_stats::max_counted, "every rule has its counters");

namespace {

/// The trunk's FQDN, else its address written into `buf`.
std::string_view trunk_name(const proxy_tables& t, uint16_t trunk, std::span<char> buf) noexcept
{
    if (trunk >= t.trunks.size()) return {};
    const sip::trunk& tr = t.trunks[trunk];
    if (!tr.fqdn.empty()) return tr.fqdn;
    return {buf.data(), format_address(tr.address, buf)};
}

/// The non-empty rule sets of `a` and `b` (either may be absent) into `sets`; how many.
std::size_t pick(const std::vector<rule_set>& a, std::size_t ia, const std::vector<rule_set>& b, std::size_t ib,
                 std::array<rule_set, 2>& sets) noexcept
{
    std::size_t n = 0;
    if (ia < a.size() && a[ia].count != 0) sets[n++] = a[ia];
    if (ib < b.size() && b[ib].count != 0) sets[n++] = b[ib];
    return n;
}

constexpr std::size_t none = ~std::size_t{0};

const message* apply(rules_stage& s, const rule_tables& rt, std::span<const rule_set> sets, const message& m,
                     const rule_context& ctx, proxy_stats& st, std::span<char> buf, message& into) noexcept
{
    switch (apply_rules(rt, sets, m, ctx, s.work, {st.rule_hits.data(), st.rule_failures.data()}, buf, into)) {
    case rule_outcome::unchanged: return &m;
    case rule_outcome::rewritten: st.add(proxy_counter::rules_rewritten); return &into;
    case rule_outcome::too_long: st.add(proxy_counter::rules_too_long); return &m;
    case rule_outcome::as_edits: break;  // apply_rules never answers it
    }
    return &m;
}

}  // namespace

bool any_in(const proxy_tables& t, uint16_t trunk, uint32_t from_peer) noexcept
{
    if (!t.rules) return false;
    const rule_tables& rt = *t.rules;
    if (trunk < rt.trunk_in.size() && rt.trunk_in[trunk].count != 0) return true;
    const std::size_t region = from_peer < t.peers.size() ? t.peers[from_peer].region : none;
    return region < rt.region_in.size() && rt.region_in[region].count != 0;
}

bool any_out(const proxy_tables& t, uint32_t p) noexcept
{
    if (!t.rules || p >= t.peers.size()) return false;
    std::array<rule_set, 2> sets{};
    return pick(t.rules->region_out, t.peers[p].region, t.rules->trunk_out, t.peers[p].trunk, sets) != 0;
}

const message* apply_in(rules_stage& s, const msg_ctx& c) noexcept
{
    if (!c.t.rules) return c.m;
    const rule_tables& rt = *c.t.rules;
    const uint32_t from = c.t.find_peer(c.in.src.addr, c.in.src.port);
    const peer* pe = from != no_peer ? &c.t.peers[from] : nullptr;
    std::array<rule_set, 2> sets{};
    const std::size_t n = pick(rt.trunk_in, c.in.trunk, rt.region_in, pe != nullptr ? pe->region : none, sets);
    if (n == 0) return c.m;
    char addr[max_address_text];
    const rule_context ctx{trunk_name(c.t, c.in.trunk, addr), pe != nullptr ? std::string_view(pe->name) : std::string_view{}};
    return apply(s, rt, {sets.data(), n}, *c.m, ctx, c.stats, s.in_buf, s.in_msg);
}

namespace {

/// The outbound rule sets toward peer index `p` (its region's, then its trunk's) and what
/// their variables stand for (`addr`: room for the trunk's address); how many there are.
std::size_t out_sets(const call_env& e, uint32_t p, std::array<rule_set, 2>& sets, std::span<char> addr,
                     rule_context& ctx) noexcept
{
    if (!e.t.rules || p >= e.t.peers.size()) return 0;
    const peer& pe = e.t.peers[p];
    const std::size_t n = pick(e.t.rules->region_out, pe.region, e.t.rules->trunk_out, pe.trunk, sets);
    if (n != 0) ctx = rule_context{trunk_name(e.t, pe.trunk, addr), pe.name};
    return n;
}

}  // namespace

const message& apply_out(rules_stage& s, const call_env& e, uint32_t p, const message& m) noexcept
{
    std::array<rule_set, 2> sets{};
    char addr[max_address_text];
    rule_context ctx;
    const std::size_t n = out_sets(e, p, sets, addr, ctx);
    if (n == 0) return m;
    return *apply(s, *e.t.rules, {sets.data(), n}, m, ctx, e.stats, s.out_buf, s.out_msg);
}

const message& apply_out_edits(rules_stage& s, const call_env& e, uint32_t p, const message& m, edits& ed) noexcept
{
    std::array<rule_set, 2> sets{};
    char addr[max_address_text];
    rule_context ctx;
    const std::size_t n = out_sets(e, p, sets, addr, ctx);
    if (n == 0) return m;
    proxy_stats& st = e.stats;
    switch (apply_rules_as_edits(*e.t.rules, {sets.data(), n}, m, ctx, s.work,
                                 {st.rule_hits.data(), st.rule_failures.data()}, s.out_buf, s.out_msg, s.out_edits)) {
    case rule_outcome::unchanged: return m;
    case rule_outcome::as_edits:
        st.add(proxy_counter::rules_rewritten);
        ed.lines = s.out_edits.view();
        return m;
    case rule_outcome::rewritten: st.add(proxy_counter::rules_rewritten); return s.out_msg;
    case rule_outcome::too_long: st.add(proxy_counter::rules_too_long); return m;
    }
    return m;
}

}  // namespace sbc::sip::rules
