// Internal to the config loader: the toml++ helpers, the error collector (loader), the
// per-table key checker (table_reader) and the section helpers that config.cc (node, dpdk,
// arp, interfaces) and config_proxy.cc (trunks, regions, peer groups, routes, retry, limits,
// health) share. Control core only (also sbcctl and tests); not part of any public API.
#pragma once

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

#include "control/config.h"

namespace sbc::control::config_detail {


inline constexpr unsigned min_memory_mb = 256;
inline constexpr std::size_t max_sun_path = 107;  // sizeof(sockaddr_un::sun_path) - 1 on Linux

inline int line_of(const toml::node& n) { return static_cast<int>(n.source().begin.line); }

inline std::string type_name(const toml::node& n)
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

inline std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

inline std::size_t edit_distance(std::string_view a, std::string_view b)
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

inline bool is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
}

inline bool is_plain_name(std::string_view s)
{
    return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), is_name_char);
}

inline std::optional<unsigned> parse_decimal(std::string_view s, std::size_t max_digits)
{
    if (s.empty() || s.size() > max_digits) return std::nullopt;
    if (s.size() > 1 && s[0] == '0') return std::nullopt;  // "08" is ambiguous (octal to inet_aton)
    unsigned v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
    return v;
}

// Position of `e` in the array `arr`.
inline std::size_t index_in(const toml::node& arr, const toml::node* e)
{
    const toml::array& a = *arr.as_array();
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a.get(i) == e) return i;
    return 0;
}

// The IPv4 netmask of a prefix length; 32 and more (an IPv6 length, refused later) give all ones
// rather than a shift past the word.
inline uint32_t prefix_mask(uint8_t len) { return len == 0 ? 0 : len >= 32 ? ~uint32_t{0} : ~uint32_t{0} << (32 - len); }

// Whether `s` is an IPv6 address as an operator writes one: bare ("2001:db8::1"), with a
// prefix length ("2001:db8::/32") or bracketed with a port ("[2001:db8::1]:5060").
inline bool is_ipv6_text(std::string_view s)
{
    if (!s.empty() && s[0] == '[') {
        const auto close = s.find(']');
        if (close == std::string_view::npos) return false;
        s = s.substr(1, close - 1);
    } else if (const auto slash = s.find('/'); slash != std::string_view::npos) {
        s = s.substr(0, slash);
    }
    const auto a = parse_address(s);
    return a && a->is_v6();
}

// The message for an IPv6 address where the dataplane runs IPv4 only.
inline std::string ipv6_refused(std::string_view text)
{
    return "IPv6 is not supported yet (only IPv4 runs in the dataplane), got " + quoted(text);
}

// The limit of a table, as said in a refusal: "at most 32 (the interface table's size)".
inline std::string at_most(std::size_t n, std::string_view what)
{
    return "at most " + std::to_string(n) + " " + std::string(what);
}

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

inline const toml::table* section(loader& l, const toml::node* n, std::string_view name)
{
    if (!n) return nullptr;
    if (auto t = n->as_table()) return t;
    l.error(line_of(*n), std::string(name), "expected a table written [" + std::string(name) + "], got " + type_name(*n));
    return nullptr;
}

// An optional [[name]] section: nullptr when absent or (reported) not an array of tables.
inline const toml::array* table_array(loader& l, const toml::node* n, std::string_view name)
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


// The proxy sections (config_proxy.cc).
void read_trunks(loader& l, const toml::node* n, const name_index& interfaces, std::vector<trunk_config>& out,
                 name_index& names);
void read_regions(loader& l, const toml::node* n, const name_index& trunks, std::vector<region_config>& out,
                  name_index& names);
void read_peer_groups(loader& l, const toml::node* n, const name_index& regions, std::vector<peer_group_config>& out,
                      name_index& names);
void read_routes(loader& l, const toml::node* n, const name_index& groups, std::vector<route_config>& out,
                 int& default_route);
void read_retry(loader& l, const toml::table& t, retry_config& rc);
void read_limits(loader& l, const toml::table& t, limits_config& lc);
void read_health(loader& l, const toml::table& t, health_config& h);
void read_self(loader& l, const toml::table& t, self_config& s);
// Call admission (config_admission.cc): the keys of a trunk, a region and a peer, and [admission].
void read_trunk_admission(loader& l, table_reader& r, trunk_admission_config& a);
// A trunk's own untrusted_trunk_rate and _burst (config_flood.cc), after its `trusted`.
void read_trunk_flood(loader& l, table_reader& r, trunk_config& tc);
void read_region_admission(loader& l, table_reader& r, unsigned& peer_max_calls);
void read_peer_admission(loader& l, table_reader& r, unsigned& max_calls);
void read_admission(loader& l, const toml::table& t, admission_config& a);
// A route's fallback_group and fallback_codes (config_fallback.cc); the check against [retry]
// codes runs once [retry] is read.
void read_route_fallback(loader& l, table_reader& r, const name_index& groups, route_config& rc);
void check_route_fallbacks(loader& l, const config& cfg);
// Header and number rules (config_rules.cc): the `rule` tables of a trunk or region.
void read_rules(loader& l, table_reader& owner, std::vector<rule_config>& out);
// [cdr] (config_cdr.cc).
void read_cdr(loader& l, const toml::table& t, cdr_config& c);
// [dns] (config_dns.cc).
void read_dns(loader& l, const toml::table& t, dns_config& d);
// [media] (config_media.cc), after the interfaces and trunks it refers to.
void read_media(loader& l, const toml::table& t, const config& c, media_config_section& m);

}  // namespace sbc::control::config_detail
