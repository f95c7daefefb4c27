// [scanner] and [overload] in sbc.toml (control/config_scanner.cc): defaults, every key, and
// each refusal naming file, line and key, a pattern Hyperscan refuses with Hyperscan's own
// message. Unit tier.
#include <gtest/gtest.h>

#include <string>

#include "control/config.h"

namespace sbc::control {
namespace {

const std::string base =
    "[[interface]]\nname = \"core\"\ndevice = \"net_null0\"\naddress = \"198.18.0.1/24\"\n"
    "[[trunk]]\nname = \"t\"\ninterface = \"core\"\nport = 5060\nallow = [\"0.0.0.0/0\"]\n";
constexpr int base_lines = 9;

load_result load(const std::string& extra) { return parse_config(base + extra, "s.toml"); }

TEST(config_scanner, absent_sections_ship_the_default_signatures_dropped_and_denied)
{
    auto r = load("");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    const scanner_config& s = r.cfg->scanner;
    EXPECT_TRUE(s.defaults);
    EXPECT_TRUE(s.patterns.empty());
    EXPECT_EQ(s.policy.action, sip::scanner_action::drop);
    EXPECT_EQ(s.policy.respond_code, 403);
    EXPECT_TRUE(s.policy.deny);
    EXPECT_EQ(s.compiled().size(), sip::default_scanner_signatures().size());
    const overload_config& o = r.cfg->overload;
    EXPECT_TRUE(o.enabled);
    EXPECT_EQ(o.busy_percent, 90);
    EXPECT_EQ(o.ring_percent, 75);
    EXPECT_EQ(o.retry_after_s, 5u);
    EXPECT_EQ(o.window_ms, 200u);
}

TEST(config_scanner, reads_every_key)
{
    auto r = load("[scanner]\ndefaults = false\nuser_agent = [\"^badtool/\", \"evil\"]\nfrom = [\"<sip:666@\"]\n"
                  "to = [\"honeypot\"]\naction = \"respond\"\nrespond_code = 488\ndeny = false\n"
                  "[overload]\nenabled = false\nbusy_percent = 80\nring_percent = 50\nretry_after_s = 0\nwindow_ms = 1000\n");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    const scanner_config& s = r.cfg->scanner;
    EXPECT_FALSE(s.defaults);
    ASSERT_EQ(s.patterns.size(), 4u);
    EXPECT_EQ(s.patterns[0].pattern, "^badtool/");
    EXPECT_EQ(s.patterns[0].field, sip::scanner_field::user_agent);
    EXPECT_EQ(s.patterns[0].line, base_lines + 3);
    EXPECT_EQ(s.patterns[2].field, sip::scanner_field::from);
    EXPECT_EQ(s.patterns[3].field, sip::scanner_field::to);
    EXPECT_EQ(s.policy.action, sip::scanner_action::respond);
    EXPECT_EQ(s.policy.respond_code, 488);
    EXPECT_FALSE(s.policy.deny);
    const auto compiled = s.compiled();
    ASSERT_EQ(compiled.size(), 4u) << "defaults = false: only the file's patterns";
    EXPECT_FALSE(compiled[0].builtin);
    const overload_config& o = r.cfg->overload;
    EXPECT_FALSE(o.enabled);
    EXPECT_EQ(o.busy_percent, 80);
    EXPECT_EQ(o.ring_percent, 50);
    EXPECT_EQ(o.retry_after_s, 0u);
    EXPECT_EQ(o.window_ms, 1000u);
}

TEST(config_scanner, the_operators_patterns_follow_the_shipped_list)
{
    auto r = load("[scanner]\nuser_agent = [\"^badtool\"]\n");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    const auto compiled = r.cfg->scanner.compiled();
    ASSERT_EQ(compiled.size(), sip::default_scanner_signatures().size() + 1);
    EXPECT_TRUE(compiled.front().builtin);
    EXPECT_EQ(compiled.back().expr, "^badtool");
    EXPECT_FALSE(compiled.back().builtin);
}

struct bad {
    const char* what;
    std::string text;
    int line;  ///< relative to the section's line (0)
    const char* key;
    const char* says;
};

TEST(config_scanner, refuses_bad_values_with_file_line_and_key)
{
    const bad cases[] = {
        {"a pattern Hyperscan cannot compile", "[scanner]\nuser_agent = [\"ok\",\n  \"friendly-(scanner\"]\n", 2,
         "scanner.user_agent[1]", "does not compile: Missing close parenthesis"},
        {"an empty pattern", "[scanner]\nfrom = [\"\"]\n", 1, "scanner.from[0]", "expected a Hyperscan expression"},
        {"a pattern that is not a string", "[scanner]\nto = [42]\n", 1, "scanner.to[0]", "expected a string"},
        {"an action other than drop or respond", "[scanner]\naction = \"tarpit\"\n", 1, "scanner.action",
         "expected \"drop\" or \"respond\""},
        {"a respond_code that is not a final error", "[scanner]\nrespond_code = 200\n", 1, "scanner.respond_code",
         "400..699"},
        {"a misspelt key", "[scanner]\ndenny = true\n", 1, "scanner.denny", "did you mean \"deny\""},
        {"a busy_percent below 50", "[overload]\nbusy_percent = 20\n", 1, "overload.busy_percent", "50..100"},
        {"a ring_percent above 100", "[overload]\nring_percent = 101\n", 1, "overload.ring_percent", "10..100"},
        {"a window too short to sample", "[overload]\nwindow_ms = 5\n", 1, "overload.window_ms", "16..10000"},
    };
    for (const bad& c : cases) {
        auto r = load(c.text);
        ASSERT_EQ(r.errors.size(), 1u) << c.what << (r.errors.empty() ? "" : ": " + r.errors[0].to_string());
        const config_error& e = r.errors[0];
        EXPECT_EQ(e.file, "s.toml") << c.what;
        EXPECT_EQ(e.line, base_lines + 1 + c.line) << c.what << ": " << e.to_string();
        EXPECT_EQ(e.key, c.key) << c.what << ": " << e.to_string();
        EXPECT_NE(e.message.find(c.says), std::string::npos) << c.what << ": " << e.to_string();
    }
}

}  // namespace
}  // namespace sbc::control
