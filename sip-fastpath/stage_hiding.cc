// The topology hiding stage (stage_hiding.h; the encodings are topology_hiding.h). Worker
// only: no heap, locks or system calls.
#include "sip-fastpath/stage_hiding.h"

#include <cstring>

#include "sip-fastpath/call_targets.h"
#include "sip-fastpath/proxy_ids.h"
#include "sip-fastpath/retarget.h"
#include "sip-fastpath/sip_writer.h"

namespace sbc::sip::hiding {

namespace {

/// The bytes `w` holds so far.
std::size_t written(const writer& w) noexcept { return static_cast<std::size_t>(w.p - w.begin); }

/// The separator before a list value: none before the first.
void sep(writer& w) noexcept
{
    if (w.p != w.begin) w.put(", ");
}

/// A Record-Route value of ours without its ;sbc-th= parameter.
void put_without_th(writer& s, std::string_view v) noexcept
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
    writer ab{std::span<char>(above)};
    for (std::size_t i = 0; i < first_ours; ++i) {
        sep(ab);
        ab.put(m.text(vals[i]));
    }
    char enc[th_max_encoded];
    std::size_t el = 0;
    if (hide_others && written(ab) != 0) {
        el = !ab.full ? th_encode(enc, {above, written(ab)}, t.hiding_key) : 0;
        if (el == 0) {
            too_big = true;
            return 0;
        }
    }
    writer s{std::span<char>(th.rr)};
    for (std::size_t i = 0; i < n; ++i) {
        if (i < first_ours && hide_others) continue;
        const std::string_view v = m.text(vals[i]);
        sep(s);
        if (!ours[i]) {
            s.put(v);
        } else if (i == first_ours && el != 0) {
            char plain[max_record_route_size + 64];
            writer p{std::span<char>(plain)};
            put_without_th(p, v);
            char with[max_record_route_size + 64 + th_max_encoded];
            const std::size_t wl = !p.full ? add_th_param(with, {plain, written(p)}, {enc, el}) : 0;
            if (wl == 0) s.full = true;
            s.put({with, wl});
        } else {
            put_without_th(s, v);
        }
        // The route set our entries hid comes right after the last of ours.
        if (ours[i] && (i + 1 == n || !ours[i + 1]) && !restored.empty()) {
            sep(s);
            s.put(restored);
            restored = {};
        }
    }
    if (s.full) {
        too_big = true;
        return 0;
    }
    return written(s);
}

}  // namespace


/// The name we present on our endpoint `local` (its trunk's FQDN), or "" (the address).
std::string_view host_of(const proxy_tables& t, const endpoint& local) noexcept
{
    for (const trunk& tr : t.trunks)
        if (tr.owns(local.addr) && tr.has_port(local.port)) return tr.fqdn;
    return {};
}

/// Whether a Request-URI names the SBC (retarget.h: a trunk's address or FQDN, with a port of
/// that trunk), read from the parser's Request-URI.
bool names_us(const proxy_tables& t, const message& m) noexcept
{
    return m.is_request() && !m.errors.has(error::bad_request_uri) && names_sbc(t, m.raw, m.ruri);
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

bool on_attempt(const call_env& e, uint32_t p, const message& inv, std::string_view branch, const endpoint& local,
                const endpoint& caller, edits& ed, th_scratch& th) noexcept
{
    const proxy_tables& t = e.t;
    const uint64_t key = t.hiding_key;
    // One Via, ours: the caller and its Vias inside it.
    const std::size_t vl = write_hidden_via(th.via, local, branch, caller, inv, key, t.oc.advertise);
    if (vl == 0) {
        e.stats.add(proxy_counter::th_too_big);
        return false;
    }
    ed.push_via = {th.via.data(), vl};
    ed.drop_vias = true;
    // Our Record-Route(s) alone: the caller's route set inside the top one (the callee's side).
    if (inv.h_record_route != no_header && !ed.record_route.empty()) {
        char joined[th_max_plain];
        const std::size_t jl = join_record_routes(inv, joined);
        char enc[th_max_encoded];
        const std::size_t el = jl != 0 ? th_encode(enc, {joined, jl}, key) : 0;
        const std::size_t rl = el != 0 ? add_th_param(th.rr, ed.record_route, {enc, el}) : 0;
        if (rl == 0) {
            e.stats.add(proxy_counter::th_too_big);
            return false;
        }
        ed.record_route = {th.rr.data(), rl};
        ed.drop_record_routes = true;
    }
    // Our Contact, the caller's inside it; the name we present to that peer, as our Record-Route.
    if (const std::string_view c = contact_uri(inv); !c.empty()) {
        std::string_view host;
        const peer& pe = t.peers[p];
        if (pe.region < t.regions.size()) host = t.regions[pe.region].fqdn;
        if (host.empty() && pe.trunk < t.trunks.size()) host = t.trunks[pe.trunk].fqdn;
        const std::size_t cl = write_hidden_contact(th.contact, local, host, e.worker, c, key);
        if (cl == 0) {
            e.stats.add(proxy_counter::th_too_big);
            return false;
        }
        ed.contact = {th.contact.data(), cl};
    }
    return true;
}

bool restore_vias(const call_env& e, const message& m, endpoint* dst, edits& ed, th_scratch& th) noexcept
{
    hidden_via hv;
    switch (read_hidden_via(m, e.t.hiding_key, th.vias, hv)) {
    case th_found::absent: return true;
    case th_found::bad: e.stats.add(proxy_counter::th_undecodable); return false;
    case th_found::ok:
        ed.push_via = hv.vias;  // where ours was (pop_via): the Vias it replaced
        if (dst != nullptr) *dst = hv.src;
        return true;
    }
    return true;
}

bool hide_response(const call_env& e, const message& m, const endpoint& our, bool hide_to, edits& ed,
                   th_scratch& th) noexcept
{
    const proxy_tables& t = e.t;
    if (m.h_record_route != no_header) {
        bool ours_hid = false;  // a cheap look first: most responses carry nothing of ours
        for (unsigned i = m.h_record_route; i < m.header_count && !ours_hid; ++i)
            ours_hid = m.headers[i].id == header_id::record_route && holds_th(m.text(m.headers[i].value));
        // Nothing of ours hides anything and nothing of the sender's side is above ours (one
        // value, ours or not, or ours on top): the set stays as it is.
        if (ours_hid || (hide_to && !one_route_value(m) && !top_route_ours(t, m))) {
            bool bad = false, too_big = false;
            const std::size_t n = route_set(t, m, hide_to, th, bad, too_big);
            if (bad || too_big) {
                e.stats.add(bad ? proxy_counter::th_undecodable : proxy_counter::th_too_big);
                return false;
            }
            if (n != 0) {
                ed.record_route = {th.rr.data(), n};
                ed.drop_record_routes = true;
            }
        }
    }
    if (hide_to) {
        if (const std::string_view c = contact_uri(m); !c.empty()) {
            const std::size_t cl = write_hidden_contact(th.contact, our, host_of(t, our), e.worker, c, t.hiding_key);
            if (cl == 0) {
                e.stats.add(proxy_counter::th_too_big);
                return false;
            }
            ed.contact = {th.contact.data(), cl};
        }
    }
    return true;
}

uint8_t on_dialog_up(hiding_stage& s, stage_mask stages, const message& ok, uint32_t d) noexcept
{
    uint8_t hide = 0;
    if ((stages & stage::hide_caller) != 0) hide |= dialog_entry::th_caller;
    if ((stages & stage::hide_callee) != 0) hide |= dialog_entry::th_callee;
    if (hide == 0) return 0;
    th_target& tg = s.targets[d];
    const std::string_view c = contact_uri(ok);
    tg.len = c.size() <= tg.uri.size() ? static_cast<uint8_t>(c.size()) : 0;
    std::memcpy(tg.uri.data(), c.data(), tg.len);
    const uri* u = first_contact_uri(ok);  // parsed by contact_uri: read, not parsed again
    tg.routable = tg.len != 0 && u != nullptr && parsed_uri_target(ok.raw, *u, tg.next);
    return hide;
}

bool kept_target(const hiding_stage& s, uint32_t d, std::string_view ruri, endpoint& next) noexcept
{
    const th_target& tg = s.targets[d];
    if (!tg.routable || ruri != std::string_view(tg.uri.data(), tg.len)) return false;
    next = tg.next;
    return true;
}

std::string_view target_of(const hiding_stage& s, uint32_t d) noexcept
{
    const th_target& tg = s.targets[d];
    return {tg.uri.data(), tg.len};
}

bool decode_routes(const call_env& e, std::string_view enc, th_scratch& th, std::string_view& routes) noexcept
{
    const int k = th_decode(enc, e.t.hiding_key, th.routes);
    if (k < 0) return false;
    routes = {th.routes.data(), static_cast<std::size_t>(k)};
    return true;
}

bool decode_ruri(const call_env& e, const message& m, th_scratch& th, std::string_view& ruri) noexcept
{
    bool found = false;
    const std::string_view enc = param_value(m.ruri.params.in(m.raw), th_param, found);
    if (!found) return true;
    const int k = th_decode(enc, e.t.hiding_key, th.ruri);
    if (k < 0) return false;
    ruri = {th.ruri.data(), static_cast<std::size_t>(k)};
    return true;
}

bool hide_request(const call_env& e, const message& m, const endpoint& local, std::string_view branch,
                  const endpoint& src, bool advertise, edits& ed, th_scratch& th) noexcept
{
    const uint64_t key = e.t.hiding_key;
    // An ACK is never answered (RFC 3261 17.1.1.3, 13.2.2.4): nothing comes back to restore
    // Vias into, so ours carries neither them nor the sender, and nothing is encoded.
    const std::size_t vl = m.req_method == method::ack
                               ? without_via_source({th.via.data(), write_via(th.via, local, branch, src, advertise)})
                               : write_hidden_via(th.via, local, branch, src, m, key, advertise);
    const std::string_view c = contact_uri(m);
    const std::size_t cl = c.empty() ? 0 : write_hidden_contact(th.contact, local, host_of(e.t, local), e.worker, c, key);
    if (vl == 0 || (!c.empty() && cl == 0)) {
        e.stats.add(proxy_counter::th_too_big);
        return false;
    }
    ed.push_via = {th.via.data(), vl};
    ed.drop_vias = true;
    ed.drop_record_routes = true;
    if (cl != 0) ed.contact = {th.contact.data(), cl};
    return true;
}

}  // namespace sbc::sip::hiding
