// Call admission in sbc.toml (control/config_admission.cc): the [admission] section, the
// trunk, region and peer limit keys, their defaults, how they reach the proxy tables (a
// region's peer_max_calls on peers that set none), and every refusal naming file, line and
// key. Unit tier.
#include <gtest/gtest.h>

#include <string>

#include "control/config.h"
#include "control/proxy_build.h"

namespace sbc::control {
namespace {

const std::string head =
    "[[interface]]\nname = \"core\"\ndevice = \"net_null0\"\naddress = \"198.18.0.1/24\"\n"  // lines 1-4
    "[[trunk]]\nname = \"t\"\ninterface = \"core\"\nallow = [\"0.0.0.0/0\"]\n";                 // lines 5-8

const std::string tail =
    "[[region]]\nname = \"r1\"\npeers = [ { address = \"198.18.0.11:5060\", max_calls = 7 }, "
    "{ address = \"198.18.0.12:5060\" } ]\n"
    "[[peer_group]]\nname = \"g\"\nregions = [\"r1\"]\n"
    "[[route]]\nname = \"default\"\npeer_group = \"g\"\n";

TEST(config_admission, no_key_means_no_limit)
{
    auto r = parse_config(head + tail, "a.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    EXPECT_EQ(r.cfg->trunks[0].admission.max_calls, 0u);
    EXPECT_EQ(r.cfg->trunks[0].admission.max_calls_per_second, 0u);
    EXPECT_EQ(r.cfg->admission.max_calls, 0u);
    EXPECT_EQ(r.cfg->admission.refuse_code, 503u);
    EXPECT_EQ(r.cfg->admission.retry_after_s, 5u);
    EXPECT_EQ(r.cfg->regions[0].peer_max_calls, 0u);
    EXPECT_EQ(r.cfg->regions[0].peers[0].max_calls, 7u);
}

TEST(config_admission, reads_every_key_and_carries_them_into_the_proxy_tables)
{
    const std::string text = head + "max_calls = 200\nmax_calls_per_second = 20\n" + tail +
                             "[admission]\nmax_calls = 1000\nrefuse_code = 480\nretry_after_s = 30\n";
    std::string with_region = text;
    with_region.replace(with_region.find("name = \"r1\"\n"), 12, "name = \"r1\"\npeer_max_calls = 3\n");
    auto r = parse_config(with_region, "a.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    const config& c = *r.cfg;
    EXPECT_EQ(c.trunks[0].admission.max_calls, 200u);
    EXPECT_EQ(c.trunks[0].admission.max_calls_per_second, 20u);
    EXPECT_EQ(c.regions[0].peer_max_calls, 3u);
    EXPECT_EQ(c.admission.max_calls, 1000u);
    EXPECT_EQ(c.admission.refuse_code, 480u);
    EXPECT_EQ(c.admission.retry_after_s, 30u);

    std::vector<dataplane::interface_info> ifs(1);
    ifs[0].name = "core";
    ifs[0].address = ip_prefix{ip_address::v4(0xc6120001u), 24};
    peer_ids ids;
    std::string error;
    auto t = build_proxy_tables(c, ifs, 1, ids, error);
    ASSERT_NE(t, nullptr) << error;
    EXPECT_EQ(t->trunks[0].max_calls, 200u);
    EXPECT_EQ(t->trunks[0].calls_per_second, 20u);
    EXPECT_EQ(t->trunks[0].calls_burst, 20u) << "the burst defaults to the rate";
    EXPECT_EQ(t->admission.max_calls, 1000u);
    EXPECT_EQ(t->admission.refuse_code, 480);
    EXPECT_EQ(t->admission.retry_after_s, 30u);
    ASSERT_EQ(t->peers.size(), 2u);
    for (const auto& p : t->peers)
        EXPECT_EQ(p.max_calls, p.port == 5060 && p.address == ip_address::v4(0xc612000bu) ? 7u : 3u)
            << p.name << ": its own max_calls, else the region's peer_max_calls";
}

TEST(config_admission, an_explicit_burst_is_kept)
{
    auto r = parse_config(head + "max_calls_per_second = 5\ncalls_burst = 50\n" + tail, "a.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    EXPECT_EQ(r.cfg->trunks[0].admission.calls_burst, 50u);
}

struct bad {
    const char* what;
    std::string text;
    int line;
    const char* key;
    const char* says;
};

TEST(config_admission, refuses_bad_values_with_file_line_and_key)
{
    const bad cases[] = {
        {"a trunk limit of 0", head + "max_calls = 0\n" + tail, 9, "trunk[0].max_calls", "1..10000000"},
        {"a negative trunk limit", head + "max_calls = -5\n" + tail, 9, "trunk[0].max_calls", "got -5"},
        {"a rate of 0", head + "max_calls_per_second = 0\n" + tail, 9, "trunk[0].max_calls_per_second", "1..1000000"},
        {"a burst below 1", head + "max_calls_per_second = 10\ncalls_burst = 0\n" + tail, 10, "trunk[0].calls_burst",
         "1..1000000"},
        {"a burst without a rate", head + "calls_burst = 10\n" + tail, 9, "trunk[0].calls_burst",
         "only with max_calls_per_second"},
        {"a limit that is a string", head + "max_calls = \"10\"\n" + tail, 9, "trunk[0].max_calls", "got a string"},
        {"a peer limit of 0", head + "[[region]]\nname = \"r1\"\npeers = [ { address = \"198.18.0.11\", max_calls = 0 } ]\n",
         11, "region[0].peers[0].max_calls", "1..10000000"},
        {"a region peer limit of 0", head + "[[region]]\nname = \"r1\"\npeer_max_calls = 0\nsrv = \"_sip._udp.x.example\"\n",
         11, "region[0].peer_max_calls", "1..10000000"},
        {"a node limit of 0", head + tail + "[admission]\nmax_calls = 0\n", 19, "admission.max_calls", "1..10000000"},
        {"a refuse code that is not a refusal", head + tail + "[admission]\nrefuse_code = 404\n", 19,
         "admission.refuse_code", "503"},
        {"a refuse code outside 400..699", head + tail + "[admission]\nrefuse_code = 200\n", 19, "admission.refuse_code",
         "400..699"},
        {"a Retry-After over a day", head + tail + "[admission]\nretry_after_s = 90000\n", 19, "admission.retry_after_s",
         "0..86400"},
        {"a typo", head + tail + "[admission]\nmax_call = 5\n", 19, "admission.max_call", "did you mean"},
    };
    for (const auto& c : cases) {
        auto r = parse_config(c.text, "a.toml");
        ASSERT_FALSE(r.errors.empty()) << c.what;
        const config_error& e = r.errors[0];
        EXPECT_EQ(e.file, "a.toml") << c.what;
        EXPECT_EQ(e.line, c.line) << c.what << ": " << e.to_string();
        EXPECT_EQ(e.key, c.key) << c.what << ": " << e.to_string();
        EXPECT_NE(e.message.find(c.says), std::string::npos) << c.what << ": " << e.to_string();
    }
}

}  // namespace
}  // namespace sbc::control
