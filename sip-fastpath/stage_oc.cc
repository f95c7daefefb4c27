// The RFC 7339 overload control stage (stage_oc.h). Worker only.
#include "sip-fastpath/stage_oc.h"

#include "sip-fastpath/proxy_ids.h"

namespace sbc::sip::oc {

bool stamp(oc_stage& s, const message& m, const via& v, via_splice& out, proxy_stats& st) noexcept
{
    const std::string_view text = s.server.stamp();  // empty (one load) while there is nothing to say
    if (text.empty() || !oc_advertised(m.raw, v, out)) return false;
    out.text = text;
    st.add(proxy_counter::oc_stamped);
    return true;
}

bool stamp_relayed(oc_stage& s, const message& m, via_splice& out, proxy_stats& st) noexcept
{
    const std::string_view text = s.server.stamp();
    if (text.empty()) return false;
    via client;
    if (!second_via(m, client) || !oc_advertised(m.raw, client, out)) return false;
    out.text = text;
    st.add(proxy_counter::oc_stamped);
    return true;
}

void from_peer(oc_stage& s, const msg_ctx& c) noexcept
{
    const message& m = *c.m;
    if (!c.t.oc.advertise || !m.has_top_via) return;
    oc_feedback f;
    const oc_read r = read_oc_feedback(m.raw, m.top_via.params, f);
    if (r == oc_read::none) return;
    // Only in our own Via (a branch we minted: we advertised there), from one of our peers.
    const std::string_view branch = m.text(m.top_via.branch);
    if (!branch.starts_with(branch_stateful) && !branch.starts_with(branch_stateless)) return;
    const uint32_t p = c.t.find_peer(c.in.src.addr, c.in.src.port);
    if (p == no_peer) return;
    if (r == oc_read::invalid) {
        c.stats.add(proxy_counter::oc_invalid);
        return;
    }
    c.stats.add(proxy_counter::oc_feedback);
    const uint32_t id = c.t.peers[p].id;
    if (!s.server.news(id, f.reduction, f.validity_ms)) return;
    peer_event ev{peer_event_kind::overload, failure_cause::none, 0, id};
    ev.oc_reduction = f.reduction;
    ev.oc_validity_ms = f.validity_ms;
    ev.oc_seq = f.seq;
    ev.has_oc_seq = f.has_seq;
    c.out.event(ev);
}

}  // namespace sbc::sip::oc
