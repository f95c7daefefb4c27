// Loads the [dns] section of sbc.toml: the servers that resolve `srv` regions and the refresh
// policy; and the DNS names the file holds (fqdn, server_name, an SRV name's transport) and
// the peer an SRV answer gives (control/dns.cc). Control core only (also sbcctl and tests);
// see config.cc for how problems are reported.
#include "control/config_reader.h"

namespace sbc::control::config_detail {

namespace {

// "A.B.C.D" or "A.B.C.D:PORT" (PORT 1..65535).
bool valid_server(std::string_view s)
{
    const auto colon = s.find(':');
    if (!parse_ipv4(s.substr(0, colon))) return false;
    if (colon == std::string_view::npos) return true;
    const auto p = parse_decimal(s.substr(colon + 1), 5);
    return p && *p >= 1 && *p <= 65535;
}

}  // namespace

void read_dns(loader& l, const toml::table& t, dns_config& d)
{
    table_reader r(l, t, "dns");
    std::vector<const toml::node*> nodes;
    r.get_string_array("servers", d.servers, &nodes);
    for (std::size_t i = 0; i < d.servers.size() && i < nodes.size(); ++i) {
        const std::string ek = r.key("servers") + "[" + std::to_string(index_in(*t.get("servers"), nodes[i])) + "]";
        if (valid_server(d.servers[i])) continue;
        if (is_ipv6_text(d.servers[i]))
            l.error(line_of(*nodes[i]), ek, ipv6_refused(d.servers[i]));
        else
            l.error(line_of(*nodes[i]), ek,
                    "expected \"A.B.C.D\" (port 53) or \"A.B.C.D:PORT\" such as \"127.0.0.1:5353\", got " +
                        quoted(d.servers[i]));
    }
    r.get_uint("timeout_ms", d.timeout_ms, 100, 30000, "milliseconds per try");
    r.get_uint("tries", d.tries, 1, 10, "tries per server");
    r.get_uint("min_refresh_ms", d.min_refresh_ms, 100, 3600000, "milliseconds");
    r.get_uint("retry_ms", d.retry_ms, 100, 600000, "milliseconds");
    r.get_bool("serve_stale", d.serve_stale);
    r.finish();
}

}  // namespace sbc::control::config_detail

namespace sbc::control {

bool is_dns_name(std::string_view s)
{
    if (s.empty() || s.size() > 253) return false;
    std::size_t label = 0;  // length of the label so far
    char prev = '.';
    for (char c : s) {
        if (c == '.') {
            if (label == 0 || prev == '-') return false;
            label = 0;
        } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-') {
            if (c == '-' && label == 0) return false;
            if (++label > 63) return false;
        } else {
            return false;
        }
        prev = c;
    }
    return label != 0 && prev != '-';
}

std::optional<transport> srv_transport(std::string_view srv)
{
    constexpr std::string_view service = "_sip._";
    if (srv.size() < service.size() + 5) return std::nullopt;  // "_sip._udp.x"
    for (std::size_t i = 0; i < service.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(srv[i])) != service[i]) return std::nullopt;
    const std::string_view proto = srv.substr(service.size(), 4);  // "udp."
    if (proto[3] != '.') return std::nullopt;
    return parse_transport(proto.substr(0, 3));
}

peer_config srv_peer(const region_config& rc, const ip_address& address, uint16_t port, uint16_t priority,
                     uint16_t weight, std::string_view target)
{
    peer_config p{"", address, port, priority, weight, rc.line};
    p.proto = rc.srv_proto;
    if (p.proto == transport::tls) {
        if (!target.empty() && target.back() == '.') target.remove_suffix(1);
        p.server_name = std::string(target);
    }
    return p;
}

}  // namespace sbc::control
