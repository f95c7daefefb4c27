// Loads sbc.toml into the plain structs of config.h and checks every value, collecting every
// problem with its file, line and dotted key so the operator fixes the file in one pass.
// Control core only (also sbcctl and tests): allocates and uses exceptions internally
// (toml++ throws on syntax errors); nothing escapes to the caller.
//
// Key naming in errors: sections by name ("node.workers"), array-of-tables entries by 0-based
// index ("interface[1].address"), because a broken entry may have no usable name.
#include "control/config.h"

#include "control/config_dscp.h"
#include "control/config_reader.h"
#include "dataplane/nd.h"

#include <fstream>

namespace sbc::control {

using namespace config_detail;

namespace config_detail {
// [streams], [tls] and the trunks' and regions' tls tables (config_tls.cc): after the trunks
// and regions, whose transports say which of them need TLS.
void read_streams(loader& l, const toml::table& t, streams::stream_settings& s);
void read_tls(loader& l, const toml::node* tls, const toml::node* trunks, const toml::node* regions, config& cfg);
void read_flood(loader& l, const toml::table& t, flood_config& f);  // config_flood.cc
void read_scanner(loader& l, const toml::table& t, scanner_config& s);  // config_scanner.cc
void read_overload(loader& l, const toml::table& t, overload_config& o);  // config_scanner.cc
void read_overload_control(loader& l, const toml::table& t, oc_config& o);  // config_oc.cc
}  // namespace config_detail

namespace {

void read_node(loader& l, const toml::table& t, node_config& n)
{
    table_reader r(l, t, "node");
    if (auto v = r.get_string("name", n.name); v && !is_plain_name(n.name))
        l.error(line_of(*v), r.key("name"),
                "expected 1 to 64 letters, digits, '-', '_' or '.', got " + quoted(n.name));
    r.get_uint("workers", n.workers, 1, sbc::max_workers, "worker lcores");
    if (auto v = r.get_string("control_socket", n.control_socket)) {
        if (n.control_socket.empty() || n.control_socket[0] != '/')
            l.error(line_of(*v), r.key("control_socket"),
                    "expected an absolute path like \"/run/sbc/sbcd.sock\", got " + quoted(n.control_socket));
        else if (n.control_socket.size() > max_sun_path)
            l.error(line_of(*v), r.key("control_socket"),
                    "expected a path of at most " + std::to_string(max_sun_path) +
                        " bytes (a Unix socket limit), got " + std::to_string(n.control_socket.size()));
    }
    if (auto v = r.get_string("management_http", n.management_http);
        v && !n.management_http.empty() && !parse_host_port(n.management_http))
        l.error(line_of(*v), r.key("management_http"),
                "expected \"host:port\" (port 1..65535) like \"127.0.0.1:9090\", or \"\" to disable HTTP, got " +
                    quoted(n.management_http));
    r.finish();
}

void read_dpdk(loader& l, const toml::table& t, dpdk_config& d)
{
    table_reader r(l, t, "dpdk");
    r.get_bool("no_huge", d.no_huge);
    r.get_uint("memory_mb", d.memory_mb, min_memory_mb, 1 << 24, "MB of DPDK memory");
    r.get_uint("mbufs_per_worker", d.mbufs_per_worker, 1024, 1 << 24, "packet buffers per worker");
    r.get_uint("rx_ring", d.rx_ring, 64, 32768, "descriptors per RX queue");
    r.get_uint("tx_ring", d.tx_ring, 64, 32768, "descriptors per TX queue");
    if (auto v = r.get_string("file_prefix", d.file_prefix); v && !d.file_prefix.empty() && !is_plain_name(d.file_prefix))
        l.error(line_of(*v), r.key("file_prefix"),
                "expected 1 to 64 letters, digits, '-', '_' or '.', or \"\" for \"sbc-<node name>\", got " +
                    quoted(d.file_prefix));
    r.get_string_array("eal_args", d.eal_args);
    r.get_uint("af_packet_max_datagram", d.af_packet_max_datagram, 1500, 65200, "bytes of a reassembled IPv4 datagram");
    r.finish();
}

void read_arp(loader& l, const toml::table& t, arp_config& a)
{
    table_reader r(l, t, "arp");
    r.get_uint("timeout_s", a.timeout_s, 1, 86400, "seconds");
    r.get_uint("retry_ms", a.retry_ms, 10, 60000, "milliseconds");
    r.get_uint("retries", a.retries, 0, 100, "");
    r.finish();
}

void read_ipv6(loader& l, const toml::table& t, ipv6_config& c)
{
    table_reader r(l, t, "ipv6");
    r.get_uint("max_extension_headers", c.max_extension_headers, 0, 32, "extension headers before the upper layer");
    r.get_uint("icmp_error_rate", c.icmp_error_rate, 0, 100000, "ICMPv6 errors per second per worker");
    r.get_uint("icmp_error_burst", c.icmp_error_burst, 1, 100000, "ICMPv6 errors in one burst");
    r.finish();
}

// Why an IPv6 interface address cannot be ours, or "" when it can: a unicast address of global
// or unique-local scope that is not the subnet's anycast address.
std::string unusable_address6(const ip_prefix& p)
{
    const auto b = p.addr.v6_bytes();
    if (dataplane::is_multicast6(b.data())) return "a multicast address";
    if (dataplane::is_link_local6(b.data())) return "a link-local address (sbcd derives its own from the MAC)";
    if (p.addr.is_unspecified()) return "the unspecified address";
    const ip_address loopback = *parse_address("::1");
    if (p.addr == loopback) return "the loopback address";
    if (ip_prefix{*parse_address("::ffff:0:0"), 96}.contains(p.addr)) return "an IPv4-mapped address (write it in address)";
    if (p.len <= 126 && p.addr.masked(p.len) == p.addr) return "the subnet-router anycast address of its prefix (host bits all zero)";
    return "";
}

void read_interface_v6(loader& l, table_reader& r, interface_config& ic)
{
    std::string text;
    if (auto v = r.get_string("address6", text)) {
        const auto p = parse_prefix(text);
        if (!p || !p->addr.is_v6())
            l.error(line_of(*v), r.key("address6"),
                    "expected an IPv6 address with prefix length 1..128 like \"2001:db8::1/64\", got " + quoted(text));
        else if (const std::string why = unusable_address6(*p); !why.empty())
            l.error(line_of(*v), r.key("address6"), "expected a global or unique-local host address, got " + why + ": " + quoted(text));
        else
            ic.address6 = *p;
    }
    if (auto v = r.get_string("gateway6", text)) {
        const auto g = parse_address(text);
        const bool link_local = g && g->is_v6() && dataplane::is_link_local6(g->v6_bytes().data());
        if (!g || !g->is_v6())
            l.error(line_of(*v), r.key("gateway6"), "expected an IPv6 address like \"fe80::1\", got " + quoted(text));
        else if (!ic.address6)
            l.error(line_of(*v), r.key("gateway6"), "needs address6: an interface without IPv6 has no IPv6 gateway");
        else if (!link_local && !ic.address6->contains(*g))
            l.error(line_of(*v), r.key("gateway6"),
                    "expected a link-local address or one inside the interface's prefix " +
                        to_string(ic.address6->canonical()) + ", got " + quoted(text));
        else if (*g == ic.address6->addr)
            l.error(line_of(*v), r.key("gateway6"), "expected another host than the interface's own address " + quoted(text));
        else
            ic.gateway6 = *g;
    }
}

std::optional<std::pair<uint16_t, uint16_t>> parse_port_range(std::string_view s)
{
    auto dash = s.find('-');
    if (dash == std::string_view::npos) return std::nullopt;
    auto lo = parse_decimal(s.substr(0, dash), 5);
    auto hi = parse_decimal(s.substr(dash + 1), 5);
    if (!lo || !hi || *lo < 1024 || *hi > 65535 || *lo >= *hi) return std::nullopt;
    return std::pair{static_cast<uint16_t>(*lo), static_cast<uint16_t>(*hi)};
}

void read_interface(loader& l, const toml::table& t, const std::string& prefix, interface_config& ic)
{
    table_reader r(l, t, prefix);
    ic.line = r.line();
    r.require("name", "a name such as \"core\"");
    r.require("device", "a PCI address or a vdev string such as \"net_af_packet0,iface=eth1\"");
    r.require("address", "an address with prefix length such as \"198.18.0.1/24\"");

    if (auto v = r.get_string("name", ic.name); v && !is_plain_name(ic.name))
        l.error(line_of(*v), r.key("name"), "expected 1 to 64 letters, digits, '-', '_' or '.', got " + quoted(ic.name));
    if (auto v = r.get_string("device", ic.device); v && ic.device.empty())
        l.error(line_of(*v), r.key("device"),
                "expected a PCI address such as \"0000:3b:00.0\" or a vdev string such as \"net_af_packet0,iface=eth1\"");

    std::string text;
    bool address_ok = false;
    if (auto v = r.get_string("address", text)) {
        auto p = parse_prefix(text);
        const uint32_t host = p ? p->addr.v4_host() & ~prefix_mask(p->len) : 0;
        if (is_ipv6_text(text)) {
            l.error(line_of(*v), r.key("address"),
                    "expected an IPv4 address; an IPv6 one goes in address6 (address6 = " + quoted(text) + ")");
        } else if (!p) {
            l.error(line_of(*v), r.key("address"),
                    "expected an IPv4 address with prefix length 1..32 like \"198.18.0.1/24\", got " + quoted(text));
        } else if (p->len <= 30 && (host == 0 || host == ~prefix_mask(p->len))) {
            l.error(line_of(*v), r.key("address"),
                    "expected a host address, got the network or broadcast address of its subnet: " + quoted(text));
        } else {
            ic.address = *p;
            address_ok = true;
        }
    }

    if (auto v = r.get_string("gateway", text)) {
        auto g = parse_ipv4(text);
        if (is_ipv6_text(text))
            l.error(line_of(*v), r.key("gateway"),
                    "expected an IPv4 address; an IPv6 gateway goes in gateway6 (gateway6 = " + quoted(text) + ")");
        else if (!g)
            l.error(line_of(*v), r.key("gateway"), "expected an IPv4 address like \"198.18.0.254\", got " + quoted(text));
        else if (address_ok && !ic.address.contains(*g))
            l.error(line_of(*v), r.key("gateway"),
                    "expected an address inside the interface's subnet " + to_string(ic.address.canonical()) +
                        ", got " + quoted(text));
        else if (address_ok && *g == ic.address.addr)
            l.error(line_of(*v), r.key("gateway"), "expected another host than the interface's own address " + quoted(text));
        else
            ic.gateway = *g;
    }
    read_interface_v6(l, r, ic);

    unsigned vlan = ic.vlan;
    r.get_uint("vlan", vlan, 0, 4094, "802.1Q VLAN id, 0 = untagged");
    ic.vlan = static_cast<uint16_t>(vlan);

    if (auto v = r.get_string("media_ports", text)) {
        if (auto range = parse_port_range(text)) {
            ic.media_port_min = range->first;
            ic.media_port_max = range->second;
        } else {
            l.error(line_of(*v), r.key("media_ports"),
                    "expected \"MIN-MAX\" with 1024 <= MIN < MAX <= 65535 like \"20000-59999\", got " + quoted(text));
        }
    }
    read_dscp(l, r, "dscp_sip", ic.dscp_sip);
    read_dscp(l, r, "dscp_rtp", ic.dscp_rtp);
    r.finish();
}

void read_interfaces(loader& l, const toml::node* n, std::vector<interface_config>& out)
{
    if (!n) {
        l.error(0, "interface", "missing; expected at least one [[interface]] table");
        return;
    }
    const toml::array* arr = n->as_array();
    if (arr && arr->empty()) {
        l.error(line_of(*n), "interface", "expected at least one [[interface]] table");
        return;
    }
    if (!arr || !arr->is_array_of_tables()) {
        l.error(line_of(*n), "interface",
                "expected an array of tables written [[interface]], got " + type_name(*n));
        return;
    }
    std::map<std::string, std::size_t> by_name;
    std::map<std::pair<std::string, uint16_t>, std::size_t> by_device_vlan;
    std::map<std::string, std::vector<std::size_t>> by_device;  // interfaces on each device (port), in file order
    for (std::size_t i = 0; i < arr->size(); ++i) {
        const std::string prefix = "interface[" + std::to_string(i) + "]";
        interface_config ic;
        read_interface(l, *arr->get(i)->as_table(), prefix, ic);
        const toml::table& t = *arr->get(i)->as_table();
        // What the snapshot's tables hold (dataplane/snapshot.h): reported once, at the first
        // entry that does not fit.
        if (i == max_interfaces)
            l.error(ic.line, prefix,
                    "expected " + at_most(max_interfaces, "[[interface]] tables (the dataplane's interface table)") +
                        ", got " + std::to_string(arr->size()));
        if (!ic.device.empty()) {
            auto& on_device = by_device[ic.device];
            const toml::node* dn = t.get("device");
            const int device_line = dn ? line_of(*dn) : ic.line;
            if (on_device.empty() && by_device.size() == std::size_t{max_ports} + 1)
                l.error(device_line, prefix + ".device",
                        "expected " + at_most(max_ports, "distinct devices (DPDK ports)") + "; " + quoted(ic.device) +
                            " is one more");
            if (on_device.size() >= max_interfaces_per_port) {
                std::string users;
                for (std::size_t n = 0; n < max_interfaces_per_port; ++n)
                    users += (n == 0 ? "interface[" : ", interface[") + std::to_string(on_device[n]) + "]";
                l.error(device_line, prefix + ".device",
                        "expected " + at_most(max_interfaces_per_port, "interfaces (VLANs) on one device") + "; " +
                            users + " already use " + quoted(ic.device));
            }
            on_device.push_back(i);
        }
        if (!ic.name.empty()) {
            auto [it, fresh] = by_name.emplace(ic.name, i);
            if (!fresh) {
                const toml::node* nn = t.get("name");
                l.error(nn ? line_of(*nn) : ic.line, prefix + ".name",
                        "expected a unique name; " + quoted(ic.name) + " is already used by interface[" +
                            std::to_string(it->second) + "] at line " + std::to_string(out[it->second].line));
            }
        }
        if (!ic.device.empty()) {
            auto [it, fresh] = by_device_vlan.emplace(std::pair{ic.device, ic.vlan}, i);
            if (!fresh) {
                const toml::node* dn = t.get("device");
                l.error(dn ? line_of(*dn) : ic.line, prefix + ".device",
                        "expected a device and vlan pair not used by another interface; interface[" +
                            std::to_string(it->second) + "] already uses " + quoted(ic.device) + " with vlan " +
                            std::to_string(ic.vlan));
            }
        }
        out.push_back(std::move(ic));
    }
}

// A section that must be a single table ([node]); nullptr (after reporting) otherwise.
}  // namespace

std::string config_error::to_string() const
{
    // Empty parts are left out: a syntax error has no key, an unreadable file no line.
    std::string s = file;
    if (line > 0) s += ":" + std::to_string(line);
    s += ": ";
    if (!key.empty()) s += key + ": ";
    return s + message;
}

load_result parse_config(std::string_view text, std::string_view path)
{
    loader l(path);
    load_result result;
    toml::table root;
    try {
        root = toml::parse(text, path);
    } catch (const toml::parse_error& e) {
        l.error(static_cast<int>(e.source().begin.line), "", "syntax error: " + std::string(e.description()));
        result.errors = l.take_errors();
        return result;
    }

    config cfg;
    cfg.path = std::string(path);
    table_reader top(l, root, "");
    if (auto t = section(l, top.get("node"), "node")) read_node(l, *t, cfg.node);
    if (auto t = section(l, top.get("dpdk"), "dpdk")) read_dpdk(l, *t, cfg.dpdk);
    if (auto t = section(l, top.get("arp"), "arp")) read_arp(l, *t, cfg.arp);
    if (auto t = section(l, top.get("ipv6"), "ipv6")) read_ipv6(l, *t, cfg.ipv6);
    read_interfaces(l, top.get("interface"), cfg.interfaces);
    name_index interfaces("interface"), trunks("trunk"), regions("region"), groups("peer_group");
    for (std::size_t i = 0; i < cfg.interfaces.size(); ++i)
        interfaces.remember(cfg.interfaces[i].name, i, cfg.interfaces[i].line);
    read_trunks(l, top.get("trunk"), interfaces, cfg.trunks, trunks);
    read_regions(l, top.get("region"), trunks, cfg.regions, regions);
    read_tls(l, top.get("tls"), root.get("trunk"), root.get("region"), cfg);
    if (auto t = section(l, top.get("streams"), "streams")) read_streams(l, *t, cfg.streams);
    read_peer_groups(l, top.get("peer_group"), regions, cfg.peer_groups, groups);
    read_routes(l, top.get("route"), groups, cfg.routes, cfg.default_route);
    if (auto t = section(l, top.get("retry"), "retry")) read_retry(l, *t, cfg.retry);
    check_route_fallbacks(l, cfg);  // config_fallback.cc: against [retry] codes
    if (auto t = section(l, top.get("limits"), "limits")) read_limits(l, *t, cfg.limits);
    if (auto t = section(l, top.get("health"), "health")) read_health(l, *t, cfg.health);
    if (auto t = section(l, top.get("dns"), "dns")) read_dns(l, *t, cfg.dns);
    if (auto t = section(l, top.get("media"), "media")) read_media(l, *t, cfg, cfg.media);
    if (auto t = section(l, top.get("self"), "self")) read_self(l, *t, cfg.self);
    if (auto t = section(l, top.get("admission"), "admission")) read_admission(l, *t, cfg.admission);
    if (auto t = section(l, top.get("flood"), "flood")) read_flood(l, *t, cfg.flood);
    if (auto t = section(l, top.get("scanner"), "scanner")) read_scanner(l, *t, cfg.scanner);
    if (auto t = section(l, top.get("overload"), "overload")) read_overload(l, *t, cfg.overload);
    if (auto t = section(l, top.get("overload_control"), "overload_control"))
        read_overload_control(l, *t, cfg.overload_control);
    if (auto t = section(l, top.get("cdr"), "cdr")) read_cdr(l, *t, cfg.cdr);
    top.finish();

    if (l.ok()) result.cfg = std::move(cfg);
    result.errors = l.take_errors();
    return result;
}

load_result load_config(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        const int err = errno;
        load_result r;
        r.errors.push_back({path, 0, "", std::string("cannot read the file: ") + std::strerror(err)});
        return r;
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) {
        load_result r;
        r.errors.push_back({path, 0, "", "cannot read the file: read error"});
        return r;
    }
    return parse_config(text.str(), path);
}

std::optional<host_port> parse_host_port(std::string_view s)
{
    std::string_view host;
    std::string_view port;
    if (!s.empty() && s[0] == '[') {
        auto close = s.find(']');
        if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':') return std::nullopt;
        host = s.substr(1, close - 1);
        port = s.substr(close + 2);
    } else {
        auto colon = s.rfind(':');
        if (colon == std::string_view::npos) return std::nullopt;
        host = s.substr(0, colon);
        port = s.substr(colon + 1);
        if (host.find(':') != std::string_view::npos) return std::nullopt;  // bare IPv6 needs brackets
    }
    auto p = parse_decimal(port, 5);
    if (host.empty() || !p || *p < 1 || *p > 65535) return std::nullopt;
    return host_port{std::string(host), static_cast<uint16_t>(*p)};
}

}  // namespace sbc::control
