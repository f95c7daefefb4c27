// Request-URI retargeting (see retarget.h). Worker threads; no heap.
#include "sip-fastpath/retarget.h"

#include <cstring>

#include "sip-fastpath/call_targets.h"
#include "sip-fastpath/sip_numbers.h"
#include "sip-fastpath/sip_span.h"
#include "sip-fastpath/sip_uri.h"

namespace sbc::sip {

bool names_sbc(const proxy_tables& t, std::string_view raw, const uri& u) noexcept
{
    if (u.scheme != uri_scheme::sip && u.scheme != uri_scheme::sips) return false;
    const uint16_t port = u.port != 0 ? u.port : static_cast<uint16_t>(u.scheme == uri_scheme::sips ? 5061 : 5060);
    endpoint ep;
    const bool literal = parsed_uri_target(raw, u, ep);
    const std::string_view host = u.host.in(raw);
    for (const trunk& tr : t.trunks) {
        if (!tr.has_port(port)) continue;
        if (literal ? tr.owns(ep.addr) : same_host_name(tr.fqdn, host)) return true;
    }
    return false;
}

std::size_t write_retargeted(std::span<char> out, std::string_view kept, const ruri_parts& r, const endpoint& peer,
                             std::string_view server_name, std::string_view host_port) noexcept
{
    std::size_t n = 0;
    bool ok = true;
    auto put = [&](std::string_view s) {
        if (!ok || n + s.size() > out.size()) {
            ok = false;
            return;
        }
        std::memcpy(out.data() + n, s.data(), s.size());
        n += s.size();
    };
    const bool tls = peer.proto == transport::tls;
    const bool sips = r.sips && tls;
    put(sips ? "sips:" : "sip:");
    if (!r.user.empty()) {
        put(r.user.in(kept));
        put("@");
    }
    char ep[max_endpoint_text];
    if (!host_port.empty()) {
        put(host_port);
    } else if (!server_name.empty()) {
        char port[8];
        const std::size_t pl = write_uint(port, peer.port);
        put(server_name);
        put(":");
        put({port, pl});
    } else {
        const std::size_t el = format_endpoint(peer, ep);
        if (el == 0) return 0;
        put({ep, el});
    }
    if (peer.proto == transport::tcp) put(";transport=tcp");
    if (tls && !sips) put(";transport=tls");
    param_iter it(kept, r.params);
    param p;
    bool bad = false;
    while (it.next(p, bad)) {
        const std::string_view name = p.name.in(kept);
        if (eq_nocase(name, "transport")) continue;
        if (eq_nocase(name, "maddr")) continue;
        put(";");
        put(kept.substr(p.name.off, (p.has_value ? p.value.end() : p.name.end()) - p.name.off));
    }
    if (bad) return 0;  // never: the parser read these parameters
    if (!r.headers.empty()) {
        put("?");
        put(r.headers.in(kept));
    }
    return ok ? n : 0;
}

std::string_view retargeted(const proxy_tables& t, std::string_view text, const ruri_parts& r, const endpoint& peer,
                            uint32_t pi, std::span<char> out) noexcept
{
    if (!r.ours) return {};
    if (pi < t.peers.size()) {
        const sip::peer& p = t.peers[pi];
        // The attempt goes where the table's peer is: its HOST:PORT was formatted when built.
        if (!p.uri_host.empty() && p.remote().same_place(peer)) return {out.data(), write_retargeted(out, text, r, peer, {}, p.uri_host)};
        if (peer.proto == transport::tls) return {out.data(), write_retargeted(out, text, r, peer, p.server_name)};
    }
    return {out.data(), write_retargeted(out, text, r, peer, {})};
}

}  // namespace sbc::sip
