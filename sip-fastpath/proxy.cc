// The proxy's tables, message dispatch, stateless and in-dialog routing, and timers.
// Call setup (INVITE and its responses) is in proxy_call.cc. Worker only.
#include <cstring>
#include <optional>

#include "sip-fastpath/proxy_cdr.h"
#include "sip-fastpath/proxy_ids.h"
#include "sip-fastpath/proxy_internal.h"
#include "sip-fastpath/proxy_pending.h"
#include "sip-fastpath/proxy_rules.h"
#include "sip-fastpath/sip_editor.h"
#include "sip-fastpath/sip_numbers.h"
#include "sip-fastpath/sip_response.h"
#include "sip-fastpath/sip_verdict.h"
#include "sip-fastpath/topology_hiding.h"

namespace sbc::sip {

namespace {

constexpr auto counter_texts = SBC_LIST_TEXTS(proxy_counter, SBC_PROXY_COUNTERS);

/// A sip/sips URI's port and transport: a `transport` parameter names the transport (a sips
/// URI means TLS), the port defaults to 5060 (5061 for sips). False for a transport we do
/// not speak (sctp, ws).
bool uri_port_transport(std::string_view raw, const uri& u, uint16_t& port, transport& proto) noexcept
{
    bool found = false;
    const std::string_view params = u.params.in(raw);
    const std::string_view tp = params.empty() ? std::string_view{} : param_value(params, "transport", found);
    const auto named = found ? parse_transport(tp) : std::optional<transport>{};
    if (found && !named) return false;
    const bool sips = u.scheme == uri_scheme::sips;
    port = u.port != 0 ? u.port : static_cast<uint16_t>(sips ? 5061 : 5060);
    proto = named ? *named : (sips ? transport::tls : transport::udp);
    return true;
}

/// The address literal of a parsed URI's host; nullopt for a name.
std::optional<ip_address> uri_address(std::string_view raw, const uri& u) noexcept
{
    // parse_uri classified the host already: a dotted quad goes straight to the IPv4 parser.
    const std::string_view host = u.host.in(raw);
    if (u.host_type == host_kind::ipv4) return parse_ipv4(host);
    if (u.host_type == host_kind::ipv6 && host.size() > 2)
        return parse_address(host.substr(1, host.size() - 2));  // without the brackets
    return std::nullopt;
}

/// URI host, port and transport as an endpoint; false when the host is not an address
/// literal (the fast path does no DNS). The connection is left to the send step.
bool parsed_uri_endpoint(std::string_view raw, const uri& u, endpoint& ep)
{
    const std::optional<ip_address> ip = uri_address(raw, u);
    if (!ip) return false;
    uint16_t port = 0;
    transport proto = transport::udp;
    if (!uri_port_transport(raw, u, port, proto)) return false;
    ep = endpoint{*ip, port, proto, 0};
    return true;
}

bool uri_endpoint(std::string_view raw, span uri_text, endpoint& ep)
{
    uri u;
    return parse_uri(raw, uri_text, u) && parsed_uri_endpoint(raw, u, ep);
}

bool same_name(std::string_view a, std::string_view b) noexcept
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

/// Whether a Route URI is one of our Record-Routes (RFC 3261 16.4): ";lr" and our worker
/// parameter, and a host and port of ours: the address and any port (any transport) of a
/// trunk, or the FQDN of a trunk or of a region with a port of a trunk its peers use. `local`
/// gets our endpoint it names (the trunk's address, the URI's port and transport): the last
/// of our entries names the leg the request leaves on.
bool our_route(const proxy_tables& t, std::string_view raw, span uri_text, endpoint& local,
               route_th* th = nullptr) noexcept
{
    uri u;
    if (!parse_uri(raw, uri_text, u) || (u.scheme != uri_scheme::sip && u.scheme != uri_scheme::sips)) return false;
    const std::string_view params = u.params.in(raw);
    bool found = false;
    if (th != nullptr) th->value = param_value(params, th_param, th->found);
    param_value(params, "lr", found);
    if (!found) return false;
    uint64_t worker = 0;
    if (!get_hex(param_value(params, "w", found), worker) || !found) return false;
    uint16_t port = 0;
    transport proto = transport::udp;
    if (!uri_port_transport(raw, u, port, proto)) return false;
    if (const std::optional<ip_address> ip = uri_address(raw, u)) {
        for (const trunk& tr : t.trunks)
            if (tr.address == *ip && tr.has_port(port)) {
                local = endpoint{tr.address, port, proto, 0};
                return true;
            }
        return false;
    }
    const std::string_view host = u.host.in(raw);
    for (const trunk& tr : t.trunks)
        if (same_name(tr.fqdn, host) && tr.has_port(port)) {
            local = endpoint{tr.address, port, proto, 0};
            return true;
        }
    for (const region& r : t.regions) {
        if (!same_name(r.fqdn, host)) continue;
        for (uint32_t p : r.peers) {
            if (p >= t.peers.size() || t.peers[p].trunk >= t.trunks.size()) continue;
            const trunk& tr = t.trunks[t.peers[p].trunk];
            if (tr.has_port(port)) {
                local = endpoint{tr.address, port, proto, 0};
                return true;
            }
        }
    }
    return false;
}

}  // namespace

bool is_our_route(const proxy_tables& t, std::string_view raw, span uri_text, endpoint& local, route_th* th) noexcept
{
    return our_route(t, raw, uri_text, local, th);
}

bool uri_target(std::string_view raw, span uri_text, endpoint& ep) noexcept
{
    return uri_endpoint(raw, uri_text, ep);
}

std::optional<ip_address> contact_address(const message& m) noexcept
{
    const uri* u = first_contact_uri(m);  // parsed once per message
    if (u == nullptr) return std::nullopt;
    return uri_address(m.raw, *u);
}

std::string_view proxy_counter_name(proxy_counter c) noexcept { return counter_texts.name(c); }
std::string_view proxy_counter_help(proxy_counter c) noexcept { return counter_texts.help(c); }

proxy::proxy(uint8_t worker, uint32_t setups, uint32_t dialogs, uint64_t seed)
    : worker_(worker),
      n_setups_(setups),
      setups_(std::make_unique<setup_table>(setups)),
      buffers_(new char[std::size_t{setups} * max_out_size]),
      dialogs_(std::make_unique<dialog_table>(dialogs)),
      timers_(setups),
      stats_(std::make_unique<proxy_stats>()),
      own_(std::make_unique<message>()),
      aux_(std::make_unique<message>()),
      pending_(std::make_unique<pending_table>(dialogs < max_pending_in_dialog ? dialogs : max_pending_in_dialog)),
      rules_(std::make_unique<rule_scratch>())
{
    own_admission_ = std::make_unique<admission>();
    th_targets_.reset(new th_target[dialogs]);  // untouched until a hidden dialog uses its slot
    adm_ = own_admission_.get();
    init_large(large_setups_per_worker);
    select_.rng ^= seed * 0x9E3779B97F4A7C15ull + worker;
    if (select_.rng == 0) select_.rng = 1;
}

proxy::~proxy() = default;

uint32_t proxy::find_setup(uint64_t key) const noexcept
{
    return setups_->find(key);
}

void proxy::release(uint32_t slot) noexcept
{
    setup& s = setups_->at(slot);
    timers_.cancel(slot);
    peer_put(s.peer_id);
    call_done(slot);
    give_back_large(slot);
    s.state = setup_state::free;
    setups_->erase(slot);
    stats_->setups_active.store(setups_->size(), std::memory_order_relaxed);
}

void proxy::arm(uint32_t slot) noexcept
{
    const setup& s = setups_->at(slot);
    uint64_t due = 0;
    for (uint64_t t : {s.t_retransmit, s.t_no_response, s.t_give_up, s.t_release})
        if (t != 0 && (due == 0 || t < due)) due = t;
    if (due == 0)
        timers_.cancel(slot);
    else
        timers_.schedule(slot, due);
}

bool has_second_via(const message& m) noexcept
{
    // RFC 3261 16.7 step 3: a response with no Via left after ours was meant for us.
    if (m.h_via == no_header) return false;
    const header& first = m.headers[m.h_via];
    if (m.text(first.value).find(',') != std::string_view::npos) return true;  // "a, b" (a comma in a quoted param is rare enough)
    for (unsigned i = m.h_via + 1u; i < m.header_count; ++i)
        if (m.headers[i].id == header_id::via) return true;
    return false;
}

namespace {

constexpr int owner_unknown = -2;

/// The ;w= parameter of a Route value of the plain form we write, `<sip:host[:port];...;w=N...>`,
/// read without parsing the URI; owner_unknown when the value is of another form (a display
/// name, no angle brackets, a user part, no such parameter) and needs the full parse.
int route_owner_fast(std::string_view raw, span value) noexcept
{
    const std::string_view v = value.in(raw);
    if (v.size() < 8 || v[0] != '<') return owner_unknown;
    const std::size_t gt = v.find('>');
    if (gt == std::string_view::npos) return owner_unknown;
    const std::string_view u = v.substr(1, gt - 1);
    // A user part may hold ';' (RFC 3261 25.1 user-unreserved): only ours, without one, here.
    if (u.find('@') != std::string_view::npos || u.find('?') != std::string_view::npos) return owner_unknown;
    const std::size_t at = u.find(";w=");
    if (at == std::string_view::npos) return owner_unknown;  // none, or another spelling: the full parse decides
    std::size_t e = at + 3;
    while (e < u.size() && u[e] != ';') ++e;
    uint64_t w = 0;
    if (!get_hex(u.substr(at + 3, e - at - 3), w)) return owner_unknown;
    return static_cast<int>(w);
}

}  // namespace

int message_owner(const message& m) noexcept
{
    if (m.is_response()) {
        if (!m.has_top_via) return -1;
        const std::string_view b = m.text(m.top_via.branch);
        txn_id id;
        if (read_branch(b, id)) return id.worker;
        return stateless_owner(b);
    }
    // Requests inside a dialog carry our Record-Route as their top Route: ;w= names the
    // worker that owns the dialog.
    if (m.h_route == no_header) return hidden_contact_owner(m);  // the Contact we wrote (topology_hiding.h)
    if (const int w = route_owner_fast(m.raw, m.headers[m.h_route].value); w != owner_unknown) return w;
    name_addr na;
    if (parse_name_addr(m.raw, m.headers[m.h_route].value, na, error::bad_route) != error::none) return -1;
    uri u;
    if (!parse_uri(m.raw, na.uri_text, u)) return -1;
    bool found = false;
    const std::string_view w = param_value(u.params.in(m.raw), "w", found);
    uint64_t v;
    if (!found || !get_hex(w, v)) return -1;
    return static_cast<int>(v);
}

/// What sbcd answers an OPTIONS addressed to itself with (RFC 3261 section 11.2). Allow: the
/// methods it relays, out of dialog (forward_out_of_dialog takes any method) and in dialog
/// by Route; REGISTER and PUBLISH are left out, as a trunk SBC adds no Path and is no
/// registrar or presence server. Accept: the one body it reads and rewrites, SDP (other
/// bodies are relayed untouched). Supported: the option tags whose methods and headers it
/// relays end to end without a part in them, so a UA behind it can rely on them: 100rel
/// (PRACK, RSeq, RAck, RFC 3262) and timer (Session-Expires, refreshes by re-INVITE or
/// UPDATE, RFC 4028); it anchors the SDP these carry like any other offer or answer.
constexpr std::string_view self_capabilities =
    "Allow: INVITE, ACK, BYE, CANCEL, OPTIONS, PRACK, UPDATE, INFO, REFER, NOTIFY, SUBSCRIBE, MESSAGE\r\n"
    "Accept: application/sdp\r\n"
    "Supported: 100rel, timer\r\n";

void proxy::respond(const sip_input& a, uint16_t code, std::string_view reason, outbox& out, bool retry_after,
                    uint32_t retry_after_s, std::string_view extra) noexcept
{
    out_message* d = out.next();
    if (d == nullptr) {
        stats_->add(proxy_counter::outbox_full);
        return;
    }
    char tag[12];
    put_hex(tag, hash_bytes(msg_->call_id()) ^ worker_, 12);
    response_spec spec;
    spec.code = code;
    spec.reason = reason;
    spec.to_tag = std::string_view(tag, 12);
    spec.has_retry_after = retry_after;
    spec.retry_after = retry_after_s;
    spec.extra = extra;
    via_splice oc;  // RFC 7339: our feedback, for a client that advertised oc
    if (msg_->has_top_via && oc_stamp(*msg_, msg_->top_via, oc)) spec.top_via = &oc;
    const write_result r = build_response(*msg_, spec, d->data);
    if (r.ok()) out.commit(a.local, a.src, r.len);
}

void proxy::on_input(const proxy_tables& t, const peer_health& h, const sip_input& in, outbox& out) noexcept
{
    parse(in.bytes, *own_);
    on_message(t, h, in, *own_, out);
}

void proxy::on_message(const proxy_tables& t, const peer_health& h, const sip_input& a, const message& m,
                       outbox& out) noexcept
{
    msg_ = &m;
    tables_ = &t;
    oc_.refresh(t.oc, a.now_ms);
    // Only trunk sources and known peers may talk to us, and a dialog's party answering what
    // we forwarded to it; others get no answer at all.
    if (a.trunk < t.trunks.size() && !t.trunks[a.trunk].allows(a.src.addr) && !t.is_peer_address(a.src.addr) &&
        !party_response(t, m, a.src)) {
        stats_->add(proxy_counter::source_denied);
        return;
    }
    proxy_policy policy;
    policy.full_check = msg_->is_request() && !msg_->to.has_tag;  // see proxy_policy
    const verdict v = proxy_verdict(*msg_, policy);
    if (msg_->is_response()) {
        stats_->add(proxy_counter::responses);
        if (v.act != action::forward) {
            stats_->add(proxy_counter::malformed_dropped);
            out.fault = source_fault::malformed;
            return;
        }
        on_response(t, h, a, out);
        return;
    }
    stats_->add(proxy_counter::requests);
    if (scanner_refused(t, a, out)) return;  // before any answer: a scanner learns nothing (proxy_guard.cc)
    if (v.act == action::respond) {
        stats_->add(proxy_counter::rejected);
        out.fault = source_fault::malformed;
        respond(a, v.code, v.reason, out);
        return;
    }
    if (v.act == action::drop) {
        stats_->add(proxy_counter::malformed_dropped);
        out.fault = source_fault::malformed;
        return;
    }
    on_request(t, h, a, out);
}

void proxy::on_request(const proxy_tables& t, const peer_health& h, const sip_input& a, outbox& out) noexcept
{
    const message& m = *msg_;
    // A request whose top Route is ours is routed by the route set (in-dialog, RFC 3261
    // 16.4); this also covers ACK for 2xx and every request a peer sends back to the caller.
    if (m.h_route != no_header && forward_in_dialog(t, h, a, out)) return;
    // Topology hiding: in-dialog without a Route, to our address or the Contact we wrote
    // (a UA that ignores Record-Route): by the dialog (proxy_hiding.cc).
    if (m.to.has_tag && m.h_route == no_header && th_forward(t, h, a, dialogs_->find(hash_bytes(m.call_id())), out))
        return;
    const bool has_to_tag = m.to.has_tag;
    switch (m.req_method) {
    case method::invite:
        if (!has_to_tag) {
            if (overload_shed(t, a, out)) {  // proxy_guard.cc
                if (cdr_) cdr_refused(a, 503);
                return;
            }
            rules_in(t, a);  // header and number rules, before routing (proxy_rules.cc)
            new_invite(t, h, a, out);
            return;
        }
        break;
    case method::cancel: on_cancel(a, out); return;
    case method::ack: {
        const uint32_t s = find_setup(upstream_key(m, a.src));
        if (s != none_slot && setups_->at(s).state == setup_state::completed) {
            setup& st = setups_->at(s);
            st.state = setup_state::lingering;
            st.t_retransmit = 0;
            st.t_release = a.now_ms + linger_ms;
            arm(s);
        }
        stats_->add(proxy_counter::acks_absorbed);
        return;
    }
    default: break;
    }
    if (m.req_method == method::options && !has_to_tag && m.ruri.user.empty()) {
        // OPTIONS to the SBC itself (no user part): its own health answer.
        if (!h.draining() && !h.overloaded()) {
            stats_->add(proxy_counter::options_answered);
            respond(a, t.self.healthy_code, {}, out, false, 0, self_capabilities);
            return;
        }
        const uint16_t code = t.self.unavailable_code;
        if (code == 0) {
            stats_->add(proxy_counter::options_unanswered);  // [self] draining_code = "none": silence
            return;
        }
        stats_->add(proxy_counter::options_answered);
        std::string_view reason;  // other codes: the standard phrase
        if (code == 503) reason = h.draining() ? "Service Unavailable (draining)" : "Service Unavailable (overloaded)";
        respond(a, code, reason, out, code == 503, t.retry.retry_after_s, self_capabilities);
        return;
    }
    if (has_to_tag) {
        // In-dialog without our Route: not a dialog we are in.
        respond(a, 481, {}, out);
        return;
    }
    if (overload_shed(t, a, out)) return;  // proxy_guard.cc
    rules_in(t, a);  // header and number rules, before routing (proxy_rules.cc)
    forward_out_of_dialog(t, h, a, out);
}

bool proxy::forward_in_dialog(const proxy_tables& t, const peer_health& h, const sip_input& a, outbox& out) noexcept
{
    const message& m = *msg_;
    // Our consecutive top Route entries all go (two when we record-routed twice, RFC 5658);
    // the last one names our endpoint on the leg the request leaves on. The next hop is the
    // Route after them, else the Request-URI.
    constexpr unsigned max_ours = 4;  // what the editor pops at most
    unsigned ours = 0;
    endpoint via_local;
    endpoint next;
    bool have_next = false;
    bool route_left = false;  // a Route after ours, which we can only use if it is an address
    for (unsigned i = m.h_route; i < m.header_count && !route_left; ++i) {
        if (m.headers[i].id != header_id::route) continue;
        value_iter it(m.raw, m.headers[i].value);
        span v;
        error err = error::none;
        while (it.next(v, err)) {
            name_addr na;
            const bool parsed = parse_name_addr(m.raw, v, na, error::bad_route) == error::none;
            endpoint ep;
            if (parsed && ours < max_ours && our_route(t, m.raw, na.uri_text, ep)) {
                ++ours;
                via_local = ep;
                continue;
            }
            route_left = true;
            have_next = parsed && uri_endpoint(m.raw, na.uri_text, next);
            break;
        }
        if (err != error::none) route_left = true;
    }
    if (ours == 0) return false;
    const uint64_t call = hash_bytes(m.call_id());
    const uint32_t dl = dialogs_->find(call);
    if (th_forward(t, h, a, dl, out)) return true;  // a topology-hidden dialog (proxy_hiding.cc)
    // Toward a caller that connected to us (TCP, TLS): on its connection, whatever its Contact
    // or our Route say (RFC 3261 18.1.1, RFC 5626: it may not be reachable otherwise). Toward a
    // peer the connection is left to the stream thread (connection 0: its persistent one to
    // that peer, which also carried the INVITE): simplest, and right after a reconnect.
    bool to_caller_conn = false;
    if (dl != none_slot) {
        const dialog_table::entry& de = dialogs_->table.at(dl);
        if (is_stream(de.caller.proto) && !de.caller.same_place(a.src)) {
            next = de.caller;
            to_caller_conn = true;
        }
    }
    // The Request-URI as the parser read it (m.ruri): not parsed again.
    if (!to_caller_conn && !have_next && (route_left || m.errors.has(error::bad_request_uri) || !parsed_uri_endpoint(m.raw, m.ruri, next)))
        next = endpoint{};
    if (!next.addr.is_v4()) {  // the dataplane sends IPv4 only (for now)
        stats_->add(proxy_counter::rejected);
        respond(a, 404, "Not Found (next hop is not an IPv4 address)", out);
        return true;
    }
    // Only where the peers or a dialog we hold say a request may go: else any trunk source
    // could have us relay to any host (and its answer would be denied on the way back). A
    // peer is trusted with where its requests go (the callee's, before the 2xx too); toward a
    // peer is always fine; else the next hop must be a party of the dialog. A call without a
    // dialog entry (the table was full; or early, before its 2xx) keeps only the peer cases.
    if (!t.is_peer_address(a.src.addr) && !t.is_peer_address(next.addr) &&
        (dl == none_slot || !dialogs_->table.at(dl).party(next.addr))) {
        stats_->add(proxy_counter::in_dialog_refused);
        if (m.req_method == method::ack) return true;  // never answered (RFC 3261 17)
        if (dl == none_slot)
            respond(a, 481, {}, out);
        else
            respond(a, 403, "Forbidden (next hop is not in this dialog)", out);
        return true;
    }
    stats_->add(proxy_counter::in_dialog);
    if (m.req_method == method::bye) dialog_bye_seen(call, a.now_ms, a.src);
    out_message* d = out.next();
    if (d == nullptr) {
        stats_->add(proxy_counter::outbox_full);
        return true;
    }
    // Our Via: a stateless branch derived from the incoming one, and where to send the
    // response back (the request's source, which also covers callers behind NAT).
    char branch[32];
    const uint64_t key = upstream_key(m, a.src);
    const std::size_t branch_len = write_stateless_branch(branch, key);
    const endpoint local = leg_local(via_local, next);
    char via[max_via_size];
    // RFC 7339: overload control advertised toward peers only (whose feedback we honour).
    const std::size_t via_len = write_via(via, local, std::string_view(branch, branch_len), a.src,
                                          t.oc.advertise && t.is_peer_address(next.addr));
    edits e;
    e.pop_routes = static_cast<uint8_t>(ours);
    e.decrement_max_forwards = true;
    e.push_via = std::string_view(via, via_len);  // RFC 3261 16.6 step 8, the ACK of a 2xx too
    // re-INVITE, UPDATE, the ACK of a late offer: from the caller it goes to leg B.
    const media_leg to = media_leg_of(call, a.src, &t) == media_leg::a ? media_leg::b : media_leg::a;
    if (!media_body(m, call, to, e)) {
        respond(a, 488, "Not Acceptable Here (no media ports)", out);
        return true;
    }
    const write_result r = edit_out(m, e, out, *d);
    if (!r.ok()) return true;
    out.commit(local, next, r.len);
    pending_track(t, h, a, next, key);  // a dead peer's silence answered 408, not left for 32 s
    return true;
}

std::size_t proxy::write_stateless_branch(char* out, uint64_t key) const noexcept
{
    char* p = out;
    std::memcpy(p, branch_stateless.data(), branch_stateless.size());
    p += branch_stateless.size();
    p = put_hex(p, worker_, 2);
    p = put_hex(p, key, 12);
    return static_cast<std::size_t>(p - out);
}

bool proxy::party_response(const proxy_tables& t, const message& m, const endpoint& src) const noexcept
{
    // Only an answer to a request we forwarded statelessly (our stateless branch on top), from
    // a party of the dialog of its Call-ID.
    if (!m.is_response() || !m.has_top_via || !m.text(m.top_via.branch).starts_with(branch_stateless)) return false;
    const uint32_t d = dialogs_->find(hash_bytes(m.call_id()));
    if (d == none_slot || !dialogs_->table.at(d).party(src.addr)) return false;
    // And our Via must send it back to someone who may talk to us: else a party could have
    // us reflect whatever it writes to any host.
    bool found = false;
    const std::string_view back = param_value(m.text(m.top_via.params), "sbc-src", found);
    endpoint dst;
    if ((!found || !read_via_source(back, dst)) && !hidden_via_source(m, t.hiding_key, dst)) return false;
    if (dialogs_->table.at(d).party(dst.addr) || t.is_peer_address(dst.addr)) return true;
    for (const trunk& tr : t.trunks)
        if (tr.allows(dst.addr)) return true;
    return false;
}

bool proxy::relay_by_via(const sip_input& a, outbox& out) noexcept
{
    // A response to something we forwarded statelessly: our Via says where it goes.
    const message& m = *msg_;
    pending_answered(m.text(m.top_via.branch));  // any answer, a provisional too: the peer is alive
    bool found = false;
    const std::string_view src = param_value(m.text(m.top_via.params), "sbc-src", found);
    const bool hidden = has_hidden_via(m);  // topology hiding: the Vias below ours are in ours
    if (!has_second_via(m) && !hidden) {
        stats_->add(proxy_counter::stale_responses);
        return true;  // consumed: nobody below us to relay it to
    }
    endpoint dst;
    if (!hidden && (!found || !read_via_source(src, dst))) return false;
    out_message* d = out.next();
    if (d == nullptr) {
        stats_->add(proxy_counter::outbox_full);
        return true;
    }
    edits e;
    e.pop_via = true;
    th_scratch th;  // topology hiding: our hidden Via names dst and the Vias to restore (proxy_hiding.cc)
    if (!th_response(*tables_, a.local, -1, &dst, e, th)) return true;
    const uint64_t call = hash_bytes(m.call_id());
    media_body(m, call, media_leg_of(call, dst), e);  // refused: the answer goes on unchanged
    via_splice oc;  // RFC 7339: our feedback in the Via of a client that advertised oc
    if (oc_stamp_relayed(oc)) e.via_params = &oc;
    const write_result r = edit_out(m, e, out, *d);
    if (!r.ok()) return true;
    // From our endpoint on the leg it goes back on: the dialog knows both (a call whose legs
    // differ in trunk or transport); else where it arrived.
    endpoint from = a.local;
    if (const uint32_t dl = dialogs_->find(call); dl != none_slot) {
        const dialog_table::entry& de = dialogs_->table.at(dl);
        const endpoint& leg = de.caller.same_place(dst) ? de.caller_local : de.callee_local;
        if (leg.port != 0) from = leg;
    }
    out.commit(leg_local(from, dst), dst, r.len);
    stats_->add(proxy_counter::relayed_stateless);
    if (m.cseq_method == method::bye && m.status >= 200) dialog_end(hash_bytes(m.call_id()), cdr_end::bye_caller, a.now_ms);
    return true;
}

void proxy::on_response(const proxy_tables& t, const peer_health& h, const sip_input& a, outbox& out) noexcept
{
    const message& m = *msg_;
    oc_from_peer(t, a, out);  // RFC 7339 feedback from a peer, whatever the response answers
    txn_id id;
    if (m.has_top_via && read_branch(m.text(m.top_via.branch), id) && id.worker == worker_ && id.slot < n_setups_) {
        setup& s = setups_->at(id.slot);
        if (s.state != setup_state::free && s.gen == id.gen && s.attempt == id.attempt &&
            m.cseq_method == method::invite) {
            invite_response(t, h, id.slot, a, out);
            return;
        }
        if (m.cseq_method == method::cancel) return;  // 200 to our CANCEL: nothing to do
        if (m.status >= 200 && m.status < 300 && m.cseq_method == method::invite) {
            // A 2xx retransmission after the setup ended (or from an abandoned attempt):
            // proxies forward 2xx statelessly; our Via's sbc-src names the caller.
            if (!relay_by_via(a, out)) stats_->add(proxy_counter::stale_responses);
            return;
        }
        stats_->add(proxy_counter::stale_responses);
        return;
    }
    if (m.has_top_via && relay_by_via(a, out)) return;
    stats_->add(proxy_counter::stale_responses);
}

void proxy::on_tick(const proxy_tables& t, const peer_health& h, uint64_t now_ms, outbox& out) noexcept
{
    oc_.refresh(t.oc, now_ms);
    if (timers_.now() == 0) timers_.start(now_ms);
    timers_.advance(
        now_ms, [&](uint32_t slot) { fire(t, h, slot, now_ms, out); }, [&] { return out.room(); });
    media_silence(now_ms, out);
    pending_expire(now_ms, out);
    if (dialogs_->timers.now() == 0) dialogs_->timers.start(now_ms);
    dialogs_->timers.advance(
        now_ms,
        [&](uint32_t slot) {
            // A BYE that never got its 200: the dialog is over anyway.
            if (dialogs_->table.used(slot)) dialog_end(dialogs_->table.key(slot), cdr_end::bye_timeout, now_ms);
        },
        [] { return true; });
}

uint32_t proxy::dialog_started(uint64_t key, uint32_t peer_id, uint16_t trunk, bool admitted) noexcept
{
    const uint32_t d = dialogs_->find(key) != none_slot ? none_slot : dialogs_->insert(key);
    if (d == none_slot) {
        // A call without dialog state of its own (the table was full, or its Call-ID has one):
        // nothing would end its admission counts, so they end here.
        if (peer_id != no_peer) adm_->give_peer(peer_id);
        if (admitted) adm_->release_call(trunk);
        return none_slot;
    }
    dialogs_->table.at(d).peer_id = peer_id;
    dialogs_->table.at(d).trunk = trunk;
    dialogs_->table.at(d).admitted = admitted;
    stats_->add(proxy_counter::dialogs_created);
    stats_->dialogs_active.store(dialogs_->table.size(), std::memory_order_relaxed);
    if (peer_id != no_peer) bump(stats_->active_by_peer[peer_id], +1);
    return d;
}

void proxy::dialog_parties(uint32_t slot) noexcept
{
    const setup& s = setups_->at(slot);
    const uint32_t d = dialogs_->find(s.callid_hash);
    if (d == none_slot) return;  // the table was full: forward_in_dialog keeps the peer cases
    dialog_table::entry& de = dialogs_->table.at(d);
    de.caller = s.caller;  // with its connection: requests toward it reuse it
    de.caller_local = s.local;
    de.callee_local = s.out_local;
    // The parties in-dialog requests may go to besides the caller: each side's Contact (the
    // targets of the requests toward it, RFC 3261 12.1): the 2xx's, and the INVITE's that
    // new_invite kept (no second parse of the stored INVITE per call).
    if (const std::optional<ip_address> c = contact_address(*msg_)) de.callee_contact = *c;
    de.caller_contact = s.caller_contact;
    th_dialog_started(slot, d);  // topology hiding (proxy_hiding.cc)
}

void proxy::dialog_bye_seen(uint64_t key, uint64_t now, const endpoint& from) noexcept
{
    // The dialog ends with the BYE's 200, or bye_wait_ms after the BYE without one.
    const uint32_t d = dialogs_->find(key);
    if (d == none_slot || dialogs_->table.at(d).ending) return;
    if (cdr_) cdr_bye(d, from, now);
    dialogs_->table.at(d).ending = true;
    if (dialogs_->timers.now() == 0) dialogs_->timers.start(now);
    dialogs_->timers.schedule(d, now + bye_wait_ms);
}

void proxy::dialog_end(uint64_t key, cdr_end why, uint64_t now) noexcept
{
    const uint32_t d = dialogs_->find(key);
    if (d == none_slot) return;
    if (cdr_) cdr_dialog_end(d, why, now);  // before the media goes: its figures are in the record
    const dialog_table::entry& de = dialogs_->table.at(d);
    if (de.peer_id != no_peer) {
        bump(stats_->active_by_peer[de.peer_id], -1);
        adm_->give_peer(de.peer_id);
    }
    if (de.admitted) adm_->release_call(de.trunk);
    dialogs_->erase(d);
    media_end(key);
    stats_->add(proxy_counter::dialogs_ended);
    stats_->dialogs_active.store(dialogs_->table.size(), std::memory_order_relaxed);
}

}  // namespace sbc::sip
