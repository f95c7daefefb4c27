// [media] in sbc.toml (control/config_media.cc): defaults, what an operator may write, and
// every refusal naming file, line and key. Unit tier.
#include <gtest/gtest.h>

#include <string>

#include "control/config.h"

namespace sbc::control {
namespace {

const std::string base =
    "[[interface]]\nname = \"core\"\ndevice = \"net_null0\"\naddress = \"198.18.0.1/24\"\nmedia_ports = \"30000-30999\"\n"
    "[[interface]]\nname = \"media2\"\ndevice = \"net_null1\"\naddress = \"198.18.5.1/24\"\n"
    "[[trunk]]\nname = \"t\"\ninterface = \"core\"\nport = 5060\nallow = [\"0.0.0.0/0\"]\n";

TEST(config_media, absent_section_means_no_anchoring)
{
    auto r = parse_config(base, "m.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    EXPECT_FALSE(r.cfg->media.enabled);
}

TEST(config_media, defaults_to_the_first_trunks_interface_and_its_media_ports)
{
    auto r = parse_config(base + "[media]\n", "m.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    const auto& m = r.cfg->media;
    EXPECT_TRUE(m.enabled);
    ASSERT_EQ(m.addresses.size(), 1u);
    EXPECT_EQ(m.addresses[0], ip_address::v4(0xc6120001u));
    EXPECT_EQ(m.port_min, 30000);
    EXPECT_EQ(m.port_max, 30999);
    EXPECT_EQ(m.mode, rtp::latching::symmetric);
    EXPECT_EQ(m.inactivity_timeout_s, 60u);
    EXPECT_EQ(m.quarantine_ms, 5000u);
}

TEST(config_media, reads_every_key)
{
    auto r = parse_config(base +
                              "[media]\naddresses = [\"198.18.5.1\", \"198.18.0.1\"]\nport_min = 40000\nport_max = 40999\n"
                              "latching = \"strict\"\ninactivity_timeout_s = 0\nport_quarantine_s = 30\nsessions_per_worker = 1024\n",
                          "m.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    const auto& m = r.cfg->media;
    ASSERT_EQ(m.addresses.size(), 2u);
    EXPECT_EQ(m.addresses[0], ip_address::v4(0xc6120501u));
    EXPECT_EQ(m.port_min, 40000);
    EXPECT_EQ(m.port_max, 40999);
    EXPECT_EQ(m.mode, rtp::latching::strict);
    EXPECT_EQ(m.inactivity_timeout_s, 0u);
    EXPECT_EQ(m.quarantine_ms, 30000u);
    EXPECT_EQ(m.sessions_per_worker, 1024u);
}

struct bad {
    const char* what;
    std::string media;
    int line;  ///< relative to the [media] line (0)
    const char* key;
    const char* says;
};

TEST(config_media, refuses_bad_values_with_file_line_and_key)
{
    const bad cases[] = {
        {"an address no interface has", "address = \"198.18.9.9\"\n", 1, "media.address", "address of an [[interface]]"},
        {"not an address", "address = \"media\"\n", 1, "media.address", "dotted quad"},
        {"an odd first port", "port_min = 20001\n", 1, "media.port_min", "even"},
        {"an empty range", "port_min = 20000\nport_max = 20000\n", 2, "media.port_max", "at least 2 port pairs"},
        {"a SIP port inside the range", "port_min = 5000\nport_max = 6000\n", -5, "trunk.t.port", "outside the media range"},
        {"an unknown latching", "latching = \"loose\"\n", 1, "media.latching", "\"symmetric\" or \"strict\""},
        {"a quarantine shorter than a grace period could be", "quarantine_ms = 10\n", 1, "media.quarantine_ms", "1000..600000"},
        {"a typo", "inactivity_timeout = 5\n", 1, "media.inactivity_timeout", "did you mean"},
    };
    const int media_line = 15;  // [media] in base + "[media]\n"
    for (const auto& c : cases) {
        auto r = parse_config(base + "[media]\n" + c.media, "m.toml");
        ASSERT_FALSE(r.errors.empty()) << c.what;
        const auto& e = r.errors[0];
        EXPECT_EQ(e.file, "m.toml") << c.what;
        EXPECT_EQ(e.line, media_line + c.line) << c.what << ": " << e.to_string();
        EXPECT_EQ(e.key, c.key) << c.what << ": " << e.to_string();
        EXPECT_NE(e.message.find(c.says), std::string::npos) << c.what << ": " << e.to_string();
    }
}

}  // namespace
}  // namespace sbc::control
