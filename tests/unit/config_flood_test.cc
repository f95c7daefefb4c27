// [flood] and [[trunk]] trusted in sbc.toml (control/config_flood.cc): defaults, every key, and
// refusals naming file, line and key. Unit tier.
#include <gtest/gtest.h>

#include <string>

#include "control/config.h"

namespace sbc::control {
namespace {

const std::string base =
    "[[interface]]\nname = \"core\"\ndevice = \"net_null0\"\naddress = \"198.18.0.1/24\"\n"
    "[[trunk]]\nname = \"t\"\ninterface = \"core\"\nport = 5060\nallow = [\"198.18.0.0/24\"]\n";

TEST(config_flood, absent_section_means_generous_defaults_and_untrusted_trunks)
{
    auto r = parse_config(base, "f.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    const auto& f = r.cfg->flood;
    EXPECT_TRUE(f.enabled);
    EXPECT_EQ(f.trusted_rate, 100000u);
    EXPECT_EQ(f.untrusted_rate, 2000u);
    EXPECT_EQ(f.untrusted_burst, 2000u);
    EXPECT_EQ(f.untrusted_trunk_rate, 10000u);
    EXPECT_EQ(f.untrusted_trunk_burst, 2000u);
    EXPECT_EQ(f.unknown_rate, 50u);
    EXPECT_EQ(f.deny_after_malformed, 10u);
    EXPECT_EQ(f.malformed_window_ms, 10000u);
    EXPECT_EQ(f.deny_s, 300u);
    EXPECT_FALSE(r.cfg->trunks[0].trusted);
}

TEST(config_flood, reads_every_key_and_the_trunks_trusted_mark)
{
    std::string text = base;
    text.insert(text.find("allow"), "trusted = true\n");
    text += "[flood]\nenabled = true\ntrusted_rate = 0\ntrusted_burst = 7\nuntrusted_rate = 20\nuntrusted_burst = 40\n"
            "untrusted_trunk_rate = 300\nuntrusted_trunk_burst = 500\nunknown_rate = 5\nunknown_burst = 9\ndeny_after_malformed = 3\nmalformed_window_s = 60\ndeny_s = 900\n";
    auto r = parse_config(text, "f.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    const auto& f = r.cfg->flood;
    EXPECT_EQ(f.trusted_rate, 0u);
    EXPECT_EQ(f.trusted_burst, 7u);
    EXPECT_EQ(f.untrusted_rate, 20u);
    EXPECT_EQ(f.untrusted_burst, 40u);
    EXPECT_EQ(f.untrusted_trunk_rate, 300u);
    EXPECT_EQ(f.untrusted_trunk_burst, 500u);
    EXPECT_EQ(f.unknown_rate, 5u);
    EXPECT_EQ(f.unknown_burst, 9u);
    EXPECT_EQ(f.deny_after_malformed, 3u);
    EXPECT_EQ(f.malformed_window_ms, 60000u);
    EXPECT_EQ(f.deny_s, 900u);
    EXPECT_TRUE(r.cfg->trunks[0].trusted);
}

TEST(config_flood, can_be_switched_off)
{
    auto r = parse_config(base + "[flood]\nenabled = false\n", "f.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    EXPECT_FALSE(r.cfg->flood.enabled);
}

struct bad_case {
    const char* text;
    int line;
    const char* key;
    const char* says;
};

TEST(config_flood, refuses_bad_values_with_file_line_and_key)
{
    // base has 9 lines; [flood] is line 10, its first key line 11.
    const bad_case cases[] = {
        {"[flood]\nuntrusted_burst = 0\n", 11, "flood.untrusted_burst", "1..1000000"},
        {"[flood]\ntrusted_burst = 2000000\n", 11, "flood.trusted_burst", "1..1000000"},
        {"[flood]\nuntrusted_rate = -1\n", 11, "flood.untrusted_rate", "0..10000000"},
        {"[flood]\nuntrusted_trunk_rate = 20000000\n", 11, "flood.untrusted_trunk_rate", "0..10000000"},
        {"[flood]\nuntrusted_trunk_burst = 0\n", 11, "flood.untrusted_trunk_burst", "1..1000000"},
        {"[flood]\nunknown_rate = \"many\"\n", 11, "flood.unknown_rate", "got a string"},
        {"[flood]\nmalformed_window_s = 0\n", 11, "flood.malformed_window_s", "1..3600"},
        {"[flood]\ndeny_s = 0\n", 11, "flood.deny_s", "1..604800"},
        {"[flood]\nenabled = 1\n", 11, "flood.enabled", "true or false"},
        {"[flood]\nuntrusted_rat = 5\n", 11, "flood.untrusted_rat", "did you mean \"untrusted_rate\""},
    };
    for (const auto& c : cases) {
        auto r = parse_config(base + c.text, "f.toml");
        ASSERT_EQ(r.errors.size(), 1u) << c.text;
        EXPECT_EQ(r.errors[0].file, "f.toml");
        EXPECT_EQ(r.errors[0].line, c.line) << c.text;
        EXPECT_EQ(r.errors[0].key, c.key) << c.text;
        EXPECT_NE(r.errors[0].message.find(c.says), std::string::npos) << r.errors[0].to_string();
    }
}

TEST(config_flood, a_trunk_may_have_its_own_untrusted_trunk_rate_and_burst)
{
    std::string text = base;
    text.insert(text.find("allow"), "untrusted_trunk_rate = 50\nuntrusted_trunk_burst = 80\n");
    text += "[[trunk]]\nname = \"u\"\ninterface = \"core\"\nport = 5062\nallow = [\"0.0.0.0/0\"]\n";
    auto r = parse_config(text, "f.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    EXPECT_EQ(r.cfg->trunks[0].untrusted_trunk_rate, 50u);
    EXPECT_EQ(r.cfg->trunks[0].untrusted_trunk_burst, 80u);
    EXPECT_FALSE(r.cfg->trunks[1].untrusted_trunk_rate.has_value()) << "unset: [flood]'s";
    EXPECT_FALSE(r.cfg->trunks[1].untrusted_trunk_burst.has_value());
    auto zero = base;
    zero.insert(zero.find("allow"), "untrusted_trunk_rate = 0\n");
    auto z = parse_config(zero, "f.toml");
    ASSERT_TRUE(z.errors.empty()) << z.errors[0].to_string();
    EXPECT_EQ(z.cfg->trunks[0].untrusted_trunk_rate, 0u) << "0: no limit for this trunk";
}

TEST(config_flood, refuses_a_trunks_own_rate_out_of_range_or_on_a_trusted_trunk)
{
    // base: the trunk's keys are lines 6-9; what is inserted before allow is line 9.
    const bad_case cases[] = {
        {"untrusted_trunk_rate = 20000000\n", 9, "trunk[0].untrusted_trunk_rate", "0..10000000"},
        {"untrusted_trunk_burst = 0\n", 9, "trunk[0].untrusted_trunk_burst", "1..1000000"},
        {"untrusted_trunk_rate = \"lots\"\n", 9, "trunk[0].untrusted_trunk_rate", "got a string"},
        {"trusted = true\nuntrusted_trunk_rate = 100\n", 10, "trunk[0].untrusted_trunk_rate", "this trunk is trusted"},
    };
    for (const auto& c : cases) {
        std::string text = base;
        text.insert(text.find("allow"), c.text);
        auto r = parse_config(text, "f.toml");
        ASSERT_EQ(r.errors.size(), 1u) << c.text;
        EXPECT_EQ(r.errors[0].file, "f.toml");
        EXPECT_EQ(r.errors[0].line, c.line) << c.text;
        EXPECT_EQ(r.errors[0].key, c.key) << c.text;
        EXPECT_NE(r.errors[0].message.find(c.says), std::string::npos) << r.errors[0].to_string();
    }
}

TEST(config_flood, refuses_a_trusted_mark_that_is_not_a_boolean)
{
    std::string text = base;
    text.insert(text.find("allow"), "trusted = \"yes\"\n");
    auto r = parse_config(text, "f.toml");
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].line, 9);
    EXPECT_EQ(r.errors[0].key, "trunk[0].trusted");
}

}  // namespace
}  // namespace sbc::control
