// RFC 7339 overload control in the proxy: our feedback stamped into the Via of responses to
// clients that advertised `oc` (generated or relayed upstream), and peers' feedback in our
// Via of their responses passed to the control core as events. Worker only.
#include "sip-fastpath/proxy_ids.h"
#include "sip-fastpath/proxy_internal.h"

namespace sbc::sip {

bool proxy::oc_stamp(const message& m, const via& v, via_splice& out) noexcept
{
    const std::string_view text = oc_.stamp();  // empty (one load) while there is nothing to say
    if (text.empty() || !oc_advertised(m.raw, v, out)) return false;
    out.text = text;
    stats_->add(proxy_counter::oc_stamped);
    return true;
}

bool proxy::oc_stamp_relayed(via_splice& out) noexcept
{
    const std::string_view text = oc_.stamp();
    if (text.empty()) return false;
    via client;
    if (!second_via(*msg_, client) || !oc_advertised(msg_->raw, client, out)) return false;
    out.text = text;
    stats_->add(proxy_counter::oc_stamped);
    return true;
}

void proxy::oc_from_peer(const proxy_tables& t, const sip_input& a, outbox& out) noexcept
{
    const message& m = *msg_;
    if (!t.oc.advertise || !m.has_top_via) return;
    oc_feedback f;
    const oc_read r = read_oc_feedback(m.raw, m.top_via.params, f);
    if (r == oc_read::none) return;
    // Only in our own Via (a branch we minted: we advertised there), from one of our peers.
    const std::string_view branch = m.text(m.top_via.branch);
    if (!branch.starts_with(branch_stateful) && !branch.starts_with(branch_stateless)) return;
    const uint32_t p = t.find_peer(a.src.addr, a.src.port);
    if (p == no_peer) return;
    if (r == oc_read::invalid) {
        stats_->add(proxy_counter::oc_invalid);
        return;
    }
    stats_->add(proxy_counter::oc_feedback);
    const uint32_t id = t.peers[p].id;
    if (!oc_.news(id, f.reduction, f.validity_ms)) return;
    peer_event ev{peer_event_kind::overload, failure_cause::none, 0, id};
    ev.oc_reduction = f.reduction;
    ev.oc_validity_ms = f.validity_ms;
    ev.oc_seq = f.seq;
    ev.has_oc_seq = f.has_seq;
    out.event(ev);
}

}  // namespace sbc::sip
