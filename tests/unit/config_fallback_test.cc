// A [[route]]'s fallback_group and fallback_codes in sbc.toml (control/config_fallback.cc):
// what is read (single codes, classes, strings and integers), and every refusal naming file,
// line and key: an unknown group, the route's own group, a code or class that is no final
// failure, an overlap, one key without the other, a code [retry] already retries. Unit tier.
#include <gtest/gtest.h>

#include <string>

#include "control/config.h"
#include "tests/unit/config_test_util.h"

namespace sbc::control {
namespace {

using config_testing::bad_case;
using config_testing::config_bad;
using config_testing::group_base;

// group_base (g1 at lines 12-14), a second group g2 (lines 15-17), route x1 to g1 (lines
// 18-20); `lines` from line 21.
std::string with_fallback(const std::string& lines)
{
    return group_base + "[[peer_group]]\nname = \"g2\"\nregions = [\"r1\"]\n" +
           "[[route]]\nname = \"x1\"\npeer_group = \"g1\"\n" + lines;
}

TEST(config_fallback, a_route_has_no_fallback_unless_it_names_one)
{
    auto r = parse_config(with_fallback(""), "f.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    EXPECT_TRUE(r.cfg->routes[0].fallback.group.empty());
    EXPECT_TRUE(r.cfg->routes[0].fallback.codes.empty());
}

TEST(config_fallback, reads_classes_and_single_codes_as_strings_or_integers)
{
    auto r = parse_config(with_fallback("fallback_group = \"g2\"\nfallback_codes = [\"5xx\", \"404\", 480, \"6XX\"]\n"),
                          "f.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    const route_fallback_config& f = r.cfg->routes[0].fallback;
    EXPECT_EQ(f.group, "g2");
    ASSERT_EQ(f.codes.size(), 4u);
    EXPECT_TRUE(f.covers(500));
    EXPECT_TRUE(f.covers(599));
    EXPECT_TRUE(f.covers(404));
    EXPECT_TRUE(f.covers(480));
    EXPECT_TRUE(f.covers(603));
    EXPECT_FALSE(f.covers(486)) << "only what is listed";
    EXPECT_FALSE(f.covers(403));
}

TEST(config_fallback, a_class_may_hold_codes_that_retry_is_left_to_retry)
{
    // 503 is a [retry] code by default: "5xx" is still accepted (503 keeps retrying).
    auto r = parse_config(with_fallback("fallback_group = \"g2\"\nfallback_codes = [\"5xx\"]\n"), "f.toml");
    EXPECT_TRUE(r.errors.empty()) << r.errors[0].to_string();
}

TEST(config_fallback, a_code_retry_no_longer_retries_may_be_a_fallback_code)
{
    auto r = parse_config(with_fallback("fallback_group = \"g2\"\nfallback_codes = [503]\n[retry]\ncodes = [408, 504]\n"),
                          "f.toml");
    EXPECT_TRUE(r.errors.empty()) << r.errors[0].to_string();
}

INSTANTIATE_TEST_SUITE_P(
    fallback_mistakes, config_bad,
    ::testing::Values(
        bad_case{"fallback group unknown", with_fallback("fallback_group = \"nowhere\"\nfallback_codes = [\"5xx\"]\n"), 21,
                 "route[0].fallback_group", "no peer_group named \"nowhere\" (known: \"g1\", \"g2\")"},
        bad_case{"fallback group is the route s own", with_fallback("fallback_group = \"g1\"\nfallback_codes = [\"5xx\"]\n"),
                 21, "route[0].fallback_group", "expected another [[peer_group]] than the route's own peer_group \"g1\""},
        bad_case{"fallback group without codes", with_fallback("fallback_group = \"g2\"\n"), 21, "route[0].fallback_codes",
                 "missing; expected with fallback_group an array"},
        bad_case{"codes without fallback group", with_fallback("fallback_codes = [\"5xx\"]\n"), 21,
                 "route[0].fallback_codes", "expected only with fallback_group"},
        bad_case{"codes not an array", with_fallback("fallback_group = \"g2\"\nfallback_codes = \"5xx\"\n"), 22,
                 "route[0].fallback_codes", "expected an array of a final status code 400..699"},
        bad_case{"codes empty", with_fallback("fallback_group = \"g2\"\nfallback_codes = []\n"), 22,
                 "route[0].fallback_codes", "expected at least one code or class"},
        bad_case{"a 2xx class", with_fallback("fallback_group = \"g2\"\nfallback_codes = [\"2xx\"]\n"), 22,
                 "route[0].fallback_codes[0]", "got \"2xx\""},
        bad_case{"a provisional code", with_fallback("fallback_group = \"g2\"\nfallback_codes = [\"5xx\", 180]\n"), 22,
                 "route[0].fallback_codes[1]", "expected a final status code 400..699 (as a string or an integer) or a "
                 "class \"4xx\", \"5xx\" or \"6xx\", got 180"},
        bad_case{"a word", with_fallback("fallback_group = \"g2\"\nfallback_codes = [\"busy\"]\n"), 22,
                 "route[0].fallback_codes[0]", "got \"busy\""},
        bad_case{"a half class", with_fallback("fallback_group = \"g2\"\nfallback_codes = [\"50x\"]\n"), 22,
                 "route[0].fallback_codes[0]", "got \"50x\""},
        bad_case{"a code under its class", with_fallback("fallback_group = \"g2\"\nfallback_codes = [\"5xx\", \"500\"]\n"),
                 22, "route[0].fallback_codes[1]", "expected each code once; 500 overlaps \"5xx\" (fallback_codes[0])"},
        bad_case{"a code twice", with_fallback("fallback_group = \"g2\"\nfallback_codes = [404, \"404\"]\n"), 22,
                 "route[0].fallback_codes[1]", "404 overlaps 404"},
        bad_case{"a code retry already retries",
                 with_fallback("fallback_group = \"g2\"\nfallback_codes = [\n  \"500\",\n  503,\n]\n"), 24,
                 "route[0].fallback_codes[1]", "expected a code [retry] does not retry: 503 is in retry.codes"},
        bad_case{"a code the retry section adds",
                 with_fallback("fallback_group = \"g2\"\nfallback_codes = [500]\n[retry]\ncodes = [500, 503]\n"), 22,
                 "route[0].fallback_codes[0]", "500 is in retry.codes"},
        bad_case{"a misspelt fallback key", with_fallback("fallback_grup = \"g2\"\n"), 21, "route[0].fallback_grup",
                 "unknown key"}),
    config_testing::bad_case_name);

}  // namespace
}  // namespace sbc::control
