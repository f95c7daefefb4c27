// [[interface]] dscp_sip and dscp_rtp (control/config_dscp.cc): defaults CS3 and EF, numbers
// and names read, anything else refused as FILE:LINE: interface[N].KEY: why. Unit tier.
#include <string>

#include <gtest/gtest.h>

#include "control/config.h"

namespace sbc::control {
namespace {

/// A minimal valid file whose one interface gets `extra` lines (from line 5 on).
std::string with(const std::string& extra)
{
    return "[[interface]]\nname = \"core\"\ndevice = \"net_null0\"\naddress = \"198.18.0.1/24\"\n" + extra;
}

TEST(config_dscp, defaults_to_cs3_for_sip_and_ef_for_rtp)
{
    auto r = parse_config(with(""), "d.toml");
    ASSERT_TRUE(r.cfg) << r.errors[0].to_string();
    EXPECT_EQ(r.cfg->interfaces[0].dscp_sip, 24);
    EXPECT_EQ(r.cfg->interfaces[0].dscp_rtp, 46);
}

TEST(config_dscp, reads_numbers_and_names)
{
    struct c {
        std::string value;
        uint8_t dscp;
    };
    for (const c& t : {c{"0", 0}, c{"63", 63}, c{"40", 40}, c{"\"cs0\"", 0}, c{"\"CS3\"", 24}, c{"\"CS7\"", 56},
                       c{"\"AF11\"", 10}, c{"\"af41\"", 34}, c{"\"AF43\"", 38}, c{"\"EF\"", 46}, c{"\"VA\"", 44},
                       c{"\"LE\"", 1}, c{"\"DF\"", 0}, c{"\"26\"", 26}}) {
        SCOPED_TRACE(t.value);
        auto r = parse_config(with("dscp_sip = " + t.value + "\ndscp_rtp = " + t.value + "\n"), "d.toml");
        ASSERT_TRUE(r.cfg) << r.errors[0].to_string();
        EXPECT_EQ(r.cfg->interfaces[0].dscp_sip, t.dscp);
        EXPECT_EQ(r.cfg->interfaces[0].dscp_rtp, t.dscp);
    }
}

TEST(config_dscp, refuses_what_is_no_dscp_with_file_line_and_key)
{
    struct c {
        std::string line;
        std::string key;
        std::string why;
    };
    for (const c& t : {c{"dscp_sip = 64", "interface[0].dscp_sip", "got 64"},
                       c{"dscp_sip = -1", "interface[0].dscp_sip", "got -1"},
                       c{"dscp_rtp = \"EX\"", "interface[0].dscp_rtp", "got \"EX\""},
                       c{"dscp_rtp = \"AF44\"", "interface[0].dscp_rtp", "got \"AF44\""},
                       c{"dscp_rtp = \"CS8\"", "interface[0].dscp_rtp", "got \"CS8\""},
                       c{"dscp_rtp = \"64\"", "interface[0].dscp_rtp", "got \"64\""},
                       c{"dscp_sip = 4.5", "interface[0].dscp_sip", "got a float"},
                       c{"dscp_sip = true", "interface[0].dscp_sip", "got a boolean"}}) {
        SCOPED_TRACE(t.line);
        auto r = parse_config(with(t.line + "\n"), "d.toml");
        EXPECT_FALSE(r.cfg);
        ASSERT_EQ(r.errors.size(), 1u);
        EXPECT_EQ(r.errors[0].line, 5);
        EXPECT_EQ(r.errors[0].key, t.key);
        EXPECT_NE(r.errors[0].message.find("a number 0..63 or a name"), std::string::npos) << r.errors[0].to_string();
        EXPECT_NE(r.errors[0].message.find(t.why), std::string::npos) << r.errors[0].to_string();
        EXPECT_EQ(r.errors[0].to_string().rfind("d.toml:5: " + t.key + ": expected a DSCP", 0), 0u)
            << r.errors[0].to_string();
    }
}

TEST(config_dscp, parses_each_name_to_its_rfc_value)
{
    EXPECT_EQ(parse_dscp("CS1"), 8);
    EXPECT_EQ(parse_dscp("AF21"), 18);
    EXPECT_EQ(parse_dscp("AF32"), 28);
    EXPECT_EQ(parse_dscp("ef"), 46);
    EXPECT_FALSE(parse_dscp(""));
    EXPECT_FALSE(parse_dscp("AF"));
    EXPECT_FALSE(parse_dscp("AF51"));
    EXPECT_FALSE(parse_dscp("07"));
    EXPECT_FALSE(parse_dscp("CS"));
}

}  // namespace
}  // namespace sbc::control
