// Loads the [dns] section of sbc.toml: the servers that resolve `srv` regions and the refresh
// policy. Control core only (also sbcctl and tests); see config.cc for how problems are
// reported.
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
