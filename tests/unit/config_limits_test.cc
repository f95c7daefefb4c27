// Unit tests of the config loader's limits: what the dataplane's tables cannot hold (VLANs per
// device, interfaces and devices, trunks, peers, regions, peer groups) is refused with its line
// and key, never dropped, and as many of each as the tables hold is accepted.
#include <string>

#include "tests/unit/config_test_util.h"

namespace sbc::control {
namespace {

using namespace config_testing;

// --- What the dataplane's tables cannot hold: refused, never dropped ---

// `n` interfaces of 5 lines each (interface i starts at line 5i+1), `per_device` on each
// device with VLANs 0, 1, ...
std::string interfaces(std::size_t n, std::size_t per_device)
{
    std::string t;
    for (std::size_t i = 0; i < n; ++i)
        t += "[[interface]]\nname = \"if" + std::to_string(i) + "\"\ndevice = \"net_null" +
             std::to_string(i / per_device) + "\"\naddress = \"198.18." + std::to_string(i) + ".1/24\"\nvlan = " +
             std::to_string(i % per_device) + "\n";
    return t;
}

// trunk_base with `n` trunks (trunk i starts at line 5i+5) on ports 5060, 5061, ...
std::string trunks(std::size_t n)
{
    std::string t = "[[interface]]\nname = \"core\"\ndevice = \"net_null0\"\naddress = \"198.18.0.1/24\"\n";
    for (std::size_t i = 0; i < n; ++i)
        t += "[[trunk]]\nname = \"t" + std::to_string(i) + "\"\ninterface = \"core\"\nport = " +
             std::to_string(5060 + i) + "\nallow = [\"198.18.0.2\"]\n";
    return t;
}

// trunk_base and one region whose `n` peers are one a line, peer k at line 12+k.
std::string static_peers(std::size_t n)
{
    std::string t = trunk_base + "[[region]]\nname = \"r1\"\npeers = [\n";
    for (std::size_t k = 0; k < n; ++k)
        t += std::string(k == 0 ? "" : ",") + "{ address = \"198.18.0.11:" + std::to_string(1024 + k) + "\" }\n";
    return t + "]\n";
}

// trunk_base and `n` srv regions of 3 lines each, region i at line 9+3i.
std::string regions(std::size_t n)
{
    std::string t = trunk_base;
    for (std::size_t i = 0; i < n; ++i)
        t += "[[region]]\nname = \"r" + std::to_string(i) + "\"\nsrv = \"_sip._udp.x\"\n";
    return t;
}

// group_base and `n` more peer groups of 3 lines each, group i (counting g1 as 0) at line 12+3i.
std::string peer_groups(std::size_t n)
{
    std::string t = group_base;
    for (std::size_t i = 1; i < n; ++i) t += "[[peer_group]]\nname = \"g" + std::to_string(i + 1) + "\"\nregions = [\"r1\"]\n";
    return t;
}

INSTANTIATE_TEST_SUITE_P(
    limit_mistakes, config_bad,
    ::testing::Values(
        bad_case{"a fifth VLAN on one device", interfaces(5, 5), 23, "interface[4].device",
                 "at most 4 interfaces (VLANs) on one device; interface[0], interface[1], interface[2], interface[3] "
                 "already use \"net_null0\""},
        bad_case{"33 interfaces", interfaces(33, 4), 161, "interface[32]",
                 "expected at most 32 [[interface]] tables (the dataplane's interface table), got 33"},
        bad_case{"257 trunks", trunks(257), 1285, "trunk[256]",
                 "expected at most 256 [[trunk]] tables (each is counted on its own), got 257"},
        bad_case{"4097 static peers", static_peers(4097), 4108, "region[0].peers[4096]",
                 "expected at most 4096 peers in the whole file (the peer health table)"},
        bad_case{"65536 regions", regions(65536), 9 + 3 * 65535, "region[65535]",
                 "expected at most 65535 [[region]] tables, got 65536"},
        bad_case{"65536 peer groups", peer_groups(65536), 12 + 3 * 65535, "peer_group[65535]",
                 "expected at most 65535 [[peer_group]] tables, got 65536"}),
    bad_case_name);

TEST(config, accepts_as_many_of_each_as_the_tables_hold)
{
    for (const std::string& text : {interfaces(32, 4), interfaces(4, 4), trunks(256), static_peers(4096)}) {
        auto r = parse_config(text, "full.toml");
        EXPECT_TRUE(r.cfg) << r.errors[0].to_string();
    }
}

TEST(config, refuses_a_33rd_device_besides_the_33rd_interface)
{
    // Every device needs an interface, so today the device limit is met only together with the
    // interface limit; both are named.
    auto r = parse_config(interfaces(33, 1), "ports.toml");
    EXPECT_FALSE(r.cfg);
    ASSERT_EQ(r.errors.size(), 2u);
    EXPECT_EQ(r.errors[0].to_string(),
              "ports.toml:161: interface[32]: expected at most 32 [[interface]] tables (the dataplane's interface "
              "table), got 33");
    EXPECT_EQ(r.errors[1].to_string(),
              "ports.toml:163: interface[32].device: expected at most 32 distinct devices (DPDK ports); "
              "\"net_null32\" is one more");
}

}  // namespace
}  // namespace sbc::control
