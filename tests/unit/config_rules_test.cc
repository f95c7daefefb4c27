// Header and number rules in sbc.toml (control/config_rules.cc): `[[trunk.rule]]` and
// `[[region.rule]]` read in file order with their direction, names and owners, carried into the
// proxy tables, and every refusal naming file, line and key (a bad pattern, field, kind,
// header name, replacement group, value, or a key of the other kind). Unit tier.
#include <gtest/gtest.h>

#include <string>

#include "control/config.h"
#include "control/config_rules.h"
#include "control/rule_report.h"
#include "tests/unit/config_test_util.h"

namespace sbc::control {
namespace {

using config_testing::bad_case;
using config_testing::config_bad;
using config_testing::trunk_base;

const std::string rest = "[[region]]\nname = \"r1\"\npeers = [ { address = \"198.18.0.11:5060\" } ]\n"
                         "[[peer_group]]\nname = \"g1\"\nregions = [\"r1\"]\n"
                         "[[route]]\nname = \"default\"\npeer_group = \"g1\"\n";

// trunk_base (lines 1-8), then one [[trunk.rule]] at line 9 whose keys start at line 10.
std::string trunk_rule(const std::string& lines) { return trunk_base + "[[trunk.rule]]\n" + lines; }
const std::string number_keys = "direction = \"in\"\nkind = \"number\"\nfield = \"ruri\"\n";  // lines 10-12

TEST(config_rules, reads_trunk_and_region_rules_in_order_and_builds_their_tables)
{
    const std::string text =
        trunk_base +
        "[[trunk.rule]]\ndirection = \"in\"\nkind = \"number\"\nfield = \"ruri\"\nmatch = '^0([1-9][0-9]+)$'\n"
        "replace = '+44$1'\nuser_phone = true\n"
        "[[trunk.rule]]\nname = \"tag\"\ndirection = \"out\"\nkind = \"header_add\"\nheader = \"X-Carrier\"\n"
        "value = \"${trunk_fqdn}\"\n"
        "[[trunk.rule]]\ndirection = \"in\"\nkind = \"header_remove\"\nheader = \"X-Internal\"\n" + rest +
        "[[region.rule]]\ndirection = \"out\"\nkind = \"header_replace\"\nheader = \"User-Agent\"\nvalue = \"sbc\"\n";
    auto r = parse_config(text, "r.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    const config& c = *r.cfg;
    ASSERT_EQ(c.trunks[0].rules.size(), 3u);
    EXPECT_EQ(c.trunks[0].rules[0].spec.replace, "+44$1");
    EXPECT_TRUE(c.trunks[0].rules[0].spec.user_phone);
    EXPECT_TRUE(c.trunks[0].rules[1].outbound);
    ASSERT_EQ(c.regions[0].rules.size(), 1u);

    std::string error;
    auto rt = build_rule_tables(c, error);
    ASSERT_NE(rt, nullptr) << error;
    ASSERT_EQ(rt->rules.size(), 4u);
    EXPECT_EQ(rt->trunk_in[0].count, 2u) << "the number rule and the removal, in file order";
    EXPECT_EQ(rt->trunk_out[0].count, 1u);
    EXPECT_EQ(rt->region_out[0].count, 1u);
    EXPECT_EQ(rt->region_in[0].count, 0u);
    EXPECT_EQ(rule_label(rt->rules[rt->trunk_in[0].first]), "trunk:t1:in:1");
    EXPECT_EQ(rule_label(rt->rules[rt->trunk_in[0].first + 1]), "trunk:t1:in:2");
    EXPECT_EQ(rule_label(rt->rules[rt->trunk_out[0].first]), "trunk:t1:out:tag");
    EXPECT_EQ(rule_label(rt->rules[rt->region_out[0].first]), "region:r1:out:1");
}

TEST(config_rules, a_config_without_rules_builds_no_rule_tables)
{
    auto r = parse_config(trunk_base + rest, "r.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    std::string error;
    EXPECT_EQ(build_rule_tables(*r.cfg, error), nullptr);
    EXPECT_TRUE(error.empty());
}

TEST(config_rules, more_rules_than_are_counted_are_refused_at_the_first_one_too_many)
{
    std::string text = trunk_base;
    for (int i = 0; i < 257; ++i) text += "[[trunk.rule]]\ndirection = \"out\"\nkind = \"header_remove\"\nheader = \"X-A\"\n";
    auto r = parse_config(text + rest, "r.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    std::string error;
    EXPECT_EQ(build_rule_tables(*r.cfg, error), nullptr);
    // The 257th rule's table starts at line 9 + 256 * 4.
    EXPECT_EQ(error, "r.toml:1033: rule: expected at most 256 rules in all trunks and regions (each is counted on its "
                     "own), got 257");
}

TEST(rule_report, each_rule_shows_in_metrics_and_in_sbcctl_stats_with_its_owner_and_direction)
{
    const std::vector<rule_report> r{{"trunk:carrier", "in", "national", "number", 12, 0},
                                     {"region:r1", "out", "1", "header_add", 3, 2}};
    std::string m;
    rules_prometheus(r, m);
    EXPECT_NE(m.find("sbc_rule_hits_total{owner=\"trunk:carrier\",direction=\"in\",rule=\"national\"} 12\n"),
              std::string::npos) << m;
    EXPECT_NE(m.find("sbc_rule_failures_total{owner=\"region:r1\",direction=\"out\",rule=\"1\"} 2\n"),
              std::string::npos) << m;
    const auto rows = rule_rows(to_json(r));
    ASSERT_EQ(rows.size(), 3u) << "hits of both, failures only where there are some";
    EXPECT_EQ(rows[0], (std::vector<std::string>{"rule trunk:carrier:in:national (number) hits", "12"}));
    EXPECT_EQ(rows[2], (std::vector<std::string>{"rule region:r1:out:1 failures", "2"}));
    std::string none;
    rules_prometheus({}, none);
    EXPECT_TRUE(none.empty()) << "no rules, no families";
}

INSTANTIATE_TEST_SUITE_P(
    rule_mistakes, config_bad,
    ::testing::Values(
        bad_case{"a pattern that does not compile", trunk_rule(number_keys + "match = '^0([1-9]'\nreplace = '+44$1'\n"),
                 13, "trunk[0].rule[0].match", "expected a PCRE2 expression"},
        bad_case{"a replacement naming a missing group",
                 trunk_rule(number_keys + "match = '^0([1-9]+)$'\nreplace = '+44$2'\n"), 14,
                 "trunk[0].rule[0].replace", "names group $2 but the pattern has 1 capture group"},
        bad_case{"an unknown field",
                 trunk_rule("direction = \"in\"\nkind = \"number\"\nfield = \"contact\"\nmatch = 'x'\nreplace = 'y'\n"),
                 12, "trunk[0].rule[0].field", "expected \"ruri\", \"from\", \"to\" or \"pai\""},
        bad_case{"an unknown kind", trunk_rule("direction = \"in\"\nkind = \"rewrite\"\n"), 11, "trunk[0].rule[0].kind",
                 "expected \"header_add\""},
        bad_case{"an unknown direction",
                 trunk_rule("direction = \"both\"\nkind = \"header_remove\"\nheader = \"X-A\"\n"), 10,
                 "trunk[0].rule[0].direction", "expected \"in\" or \"out\""},
        bad_case{"a missing direction", trunk_rule("kind = \"header_remove\"\nheader = \"X-A\"\n"), 9,
                 "trunk[0].rule[0].direction", "missing"},
        bad_case{"a header name with a space",
                 trunk_rule("direction = \"out\"\nkind = \"header_add\"\nheader = \"X Bad\"\nvalue = \"v\"\n"), 12,
                 "trunk[0].rule[0].header", "expected a header name"},
        bad_case{"removing a header the proxy manages",
                 trunk_rule("direction = \"out\"\nkind = \"header_remove\"\nheader = \"Record-Route\"\n"), 12,
                 "trunk[0].rule[0].header", "managed by the proxy"},
        bad_case{"a value too long",
                 trunk_rule("direction = \"out\"\nkind = \"header_add\"\nheader = \"X-A\"\nvalue = \"" +
                            std::string(300, 'v') + "\"\n"),
                 13, "trunk[0].rule[0].value", "at most 256 characters"},
        bad_case{"an unknown variable",
                 trunk_rule("direction = \"out\"\nkind = \"header_add\"\nheader = \"X-A\"\nvalue = \"${caller}\"\n"), 13,
                 "trunk[0].rule[0].value", "unknown variable ${caller}"},
        bad_case{"a pattern on a header rule",
                 trunk_rule("direction = \"out\"\nkind = \"header_remove\"\nheader = \"X-A\"\nmatch = 'x'\n"), 13,
                 "trunk[0].rule[0].match", "not a key of kind = \"header_remove\""},
        bad_case{"a value on a removal",
                 trunk_rule("direction = \"out\"\nkind = \"header_remove\"\nheader = \"X-A\"\nvalue = 'x'\n"), 13,
                 "trunk[0].rule[0].value", "value is for header_add and header_replace"},
        bad_case{"a number rule without a replacement", trunk_rule(number_keys + "match = 'x'\n"), 9,
                 "trunk[0].rule[0].replace", "missing"},
        bad_case{"a misspelt key",
                 trunk_rule("direction = \"out\"\nkind = \"header_remove\"\nheader = \"X-A\"\nheadr = 'x'\n"), 13,
                 "trunk[0].rule[0].headr", "did you mean \"header\"?"},
        bad_case{"two rules of one direction with one name",
                 trunk_rule("name = \"a\"\ndirection = \"out\"\nkind = \"header_remove\"\nheader = \"X-A\"\n") +
                     "[[trunk.rule]]\nname = \"a\"\ndirection = \"out\"\nkind = \"header_remove\"\nheader = \"X-B\"\n",
                 15, "trunk[0].rule[1].name", "already used at line 9"},
        bad_case{"rule written as a plain key", trunk_base + "rule = 5\n", 9, "trunk[0].rule",
                 "expected an array of tables written [[trunk.rule]]"},
        bad_case{"a bad pattern in a region rule",
                 trunk_base + "[[region]]\nname = \"r1\"\npeers = [ { address = \"198.18.0.11:5060\" } ]\n"
                              "[[region.rule]]\ndirection = \"out\"\nkind = \"number\"\nfield = \"to\"\n"
                              "match = '(?<'\nreplace = ''\n",
                 16, "region[0].rule[0].match", "expected a PCRE2 expression"}),
    config_testing::bad_case_name);

}  // namespace
}  // namespace sbc::control
