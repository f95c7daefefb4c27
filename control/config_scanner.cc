// Reads `[scanner]` and `[overload]` (see config_scanner.h) into their structs, checking every
// value; a scanner pattern is compiled alone here, so that one Hyperscan refuses is reported
// with its file, line and key. Control core only (also sbcctl and tests).
#include "control/config_reader.h"
#include "control/config_scanner.h"

namespace sbc::control {

std::vector<sip::scanner_pattern> scanner_config::compiled() const
{
    std::vector<sip::scanner_pattern> extra;
    extra.reserve(patterns.size());
    for (const auto& p : patterns) extra.push_back({p.field, p.pattern, false});
    return sip::scanner_matcher::with_defaults(defaults, std::move(extra));
}

namespace config_detail {

void read_scanner(loader& l, const toml::table& t, scanner_config& s)
{
    table_reader r(l, t, "scanner");
    s.line = r.line();
    r.get_bool("defaults", s.defaults);
    for (const sip::scanner_field f : {sip::scanner_field::user_agent, sip::scanner_field::from, sip::scanner_field::to}) {
        const std::string_view k = sip::scanner_field_name(f);
        std::vector<std::string> exprs;
        std::vector<const toml::node*> nodes;
        r.get_string_array(k, exprs, &nodes);
        for (std::size_t i = 0; i < exprs.size(); ++i) {
            const std::string key = r.key(k) + "[" + std::to_string(i) + "]";
            const int line = line_of(*nodes[i]);
            std::string why;
            if (exprs[i].empty())
                l.error(line, key, "expected a Hyperscan expression such as \"^badtool\", got \"\"");
            else if (!sip::scanner_matcher::check(exprs[i], why))
                l.error(line, key, "the pattern " + quoted(exprs[i]) + " does not compile: " + why);
            else
                s.patterns.push_back({f, exprs[i], line});
        }
    }
    static constexpr std::array<std::string_view, 2> actions{"drop", "respond"};
    r.get_choice("action", actions, s.policy.action);
    r.get_u16("respond_code", s.policy.respond_code, 400, 699, "the final response to a scanner under action \"respond\"");
    r.get_bool("deny", s.policy.deny);
    r.finish();
}

void read_overload(loader& l, const toml::table& t, overload_config& o)
{
    table_reader r(l, t, "overload");
    o.line = r.line();
    r.get_bool("enabled", o.enabled);
    unsigned busy = o.busy_percent, ring = o.ring_percent;
    r.get_uint("busy_percent", busy, 50, 100, "percent of the worker's time busy; 100: never by busy time");
    r.get_uint("ring_percent", ring, 10, 100, "percent full of a ring into the worker; 100: never by ring fill");
    o.busy_percent = static_cast<uint8_t>(busy);
    o.ring_percent = static_cast<uint8_t>(ring);
    unsigned retry = o.retry_after_s, window = o.window_ms;
    r.get_uint("retry_after_s", retry, 0, 86400, "seconds");
    r.get_uint("window_ms", window, 16, 10000, "milliseconds over which the busy share is measured");
    o.retry_after_s = retry;
    o.window_ms = window;
    r.finish();
}

}  // namespace config_detail
}  // namespace sbc::control
