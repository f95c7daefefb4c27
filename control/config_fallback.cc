// Loads a `[[route]]`'s fallback on failure classes from sbc.toml: `fallback_group` (another
// [[peer_group]]) and `fallback_codes` (final codes 400..699 and classes "4xx", "5xx", "6xx"),
// and checks them against [retry] codes once those are read: a single code that [retry]
// already retries is refused (it moves the call to the next peer of the group). Control core
// only (also sbcctl and tests); see config.cc for how problems are reported.
#include "control/config_reader.h"

namespace sbc::control::config_detail {

namespace {

constexpr int64_t min_code = 400;
constexpr int64_t max_code = 699;
const std::string code_expected =
    "a final status code 400..699 (as a string or an integer) or a class \"4xx\", \"5xx\" or \"6xx\"";

/// "5xx" -> 500..599, "404" -> 404..404; nullopt when it is neither.
std::optional<fallback_code> parse_code_text(const std::string& s)
{
    if (s.size() != 3 || s[0] < '4' || s[0] > '6') return std::nullopt;
    const auto first = static_cast<uint16_t>((s[0] - '0') * 100);
    if ((s[1] == 'x' || s[1] == 'X') && (s[2] == 'x' || s[2] == 'X'))
        return fallback_code{first, static_cast<uint16_t>(first + 99), 0};
    if (s[1] < '0' || s[1] > '9' || s[2] < '0' || s[2] > '9') return std::nullopt;
    const auto c = static_cast<uint16_t>(first + (s[1] - '0') * 10 + (s[2] - '0'));
    return fallback_code{c, c, 0};
}

std::string code_text(const fallback_code& c)
{
    return c.is_class() ? quoted(std::to_string(c.first / 100) + "xx") : std::to_string(c.first);
}

}  // namespace

void read_route_fallback(loader& l, table_reader& r, const name_index& groups, route_config& rc)
{
    route_fallback_config& f = rc.fallback;
    const toml::node* gn = r.get("fallback_group");
    const toml::node* cn = r.get("fallback_codes");
    if (gn) {
        groups.reference(l, r, "fallback_group", f.group);
        if (gn->is_string() && !f.group.empty() && f.group == rc.peer_group)
            l.error(line_of(*gn), r.key("fallback_group"),
                    "expected another [[peer_group]] than the route's own peer_group " + quoted(rc.peer_group) +
                        " (a fallback moves the call to other peers; retries within a group are [retry]'s)");
        if (!cn)
            l.error(line_of(*gn), r.key("fallback_codes"),
                    "missing; expected with fallback_group an array of final codes and classes, such as "
                    "[\"5xx\", \"404\"]");
    }
    if (!cn) return;
    if (!gn)
        l.error(line_of(*cn), r.key("fallback_codes"),
                "expected only with fallback_group (the [[peer_group]] the call moves to)");
    const toml::array* arr = cn->as_array();
    if (!arr) {
        l.error(line_of(*cn), r.key("fallback_codes"), "expected an array of " + code_expected + ", got " + type_name(*cn));
        return;
    }
    if (arr->empty()) {
        l.error(line_of(*cn), r.key("fallback_codes"),
                "expected at least one code or class, such as [\"5xx\"], got an empty array");
        return;
    }
    for (std::size_t i = 0; i < arr->size(); ++i) {
        const toml::node& e = *arr->get(i);
        const std::string ek = r.key("fallback_codes") + "[" + std::to_string(i) + "]";
        std::optional<fallback_code> c;
        std::string got = type_name(e);
        if (const auto* s = e.as_string()) {
            c = parse_code_text(s->get());
            got = quoted(s->get());
        } else if (const auto* n = e.as_integer()) {
            got = std::to_string(n->get());
            if (n->get() >= min_code && n->get() <= max_code)
                c = fallback_code{static_cast<uint16_t>(n->get()), static_cast<uint16_t>(n->get()), 0};
        }
        if (!c) {
            l.error(line_of(e), ek, "expected " + code_expected + ", got " + got);
            continue;
        }
        c->line = line_of(e);
        c->index = static_cast<unsigned>(i);
        bool repeated = false;
        for (std::size_t k = 0; k < f.codes.size() && !repeated; ++k) {
            const fallback_code& o = f.codes[k];
            if (c->first > o.last || c->last < o.first) continue;
            repeated = true;
            l.error(line_of(e), ek,
                    "expected each code once; " + code_text(*c) + " overlaps " + code_text(o) + " (fallback_codes[" +
                        std::to_string(o.index) + "])");
        }
        if (!repeated) f.codes.push_back(*c);
    }
}

void check_route_fallbacks(loader& l, const config& cfg)
{
    for (std::size_t i = 0; i < cfg.routes.size(); ++i) {
        const route_fallback_config& f = cfg.routes[i].fallback;
        for (const fallback_code& c : f.codes) {
            const bool retried =
                !c.is_class() && std::find(cfg.retry.codes.begin(), cfg.retry.codes.end(), c.first) != cfg.retry.codes.end();
            if (!retried) continue;
            l.error(c.line, "route[" + std::to_string(i) + "].fallback_codes[" + std::to_string(c.index) + "]",
                    "expected a code [retry] does not retry: " + std::to_string(c.first) +
                        " is in retry.codes, so it moves the call to the next peer of the group (a class such as "
                        "\"5xx\" leaves the retried codes to [retry]); remove it here or from retry.codes");
        }
    }
}

}  // namespace sbc::control::config_detail
