// Header and number rules in the proxy (sip-fastpath/sip_rules.h): inbound rules on a new
// INVITE or other out-of-dialog request before it is routed, outbound rules on each copy sent
// to a peer (every attempt of a call, every retransmission). Worker only: no heap.
#include "sip-fastpath/proxy_rules.h"

#include "sip-fastpath/proxy_internal.h"

namespace sbc::sip {

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

}  // namespace

void proxy::rules_in(const proxy_tables& t, const sip_input& a) noexcept
{
    if (!t.rules) return;
    const rule_tables& rt = *t.rules;
    std::array<rule_set, 2> sets{};
    std::size_t n = 0;
    if (a.trunk < rt.trunk_in.size() && rt.trunk_in[a.trunk].count != 0) sets[n++] = rt.trunk_in[a.trunk];
    const uint32_t from = t.find_peer(a.src.addr, a.src.port);
    const peer* pe = from != no_peer ? &t.peers[from] : nullptr;
    if (pe != nullptr && pe->region < rt.region_in.size() && rt.region_in[pe->region].count != 0)
        sets[n++] = rt.region_in[pe->region];
    if (n == 0) return;
    char addr[max_address_text];
    rule_context ctx{trunk_name(t, a.trunk, addr), pe != nullptr ? std::string_view(pe->name) : std::string_view{}};
    rule_scratch& rs = *rules_;
    switch (apply_rules(rt, {sets.data(), n}, *msg_, ctx, rs.work, {stats_->rule_hits.data(), stats_->rule_failures.data()},
                        rs.in_buf, rs.in_msg)) {
    case rule_outcome::unchanged: break;
    case rule_outcome::rewritten:
        stats_->add(proxy_counter::rules_rewritten);
        msg_ = &rs.in_msg;
        break;
    case rule_outcome::too_long: stats_->add(proxy_counter::rules_too_long); break;
    }
}

const message& proxy::rules_out(const proxy_tables& t, uint32_t p, const message& m) noexcept
{
    if (!t.rules || p >= t.peers.size()) return m;
    const rule_tables& rt = *t.rules;
    const peer& pe = t.peers[p];
    std::array<rule_set, 2> sets{};
    std::size_t n = 0;
    if (pe.region < rt.region_out.size() && rt.region_out[pe.region].count != 0) sets[n++] = rt.region_out[pe.region];
    if (pe.trunk < rt.trunk_out.size() && rt.trunk_out[pe.trunk].count != 0) sets[n++] = rt.trunk_out[pe.trunk];
    if (n == 0) return m;
    char addr[max_address_text];
    rule_context ctx{trunk_name(t, pe.trunk, addr), pe.name};
    rule_scratch& rs = *rules_;
    switch (apply_rules(rt, {sets.data(), n}, m, ctx, rs.work, {stats_->rule_hits.data(), stats_->rule_failures.data()},
                        rs.out_buf, rs.out_msg)) {
    case rule_outcome::unchanged: return m;
    case rule_outcome::rewritten: stats_->add(proxy_counter::rules_rewritten); return rs.out_msg;
    case rule_outcome::too_long: stats_->add(proxy_counter::rules_too_long); return m;
    }
    return m;
}

}  // namespace sbc::sip
