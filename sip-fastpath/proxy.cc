// The proxy's face (proxy.h): its counters' names, which worker owns a message, and the
// entry points, each handed to the call core (call_core.h). Worker only, but for the
// configuration calls the control core makes before the worker runs.
#include "sip-fastpath/proxy.h"

#include "sip-fastpath/call_core.h"
#include "sip-fastpath/call_targets.h"
#include "sip-fastpath/proxy_ids.h"
#include "sip-fastpath/sip_numbers.h"
#include "sip-fastpath/topology_hiding.h"

namespace sbc::sip {

namespace {

constexpr auto counter_texts = SBC_LIST_TEXTS(proxy_counter, SBC_PROXY_COUNTERS);

}  // namespace

std::string_view proxy_counter_name(proxy_counter c) noexcept { return counter_texts.name(c); }
std::string_view proxy_counter_help(proxy_counter c) noexcept { return counter_texts.help(c); }

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

int message_owner(std::string_view text, message& scratch) noexcept
{
    if (parse(text, scratch) != error::none) return -1;
    return message_owner(scratch);
}

proxy::proxy(uint8_t worker, uint32_t setups, uint32_t dialogs, uint64_t seed)
    : core_(std::make_unique<call_core>(worker, setups, dialogs, seed)), own_(std::make_unique<message>())
{
}

proxy::~proxy() = default;

void proxy::on_input(const proxy_tables& t, const peer_health& h, const sip_input& in, outbox& out) noexcept
{
    parse(in.bytes, *own_);
    core_->on_message(t, h, in, *own_, out);
}

void proxy::on_message(const proxy_tables& t, const peer_health& h, const sip_input& in, const message& m,
                       outbox& out) noexcept
{
    core_->on_message(t, h, in, m, out);
}

void proxy::on_icmp_unreachable(const proxy_tables& t, const peer_health& h, std::string_view quoted,
                                const endpoint& to, uint64_t now_ms, outbox& out) noexcept
{
    core_->on_icmp_unreachable(t, h, quoted, to, now_ms, out);
}

void proxy::on_send_failed(const proxy_tables& t, const peer_health& h, std::string_view sent, const endpoint& to,
                           send_failure why, uint64_t now_ms, outbox& out) noexcept
{
    core_->on_send_failed(t, h, sent, to, why, now_ms, out);
}

void proxy::on_tick(const proxy_tables& t, const peer_health& h, uint64_t now_ms, outbox& out) noexcept
{
    core_->on_tick(t, h, now_ms, out);
}

const proxy_stats& proxy::stats() const noexcept { return core_->stats(); }
uint8_t proxy::worker() const noexcept { return core_->worker(); }
void proxy::set_large_setups(uint32_t n) { core_->set_large_setups(n); }
void proxy::set_media(media_hook* m) { core_->set_media(m); }
void proxy::set_cdr_sink(cdr_sink* s) { core_->set_cdr_sink(s); }
void proxy::cdr_drain(uint64_t now_ms) noexcept { core_->cdr_drain(now_ms); }
void proxy::set_overload(uint8_t percent) noexcept { core_->set_overload(percent); }
uint8_t proxy::overload() const noexcept { return core_->overload(); }
void proxy::set_admission(admission* a) noexcept { core_->set_admission(a); }
const admission& proxy::admission_counts() const noexcept { return core_->admission_counts(); }
void proxy::reset() noexcept { core_->reset(); }

uint32_t proxy::setups_unarmed() const noexcept { return core_->setups_unarmed(); }

}  // namespace sbc::sip
