// Loads sbc.toml into the plain structs of config.h and checks every value, collecting every
// problem with its file, line and dotted key so the operator fixes the file in one pass.
// Control core only (also sbcctl and tests): allocates and uses exceptions internally
// (toml++ throws on syntax errors); nothing escapes to the caller.
//
// Key naming in errors: sections by name ("node.workers"), array-of-tables entries by 0-based
// index ("interface[1].address"), because a broken entry may have no usable name.
#include "control/config.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include <toml++/toml.h>

namespace sbc::control {

namespace {

// Top-level tables that later issues parse ([self], [media], [dns]). They are accepted and
// ignored here so that the example config can already show the whole file.
constexpr std::array<std::string_view, 3> later_sections{"self", "media", "dns"};

constexpr unsigned min_memory_mb = 256;
constexpr std::size_t max_sun_path = 107;  // sizeof(sockaddr_un::sun_path) - 1 on Linux

int line_of(const toml::node& n) { return static_cast<int>(n.source().begin.line); }

std::string type_name(const toml::node& n)
{
    switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
    }
}

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::size_t edit_distance(std::string_view a, std::string_view b)
{
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

bool is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
}

bool is_plain_name(std::string_view s)
{
    return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), is_name_char);
}

std::optional<unsigned> parse_decimal(std::string_view s, std::size_t max_digits)
{
    if (s.empty() || s.size() > max_digits) return std::nullopt;
    if (s.size() > 1 && s[0] == '0') return std::nullopt;  // "08" is ambiguous (octal to inet_aton)
    unsigned v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
    return v;
}

// Position of `e` in the array `arr`.
std::size_t index_in(const toml::node& arr, const toml::node* e)
{
    const toml::array& a = *arr.as_array();
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a.get(i) == e) return i;
    return 0;
}

ipv4_addr prefix_mask(uint8_t len) { return len == 0 ? 0 : ~ipv4_addr{0} << (32 - len); }

class loader {
public:
    explicit loader(std::string_view file) : file_(file) {}

    void error(int line, std::string key, std::string message)
    {
        errors_.push_back({file_, line, std::move(key), std::move(message)});
    }

    std::vector<config_error> take_errors()
    {
        std::stable_sort(errors_.begin(), errors_.end(),
                         [](const config_error& a, const config_error& b) { return a.line < b.line; });
        return std::move(errors_);
    }

    [[nodiscard]] bool ok() const { return errors_.empty(); }

private:
    std::string file_;
    std::vector<config_error> errors_;
};

// Reads the keys of one table; whatever it was not asked for is reported as unknown by
// finish(), with a suggestion when the key is a near miss of a known one.
class table_reader {
public:
    table_reader(loader& l, const toml::table& t, std::string prefix)
        : l_(l), t_(t), prefix_(std::move(prefix)) {}

    [[nodiscard]] std::string key(std::string_view k) const
    {
        return prefix_.empty() ? std::string(k) : prefix_ + "." + std::string(k);
    }
    [[nodiscard]] int line() const { return line_of(t_); }

    const toml::node* get(std::string_view k)
    {
        known_.emplace(k);
        return t_.get(k);
    }

    // nullptr when absent or of the wrong type (then reported).
    template <class T>
    auto typed(std::string_view k, std::string_view expected)
        -> decltype(std::declval<const toml::node&>().template as<T>())
    {
        const toml::node* n = get(k);
        if (!n) return nullptr;
        if (auto v = n->as<T>()) return v;
        l_.error(line_of(*n), key(k), "expected " + std::string(expected) + ", got " + type_name(*n));
        return nullptr;
    }

    void get_bool(std::string_view k, bool& out)
    {
        if (auto v = typed<bool>(k, "true or false")) out = v->get();
    }

    void get_uint(std::string_view k, unsigned& out, int64_t min, int64_t max, std::string_view what)
    {
        const std::string expected = "an integer in " + std::to_string(min) + ".." + std::to_string(max) +
                                     (what.empty() ? "" : " (" + std::string(what) + ")");
        auto v = typed<int64_t>(k, expected);
        if (!v) return;
        if (v->get() < min || v->get() > max) {
            l_.error(line_of(*v), key(k), "expected " + expected + ", got " + std::to_string(v->get()));
            return;
        }
        out = static_cast<unsigned>(v->get());
    }

    // Returns the node for further checks, or nullptr when absent or not a string.
    const toml::value<std::string>* get_string(std::string_view k, std::string& out)
    {
        auto v = typed<std::string>(k, "a string");
        if (v) out = v->get();
        return v;
    }

    // `nodes`, when given, receives the node of each string kept (for errors about one entry).
    void get_string_array(std::string_view k, std::vector<std::string>& out,
                          std::vector<const toml::node*>* nodes = nullptr)
    {
        auto arr = typed<toml::array>(k, "an array of strings");
        if (!arr) return;
        out.clear();
        for (std::size_t i = 0; i < arr->size(); ++i) {
            const toml::node& e = *arr->get(i);
            if (auto s = e.value<std::string>(); s && e.is_string()) {
                out.push_back(*s);
                if (nodes) nodes->push_back(&e);
            }
            else
                l_.error(line_of(e), key(k) + "[" + std::to_string(i) + "]",
                         "expected a string, got " + type_name(e));
        }
    }

    void get_u16(std::string_view k, uint16_t& out, int64_t min, int64_t max, std::string_view what)
    {
        unsigned v = out;
        get_uint(k, v, min, max, what);
        out = static_cast<uint16_t>(v);
    }

    // One of `choices` (a string); its index in `out`. Returns the node when it was a string.
    template <class E, std::size_t N>
    const toml::value<std::string>* get_choice(std::string_view k, const std::array<std::string_view, N>& choices,
                                                E& out)
    {
        std::string text;
        auto v = get_string(k, text);
        if (!v) return nullptr;
        for (std::size_t i = 0; i < N; ++i)
            if (choices[i] == text) {
                out = static_cast<E>(i);
                return v;
            }
        std::string list;
        for (std::size_t i = 0; i < N; ++i) list += (i == 0 ? "" : (i + 1 == N ? " or " : ", ")) + quoted(choices[i]);
        l_.error(line_of(*v), key(k), "expected " + list + ", got " + quoted(text));
        return v;
    }

    // An array of SIP status codes, each in min..max, no repeats; at least one.
    void get_codes(std::string_view k, std::vector<uint16_t>& out, int64_t min, int64_t max)
    {
        const std::string expected = "an array of SIP status codes in " + std::to_string(min) + ".." + std::to_string(max);
        auto arr = typed<toml::array>(k, expected);
        if (!arr) return;
        if (arr->empty()) {
            l_.error(line_of(*arr), key(k), "expected at least one code in " + std::to_string(min) + ".." +
                                                std::to_string(max) + ", got an empty array");
            return;
        }
        std::vector<uint16_t> codes;
        for (std::size_t i = 0; i < arr->size(); ++i) {
            const toml::node& e = *arr->get(i);
            const std::string ek = key(k) + "[" + std::to_string(i) + "]";
            auto v = e.value<int64_t>();
            if (!v || !e.is_integer()) {
                l_.error(line_of(e), ek, "expected an integer in " + std::to_string(min) + ".." + std::to_string(max) +
                                             ", got " + type_name(e));
            } else if (*v < min || *v > max) {
                l_.error(line_of(e), ek, "expected a SIP status code in " + std::to_string(min) + ".." +
                                             std::to_string(max) + ", got " + std::to_string(*v));
            } else if (std::find(codes.begin(), codes.end(), *v) != codes.end()) {
                l_.error(line_of(e), ek, "expected each code once, got " + std::to_string(*v) + " again");
            } else {
                codes.push_back(static_cast<uint16_t>(*v));
            }
        }
        out = std::move(codes);
    }

    void require(std::string_view k, std::string_view expected)
    {
        if (!t_.contains(k)) l_.error(line(), key(k), "missing; expected " + std::string(expected));
    }

    void finish()
    {
        for (const auto& [k, v] : t_) {
            if (known_.count(std::string(k.str()))) continue;
            std::string msg = "unknown key";
            for (const auto& candidate : known_)
                if (edit_distance(k.str(), candidate) <= 2) {
                    msg += "; did you mean " + quoted(candidate) + "?";
                    break;
                }
            int line = static_cast<int>(k.source().begin.line);
            l_.error(line ? line : line_of(v), key(k.str()), msg);
        }
    }

private:
    loader& l_;
    const toml::table& t_;
    std::string prefix_;
    std::set<std::string, std::less<>> known_;
};

void read_node(loader& l, const toml::table& t, node_config& n)
{
    table_reader r(l, t, "node");
    if (auto v = r.get_string("name", n.name); v && !is_plain_name(n.name))
        l.error(line_of(*v), r.key("name"),
                "expected 1 to 64 letters, digits, '-', '_' or '.', got " + quoted(n.name));
    r.get_uint("workers", n.workers, 1, max_workers, "worker lcores");
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
        const ipv4_addr host = p ? p->addr & ~prefix_mask(p->len) : 0;
        if (!p) {
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
        const ipv4_addr mask = prefix_mask(ic.address.len);
        const std::string subnet = format_ipv4(ic.address.addr & mask) + "/" + std::to_string(ic.address.len);
        if (!g)
            l.error(line_of(*v), r.key("gateway"), "expected an IPv4 address like \"198.18.0.254\", got " + quoted(text));
        else if (address_ok && (*g & mask) != (ic.address.addr & mask))
            l.error(line_of(*v), r.key("gateway"),
                    "expected an address inside the interface's subnet " + subnet + ", got " + quoted(text));
        else if (address_ok && *g == ic.address.addr)
            l.error(line_of(*v), r.key("gateway"), "expected another host than the interface's own address " + quoted(text));
        else
            ic.gateway = *g;
    }

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
    for (std::size_t i = 0; i < arr->size(); ++i) {
        const std::string prefix = "interface[" + std::to_string(i) + "]";
        interface_config ic;
        read_interface(l, *arr->get(i)->as_table(), prefix, ic);
        const toml::table& t = *arr->get(i)->as_table();
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
const toml::table* section(loader& l, const toml::node* n, std::string_view name)
{
    if (!n) return nullptr;
    if (auto t = n->as_table()) return t;
    l.error(line_of(*n), std::string(name), "expected a table written [" + std::string(name) + "], got " + type_name(*n));
    return nullptr;
}

// An optional [[name]] section: nullptr when absent or (reported) not an array of tables.
const toml::array* table_array(loader& l, const toml::node* n, std::string_view name)
{
    if (!n) return nullptr;
    const toml::array* arr = n->as_array();
    if (arr && (arr->empty() || arr->is_array_of_tables())) return arr;
    l.error(line_of(*n), std::string(name),
            "expected an array of tables written [[" + std::string(name) + "]], got " + type_name(*n));
    return nullptr;
}

// Names of the entries of one [[section]]: reports repeats, answers references.
class name_index {
public:
    explicit name_index(std::string section) : section_(std::move(section)) {}

    void add(loader& l, const toml::table& t, std::size_t i, const std::string& name, int table_line)
    {
        if (name.empty()) return;
        auto [it, fresh] = names_.emplace(name, std::pair{i, table_line});
        if (fresh) return;
        const toml::node* n = t.get("name");
        l.error(n ? line_of(*n) : table_line, section_ + "[" + std::to_string(i) + "].name",
                "expected a unique name; " + quoted(name) + " is already used by " + section_ + "[" +
                    std::to_string(it->second.first) + "] at line " + std::to_string(it->second.second));
    }

    // Records a name already checked elsewhere (interfaces), silently keeping the first.
    void remember(const std::string& name, std::size_t i, int line) { names_.emplace(name, std::pair{i, line}); }

    [[nodiscard]] std::optional<std::size_t> find(const std::string& name) const
    {
        auto it = names_.find(name);
        if (it == names_.end()) return std::nullopt;
        return it->second.first;
    }

    // Reads string key `k` of `r` into `out` and reports it when it names no entry.
    void reference(loader& l, table_reader& r, std::string_view k, std::string& out) const
    {
        if (auto v = r.get_string(k, out); v && !find(out))
            l.error(line_of(*v), r.key(k), "no " + section_ + " named " + quoted(out) + known());
    }

    [[nodiscard]] std::string known() const
    {
        if (names_.empty()) return " (there is no [[" + section_ + "]])";
        std::string s = " (known: ";
        bool first = true;
        for (const auto& [n, _] : names_) {
            s += (first ? "" : ", ") + quoted(n);
            first = false;
        }
        return s + ")";
    }

    [[nodiscard]] bool empty() const { return names_.empty(); }

private:
    std::string section_;
    std::map<std::string, std::pair<std::size_t, int>> names_;
};

void read_name(loader& l, table_reader& r, std::string& out)
{
    if (auto v = r.get_string("name", out); v && !is_plain_name(out))
        l.error(line_of(*v), r.key("name"), "expected 1 to 64 letters, digits, '-', '_' or '.', got " + quoted(out));
}

// "a.b.c.d/n" (n 0..32, no host bits) or a plain address (a /32).
std::optional<ipv4_prefix> parse_allow(std::string_view s, std::string& why)
{
    auto slash = s.find('/');
    auto a = parse_ipv4(s.substr(0, slash));
    if (!a) return std::nullopt;
    if (slash == std::string_view::npos) return ipv4_prefix{*a, 32};
    auto len = parse_decimal(s.substr(slash + 1), 2);
    if (!len || *len > 32) return std::nullopt;
    const ipv4_prefix p{*a, static_cast<uint8_t>(*len)};
    if ((p.addr & ~prefix_mask(p.len)) != 0) {
        why = "; it has host bits set: did you mean " + quoted(format_prefix({p.addr & prefix_mask(p.len), p.len})) + "?";
        return std::nullopt;
    }
    return p;
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
    std::vector<std::string> allow;
    std::vector<const toml::node*> allow_nodes;
    const toml::node* an = r.get("allow");
    r.get_string_array("allow", allow, &allow_nodes);
    if (an && an->is_array() && an->as_array()->empty())
        l.error(line_of(*an), r.key("allow"),
                "expected at least one source prefix; an empty list would drop every call (\"0.0.0.0/0\" allows anyone)");
    for (std::size_t i = 0; i < allow.size(); ++i) {
        std::string why;
        if (auto p = parse_allow(allow[i], why))
            tc.allow.push_back(*p);
        else
            l.error(line_of(*allow_nodes[i]), r.key("allow") + "[" + std::to_string(index_in(*an, allow_nodes[i])) + "]",
                    "expected an address \"A.B.C.D\" or a prefix \"A.B.C.D/N\" with N 0..32, got " + quoted(allow[i]) +
                        why);
    }
    r.finish();
}

void read_trunks(loader& l, const toml::node* n, const name_index& interfaces, std::vector<trunk_config>& out,
                 name_index& names)
{
    const toml::array* arr = table_array(l, n, "trunk");
    if (!arr) return;
    std::map<std::pair<std::string, uint16_t>, std::size_t> by_local;
    for (std::size_t i = 0; i < arr->size(); ++i) {
        const std::string prefix = "trunk[" + std::to_string(i) + "]";
        const toml::table& t = *arr->get(i)->as_table();
        trunk_config tc;
        read_trunk(l, t, prefix, interfaces, tc);
        names.add(l, t, i, tc.name, tc.line);
        if (interfaces.find(tc.interface)) {
            auto [it, fresh] = by_local.emplace(std::pair{tc.interface, tc.port}, i);
            if (!fresh) {
                const toml::node* pn = t.get("port");
                l.error(pn ? line_of(*pn) : tc.line, prefix + ".port",
                        "expected a port not used by another trunk on interface " + quoted(tc.interface) + "; trunk[" +
                            std::to_string(it->second) + "] at line " + std::to_string(out[it->second].line) +
                            " already listens on " + std::to_string(tc.port) +
                            (pn ? "" : " (the default)"));
            }
        }
        out.push_back(std::move(tc));
    }
}

// "A.B.C.D:PORT" or "A.B.C.D" (port 5060).
std::optional<std::pair<ipv4_addr, uint16_t>> parse_peer_address(std::string_view s)
{
    auto colon = s.find(':');
    auto a = parse_ipv4(s.substr(0, colon));
    if (!a) return std::nullopt;
    if (colon == std::string_view::npos) return std::pair{*a, uint16_t{5060}};
    auto p = parse_decimal(s.substr(colon + 1), 5);
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
        } else {
            l.error(line_of(*v), r.key("address"),
                    "expected \"A.B.C.D:PORT\" (port 1..65535) or \"A.B.C.D\" (port 5060), got " + quoted(text));
        }
    }
    r.get_u16("priority", pc.priority, 0, 65535, "RFC 2782: lower first");
    r.get_u16("weight", pc.weight, 0, 65535, "RFC 2782: share within a priority");
    r.finish();
}

constexpr std::array<std::string_view, 2> probe_names{"options", "none"};

void read_region(loader& l, const toml::table& t, const std::string& prefix, std::size_t index,
                 const name_index& trunks, std::map<std::pair<ipv4_addr, uint16_t>, peer_seen>& addresses,
                 std::map<std::string, peer_seen>& peer_names, region_config& rc)
{
    table_reader r(l, t, prefix);
    rc.line = r.line();
    r.require("name", "a name such as \"region1\"");
    read_name(l, r, rc.name);
    const toml::node* sn = r.get("srv");
    if (auto v = r.get_string("srv", rc.srv)) {
        constexpr std::string_view srv_prefix = "_sip._udp.";
        if (rc.srv.size() <= srv_prefix.size() || rc.srv.compare(0, srv_prefix.size(), srv_prefix) != 0)
            l.error(line_of(*v), r.key("srv"),
                    "expected a DNS SRV name \"_sip._udp.<domain>\" such as \"_sip._udp.pstn.example.net\", got " +
                        quoted(rc.srv));
    }
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
                                "expected each peer once in the whole file; " + format_ipv4(pc.address) + ":" +
                                    std::to_string(pc.port) + " is already region[" + std::to_string(it->second.region) +
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
    std::map<std::pair<ipv4_addr, uint16_t>, peer_seen> addresses;
    std::map<std::string, peer_seen> peer_names;
    for (std::size_t i = 0; i < arr->size(); ++i) {
        const toml::table& t = *arr->get(i)->as_table();
        region_config rc;
        read_region(l, t, "region[" + std::to_string(i) + "]", i, trunks, addresses, peer_names, rc);
        names.add(l, t, i, rc.name, rc.line);
        out.push_back(std::move(rc));
    }
    if (!out.empty() && trunks.empty())
        l.error(out[0].line, "trunk",
                "missing; expected at least one [[trunk]]: calls to the peers of [[region]]s leave from a trunk");
}

constexpr std::array<std::string_view, 4> selector_names{"srv", "round_robin", "least_calls", "hash_call_id"};

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
        names.add(l, t, i, g.name, g.line);
        out.push_back(std::move(g));
    }
}

constexpr std::array<std::string_view, 4> field_names{"ruri_user", "from_user", "to_user", "trunk"};

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
    read_interfaces(l, top.get("interface"), cfg.interfaces);
    name_index interfaces("interface"), trunks("trunk"), regions("region"), groups("peer_group");
    for (std::size_t i = 0; i < cfg.interfaces.size(); ++i)
        interfaces.remember(cfg.interfaces[i].name, i, cfg.interfaces[i].line);
    read_trunks(l, top.get("trunk"), interfaces, cfg.trunks, trunks);
    read_regions(l, top.get("region"), trunks, cfg.regions, regions);
    read_peer_groups(l, top.get("peer_group"), regions, cfg.peer_groups, groups);
    read_routes(l, top.get("route"), groups, cfg.routes, cfg.default_route);
    if (auto t = section(l, top.get("retry"), "retry")) read_retry(l, *t, cfg.retry);
    if (auto t = section(l, top.get("limits"), "limits")) read_limits(l, *t, cfg.limits);
    if (auto t = section(l, top.get("health"), "health")) read_health(l, *t, cfg.health);
    for (auto s : later_sections) top.get(s);  // parsed by later issues; accepted as they are
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

std::string format_ipv4(ipv4_addr a)
{
    return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 0xff) + "." + std::to_string((a >> 8) & 0xff) +
           "." + std::to_string(a & 0xff);
}

std::optional<ipv4_addr> parse_ipv4(std::string_view s)
{
    ipv4_addr a = 0;
    for (int i = 0; i < 4; ++i) {
        auto dot = s.find('.');
        if ((i < 3) != (dot != std::string_view::npos)) return std::nullopt;
        auto part = parse_decimal(s.substr(0, dot), 3);
        if (!part || *part > 255) return std::nullopt;
        a = (a << 8) | *part;
        s = i < 3 ? s.substr(dot + 1) : std::string_view{};
    }
    return a;
}

std::string format_prefix(const ipv4_prefix& p) { return format_ipv4(p.addr) + "/" + std::to_string(p.len); }

std::optional<ipv4_prefix> parse_prefix(std::string_view s)
{
    auto slash = s.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    auto a = parse_ipv4(s.substr(0, slash));
    auto len = parse_decimal(s.substr(slash + 1), 2);
    if (!a || !len || *len < 1 || *len > 32) return std::nullopt;
    return ipv4_prefix{*a, static_cast<uint8_t>(*len)};
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
