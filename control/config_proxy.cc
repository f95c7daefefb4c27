// Loads the proxy sections of sbc.toml: [[trunk]] (with its transports and ports), [[region]]
// (static peers with their transport, or an SRV name), [[peer_group]], [[route]], [retry],
// [limits] and [health], checking every reference by name. The `tls` tables of trunks and
// regions are read with [tls] (config_tls.cc). Control core only (also
// sbcctl and tests); see config.cc for how problems are reported.
#include "control/config_reader.h"

#include <tuple>

namespace sbc::control::config_detail {

void read_name(loader& l, table_reader& r, std::string& out)
{
    if (auto v = r.get_string("name", out); v && !is_plain_name(out))
        l.error(line_of(*v), r.key("name"), "expected 1 to 64 letters, digits, '-', '_' or '.', got " + quoted(out));
}

// "a.b.c.d/n" (n 0..32, no host bits) or a plain address (a /32); "2001:db8::/32" (n 0..128)
// or a plain IPv6 address (a /128). Unlike an interface's address, n may be 0 ("0.0.0.0/0"
// and "::/0" allow anyone of the family).
std::optional<ip_prefix> parse_allow(std::string_view s, std::string& why)
{
    auto slash = s.find('/');
    const bool v6 = is_ipv6_text(s.substr(0, slash));
    auto a = v6 ? parse_address(s.substr(0, slash)) : parse_ipv4(s.substr(0, slash));
    if (!a) return std::nullopt;
    const unsigned bits = v6 ? 128 : 32;
    if (slash == std::string_view::npos) return ip_prefix{*a, static_cast<uint8_t>(bits)};
    auto len = parse_decimal(s.substr(slash + 1), 3);
    if (!len || *len > bits) return std::nullopt;
    const ip_prefix p{*a, static_cast<uint8_t>(*len)};
    if (p.canonical() != p) {
        why = "; it has host bits set: did you mean " + quoted(to_string(p.canonical())) + "?";
        return std::nullopt;
    }
    return p;
}

// `k` as a DNS host name (a trunk's or region's fqdn, a peer's server_name).
void read_dns_name(loader& l, table_reader& r, std::string_view k, std::string& out)
{
    if (auto v = r.get_string(k, out); v && !is_dns_name(out))
        l.error(line_of(*v), r.key(k),
                "expected a DNS name (labels of letters, digits and '-' separated by '.', no trailing dot) such as "
                "\"sbc1.example.net\", got " + quoted(out));
}

constexpr std::string_view transport_choices = "\"udp\", \"tcp\" or \"tls\"";

// A trunk's `transports`: each of udp, tcp, tls at most once, at least one.
void read_transports(loader& l, table_reader& r, std::vector<transport>& out)
{
    std::vector<std::string> names;
    std::vector<const toml::node*> nodes;
    const toml::node* n = r.get("transports");
    r.get_string_array("transports", names, &nodes);
    if (!n || !n->is_array()) return;
    if (n->as_array()->empty()) {
        l.error(line_of(*n), r.key("transports"), "expected at least one of " + std::string(transport_choices) +
                                                      ", got an empty array");
        return;
    }
    std::vector<transport> got;
    bool ok = names.size() == n->as_array()->size();
    for (std::size_t i = 0; i < names.size(); ++i) {
        const std::string ek = r.key("transports") + "[" + std::to_string(index_in(*n, nodes[i])) + "]";
        const auto t = names[i] == "udp" ? std::optional{transport::udp}
                       : names[i] == "tcp" ? std::optional{transport::tcp}
                       : names[i] == "tls" ? std::optional{transport::tls}
                                           : std::nullopt;
        if (!t) {
            l.error(line_of(*nodes[i]), ek, "expected " + std::string(transport_choices) + ", got " + quoted(names[i]));
            ok = false;
        } else if (std::find(got.begin(), got.end(), *t) != got.end()) {
            l.error(line_of(*nodes[i]), ek, "expected each transport once, got " + quoted(names[i]) + " again");
            ok = false;
        } else {
            got.push_back(*t);
        }
    }
    if (ok) out = std::move(got);
}

void read_trunk(loader& l, const toml::table& t, const std::string& prefix, const name_index& interfaces,
                trunk_config& tc)
{
    table_reader r(l, t, prefix);
    tc.line = r.line();
    r.require("name", "a name such as \"carrier-core\"");
    r.require("interface", "the name of an [[interface]]");
    r.require("allow", "an array of source prefixes allowed to send on this trunk, such as [\"198.18.0.2/32\"]");
    read_name(l, r, tc.name);
    interfaces.reference(l, r, "interface", tc.interface);
    r.get_u16("port", tc.port, 1, 65535, "local UDP port");
    read_transports(l, r, tc.transports);
    tc.tcp_port = tc.port;
    r.get_u16("tcp_port", tc.tcp_port, 1, 65535, "local TCP port");
    r.get_u16("tls_port", tc.tls_port, 1, 65535, "local TLS port");
    read_dns_name(l, r, "fqdn", tc.fqdn);
    read_trunk_admission(l, r, tc.admission);  // config_admission.cc
    r.get_bool("trusted", tc.trusted);  // [flood]: rate-limited, never denied
    read_trunk_flood(l, r, tc);         // config_flood.cc
    read_rules(l, r, tc.rules);  // [[trunk.rule]] (config_rules.cc)
    r.get_bool("topology_hiding", tc.topology_hiding);  // sip-fastpath/topology_hiding.h
    r.get("tls");  // read with [tls] (config_tls.cc), once every trunk's transports are known
    std::vector<std::string> allow;
    std::vector<const toml::node*> allow_nodes;
    const toml::node* an = r.get("allow");
    r.get_string_array("allow", allow, &allow_nodes);
    if (an && an->is_array() && an->as_array()->empty())
        l.error(line_of(*an), r.key("allow"),
                "expected at least one source prefix; an empty list would drop every call (\"0.0.0.0/0\" allows anyone)");
    for (std::size_t i = 0; i < allow.size(); ++i) {
        std::string why;
        const std::string ek = r.key("allow") + "[" + std::to_string(index_in(*an, allow_nodes[i])) + "]";
        if (auto p = parse_allow(allow[i], why))
            tc.allow.push_back(*p);
        else
            l.error(line_of(*allow_nodes[i]), ek,
                    "expected an address \"A.B.C.D\" or a prefix \"A.B.C.D/N\" with N 0..32, or an IPv6 address "
                    "\"2001:db8::1\" or prefix \"2001:db8::/N\" with N 0..128, got " +
                        quoted(allow[i]) + why);
    }
    r.finish();
}

void read_trunks(loader& l, const toml::node* n, const name_index& interfaces, std::vector<trunk_config>& out,
                 name_index& names)
{
    const toml::array* arr = table_array(l, n, "trunk");
    if (!arr) return;
    // (interface, UDP or TCP, port) -> (trunk, transport): TCP and TLS listen on one port space.
    struct listener {
        std::size_t trunk;
        transport proto;
    };
    std::map<std::tuple<std::string, bool, uint16_t>, listener> by_local;
    for (std::size_t i = 0; i < arr->size(); ++i) {
        const std::string prefix = "trunk[" + std::to_string(i) + "]";
        const toml::table& t = *arr->get(i)->as_table();
        trunk_config tc;
        read_trunk(l, t, prefix, interfaces, tc);
        names.add(l, t, i, tc.name, tc.line);
        // Each trunk's INVITEs are counted on their own (sip::proxy_stats); one count per trunk
        // or none at all, never some trunks silently uncounted.
        if (i == max_trunks)
            l.error(tc.line, prefix,
                    "expected " + at_most(max_trunks, "[[trunk]] tables (each is counted on its own)") + ", got " +
                        std::to_string(arr->size()));
        for (std::size_t k = 0; interfaces.find(tc.interface) && k < tc.transports.size(); ++k) {
            const transport p = tc.transports[k];
            const uint16_t port = p == transport::udp ? tc.port : p == transport::tcp ? tc.tcp_port : tc.tls_port;
            const char* key = p == transport::udp ? "port" : p == transport::tcp ? "tcp_port" : "tls_port";
            // tcp_port defaults to port: a clash there is one of `port`.
            const toml::node* pn = t.get(key);
            const bool tcp_is_port = !pn && p == transport::tcp && t.get("port");
            if (tcp_is_port) pn = t.get("port"), key = "port";
            auto [it, fresh] = by_local.emplace(std::tuple{tc.interface, is_stream(p), port}, listener{i, p});
            if (fresh) continue;
            const listener& other = it->second;
            const std::string owner =
                other.trunk == i ? "this trunk"
                                 : "trunk[" + std::to_string(other.trunk) + "] at line " + std::to_string(out[other.trunk].line);
            l.error(pn ? line_of(*pn) : tc.line, prefix + "." + key,
                    std::string("expected a ") + (is_stream(p) ? "TCP" : "UDP") +
                        " port not used by another trunk on interface " + quoted(tc.interface) +
                        (is_stream(p) ? " (TCP and TLS share the TCP ports)" : "") + "; " + owner +
                        " already listens on " + std::to_string(port) + (pn ? "" : " (the default)") + " with " +
                        std::string(transport_param_name(other.proto)) +
                        (tcp_is_port ? " (tcp_port is port unless given)" : ""));
        }
        out.push_back(std::move(tc));
    }
}

// "A.B.C.D:PORT" or "A.B.C.D" (port 5060); "[2001:db8::1]:PORT" or "[2001:db8::1]" (port
// 5060), the IPv6 address in brackets as in a SIP URI (RFC 3261 19.1.1).
std::optional<std::pair<ip_address, uint16_t>> parse_peer_address(std::string_view s)
{
    std::optional<ip_address> a;
    std::string_view rest;
    if (!s.empty() && s.front() == '[') {
        const auto close = s.find(']');
        if (close == std::string_view::npos) return std::nullopt;
        a = parse_address(s.substr(1, close - 1));
        if (!a || !a->is_v6()) return std::nullopt;
        rest = s.substr(close + 1);
        if (!rest.empty() && rest.front() != ':') return std::nullopt;
    } else {
        const auto colon = s.find(':');
        a = parse_ipv4(s.substr(0, colon));
        if (!a) return std::nullopt;
        if (colon != std::string_view::npos) rest = s.substr(colon);
    }
    if (rest.empty()) return std::pair{*a, uint16_t{5060}};
    auto p = parse_decimal(rest.substr(1), 5);
    if (!p || *p < 1 || *p > 65535) return std::nullopt;
    return std::pair{*a, static_cast<uint16_t>(*p)};
}

struct peer_seen {
    std::size_t region;
    std::size_t peer;
    int line;
};

void read_peer(loader& l, const toml::table& t, const std::string& prefix, peer_config& pc)
{
    table_reader r(l, t, prefix);
    pc.line = r.line();
    r.require("address", "\"A.B.C.D:PORT\" such as \"198.18.0.11:5060\"");
    if (auto v = r.get_string("name", pc.name); v && !is_plain_name(pc.name))
        l.error(line_of(*v), r.key("name"), "expected 1 to 64 letters, digits, '-', '_' or '.', got " + quoted(pc.name));
    std::string text;
    if (auto v = r.get_string("address", text)) {
        if (auto a = parse_peer_address(text)) {
            pc.address = a->first;
            pc.port = a->second;
        } else if (is_ipv6_text(text)) {
            l.error(line_of(*v), r.key("address"),
                    "expected an IPv6 peer in brackets, \"[2001:db8::1]:PORT\" (port 1..65535) or \"[2001:db8::1]\" "
                    "(port 5060), got " + quoted(text));
        } else {
            l.error(line_of(*v), r.key("address"),
                    "expected \"A.B.C.D:PORT\" (port 1..65535) or \"A.B.C.D\" (port 5060), or an IPv6 peer "
                    "\"[2001:db8::1]:PORT\", got " + quoted(text));
        }
    }
    r.get_u16("priority", pc.priority, 0, 65535, "RFC 2782: lower first");
    r.get_u16("weight", pc.weight, 0, 65535, "RFC 2782: share within a priority");
    const std::string address_text = text;
    if (auto v = r.get_string("transport", text)) {
        if (text == "udp" || text == "tcp" || text == "tls")
            pc.proto = *parse_transport(text);
        else
            l.error(line_of(*v), r.key("transport"), "expected " + std::string(transport_choices) + ", got " + quoted(text));
    }
    // RFC 3263 §4.2: without a port, TLS is 5061.
    if (pc.proto == transport::tls && address_text.find(':', address_text.find(']') + 1) == std::string::npos &&
        parse_peer_address(address_text))
        pc.port = default_sips_port;
    read_dns_name(l, r, "server_name", pc.server_name);
    read_peer_admission(l, r, pc.max_calls);  // config_admission.cc
    if (const toml::node* sn = t.get("server_name"); sn && pc.proto != transport::tls)
        l.error(line_of(*sn), r.key("server_name"),
                "expected only with transport = \"tls\" (it names what the peer's certificate must carry)");
    r.finish();
}

constexpr std::array<std::string_view, 2> probe_names{"options", "none"};

void read_region(loader& l, const toml::table& t, const std::string& prefix, std::size_t index,
                 const name_index& trunks, std::map<std::pair<ip_address, uint16_t>, peer_seen>& addresses,
                 std::map<std::string, peer_seen>& peer_names, region_config& rc)
{
    table_reader r(l, t, prefix);
    rc.line = r.line();
    r.require("name", "a name such as \"region1\"");
    read_name(l, r, rc.name);
    const toml::node* sn = r.get("srv");
    if (auto v = r.get_string("srv", rc.srv)) {
        // The domain after "_sip._xxx.", a fully qualified name's root dot aside.
        std::string_view domain = rc.srv.size() > 10 ? std::string_view(rc.srv).substr(10) : std::string_view{};
        if (!domain.empty() && domain.back() == '.') domain.remove_suffix(1);
        const auto proto = srv_transport(rc.srv);
        if (proto && is_dns_name(domain))
            rc.srv_proto = *proto;
        else
            l.error(line_of(*v), r.key("srv"),
                    "expected a DNS SRV name \"_sip._udp.<domain>\", \"_sip._tcp.<domain>\" or \"_sip._tls.<domain>\" "
                    "such as \"_sip._udp.pstn.example.net\", got " + quoted(rc.srv));
    }
    constexpr std::array<std::string_view, 4> families{"ipv4", "ipv6", "prefer_ipv6", "prefer_ipv4"};
    r.get_choice("address_family", families, rc.family);
    if (const toml::node* fn = t.get("address_family"); fn && rc.srv.empty())
        l.error(line_of(*fn), r.key("address_family"),
                "expected only with srv (it says which records the SRV targets resolve to: A, AAAA or both); "
                "a static peer's address says its family");
    read_dns_name(l, r, "fqdn", rc.fqdn);
    read_region_admission(l, r, rc.peer_max_calls);  // config_admission.cc
    read_rules(l, r, rc.rules);  // [[region.rule]] (config_rules.cc)
    r.get("tls");  // read with [tls] (config_tls.cc)
    const toml::node* pn = r.get("peers");
    if (pn) {
        const toml::array* arr = pn->as_array();
        if (!arr || (!arr->empty() && !arr->is_array_of_tables())) {
            l.error(line_of(*pn), r.key("peers"),
                    "expected an array of tables such as [ { address = \"198.18.0.11:5060\", priority = 10, weight = 60 } ], got " +
                        (arr ? std::string("an array of something else") : type_name(*pn)));
        } else if (arr->empty()) {
            l.error(line_of(*pn), r.key("peers"), "expected at least one peer, got an empty array");
        } else {
            for (std::size_t i = 0; i < arr->size(); ++i) {
                const std::string pk = r.key("peers") + "[" + std::to_string(i) + "]";
                const toml::table& pt = *arr->get(i)->as_table();
                peer_config pc;
                read_peer(l, pt, pk, pc);
                const toml::node* an = pt.get("address");
                if (an && an->is_string() && parse_peer_address(an->as_string()->get())) {
                    auto [it, fresh] = addresses.emplace(std::pair{pc.address, pc.port}, peer_seen{index, i, pc.line});
                    if (!fresh)
                        l.error(line_of(*an), pk + ".address",
                                "expected each peer once in the whole file; " + to_string(endpoint{pc.address, pc.port}) +
                                    " is already region[" + std::to_string(it->second.region) +
                                    "].peers[" + std::to_string(it->second.peer) + "] at line " +
                                    std::to_string(it->second.line));
                }
                if (!pc.name.empty() && is_plain_name(pc.name)) {
                    auto [it, fresh] = peer_names.emplace(pc.name, peer_seen{index, i, pc.line});
                    if (!fresh)
                        l.error(line_of(*pt.get("name")), pk + ".name",
                                "expected a unique peer name; " + quoted(pc.name) + " is already used by region[" +
                                    std::to_string(it->second.region) + "].peers[" + std::to_string(it->second.peer) +
                                    "] at line " + std::to_string(it->second.line));
                }
                rc.peers.push_back(std::move(pc));
            }
        }
    }
    if (!sn && !pn)
        l.error(rc.line, r.key("peers"),
                "missing; expected a static list peers = [ { address = \"198.18.0.11:5060\" } ] or "
                "srv = \"_sip._udp.<domain>\"");
    if (sn && pn)
        l.error(line_of(*sn), r.key("srv"), "expected either srv or peers, not both; remove one");
    r.get_choice("probe", probe_names, rc.probe);
    trunks.reference(l, r, "trunk", rc.trunk);
    r.finish();
}

void read_regions(loader& l, const toml::node* n, const name_index& trunks, std::vector<region_config>& out,
                  name_index& names)
{
    const toml::array* arr = table_array(l, n, "region");
    if (!arr) return;
    std::map<std::pair<ip_address, uint16_t>, peer_seen> addresses;
    std::map<std::string, peer_seen> peer_names;
    std::size_t static_peers = 0;
    for (std::size_t i = 0; i < arr->size(); ++i) {
        const toml::table& t = *arr->get(i)->as_table();
        const std::string prefix = "region[" + std::to_string(i) + "]";
        region_config rc;
        read_region(l, t, prefix, i, trunks, addresses, peer_names, rc);
        names.add(l, t, i, rc.name, rc.line);
        // Peers index the health table (sip::peer_health) by id; DNS-learned peers are
        // checked against the same limit when the tables are built.
        for (std::size_t k = 0; k < rc.peers.size(); ++k)
            if (++static_peers == max_peers + 1)
                l.error(rc.peers[k].line, prefix + ".peers[" + std::to_string(k) + "]",
                        "expected " + at_most(max_peers, "peers in the whole file (the peer health table)") +
                            "; this is one more");
        // A peer and a peer group name their region by a 16-bit index.
        if (i == max_regions)
            l.error(rc.line, prefix,
                    "expected " + at_most(max_regions, "[[region]] tables") + ", got " + std::to_string(arr->size()));
        out.push_back(std::move(rc));
    }
    if (!out.empty() && trunks.empty())
        l.error(out[0].line, "trunk",
                "missing; expected at least one [[trunk]]: calls to the peers of [[region]]s leave from a trunk");
}

// In the order of sip::selector: get_choice stores the index.
constexpr std::array<std::string_view, 4> selector_names{"srv", "round_robin", "least_calls", "hash_call_id"};
static_assert(static_cast<std::size_t>(sip::selector::hash_call_id) + 1 == selector_names.size());

void read_peer_groups(loader& l, const toml::node* n, const name_index& regions, std::vector<peer_group_config>& out,
                      name_index& names)
{
    const toml::array* arr = table_array(l, n, "peer_group");
    if (!arr) return;
    for (std::size_t i = 0; i < arr->size(); ++i) {
        const toml::table& t = *arr->get(i)->as_table();
        table_reader r(l, t, "peer_group[" + std::to_string(i) + "]");
        peer_group_config g;
        g.line = r.line();
        r.require("name", "a name such as \"cloud-voice\"");
        r.require("regions", "an array of [[region]] names, local region first, such as [\"region1\", \"region2\"]");
        read_name(l, r, g.name);
        const toml::node* rn = r.get("regions");
        std::vector<const toml::node*> region_nodes;
        r.get_string_array("regions", g.regions, &region_nodes);
        if (rn && rn->is_array() && rn->as_array()->empty())
            l.error(line_of(*rn), r.key("regions"), "expected at least one region name, got an empty array");
        for (std::size_t k = 0; k < g.regions.size(); ++k) {
            const toml::node& e = *region_nodes[k];
            const std::string ek = r.key("regions") + "[" + std::to_string(index_in(*rn, &e)) + "]";
            if (!regions.find(g.regions[k]))
                l.error(line_of(e), ek, "no region named " + quoted(g.regions[k]) + regions.known());
            else if (std::find(g.regions.begin(), g.regions.begin() + static_cast<std::ptrdiff_t>(k), g.regions[k]) !=
                     g.regions.begin() + static_cast<std::ptrdiff_t>(k))
                l.error(line_of(e), ek, "expected each region once, got " + quoted(g.regions[k]) + " again");
        }
        r.get_choice("selector", selector_names, g.selector);
        r.finish();
        // A route names its peer group by a 16-bit index.
        if (i == max_peer_groups)
            l.error(g.line, "peer_group[" + std::to_string(i) + "]",
                    "expected " + at_most(max_peer_groups, "[[peer_group]] tables") + ", got " +
                        std::to_string(arr->size()));
        names.add(l, t, i, g.name, g.line);
        out.push_back(std::move(g));
    }
}

// In the order of sip::match_field: get_choice stores the index.
constexpr std::array<std::string_view, sip::match_field_count> field_names{"ruri_user", "from_user", "to_user", "trunk"};
static_assert(static_cast<std::size_t>(sip::match_field::trunk) + 1 == field_names.size());

void read_routes(loader& l, const toml::node* n, const name_index& groups, std::vector<route_config>& out,
                 int& default_route)
{
    const toml::array* arr = table_array(l, n, "route");
    if (!arr) return;
    name_index names("route");
    for (std::size_t i = 0; i < arr->size(); ++i) {
        const toml::table& t = *arr->get(i)->as_table();
        table_reader r(l, t, "route[" + std::to_string(i) + "]");
        route_config rc;
        rc.line = r.line();
        r.require("name", "a name such as \"default\"");
        r.require("peer_group", "the name of a [[peer_group]]");
        read_name(l, r, rc.name);
        if (auto m = r.typed<toml::table>("match", "an inline table such as { field = \"ruri_user\", pattern = \"^\\\\+1\" }")) {
            rc.has_match = true;
            rc.pattern_line = line_of(*m);
            table_reader mr(l, *m, r.key("match"));
            mr.require("field", "\"ruri_user\", \"from_user\", \"to_user\" or \"trunk\"");
            mr.require("pattern", "a Hyperscan expression such as \"^\\\\+4420\"");
            mr.get_choice("field", field_names, rc.field);
            if (auto v = mr.get_string("pattern", rc.pattern); v && rc.pattern.empty())
                l.error(line_of(*v), mr.key("pattern"),
                        "expected a non-empty expression (\".*\" matches everything; a route without match is the default)");
            mr.finish();
        } else if (!t.contains("match")) {
            if (default_route >= 0)
                l.error(rc.line, r.key("match"),
                        "missing; route[" + std::to_string(default_route) + "] at line " +
                            std::to_string(out[static_cast<std::size_t>(default_route)].line) +
                            " is already the default route (the one without match); give this one a match");
            else
                default_route = static_cast<int>(i);
        }
        groups.reference(l, r, "peer_group", rc.peer_group);
        read_route_fallback(l, r, groups, rc);  // config_fallback.cc
        r.finish();
        names.add(l, t, i, rc.name, rc.line);
        out.push_back(std::move(rc));
    }
}

void read_retry(loader& l, const toml::table& t, retry_config& rc)
{
    table_reader r(l, t, "retry");
    r.get_codes("codes", rc.codes, 400, 699);
    r.get_uint("no_response_ms", rc.no_response_ms, 100, 32000, "milliseconds");
    if (const toml::node* n = t.get("min_no_response_ms")) {
        unsigned v = 0;  // stays 0 when refused (out of range, not an integer): said once
        r.get_uint("min_no_response_ms", v, 50, 32000, "milliseconds");
        if (v != 0) rc.min_no_response_ms = v;
        if (v != 0 && v > rc.no_response_ms)
            l.error(line_of(*n), r.key("min_no_response_ms"),
                    "expected at most no_response_ms (" + std::to_string(rc.no_response_ms) + "), got " +
                        std::to_string(rc.min_no_response_ms));
    } else {
        // Not given: the default, unless no_response_ms is shorter (100..199 is allowed there).
        rc.min_no_response_ms = std::min(rc.min_no_response_ms, rc.no_response_ms);
    }
    r.get_bool("after_provisional", rc.after_provisional);
    r.get_uint("max_attempts", rc.max_attempts, 1, 16, "peers tried per call");
    r.get_uint("retry_after_s", rc.retry_after_s, 0, 86400, "seconds");
    r.finish();
}

void read_limits(loader& l, const toml::table& t, limits_config& lc)
{
    table_reader r(l, t, "limits");
    r.get_uint("transactions_per_worker", lc.transactions_per_worker, 1024, 4194304, "");
    r.get_uint("dialogs_per_worker", lc.dialogs_per_worker, 1024, 4194304, "");
    r.get_uint("large_messages_per_worker", lc.large_messages_per_worker, 1, 4096, "setups holding an INVITE over 4 KiB");
    r.finish();
}

void read_self(loader& l, const toml::table& t, self_config& s)
{
    table_reader r(l, t, "self");
    r.get_uint("healthy_code", s.healthy_code, 200, 299, "the answer while it takes calls");
    if (const toml::node* n = r.get("draining_code")) {
        const auto* text = n->as<std::string>();
        const auto* num = n->as<int64_t>();
        if (text && text->get() == "none") {
            s.draining_code = 0;
        } else if (num && num->get() >= 400 && num->get() <= 699) {
            s.draining_code = static_cast<unsigned>(num->get());
        } else {
            const std::string got = text ? quoted(text->get()) : num ? std::to_string(num->get()) : type_name(*n);
            l.error(line_of(*n), r.key("draining_code"),
                    "expected a status code 400..699, or \"none\" for no answer at all, got " + got);
        }
    }
    r.get_uint("drain_timeout_s", s.drain_timeout_s, 1, 86400, "seconds");
    r.get_uint("overload_calls", s.overload_calls, 0, 100000000, "active calls; 0: never overloaded");
    r.finish();
}

void read_health(loader& l, const toml::table& t, health_config& h)
{
    table_reader r(l, t, "health");
    r.get_uint("options_interval_ms", h.options_interval_ms, 100, 600000, "milliseconds");
    r.get_uint("options_timeout_ms", h.options_timeout_ms, 50, 60000, "milliseconds");
    r.get_uint("down_after", h.down_after, 1, 100, "consecutive failed probes");
    r.get_uint("up_after", h.up_after, 1, 100, "consecutive good probes");
    r.get_codes("accepted_codes", h.accepted_codes, 100, 699);
    r.get_uint("passive_down_after", h.passive_down_after, 1, 100, "consecutive failed calls");
    r.get_uint("retest_interval_ms", h.retest_interval_ms, 1000, 3600000, "milliseconds");
    if (h.options_timeout_ms > h.options_interval_ms) {
        const toml::node* n = t.get("options_timeout_ms");
        if (!n) n = t.get("options_interval_ms");
        l.error(n ? line_of(*n) : r.line(), r.key("options_timeout_ms"),
                "expected at most options_interval_ms (" + std::to_string(h.options_interval_ms) + "), got " +
                    std::to_string(h.options_timeout_ms));
    }
    r.finish();
}


}  // namespace sbc::control::config_detail
