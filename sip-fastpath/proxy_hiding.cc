// Topology hiding in the proxy ([[trunk]] topology_hiding; the encodings are in
// topology_hiding.h): the INVITE toward a hidden side, the responses coming back, the
// in-dialog requests of a hidden dialog (routed by our Route, or sent to our address or to
// the Contact we wrote by a UA that ignores Record-Route), and what a hidden dialog keeps.
// A side is hidden when its trunk hides: the caller's, the trunk the call arrived on; the
// callee's, its peer's trunk. Worker only: no heap, locks or system calls.
#include <cstring>

#include "sip-fastpath/proxy_ids.h"
#include "sip-fastpath/proxy_internal.h"
#include "sip-fastpath/sip_editor.h"
#include "sip-fastpath/topology_hiding.h"

namespace sbc::sip {

namespace {

bool trunk_hides(const proxy_tables& t, uint16_t trunk) noexcept
{
    return trunk < t.trunks.size() && t.trunks[trunk].topology_hiding;
}

bool same_host_name(std::string_view a, std::string_view b) noexcept
{
    if (a.size() != b.size() || a.empty()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

/// The name we present on our endpoint `local` (its trunk's FQDN), or "" (the address).
std::string_view host_of(const proxy_tables& t, const endpoint& local) noexcept
{
    for (const trunk& tr : t.trunks)
        if (tr.address == local.addr && tr.has_port(local.port)) return tr.fqdn;
    return {};
}

/// Whether a Request-URI names the SBC: a trunk's address or FQDN, with a port of that trunk.
bool names_us(const proxy_tables& t, const message& m) noexcept
{
    const std::string_view host = m.ruri.host.in(m.raw);
    const uint16_t port = m.ruri.port != 0 ? m.ruri.port : static_cast<uint16_t>(5060);
    endpoint ep;
    const bool literal = uri_target(m.raw, m.request_uri, ep);
    for (const trunk& tr : t.trunks) {
        if (!tr.has_port(port)) continue;
        if (literal ? tr.address == ep.addr : same_host_name(tr.fqdn, host)) return true;
    }
    return false;
}

/// Appends to a bounded buffer; `ok` turns false when something does not fit.
struct sink {
    std::span<char> out;
    std::size_t n = 0;
    bool ok = true;
    void put(std::string_view s) noexcept
    {
        if (!ok || n + s.size() > out.size()) {
            ok = false;
            return;
        }
        std::memcpy(out.data() + n, s.data(), s.size());
        n += s.size();
    }
    void sep() noexcept
    {
        if (n != 0) put(", ");
    }
};

/// A Record-Route value of ours without its ;sbc-th= parameter.
void put_without_th(sink& s, std::string_view v) noexcept
{
    const std::size_t at = v.find(";sbc-th=");
    if (at == std::string_view::npos) {
        s.put(v);
        return;
    }
    s.put(v.substr(0, at));
    const std::size_t end = v.find_first_of(";>", at + 1);
    if (end != std::string_view::npos) s.put(v.substr(end));
}

/// The first value of a route set in its own buffer `routes`, as a next hop; false when it
/// names no address.
bool first_route(std::string_view routes, endpoint& next) noexcept
{
    value_iter it(routes, span{0, static_cast<uint16_t>(routes.size())});
    span v;
    error err = error::none;
    if (!it.next(v, err)) return false;
    name_addr na;
    return parse_name_addr(routes, v, na, error::bad_route) == error::none && uri_target(routes, na.uri_text, next);
}

/// Whether `m` has a single Record-Route value (one line, no comma: a comma inside a URI
/// only sends the set the longer way).
bool one_route_value(const message& m) noexcept
{
    unsigned lines = 0;
    for (unsigned i = m.h_record_route; i < m.header_count; ++i)
        if (m.headers[i].id == header_id::record_route && ++lines > 1) return false;
    const std::string_view v = m.text(m.headers[m.h_record_route].value);
    return std::memchr(v.data(), ',', v.size()) == nullptr;
}

/// Whether the first Record-Route value of `m` is ours.
bool top_route_ours(const proxy_tables& t, const message& m) noexcept
{
    value_iter it(m.raw, m.headers[m.h_record_route].value);
    span v;
    error err = error::none;
    name_addr na;
    endpoint ep;
    return it.next(v, err) && parse_name_addr(m.raw, v, na, error::bad_route) == error::none &&
           is_our_route(t, m.raw, na.uri_text, ep);
}

/// The Record-Route set a response shows its receiver: ours without what we encoded in it,
/// the route set our entry hid given back below ours, and, when `hide_others`, the entries
/// above ours (the sender's side) encoded into our first entry instead of in clear. Into
/// th.rr; its length, 0 when nothing of ours is in it (left as it is); `bad` when ours does
/// not decode, `too_big` when it does not fit.
std::size_t route_set(const proxy_tables& t, const message& m, bool hide_others, th_scratch& th, bool& bad,
                      bool& too_big) noexcept
{
    constexpr std::size_t max_values = 24;
    std::array<span, max_values> vals{};
    std::array<bool, max_values> ours{};
    std::size_t n = 0, first_ours = max_values;
    std::string_view restored;
    for (unsigned i = m.h_record_route; i < m.header_count; ++i) {
        if (m.headers[i].id != header_id::record_route) continue;
        value_iter it(m.raw, m.headers[i].value);
        span v;
        error err = error::none;
        while (it.next(v, err)) {
            if (n == max_values) {
                too_big = true;
                return 0;
            }
            name_addr na;
            endpoint ep;
            route_th rt;
            ours[n] = parse_name_addr(m.raw, v, na, error::bad_route) == error::none &&
                      is_our_route(t, m.raw, na.uri_text, ep, &rt);
            if (ours[n]) {
                if (first_ours == max_values) first_ours = n;
                if (rt.found) {
                    const int k = th_decode(rt.value, t.hiding_key, th.routes);
                    if (k < 0) {
                        bad = true;
                        return 0;
                    }
                    restored = {th.routes.data(), static_cast<std::size_t>(k)};
                }
            }
            vals[n++] = v;
        }
    }
    if (first_ours == max_values) return 0;
    // The sender's side: the entries above ours, hidden into our first one when asked.
    char above[th_max_plain];
    sink ab{above};
    for (std::size_t i = 0; i < first_ours; ++i) {
        ab.sep();
        ab.put(m.text(vals[i]));
    }
    char enc[th_max_encoded];
    std::size_t el = 0;
    if (hide_others && ab.n != 0) {
        el = ab.ok ? th_encode(enc, {above, ab.n}, t.hiding_key) : 0;
        if (el == 0) {
            too_big = true;
            return 0;
        }
    }
    sink s{th.rr};
    for (std::size_t i = 0; i < n; ++i) {
        if (i < first_ours && hide_others) continue;
        const std::string_view v = m.text(vals[i]);
        s.sep();
        if (!ours[i]) {
            s.put(v);
        } else if (i == first_ours && el != 0) {
            char plain[max_record_route_size + 64];
            sink p{plain};
            put_without_th(p, v);
            char with[max_record_route_size + 64 + th_max_encoded];
            const std::size_t wl = p.ok ? add_th_param(with, {plain, p.n}, {enc, el}) : 0;
            if (wl == 0) s.ok = false;
            s.put({with, wl});
        } else {
            put_without_th(s, v);
        }
        // The route set our entries hid comes right after the last of ours.
        if (ours[i] && (i + 1 == n || !ours[i + 1]) && !restored.empty()) {
            s.sep();
            s.put(restored);
            restored = {};
        }
    }
    if (!s.ok) {
        too_big = true;
        return 0;
    }
    return s.n;
}

}  // namespace

bool proxy::th_invite(const proxy_tables& t, uint32_t slot, const message& inv, std::string_view branch,
                      const endpoint& local, edits& e, th_scratch& th) noexcept
{
    setup& s = setups_->at(slot);
    const uint32_t pi = t.find_peer(s.peer.addr, s.peer.port);
    s.th_hidden = pi != no_peer && trunk_hides(t, t.peers[pi].trunk);
    if (!s.th_hidden) return true;
    const uint64_t key = t.hiding_key;
    // One Via, ours: the caller and its Vias inside it.
    const std::size_t vl = write_hidden_via(th.via, local, branch, s.caller, inv, key, t.oc.advertise);
    if (vl == 0) {
        stats_->add(proxy_counter::th_too_big);
        return false;
    }
    e.push_via = {th.via.data(), vl};
    e.drop_vias = true;
    // Our Record-Route(s) alone: the caller's route set inside the top one (the callee's side).
    if (inv.h_record_route != no_header && !e.record_route.empty()) {
        char joined[th_max_plain];
        const std::size_t jl = join_record_routes(inv, joined);
        char enc[th_max_encoded];
        const std::size_t el = jl != 0 ? th_encode(enc, {joined, jl}, key) : 0;
        const std::size_t rl = el != 0 ? add_th_param(th.rr, e.record_route, {enc, el}) : 0;
        if (rl == 0) {
            stats_->add(proxy_counter::th_too_big);
            return false;
        }
        e.record_route = {th.rr.data(), rl};
        e.drop_record_routes = true;
    }
    // Our Contact, the caller's inside it; the name we present to that peer, as our Record-Route.
    if (const std::string_view c = contact_uri(inv); !c.empty()) {
        std::string_view host;
        const peer& pe = t.peers[pi];
        if (pe.region < t.regions.size()) host = t.regions[pe.region].fqdn;
        if (host.empty() && pe.trunk < t.trunks.size()) host = t.trunks[pe.trunk].fqdn;
        const std::size_t cl = write_hidden_contact(th.contact, local, host, worker_, c, key);
        if (cl == 0) {
            stats_->add(proxy_counter::th_too_big);
            return false;
        }
        e.contact = {th.contact.data(), cl};
    }
    return true;
}

bool proxy::th_response(const proxy_tables& t, const endpoint& local, int hide_to, endpoint* dst, edits& e,
                        th_scratch& th) noexcept
{
    const message& m = *msg_;
    hidden_via hv;
    switch (read_hidden_via(m, t.hiding_key, th.vias, hv)) {
    case th_found::absent: break;
    case th_found::bad: stats_->add(proxy_counter::th_undecodable); return false;
    case th_found::ok:
        e.push_via = hv.vias;  // where ours was (pop_via): the Vias it replaced
        if (dst != nullptr) *dst = hv.src;
        break;
    }
    endpoint our = local;
    if (hide_to < 0) {
        // Relayed statelessly: the dialog says whether its receiver's side is hidden.
        hide_to = 0;
        const uint32_t d = dst != nullptr ? dialogs_->find(hash_bytes(m.call_id())) : none_slot;
        if (d != none_slot && dialogs_->table.at(d).hide != 0) {
            const dialog_table::entry& de = dialogs_->table.at(d);
            const bool to_caller = de.caller.same_place(*dst);
            hide_to = (de.hide & (to_caller ? dialog_table::entry::th_caller : dialog_table::entry::th_callee)) != 0;
            const endpoint& leg = to_caller ? de.caller_local : de.callee_local;
            if (leg.port != 0) our = leg;
        }
    }
    if (m.h_record_route != no_header) {
        bool ours_hid = false;  // a cheap look first: most responses carry nothing of ours
        for (unsigned i = m.h_record_route; i < m.header_count && !ours_hid; ++i)
            ours_hid = m.headers[i].id == header_id::record_route && holds_th(m.text(m.headers[i].value));
        // Nothing of ours hides anything and nothing of the sender's side is above ours (one
        // value, ours or not, or ours on top): the set stays as it is.
        if (ours_hid || (hide_to != 0 && !one_route_value(m) && !top_route_ours(t, m))) {
            bool bad = false, too_big = false;
            const std::size_t n = route_set(t, m, hide_to != 0, th, bad, too_big);
            if (bad || too_big) {
                stats_->add(bad ? proxy_counter::th_undecodable : proxy_counter::th_too_big);
                return false;
            }
            if (n != 0) {
                e.record_route = {th.rr.data(), n};
                e.drop_record_routes = true;
            }
        }
    }
    if (hide_to != 0) {
        if (const std::string_view c = contact_uri(m); !c.empty()) {
            const std::size_t cl = write_hidden_contact(th.contact, our, host_of(t, our), worker_, c, t.hiding_key);
            if (cl == 0) {
                stats_->add(proxy_counter::th_too_big);
                return false;
            }
            e.contact = {th.contact.data(), cl};
        }
    }
    return true;
}

void proxy::th_dialog_started(uint32_t slot, uint32_t d) noexcept
{
    if (tables_ == nullptr) return;
    const proxy_tables& t = *tables_;
    const setup& s = setups_->at(slot);
    dialog_table::entry& de = dialogs_->table.at(d);
    uint8_t hide = 0;
    if (trunk_hides(t, s.trunk)) hide |= dialog_table::entry::th_caller;
    const uint32_t pi = t.find_peer(s.peer.addr, s.peer.port);
    if (pi != no_peer && trunk_hides(t, t.peers[pi].trunk)) hide |= dialog_table::entry::th_callee;
    de.hide = hide;
    if (hide == 0) return;
    th_target& tg = th_targets_[d];
    const std::string_view c = contact_uri(*msg_);
    tg.len = c.size() <= tg.uri.size() ? static_cast<uint8_t>(c.size()) : 0;
    std::memcpy(tg.uri.data(), c.data(), tg.len);
}

bool proxy::th_forward(const proxy_tables& t, const peer_health& h, const sip_input& a, uint32_t dl,
                       outbox& out) noexcept
{
    const message& m = *msg_;
    if (dl == none_slot || dialogs_->table.at(dl).hide == 0) return false;
    const dialog_table::entry& de = dialogs_->table.at(dl);
    const uint64_t call = dialogs_->table.key(dl);  // the Call-ID hash the dialog is kept by
    const uint64_t key = t.hiding_key;
    th_scratch th;
    // Our Route entries on top go (as forward_in_dialog pops them); one may hold the route set
    // of the side the request goes to, which it hid from the sender.
    constexpr unsigned max_ours = 4;
    unsigned ours = 0;
    endpoint via_local;
    endpoint next;
    bool have_next = false;
    bool route_left = false;
    bool bad = false;
    std::string_view routes;
    for (unsigned i = m.h_route; m.h_route != no_header && i < m.header_count && !route_left; ++i) {
        if (m.headers[i].id != header_id::route) continue;
        value_iter it(m.raw, m.headers[i].value);
        span v;
        error err = error::none;
        while (it.next(v, err)) {
            name_addr na;
            const bool parsed = parse_name_addr(m.raw, v, na, error::bad_route) == error::none;
            endpoint ep;
            route_th rt;
            if (parsed && ours < max_ours && is_our_route(t, m.raw, na.uri_text, ep, &rt)) {
                ++ours;
                via_local = ep;
                if (rt.found) {
                    const int k = th_decode(rt.value, key, th.routes);
                    bad = bad || k < 0;
                    if (k >= 0) routes = {th.routes.data(), static_cast<std::size_t>(k)};
                }
                continue;
            }
            route_left = true;
            have_next = parsed && uri_target(m.raw, na.uri_text, next);
            break;
        }
        if (err != error::none) route_left = true;
    }
    if (m.h_route != no_header && ours == 0) return false;  // not routed to us: not ours to handle
    // The Request-URI: the Contact we wrote gives back the one it replaced.
    bool found = false;
    const std::string_view ruri_enc = param_value(m.ruri.params.in(m.raw), th_param, found);
    std::string_view ruri;
    if (found) {
        const int k = th_decode(ruri_enc, key, th.ruri);
        bad = bad || k < 0;
        if (k >= 0) ruri = {th.ruri.data(), static_cast<std::size_t>(k)};
    }
    if (bad) {
        stats_->add(proxy_counter::th_undecodable);
        if (m.req_method != method::ack) respond(a, 400, "Bad Request (unknown sbc-th)", out);
        return true;
    }
    // Which side sends it: the caller (its signalling address or Contact host), or the callee
    // (a peer, or the callee's Contact host).
    const bool from_caller = a.src.addr == de.caller.addr ||
                             (!de.caller_contact.is_unspecified() && a.src.addr == de.caller_contact);
    if (!from_caller && !t.is_peer_address(a.src.addr) && !de.party(a.src.addr)) {
        stats_->add(proxy_counter::in_dialog_refused);
        if (m.req_method != method::ack) respond(a, 403, "Forbidden (not a party of this dialog)", out);
        return true;
    }
    if (ours == 0 && ruri.empty()) {
        // Sent to our own address by a UA that ignores Record-Route and Contact: the other
        // side's target, the callee's Contact (kept) or the caller's signalling address.
        if (!names_us(t, m)) return false;
        if (from_caller) {
            const th_target& tg = th_targets_[dl];
            if (tg.len == 0) return false;  // nothing kept: 481, as before
            ruri = {tg.uri.data(), tg.len};
        } else {
            sink s{th.ruri};
            s.put(de.caller.proto == transport::tls ? "sips:" : "sip:");
            char ep[64];
            s.put({ep, format_endpoint(de.caller, ep)});
            if (de.caller.proto == transport::tcp) s.put(";transport=tcp");
            ruri = {th.ruri.data(), s.ok ? s.n : 0};
        }
    }
    if (!route_left) {
        if (!routes.empty()) {
            have_next = first_route(routes, next);
        } else {
            const std::string_view target = ruri.empty() ? m.text(m.request_uri) : ruri;
            have_next = uri_target(target, span{0, static_cast<uint16_t>(target.size())}, next);
        }
    }
    if (!from_caller && is_stream(de.caller.proto)) {
        next = de.caller;  // toward a caller on a stream: its connection (as forward_in_dialog)
        have_next = true;
    }
    if (!have_next || !next.addr.is_v4()) {
        stats_->add(proxy_counter::rejected);
        if (m.req_method != method::ack) respond(a, 404, "Not Found (next hop is not an IPv4 address)", out);
        return true;
    }
    if (!t.is_peer_address(a.src.addr) && !t.is_peer_address(next.addr) && !de.party(next.addr)) {
        stats_->add(proxy_counter::in_dialog_refused);
        if (m.req_method != method::ack) respond(a, 403, "Forbidden (next hop is not in this dialog)", out);
        return true;
    }
    stats_->add(ours != 0 ? proxy_counter::in_dialog : proxy_counter::th_no_route);
    out_message* d = out.next();
    if (d == nullptr) {
        stats_->add(proxy_counter::outbox_full);
        return true;
    }
    if (ours == 0) {
        via_local = from_caller ? de.callee_local : de.caller_local;
        if (via_local.port == 0) via_local = a.local;
    }
    const endpoint local = leg_local(via_local, next);
    char branch[32];
    const uint64_t bkey = upstream_key(m, a.src);
    const std::string_view br(branch, write_stateless_branch(branch, bkey));
    const bool advertise = t.oc.advertise && t.is_peer_address(next.addr);
    const bool hide_to =
        (de.hide & (from_caller ? dialog_table::entry::th_callee : dialog_table::entry::th_caller)) != 0;
    edits e;
    if (hide_to) {
        const std::size_t vl = write_hidden_via(th.via, local, br, a.src, m, key, advertise);
        const std::string_view c = contact_uri(m);
        const std::size_t cl =
            c.empty() ? 0 : write_hidden_contact(th.contact, local, host_of(t, local), worker_, c, key);
        if (vl == 0 || (!c.empty() && cl == 0)) {
            stats_->add(proxy_counter::th_too_big);
            if (m.req_method != method::ack) respond(a, 513, {}, out);
            return true;
        }
        e.push_via = {th.via.data(), vl};
        e.drop_vias = true;
        e.drop_record_routes = true;
        if (cl != 0) e.contact = {th.contact.data(), cl};
    } else {
        e.push_via = {th.via.data(), write_via(th.via, local, br, a.src, advertise)};
    }
    e.pop_routes = static_cast<uint8_t>(ours);
    e.push_route = routes;
    e.request_uri = ruri;
    e.decrement_max_forwards = true;
    if (m.req_method == method::bye) dialog_bye_seen(call, a.now_ms, a.src);
    if (!media_body(m, call, from_caller ? media_leg::b : media_leg::a, e)) {
        respond(a, 488, "Not Acceptable Here (no media ports)", out);
        return true;
    }
    const write_result r = edit_out(m, e, out, *d);  // large messages too (proxy_large.cc)
    if (!r.ok()) return true;
    out.commit(local, next, r.len);
    pending_track(t, h, a, next, bkey);
    return true;
}

}  // namespace sbc::sip
