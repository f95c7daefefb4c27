// Loads header and number rules from sbc.toml: the `rule` arrays of tables under [[trunk]] and
// [[region]] (`[[trunk.rule]]`, `[[region.rule]]`), each rule compiled here once so that a bad
// pattern, replacement, header name or value is refused with file, line and key; and builds the
// snapshot's rule tables from a checked config. Control core only (also sbcctl, sbc-sipcheck
// and tests); see config.cc for how problems are reported.
#include "control/config_rules.h"

#include "control/config_reader.h"

namespace sbc::control {

namespace config_detail {

namespace {

constexpr std::array<std::string_view, 2> direction_names{"in", "out"};
constexpr std::array<std::string_view, 4> kind_names{"header_add", "header_remove", "header_replace", "number"};
constexpr std::array<std::string_view, 4> field_names{"ruri", "from", "to", "pai"};

void read_rule(loader& l, const toml::table& t, const std::string& prefix, rule_config& rc)
{
    table_reader r(l, t, prefix);
    rc.line = r.line();
    r.require("direction", "\"in\" (requests arriving) or \"out\" (requests sent)");
    r.require("kind", "\"header_add\", \"header_remove\", \"header_replace\" or \"number\"");
    sip::rule_spec& s = rc.spec;
    if (auto v = r.get_string("name", s.name); v && !is_plain_name(s.name))
        l.error(line_of(*v), r.key("name"), "expected 1 to 64 letters, digits, '-', '_' or '.', got " + quoted(s.name));
    int dir = 0;
    r.get_choice("direction", direction_names, dir);
    rc.outbound = dir == 1;
    const auto* kind_text = r.get_choice("kind", kind_names, s.kind);
    // A kind given and known (an unknown one is reported by get_choice): the other keys follow it.
    const bool kind_node = kind_text && std::find(kind_names.begin(), kind_names.end(), kind_text->get()) != kind_names.end();
    const bool number = s.kind == sip::rule_kind::number;
    // Keys of the other kind are refused rather than ignored: a rule that does less than it
    // reads is worse than none.
    for (std::string_view k : {"header", "value", "field", "match", "replace", "user_phone"}) {
        const bool numeric_key = k == "field" || k == "match" || k == "replace" || k == "user_phone";
        const toml::node* n = r.get(k);
        if (!n || !kind_node) continue;
        if (numeric_key != number || (k == "value" && s.kind == sip::rule_kind::header_remove))
            l.error(line_of(*n), r.key(k),
                    "not a key of kind = " + quoted(kind_names[static_cast<std::size_t>(s.kind)]) + " (" +
                        (numeric_key ? "field, match, replace and user_phone are for kind = \"number\""
                                     : k == "header" ? "header is for the header_* kinds"
                                                     : "value is for header_add and header_replace") + ")");
    }
    if (!kind_node) {
        r.finish();
        return;
    }
    if (number) {
        r.require("field", "\"ruri\", \"from\", \"to\" or \"pai\" (the URI whose user part is rewritten)");
        r.require("match", "a PCRE2 expression such as '^0([1-9][0-9]+)$'");
        r.require("replace", "the new user part, with $1.. for groups, such as '+44$1'");
        r.get_choice("field", field_names, s.field);
        r.get_string("match", s.match);
        r.get_string("replace", s.replace);
        r.get_bool("user_phone", s.user_phone);
    } else {
        r.require("header", "a header name such as \"X-Carrier\"");
        r.get_string("header", s.header);
        if (s.kind != sip::rule_kind::header_remove) {
            r.require("value", "the header's value, such as \"${trunk_fqdn}\"");
            r.get_string("value", s.value);
        }
    }
    r.finish();
    if (!t.contains(number ? "match" : "header")) return;  // reported missing: compiling would say it again
    sip::rule compiled;
    if (auto why = sip::compile_rule(s, compiled)) {
        const toml::node* n = t.get(why->key);
        l.error(n ? line_of(*n) : rc.line, r.key(why->key), why->message);
    }
}

}  // namespace

void read_rules(loader& l, table_reader& owner, std::vector<rule_config>& out)
{
    const toml::node* n = owner.get("rule");
    if (!n) return;
    const toml::array* arr = n->as_array();
    if (!arr || (!arr->empty() && !arr->is_array_of_tables())) {
        l.error(line_of(*n), owner.key("rule"),
                "expected an array of tables written [[trunk.rule]] or [[region.rule]] after the table it belongs "
                "to, got " + type_name(*n));
        return;
    }
    std::map<std::pair<bool, std::string>, int> names;
    for (std::size_t i = 0; i < arr->size(); ++i) {
        rule_config rc;
        const toml::table& t = *arr->get(i)->as_table();
        const std::string prefix = owner.key("rule") + "[" + std::to_string(i) + "]";
        read_rule(l, t, prefix, rc);
        if (!rc.spec.name.empty()) {
            auto [it, fresh] = names.emplace(std::pair{rc.outbound, rc.spec.name}, rc.line);
            if (!fresh)
                l.error(line_of(*t.get("name")), prefix + ".name",
                        "expected a name unique among this table's " + std::string(rc.outbound ? "out" : "in") +
                            " rules; " + quoted(rc.spec.name) + " is already used at line " + std::to_string(it->second));
        }
        out.push_back(std::move(rc));
    }
}

}  // namespace config_detail

std::string rule_label(const sip::rule& r) { return r.owner + ":" + (r.outbound ? "out" : "in") + ":" + r.name; }

namespace {

// Appends the rules of one owner in one direction; their run in `rt.rules`.
sip::rule_set add_rules(sip::rule_tables& rt, const std::vector<rule_config>& rules, const std::string& owner,
                        bool outbound, std::vector<int>& lines)
{
    sip::rule_set set{static_cast<uint32_t>(rt.rules.size()), 0};
    std::size_t n = 0;
    for (const rule_config& rc : rules) {
        if (rc.outbound != outbound) continue;
        ++n;
        sip::rule r;
        if (sip::compile_rule(rc.spec, r)) continue;  // the loader refused it already
        r.owner = owner;
        r.outbound = outbound;
        if (r.name.empty()) r.name = std::to_string(n);
        rt.rules.push_back(std::move(r));
        lines.push_back(rc.line);
        ++set.count;
    }
    return set;
}

}  // namespace

std::shared_ptr<const sip::rule_tables> build_rule_tables(const config& cfg, std::string& error)
{
    auto rt = std::make_shared<sip::rule_tables>();
    std::vector<int> lines;
    for (const trunk_config& tc : cfg.trunks) {
        rt->trunk_in.push_back(add_rules(*rt, tc.rules, "trunk:" + tc.name, false, lines));
        rt->trunk_out.push_back(add_rules(*rt, tc.rules, "trunk:" + tc.name, true, lines));
    }
    for (const region_config& rc : cfg.regions) {
        rt->region_in.push_back(add_rules(*rt, rc.rules, "region:" + rc.name, false, lines));
        rt->region_out.push_back(add_rules(*rt, rc.rules, "region:" + rc.name, true, lines));
    }
    if (rt->rules.size() > sip::max_rules) {
        error = cfg.path + ":" + std::to_string(lines[sip::max_rules]) + ": rule: expected at most " +
                std::to_string(sip::max_rules) + " rules in all trunks and regions (each is counted on its own), got " +
                std::to_string(rt->rules.size());
        return nullptr;
    }
    if (rt->rules.empty()) return nullptr;
    return rt;
}

}  // namespace sbc::control
