// Where a request goes, read from its URIs (call_targets.h). Any thread; pure.
#include "sip-fastpath/call_targets.h"

#include "sip-fastpath/proxy_ids.h"
#include "sip-fastpath/topology_hiding.h"

namespace sbc::sip {

namespace {

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


/// Whether a Route URI is one of our Record-Routes (RFC 3261 16.4): ";lr" and our worker
/// parameter, and a host and port of ours: the address and any port (any transport) of a
/// trunk, or the FQDN of a trunk or of a region with a port of a trunk its peers use. `local`
/// gets our endpoint it names (the trunk's address, the URI's port and transport): the last
/// of our entries names the leg the request leaves on.
bool our_route(const proxy_tables& t, std::string_view raw, const uri& u, endpoint& local, route_th* th) noexcept
{
    if (u.scheme != uri_scheme::sip && u.scheme != uri_scheme::sips) return false;
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
            if (tr.owns(*ip) && tr.has_port(port)) {
                local = endpoint{*ip, port, proto, 0};
                return true;
            }
        return false;
    }
    const std::string_view host = u.host.in(raw);
    for (const trunk& tr : t.trunks)
        if (same_host_name(tr.fqdn, host) && tr.has_port(port)) {
            local = endpoint{tr.address, port, proto, 0};
            return true;
        }
    for (const region& r : t.regions) {
        if (!same_host_name(r.fqdn, host)) continue;
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
    uri u;
    return parse_uri(raw, uri_text, u) && our_route(t, raw, u, local, th);
}

bool is_our_route(const proxy_tables& t, std::string_view raw, const uri& u, endpoint& local, route_th* th) noexcept
{
    return our_route(t, raw, u, local, th);
}

bool uri_target(std::string_view raw, span uri_text, endpoint& ep) noexcept
{
    return uri_endpoint(raw, uri_text, ep);
}

bool parsed_uri_target(std::string_view raw, const uri& u, endpoint& ep) noexcept
{
    return parsed_uri_endpoint(raw, u, ep);
}

std::optional<ip_address> contact_address(const message& m) noexcept
{
    const uri* u = first_contact_uri(m);  // parsed once per message
    if (u == nullptr) return std::nullopt;
    return uri_address(m.raw, *u);
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

}  // namespace sbc::sip
