// Unit tests of the config loader: a full file, defaults, and every kind of mistake an operator
// makes, each expected to be reported with its line and dotted key.
#include "control/config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/config_test_util.h"

namespace sbc::control {
namespace {

using namespace config_testing;

constexpr const char* full_file = R"(# a full file
[node]
name = "edge-7"
workers = 4
control_socket = "/run/sbc/edge7.sock"
management_http = "0.0.0.0:9191"

[dpdk]
no_huge = false
memory_mb = 2048
mbufs_per_worker = 8192
rx_ring = 512
tx_ring = 2048
file_prefix = "edge7"
eal_args = ["--log-level=8", "-a", "0000:3b:00.0"]

[arp]
timeout_s = 120
retry_ms = 500
retries = 5

[[interface]]
name = "core"
device = "0000:3b:00.0"
address = "198.18.0.1/24"
gateway = "198.18.0.254"
vlan = 100
media_ports = "30000-39999"

[[interface]]
name = "access"
device = "net_af_packet1,iface=acc"
address = "198.19.0.1/30"

[[trunk]]
name = "carrier-core"
interface = "core"
port = 5060
allow = ["198.18.0.2/32", "198.18.2.0/28", "198.18.3.3"]

[[trunk]]
name = "carrier-b"
interface = "core"
port = 5070
allow = ["0.0.0.0/0"]

[[region]]
name = "region1"
peers = [ { address = "198.18.0.11:5080", priority = 10, weight = 60, name = "r1-a" },
          { address = "198.18.0.12", priority = 20 } ]
probe = "none"
trunk = "carrier-b"

[[region]]
name = "region2"
srv = "_sip._udp.pstn-region2.example.net"

[[peer_group]]
name = "cloud-voice"
regions = ["region2", "region1"]
selector = "least_calls"

[[route]]
name = "fallback"
peer_group = "cloud-voice"

[[route]]
name = "uk"
match = { field = "from_user", pattern = "^\\+44" }
peer_group = "cloud-voice"

[retry]
codes = [408, 503, 504, 480]
no_response_ms = 500
after_provisional = true
max_attempts = 3
retry_after_s = 60

[limits]
transactions_per_worker = 4096
dialogs_per_worker = 2048

[health]
options_interval_ms = 5000
options_timeout_ms = 800
down_after = 3
up_after = 4
accepted_codes = [200, 404]
passive_down_after = 5
retest_interval_ms = 10000

[self]
healthy_code = 200

[media]
latching = "strict"

[dns]
servers = []
)";

TEST(config, reads_every_value_of_a_full_file)
{
    auto r = parse_config(full_file, "full.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    ASSERT_TRUE(r.cfg);
    const config& c = *r.cfg;
    EXPECT_EQ(c.path, "full.toml");
    EXPECT_EQ(c.node.name, "edge-7");
    EXPECT_EQ(c.node.workers, 4u);
    EXPECT_EQ(c.node.control_socket, "/run/sbc/edge7.sock");
    EXPECT_EQ(c.node.management_http, "0.0.0.0:9191");
    EXPECT_FALSE(c.dpdk.no_huge);
    EXPECT_EQ(c.dpdk.memory_mb, 2048u);
    EXPECT_EQ(c.dpdk.mbufs_per_worker, 8192u);
    EXPECT_EQ(c.dpdk.rx_ring, 512u);
    EXPECT_EQ(c.dpdk.tx_ring, 2048u);
    EXPECT_EQ(c.dpdk.file_prefix, "edge7");
    EXPECT_EQ(c.dpdk.eal_args, (std::vector<std::string>{"--log-level=8", "-a", "0000:3b:00.0"}));
    EXPECT_EQ(c.arp.timeout_s, 120u);
    EXPECT_EQ(c.arp.retry_ms, 500u);
    EXPECT_EQ(c.arp.retries, 5u);
    ASSERT_EQ(c.interfaces.size(), 2u);
    const auto& core = c.interfaces[0];
    EXPECT_EQ(core.name, "core");
    EXPECT_EQ(core.device, "0000:3b:00.0");
    EXPECT_EQ(to_string(core.address), "198.18.0.1/24");
    ASSERT_TRUE(core.gateway);
    EXPECT_EQ(to_string(*core.gateway), "198.18.0.254");
    EXPECT_EQ(core.vlan, 100);
    EXPECT_EQ(core.media_port_min, 30000);
    EXPECT_EQ(core.media_port_max, 39999);
    EXPECT_EQ(core.line, 22);
    const auto& access = c.interfaces[1];
    EXPECT_EQ(access.name, "access");
    EXPECT_EQ(to_string(access.address), "198.19.0.1/30");
    EXPECT_FALSE(access.gateway);
    EXPECT_EQ(access.line, 30);
}

TEST(config, reads_every_proxy_section_of_a_full_file)
{
    auto r = parse_config(full_file, "full.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    const config& c = *r.cfg;
    ASSERT_EQ(c.trunks.size(), 2u);
    EXPECT_EQ(c.trunks[0].name, "carrier-core");
    EXPECT_EQ(c.trunks[0].interface, "core");
    EXPECT_EQ(c.trunks[0].port, 5060);
    ASSERT_EQ(c.trunks[0].allow.size(), 3u);
    EXPECT_EQ(to_string(c.trunks[0].allow[0]), "198.18.0.2/32");
    EXPECT_EQ(to_string(c.trunks[0].allow[1]), "198.18.2.0/28");
    EXPECT_EQ(to_string(c.trunks[0].allow[2]), "198.18.3.3/32");
    EXPECT_EQ(c.trunks[1].port, 5070);
    ASSERT_EQ(c.trunks[1].allow.size(), 1u);
    EXPECT_EQ(c.trunks[1].allow[0].len, 0);
    EXPECT_EQ(c.trunks[1].line, 41);

    ASSERT_EQ(c.regions.size(), 2u);
    const region_config& r1 = c.regions[0];
    EXPECT_EQ(r1.name, "region1");
    EXPECT_TRUE(r1.srv.empty());
    EXPECT_EQ(r1.probe, probe_mode::none);
    EXPECT_EQ(r1.trunk, "carrier-b");
    ASSERT_EQ(r1.peers.size(), 2u);
    EXPECT_EQ(r1.peers[0].name, "r1-a");
    EXPECT_EQ(to_string(r1.peers[0].address), "198.18.0.11");
    EXPECT_EQ(r1.peers[0].port, 5080);
    EXPECT_EQ(r1.peers[0].priority, 10);
    EXPECT_EQ(r1.peers[0].weight, 60);
    EXPECT_EQ(r1.peers[1].name, "");
    EXPECT_EQ(r1.peers[1].port, 5060);
    EXPECT_EQ(r1.peers[1].priority, 20);
    EXPECT_EQ(r1.peers[1].weight, default_peer_weight);
    const region_config& r2 = c.regions[1];
    EXPECT_EQ(r2.srv, "_sip._udp.pstn-region2.example.net");
    EXPECT_TRUE(r2.peers.empty());
    EXPECT_EQ(r2.probe, probe_mode::options);
    EXPECT_EQ(r2.trunk, "");

    ASSERT_EQ(c.peer_groups.size(), 1u);
    EXPECT_EQ(c.peer_groups[0].name, "cloud-voice");
    EXPECT_EQ(c.peer_groups[0].regions, (std::vector<std::string>{"region2", "region1"}));
    EXPECT_EQ(c.peer_groups[0].selector, sip::selector::least_calls);

    ASSERT_EQ(c.routes.size(), 2u);
    EXPECT_EQ(c.default_route, 0);
    EXPECT_FALSE(c.routes[0].has_match);
    EXPECT_EQ(c.routes[0].peer_group, "cloud-voice");
    EXPECT_TRUE(c.routes[1].has_match);
    EXPECT_EQ(c.routes[1].name, "uk");
    EXPECT_EQ(c.routes[1].field, sip::match_field::from_user);
    EXPECT_EQ(c.routes[1].pattern, "^\\+44");
    EXPECT_EQ(c.routes[1].line, 67);
    EXPECT_EQ(c.routes[1].pattern_line, 69);

    EXPECT_EQ(c.retry.codes, (std::vector<uint16_t>{408, 503, 504, 480}));
    EXPECT_EQ(c.retry.no_response_ms, 500u);
    EXPECT_TRUE(c.retry.after_provisional);
    EXPECT_EQ(c.retry.max_attempts, 3u);
    EXPECT_EQ(c.retry.retry_after_s, 60u);
    EXPECT_EQ(c.limits.transactions_per_worker, 4096u);
    EXPECT_EQ(c.limits.dialogs_per_worker, 2048u);
    EXPECT_EQ(c.health.options_interval_ms, 5000u);
    EXPECT_EQ(c.health.options_timeout_ms, 800u);
    EXPECT_EQ(c.health.down_after, 3u);
    EXPECT_EQ(c.health.up_after, 4u);
    EXPECT_EQ(c.health.accepted_codes, (std::vector<uint16_t>{200, 404}));
    EXPECT_EQ(c.health.passive_down_after, 5u);
    EXPECT_EQ(c.health.retest_interval_ms, 10000u);
}

TEST(config, fills_in_proxy_defaults_and_has_no_default_route_unless_one_lacks_match)
{
    auto r = parse_config("[[interface]]\nname = \"a\"\ndevice = \"net_null0\"\naddress = \"10.0.0.1/8\"\n"
                          "[[trunk]]\nname = \"t\"\ninterface = \"a\"\nallow = [\"10.0.0.2\"]\n"
                          "[[region]]\nname = \"r\"\npeers = [ { address = \"10.0.0.9\" } ]\n"
                          "[[peer_group]]\nname = \"g\"\nregions = [\"r\"]\n"
                          "[[route]]\nname = \"all\"\nmatch = { field = \"ruri_user\", pattern = \".*\" }\npeer_group = \"g\"\n",
                          "min.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    const config& c = *r.cfg;
    EXPECT_EQ(c.trunks[0].port, 5060);
    EXPECT_EQ(c.regions[0].probe, probe_mode::options);
    EXPECT_EQ(c.regions[0].peers[0].port, 5060);
    EXPECT_EQ(c.regions[0].peers[0].priority, default_peer_priority);
    EXPECT_EQ(c.regions[0].peers[0].weight, default_peer_weight);
    EXPECT_EQ(c.peer_groups[0].selector, sip::selector::srv);
    EXPECT_EQ(c.default_route, -1);
    EXPECT_EQ(c.retry.codes, (std::vector<uint16_t>{408, 503, 504}));
    EXPECT_EQ(c.retry.no_response_ms, 1000u);
    EXPECT_EQ(c.retry.min_no_response_ms, 200u);
    EXPECT_FALSE(c.retry.after_provisional);
    EXPECT_EQ(c.retry.max_attempts, 4u);
    EXPECT_EQ(c.retry.retry_after_s, 30u);
    EXPECT_EQ(c.limits.transactions_per_worker, 262144u);
    EXPECT_EQ(c.limits.dialogs_per_worker, 131072u);
    EXPECT_EQ(c.health.options_interval_ms, 2000u);
    EXPECT_EQ(c.health.options_timeout_ms, 1000u);
    EXPECT_EQ(c.health.down_after, 2u);
    EXPECT_EQ(c.health.up_after, 2u);
    EXPECT_EQ(c.health.accepted_codes, (std::vector<uint16_t>{200}));
    EXPECT_EQ(c.health.passive_down_after, 3u);
    EXPECT_EQ(c.health.retest_interval_ms, 30000u);
}

TEST(config, fills_in_defaults_for_every_absent_key)
{
    auto r = parse_config("[[interface]]\nname = \"a\"\ndevice = \"net_null0\"\naddress = \"10.0.0.1/8\"\n", "min.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    const config& c = *r.cfg;
    EXPECT_EQ(c.node.name, "sbc");
    EXPECT_EQ(c.node.workers, default_workers);
    EXPECT_EQ(c.node.control_socket, default_control_socket);
    EXPECT_EQ(c.node.management_http, default_management_http);
    EXPECT_TRUE(c.dpdk.no_huge);
    EXPECT_EQ(c.dpdk.memory_mb, default_memory_mb);
    EXPECT_EQ(c.dpdk.mbufs_per_worker, default_mbufs_per_worker);
    EXPECT_EQ(c.dpdk.rx_ring, default_rx_ring);
    EXPECT_EQ(c.dpdk.tx_ring, default_tx_ring);
    EXPECT_TRUE(c.dpdk.file_prefix.empty());
    EXPECT_TRUE(c.dpdk.eal_args.empty());
    EXPECT_EQ(c.arp.timeout_s, default_arp_timeout_s);
    ASSERT_EQ(c.interfaces.size(), 1u);
    EXPECT_EQ(c.interfaces[0].vlan, 0);
    EXPECT_EQ(c.interfaces[0].media_port_min, 20000);
    EXPECT_EQ(c.interfaces[0].media_port_max, 59999);
    EXPECT_FALSE(c.interfaces[0].gateway);
}

TEST(config, accepts_an_empty_management_address_to_disable_http)
{
    auto r = parse_config("[node]\nmanagement_http = \"\"\n[[interface]]\nname = \"a\"\ndevice = \"d\"\naddress = \"10.0.0.1/8\"\n",
                          "x.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    EXPECT_EQ(r.cfg->node.management_http, "");
}

TEST(config, accepts_the_example_file_shipped_with_the_design)
{
    const char* sketch = "/work/shared/config-sketch.toml";
    if (!std::filesystem::exists(sketch)) GTEST_SKIP() << "no " << sketch << " on this machine";
    auto r = load_config(sketch);
    EXPECT_TRUE(r.errors.empty()) << r.errors[0].to_string();
}



TEST_P(config_bad, reports_the_line_and_key_of_the_mistake)
{
    const bad_case& c = GetParam();
    auto r = parse_config(c.text, "bad.toml");
    EXPECT_FALSE(r.cfg);
    ASSERT_FALSE(r.errors.empty());
    const config_error& e = r.errors[0];
    EXPECT_EQ(e.file, "bad.toml");
    EXPECT_EQ(e.line, c.line) << e.to_string();
    EXPECT_EQ(e.key, c.key) << e.to_string();
    EXPECT_NE(e.message.find(c.message_contains), std::string::npos) << e.to_string();
    EXPECT_EQ(r.errors.size(), 1u) << "only one mistake in the file, got also " << r.errors.back().to_string();
}


INSTANTIATE_TEST_SUITE_P(
    mistakes, config_bad,
    ::testing::Values(
        bad_case{"syntax error", "[node]\nname = \"x\nworkers = 1\n", 2, "", "syntax error"},
        bad_case{"unknown key", with_interface("[node]\nworkres = 2\n", good_address), 2, "node.workres",
                 "did you mean \"workers\""},
        bad_case{"unknown table", with_interface("[nodes]\nname = \"x\"\n", good_address), 1, "nodes", "unknown"},
        bad_case{"unknown interface key", with_interface("", good_address + "mtu = 9000\n"), 5, "interface[0].mtu",
                 "unknown key"},
        bad_case{"wrong type", with_interface("[node]\nworkers = \"2\"\n", good_address), 2, "node.workers",
                 "expected an integer in 1..64"},
        bad_case{"node is not a table", with_interface("node = 3\n", good_address), 1, "node", "expected a table"},
        bad_case{"bad address", with_interface("", "address = \"198.18.0.300/24\"\n"), 4, "interface[0].address",
                 "expected an IPv4 address with prefix length"},
        bad_case{"address without prefix", with_interface("", "address = \"198.18.0.1\"\n"), 4,
                 "interface[0].address", "\"198.18.0.1/24\""},
        bad_case{"prefix 33", with_interface("", "address = \"198.18.0.1/33\"\n"), 4, "interface[0].address",
                 "1..32"},
        bad_case{"network address", with_interface("", "address = \"198.18.0.0/24\"\n"), 4, "interface[0].address",
                 "network or broadcast"},
        bad_case{"missing address", with_interface("", ""), 1, "interface[0].address", "missing"},
        bad_case{"gateway outside subnet", with_interface("", good_address + "gateway = \"198.18.1.1\"\n"), 5,
                 "interface[0].gateway", "inside the interface's subnet 198.18.0.0/24"},
        bad_case{"gateway not an address", with_interface("", good_address + "gateway = \"router\"\n"), 5,
                 "interface[0].gateway", "expected an IPv4 address"},
        bad_case{"vlan 4095", with_interface("", good_address + "vlan = 4095\n"), 5, "interface[0].vlan",
                 "0..4094"},
        bad_case{"workers 0", with_interface("[node]\nworkers = 0\n", good_address), 2, "node.workers", "got 0"},
        bad_case{"workers too many", with_interface("[node]\nworkers = 65\n", good_address), 2, "node.workers",
                 "1..64"},
        bad_case{"duplicate names",
                 with_interface("", good_address) + "[[interface]]\nname = \"core\"\ndevice = \"net_null1\"\n" +
                     "address = \"198.19.0.1/24\"\n",
                 6, "interface[1].name", "already used by interface[0] at line 1"},
        bad_case{"same device and vlan twice",
                 with_interface("", good_address) + "[[interface]]\nname = \"b\"\ndevice = \"net_null0\"\n" +
                     "address = \"198.19.0.1/24\"\n",
                 7, "interface[1].device", "already uses \"net_null0\" with vlan 0"},
        bad_case{"missing interface", "[node]\nname = \"x\"\n", 0, "interface", "at least one [[interface]]"},
        bad_case{"interface as a single table", "[interface]\nname = \"x\"\n", 1, "interface",
                 "[[interface]]"},
        bad_case{"media range reversed", with_interface("", good_address + "media_ports = \"40000-30000\"\n"), 5,
                 "interface[0].media_ports", "1024 <= MIN < MAX <= 65535"},
        bad_case{"media range below 1024", with_interface("", good_address + "media_ports = \"80-2000\"\n"), 5,
                 "interface[0].media_ports", "MIN-MAX"},
        bad_case{"media range as integer", with_interface("", good_address + "media_ports = 20000\n"), 5,
                 "interface[0].media_ports", "expected a string"},
        bad_case{"relative socket path", with_interface("[node]\ncontrol_socket = \"run/sbcd.sock\"\n", good_address),
                 2, "node.control_socket", "absolute path"},
        bad_case{"socket path too long for a Unix socket",
                 with_interface("[node]\ncontrol_socket = \"/" + std::string(120, 'x') + "\"\n", good_address), 2,
                 "node.control_socket", "at most 107 bytes"},
        bad_case{"management address without port", with_interface("[node]\nmanagement_http = \"127.0.0.1\"\n",
                                                                    good_address),
                 2, "node.management_http", "host:port"},
        bad_case{"management port 0", with_interface("[node]\nmanagement_http = \"127.0.0.1:0\"\n", good_address), 2,
                 "node.management_http", "port 1..65535"},
        bad_case{"too little memory", with_interface("[dpdk]\nmemory_mb = 128\n", good_address), 2,
                 "dpdk.memory_mb", "256"},
        bad_case{"eal argument not a string", with_interface("[dpdk]\neal_args = [\"-a\", 3]\n", good_address), 2,
                 "dpdk.eal_args[1]", "expected a string"},
        bad_case{"no_huge as string", with_interface("[dpdk]\nno_huge = \"yes\"\n", good_address), 2,
                 "dpdk.no_huge", "true or false"},
        bad_case{"node name with a space", with_interface("[node]\nname = \"my sbc\"\n", good_address), 2,
                 "node.name", "letters, digits"}),
    bad_case_name);


INSTANTIATE_TEST_SUITE_P(
    proxy_mistakes, config_bad,
    ::testing::Values(
        bad_case{"trunk on an unknown interface",
                 "[[interface]]\nname = \"core\"\ndevice = \"net_null0\"\naddress = \"198.18.0.1/24\"\n"
                 "[[trunk]]\nname = \"t1\"\ninterface = \"cor\"\nallow = [\"198.18.0.2\"]\n",
                 7, "trunk[0].interface", "no interface named \"cor\" (known: \"core\")"},
        bad_case{"trunk without allow", with_trunk(""), 5, "trunk[0].allow", "missing"},
        bad_case{"trunk with an empty allow list", with_trunk("allow = []\n"), 8, "trunk[0].allow",
                 "at least one source prefix"},
        bad_case{"trunk allow prefix 33", with_trunk("allow = [\"198.18.0.0/33\"]\n"), 8, "trunk[0].allow[0]",
                 "\"A.B.C.D/N\" with N 0..32"},
        bad_case{"trunk allow with host bits", with_trunk("allow = [\"1.2.3.4/32\", \"198.18.2.1/28\"]\n"), 8,
                 "trunk[0].allow[1]", "did you mean \"198.18.2.0/28\""},
        bad_case{"trunk allow not a string", with_trunk("allow = [\"1.2.3.4\", 5]\n"), 8, "trunk[0].allow[1]",
                 "expected a string"},
        bad_case{"trunk port 0", with_trunk("allow = [\"1.2.3.4\"]\nport = 0\n"), 9, "trunk[0].port", "1..65535"},
        bad_case{"two trunks on one interface and port",
                 trunk_base + "[[trunk]]\nname = \"t2\"\ninterface = \"core\"\nallow = [\"1.2.3.4\"]\n", 9,
                 "trunk[1].port", "trunk[0] at line 5 already listens on 5060 (the default)"},
        bad_case{"two trunks with one name",
                 trunk_base + "[[trunk]]\nname = \"t1\"\ninterface = \"core\"\nport = 5070\nallow = [\"1.2.3.4\"]\n",
                 10, "trunk[1].name", "already used by trunk[0] at line 5"},
        bad_case{"trunk as a single table", "[trunk]\nname = \"x\"\n"
                     "[[interface]]\nname = \"core\"\ndevice = \"net_null0\"\naddress = \"198.18.0.1/24\"\n",
                 1, "trunk", "[[trunk]]"},
        bad_case{"region with neither peers nor srv", with_region(""), 9, "region[0].peers",
                 "missing; expected a static list"},
        bad_case{"region with both srv and peers",
                 with_region("srv = \"_sip._udp.x.net\"\npeers = [ { address = \"1.2.3.4\" } ]\n"), 11,
                 "region[0].srv", "either srv or peers"},
        bad_case{"region srv without _sip._udp", with_region("srv = \"pstn.example.net\"\n"), 11, "region[0].srv",
                 "\"_sip._udp.<domain>\""},
        bad_case{"region with an empty peer list", with_region("peers = []\n"), 11, "region[0].peers",
                 "at least one peer"},
        bad_case{"region peers as strings", with_region("peers = [\"1.2.3.4\"]\n"), 11, "region[0].peers",
                 "expected an array of tables"},
        bad_case{"peer port 0", with_region("peers = [ { address = \"198.18.0.11:0\" } ]\n"), 11,
                 "region[0].peers[0].address", "port 1..65535"},
        bad_case{"peer address a name", with_region("peers = [ { address = \"pstn.example.net:5060\" } ]\n"), 11,
                 "region[0].peers[0].address", "\"A.B.C.D:PORT\""},
        bad_case{"peer without address", with_region("peers = [ { priority = 1 } ]\n"), 11,
                 "region[0].peers[0].address", "missing"},
        bad_case{"peer priority too large", with_region("peers = [ { address = \"1.2.3.4\", priority = 70000 } ]\n"), 11,
                 "region[0].peers[0].priority", "0..65535"},
        bad_case{"peer key misspelt", with_region("peers = [ { address = \"1.2.3.4\", wieght = 5 } ]\n"), 11,
                 "region[0].peers[0].wieght", "did you mean \"weight\""},
        bad_case{"peer name with a slash", with_region("peers = [ { address = \"1.2.3.4\", name = \"a/b\" } ]\n"), 11,
                 "region[0].peers[0].name", "letters, digits"},
        bad_case{"one peer in two regions",
                 with_region("peers = [ { address = \"1.2.3.4:5060\" } ]\n[[region]]\nname = \"r2\"\n"
                             "peers = [ { address = \"1.2.3.4\" } ]\n"),
                 14, "region[1].peers[0].address", "1.2.3.4:5060 is already region[0].peers[0] at line 11"},
        bad_case{"two peers with one name",
                 with_region("peers = [ { address = \"1.2.3.4\", name = \"p\" },\n"
                             "          { address = \"1.2.3.5\", name = \"p\" } ]\n"),
                 12, "region[0].peers[1].name", "already used by region[0].peers[0]"},
        bad_case{"region probe unknown", with_region("srv = \"_sip._udp.x.net\"\nprobe = \"sip\"\n"), 12,
                 "region[0].probe", "expected \"options\" or \"none\", got \"sip\""},
        bad_case{"region trunk unknown", with_region("srv = \"_sip._udp.x.net\"\ntrunk = \"t9\"\n"), 12,
                 "region[0].trunk", "no trunk named \"t9\" (known: \"t1\")"},
        bad_case{"two regions with one name",
                 with_region("srv = \"_sip._udp.x.net\"\n[[region]]\nname = \"r1\"\nsrv = \"_sip._udp.y.net\"\n"), 13,
                 "region[1].name", "already used by region[0] at line 9"},
        bad_case{"regions without any trunk",
                 "[[interface]]\nname = \"core\"\ndevice = \"net_null0\"\naddress = \"198.18.0.1/24\"\n"
                 "[[region]]\nname = \"r1\"\nsrv = \"_sip._udp.x.net\"\n",
                 5, "trunk", "at least one [[trunk]]"},
        bad_case{"peer group with an unknown region",
                 with_group_base("[[peer_group]]\nname = \"g2\"\nregions = [\"r1\", \"r9\"]\n"), 17,
                 "peer_group[1].regions[1]", "no region named \"r9\" (known: \"r1\")"},
        bad_case{"peer group with a region twice",
                 with_group_base("[[peer_group]]\nname = \"g2\"\nregions = [\"r1\", \"r1\"]\n"), 17,
                 "peer_group[1].regions[1]", "each region once"},
        bad_case{"peer group without regions", with_group_base("[[peer_group]]\nname = \"g2\"\nregions = []\n"), 17,
                 "peer_group[1].regions", "at least one region"},
        bad_case{"peer group regions missing", with_group_base("[[peer_group]]\nname = \"g2\"\n"), 15,
                 "peer_group[1].regions", "missing"},
        bad_case{"peer group selector unknown",
                 with_group_base("[[peer_group]]\nname = \"g2\"\nregions = [\"r1\"]\nselector = \"random\"\n"), 18,
                 "peer_group[1].selector", "\"srv\", \"round_robin\", \"least_calls\" or \"hash_call_id\""},
        bad_case{"two peer groups with one name", with_group_base("[[peer_group]]\nname = \"g1\"\nregions = [\"r1\"]\n"),
                 16, "peer_group[1].name", "already used by peer_group[0] at line 12"},
        bad_case{"route to an unknown peer group", with_route("peer_group = \"x\"\n"), 17, "route[0].peer_group",
                 "no peer_group named \"x\""},
        bad_case{"route without peer group", with_route(""), 15, "route[0].peer_group", "missing"},
        bad_case{"route match field unknown",
                 with_route("peer_group = \"g1\"\nmatch = { field = \"ruri\", pattern = \"1\" }\n"), 18,
                 "route[0].match.field", "\"ruri_user\", \"from_user\", \"to_user\" or \"trunk\""},
        bad_case{"route match with an empty pattern",
                 with_route("peer_group = \"g1\"\nmatch = { field = \"to_user\", pattern = \"\" }\n"), 18,
                 "route[0].match.pattern", "non-empty"},
        bad_case{"route match without pattern", with_route("peer_group = \"g1\"\nmatch = { field = \"to_user\" }\n"),
                 18, "route[0].match.pattern", "missing"},
        bad_case{"route match as a string", with_route("peer_group = \"g1\"\nmatch = \".*\"\n"), 18, "route[0].match",
                 "expected an inline table"},
        bad_case{"route match key unknown",
                 with_route("peer_group = \"g1\"\nmatch = { field = \"trunk\", pattern = \"t\", flags = \"i\" }\n"), 18,
                 "route[0].match.flags", "unknown key"},
        bad_case{"two routes without match",
                 with_route("peer_group = \"g1\"\n[[route]]\nname = \"x2\"\npeer_group = \"g1\"\n"), 18,
                 "route[1].match", "route[0] at line 15 is already the default route"},
        bad_case{"two routes with one name",
                 with_route("peer_group = \"g1\"\n[[route]]\nname = \"x1\"\npeer_group = \"g1\"\n"
                            "match = { field = \"trunk\", pattern = \"t1\" }\n"),
                 19, "route[1].name", "already used by route[0] at line 15"},
        bad_case{"retry code below 400", with_interface("[retry]\ncodes = [503, 399]\n", good_address), 2,
                 "retry.codes[1]", "400..699, got 399"},
        bad_case{"retry code twice", with_interface("[retry]\ncodes = [503, 503]\n", good_address), 2,
                 "retry.codes[1]", "each code once"},
        bad_case{"retry codes empty", with_interface("[retry]\ncodes = []\n", good_address), 2, "retry.codes",
                 "at least one code"},
        bad_case{"retry code a string", with_interface("[retry]\ncodes = [\"503\"]\n", good_address), 2,
                 "retry.codes[0]", "expected an integer"},
        bad_case{"no-response timer too short", with_interface("[retry]\nno_response_ms = 50\n", good_address), 2,
                 "retry.no_response_ms", "100..32000"},
        bad_case{"learned timer floor above the no-response timer",
                 with_interface("[retry]\nno_response_ms = 500\nmin_no_response_ms = 600\n", good_address), 3,
                 "retry.min_no_response_ms", "at most no_response_ms (500), got 600"},
        bad_case{"learned timer floor too short", with_interface("[retry]\nmin_no_response_ms = 40\n", good_address),
                 2, "retry.min_no_response_ms", "50..32000"},
        bad_case{"max attempts 0", with_interface("[retry]\nmax_attempts = 0\n", good_address), 2,
                 "retry.max_attempts", "1..16"},
        bad_case{"max attempts 17", with_interface("[retry]\nmax_attempts = 17\n", good_address), 2,
                 "retry.max_attempts", "1..16"},
        bad_case{"after_provisional not a boolean", with_interface("[retry]\nafter_provisional = 1\n", good_address),
                 2, "retry.after_provisional", "true or false"},
        bad_case{"retry as an array of tables", with_interface("[[retry]]\nmax_attempts = 2\n", good_address), 1,
                 "retry", "expected a table written [retry]"},
        bad_case{"too few transactions", with_interface("[limits]\ntransactions_per_worker = 1000\n", good_address),
                 2, "limits.transactions_per_worker", "1024..4194304"},
        bad_case{"too many dialogs", with_interface("[limits]\ndialogs_per_worker = 4194305\n", good_address), 2,
                 "limits.dialogs_per_worker", "1024..4194304"},
        bad_case{"probe timeout longer than the interval",
                 with_interface("[health]\noptions_interval_ms = 500\noptions_timeout_ms = 800\n", good_address), 3,
                 "health.options_timeout_ms", "at most options_interval_ms (500)"},
        bad_case{"accepted code 99", with_interface("[health]\naccepted_codes = [200, 99]\n", good_address), 2,
                 "health.accepted_codes[1]", "100..699"},
        bad_case{"down_after 0", with_interface("[health]\ndown_after = 0\n", good_address), 2, "health.down_after",
                 "1..100"},
        bad_case{"retest interval too short", with_interface("[health]\nretest_interval_ms = 10\n", good_address), 2,
                 "health.retest_interval_ms", "1000..3600000"},
        bad_case{"health key misspelt", with_interface("[health]\nup_afterr = 2\n", good_address), 2,
                 "health.up_afterr", "did you mean \"up_after\""}),
    bad_case_name);


INSTANTIATE_TEST_SUITE_P(
    ipv6_mistakes, config_bad,
    ::testing::Values(
        bad_case{"IPv6 interface address", with_interface("", "address = \"2001:db8::1/64\"\n"), 4,
                 "interface[0].address", "an IPv6 one goes in address6 (address6 = \"2001:db8::1/64\")"},
        bad_case{"IPv6 gateway", with_interface("", good_address + "gateway = \"2001:db8::fe\"\n"), 5,
                 "interface[0].gateway", "an IPv6 gateway goes in gateway6"},
        bad_case{"IPv4 address6", with_interface("", good_address + "address6 = \"198.18.0.2/24\"\n"), 5,
                 "interface[0].address6", "expected an IPv6 address with prefix length 1..128"},
        bad_case{"address6 without a prefix length", with_interface("", good_address + "address6 = \"2001:db8::1\"\n"), 5,
                 "interface[0].address6", "expected an IPv6 address with prefix length 1..128"},
        bad_case{"link-local address6", with_interface("", good_address + "address6 = \"fe80::1/64\"\n"), 5,
                 "interface[0].address6", "a link-local address (sbcd derives its own from the MAC)"},
        bad_case{"multicast address6", with_interface("", good_address + "address6 = \"ff02::1/64\"\n"), 5,
                 "interface[0].address6", "a multicast address"},
        bad_case{"IPv4-mapped address6", with_interface("", good_address + "address6 = \"::ffff:198.18.0.1/120\"\n"), 5,
                 "interface[0].address6", "an IPv4-mapped address"},
        bad_case{"subnet anycast address6", with_interface("", good_address + "address6 = \"2001:db8:0:1::/64\"\n"), 5,
                 "interface[0].address6", "the subnet-router anycast address"},
        bad_case{"gateway6 without address6", with_interface("", good_address + "gateway6 = \"fe80::1\"\n"), 5,
                 "interface[0].gateway6", "needs address6"},
        bad_case{"gateway6 off the prefix",
                 with_interface("", good_address + "address6 = \"2001:db8:0:1::10/64\"\ngateway6 = \"2001:db8:0:2::1\"\n"), 6,
                 "interface[0].gateway6", "expected a link-local address or one inside the interface's prefix 2001:db8:0:1::/64"},
        bad_case{"gateway6 is our address",
                 with_interface("", good_address + "address6 = \"2001:db8:0:1::10/64\"\ngateway6 = \"2001:db8:0:1::10\"\n"), 6,
                 "interface[0].gateway6", "expected another host"},
        bad_case{"IPv4 gateway6",
                 with_interface("", good_address + "address6 = \"2001:db8:0:1::10/64\"\ngateway6 = \"198.18.0.254\"\n"), 6,
                 "interface[0].gateway6", "expected an IPv6 address like \"fe80::1\""},
        bad_case{"ICMPv6 error burst of 0", with_interface("[ipv6]\nicmp_error_burst = 0\n", good_address), 2,
                 "ipv6.icmp_error_burst", "1..100000"},
        bad_case{"extension header limit too high", with_interface("[ipv6]\nmax_extension_headers = 33\n", good_address), 2,
                 "ipv6.max_extension_headers", "0..32"},
        bad_case{"IPv6 trunk prefix with host bits", with_trunk("allow = [\"198.18.0.2\", \"2001:db8::1/32\"]\n"), 8,
                 "trunk[0].allow[1]", "it has host bits set: did you mean \"2001:db8::/32\"?"},
        bad_case{"IPv6 trunk prefix too long", with_trunk("allow = [\"2001:db8::/129\"]\n"), 8,
                 "trunk[0].allow[0]", "prefix \"2001:db8::/N\" with N 0..128"},
        bad_case{"IPv6 peer port 0", with_region("peers = [ { address = \"[2001:db8::11]:0\" } ]\n"), 11,
                 "region[0].peers[0].address", "expected an IPv6 peer in brackets"},
        bad_case{"bare IPv6 peer", with_region("peers = [ { address = \"2001:db8::11\" } ]\n"), 11,
                 "region[0].peers[0].address", "expected an IPv6 peer in brackets, \"[2001:db8::1]:PORT\""},
        bad_case{"address_family of a static region",
                 with_region("address_family = \"ipv6\"\npeers = [ { address = \"[2001:db8::11]\" } ]\n"), 11,
                 "region[0].address_family", "expected only with srv"},
        bad_case{"unknown address_family", with_region("srv = \"_sip._udp.x.net\"\naddress_family = \"ipv5\"\n"), 12,
                 "region[0].address_family", "expected \"ipv4\", \"ipv6\", \"prefer_ipv6\" or \"prefer_ipv4\", got \"ipv5\""},
        bad_case{"IPv4 in brackets", with_region("peers = [ { address = \"[198.18.0.11]:5060\" } ]\n"), 11,
                 "region[0].peers[0].address", "or an IPv6 peer \"[2001:db8::1]:PORT\", got \"[198.18.0.11]:5060\""},
        bad_case{"IPv6 media address", with_interface("[media]\naddress = \"::1\"\n", good_address), 2,
                 "media.address", "IPv6 is not supported yet"},
        bad_case{"IPv6 DNS server", with_interface("[dns]\nservers = [\"2001:db8::53\"]\n", good_address), 2,
                 "dns.servers[0]", "IPv6 is not supported yet"}),
    bad_case_name);

TEST(config, an_srv_region_chooses_the_families_its_targets_resolve_to)
{
    auto r = parse_config(with_region("srv = \"_sip._udp.x.net\"\naddress_family = \"prefer_ipv6\"\n"), "f.toml");
    ASSERT_TRUE(r.cfg) << (r.errors.empty() ? "" : r.errors[0].to_string());
    EXPECT_EQ(r.cfg->regions.at(0).family, family_choice::prefer_ipv6);
    auto d = parse_config(with_region("srv = \"_sip._udp.x.net\"\n"), "d.toml");
    ASSERT_TRUE(d.cfg);
    EXPECT_EQ(d.cfg->regions.at(0).family, family_choice::ipv4) << "A records only, as before";
}

TEST(config, takes_ipv6_trunk_prefixes_and_ipv6_peers_in_brackets)
{
    auto r = parse_config(with_region("peers = [ { address = \"[2001:db8::11]:5070\" }, { address = \"[2001:db8::12]\" } ]\n"),
                          "v6.toml");
    ASSERT_TRUE(r.cfg) << (r.errors.empty() ? "" : r.errors[0].to_string());
    const auto& peers = r.cfg->regions.at(0).peers;
    ASSERT_EQ(peers.size(), 2u);
    EXPECT_EQ(to_string(endpoint{peers[0].address, peers[0].port}), "[2001:db8::11]:5070");
    EXPECT_EQ(peers[1].port, 5060) << "no port: 5060";

    auto t = parse_config(with_trunk("allow = [\"198.18.0.0/15\", \"2001:db8:0:1::/64\", \"2001:db8::99\", \"::/0\"]\n"),
                          "t.toml");
    ASSERT_TRUE(t.cfg) << (t.errors.empty() ? "" : t.errors[0].to_string());
    const auto& allow = t.cfg->trunks.at(0).allow;
    ASSERT_EQ(allow.size(), 4u);
    EXPECT_EQ(to_string(allow[1]), "2001:db8:0:1::/64");
    EXPECT_EQ(to_string(allow[2]), "2001:db8::99/128") << "an address alone is its /128";
    EXPECT_EQ(allow[3].len, 0) << "::/0 allows any IPv6 source";
}

TEST(config, takes_an_interface_ipv6_address_and_gateway_beside_its_ipv4_one)
{
    auto r = parse_config(with_interface("[ipv6]\nmax_extension_headers = 4\n",
                                         good_address + "address6 = \"2001:db8:0:1::10/64\"\ngateway6 = \"fe80::1\"\n"),
                          "v6.toml");
    ASSERT_TRUE(r.cfg) << (r.errors.empty() ? "" : r.errors[0].to_string());
    const auto& ic = r.cfg->interfaces.at(0);
    ASSERT_TRUE(ic.address6);
    EXPECT_EQ(to_string(*ic.address6), "2001:db8:0:1::10/64");
    ASSERT_TRUE(ic.gateway6);
    EXPECT_EQ(to_string(*ic.gateway6), "fe80::1");
    EXPECT_EQ(to_string(ic.address), "198.18.0.1/24");
    EXPECT_EQ(r.cfg->ipv6.max_extension_headers, 4u);
    EXPECT_EQ(r.cfg->ipv6.icmp_error_rate, 100u) << "the default";
    EXPECT_EQ(r.cfg->ipv6.icmp_error_burst, 10u);

    auto global = parse_config(
        with_interface("", good_address + "address6 = \"2001:db8:0:1::10/64\"\ngateway6 = \"2001:db8:0:1::1\"\n"), "g.toml");
    ASSERT_TRUE(global.cfg);
    EXPECT_EQ(to_string(*global.cfg->interfaces.at(0).gateway6), "2001:db8:0:1::1");
    EXPECT_EQ(global.cfg->ipv6.max_extension_headers, 8u);
    auto none = parse_config(with_interface("", good_address), "n.toml");
    ASSERT_TRUE(none.cfg);
    EXPECT_FALSE(none.cfg->interfaces.at(0).address6);
}

TEST(config, keeps_its_host_bits_suggestion_for_a_trunk_prefix)
{
    auto r = parse_config(with_trunk("allow = [\"198.18.0.7/24\"]\n"), "bits.toml");
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].to_string(),
              "bits.toml:8: trunk[0].allow[0]: expected an address \"A.B.C.D\" or a prefix \"A.B.C.D/N\" with N 0..32, "
              "or an IPv6 address \"2001:db8::1\" or prefix \"2001:db8::/N\" with N 0..128, "
              "got \"198.18.0.7/24\"; it has host bits set: did you mean \"198.18.0.0/24\"?");
}

TEST(config, defaults_the_table_sizes_to_the_ones_the_dataplane_uses)
{
    auto r = parse_config(with_interface("", good_address), "d.toml");
    ASSERT_TRUE(r.cfg);
    EXPECT_EQ(r.cfg->limits.transactions_per_worker, 262144u);
    EXPECT_EQ(r.cfg->limits.dialogs_per_worker, 131072u);
    EXPECT_EQ(r.cfg->limits.transactions_per_worker, sbc::default_transactions_per_worker);
    EXPECT_EQ(r.cfg->media.sessions_per_worker, sbc::default_media_sessions_per_worker);
}

TEST(config, reports_every_mistake_in_file_order_not_just_the_first)
{
    auto r = parse_config(with_interface("[node]\nworkers = 0\nbogus = 1\n",
                                         "address = \"1.2.3.4\"\nvlan = 5000\n"),
                          "many.toml");
    ASSERT_EQ(r.errors.size(), 4u);
    EXPECT_EQ(r.errors[0].key, "node.workers");
    EXPECT_EQ(r.errors[1].key, "node.bogus");
    EXPECT_EQ(r.errors[2].key, "interface[0].address");
    EXPECT_EQ(r.errors[3].key, "interface[0].vlan");
    EXPECT_LT(r.errors[0].line, r.errors[3].line);
}

TEST(config, reads_the_self_section_and_its_no_answer_choice)
{
    auto r = parse_config(with_interface("[self]\nhealthy_code = 204\ndraining_code = \"none\"\ndrain_timeout_s = 30\n"
                                         "overload_calls = 5000\n",
                                         good_address),
                          "self.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    EXPECT_EQ(r.cfg->self.healthy_code, 204u);
    EXPECT_EQ(r.cfg->self.draining_code, 0u);  // "none": no answer at all
    EXPECT_EQ(r.cfg->self.drain_timeout_s, 30u);
    EXPECT_EQ(r.cfg->self.overload_calls, 5000u);
    auto d = parse_config(with_interface("", good_address), "d.toml");
    ASSERT_TRUE(d.errors.empty());
    EXPECT_EQ(d.cfg->self.healthy_code, 200u);
    EXPECT_EQ(d.cfg->self.draining_code, 503u);
    EXPECT_EQ(d.cfg->self.drain_timeout_s, 600u);
    EXPECT_EQ(d.cfg->self.overload_calls, 0u);
}

TEST(config, refuses_a_draining_code_that_is_neither_an_error_code_nor_none)
{
    for (const char* v : {"200", "\"silent\"", "700", "true"}) {
        auto r = parse_config(with_interface("[self]\ndraining_code = " + std::string(v) + "\n", good_address), "self.toml");
        ASSERT_EQ(r.errors.size(), 1u) << v;
        EXPECT_EQ(r.errors[0].line, 2) << v;
        EXPECT_EQ(r.errors[0].key, "self.draining_code") << v;
        EXPECT_NE(r.errors[0].message.find("\"none\""), std::string::npos) << r.errors[0].to_string();
    }
}

TEST(config, accepts_sections_that_later_issues_parse)
{
    auto r = parse_config(with_interface("[self]\nhealthy_code = 200\n[media]\nlatching = \"strict\"\n[dns]\nservers = []\n",
                                         good_address),
                          "later.toml");
    EXPECT_TRUE(r.errors.empty()) << r.errors[0].to_string();
}

TEST(config, reports_an_unreadable_file_with_its_path_and_reason)
{
    auto r = load_config("/nonexistent/dir/sbc.toml");
    EXPECT_FALSE(r.cfg);
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].line, 0);
    EXPECT_EQ(r.errors[0].file, "/nonexistent/dir/sbc.toml");
    EXPECT_NE(r.errors[0].message.find("No such file"), std::string::npos);
    EXPECT_EQ(r.errors[0].to_string(), "/nonexistent/dir/sbc.toml: cannot read the file: No such file or directory");
}

TEST(config, loads_a_file_from_disk_and_names_it_in_errors)
{
    auto path = std::filesystem::temp_directory_path() / ("sbc_config_test_" + std::to_string(::getpid()) + ".toml");
    {
        std::ofstream out(path);
        out << with_interface("[node]\nworkers = 0\n", good_address);
    }
    auto r = load_config(path.string());
    std::filesystem::remove(path);
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].to_string(), path.string() + ":2: node.workers: expected an integer in 1..64 (worker lcores), got 0");
}

TEST(config, formats_errors_as_file_line_key_message)
{
    config_error e{"sbc.toml", 12, "interface[0].vlan", "expected an integer in 0..4094"};
    EXPECT_EQ(e.to_string(), "sbc.toml:12: interface[0].vlan: expected an integer in 0..4094");
}

TEST(config, parses_and_formats_dotted_quads_strictly)
{
    // The config reads addresses with common/address.h's parser: it must stay this strict.
    EXPECT_EQ(sbc::parse_ipv4("198.18.0.1"), ip_address::v4(0xc6120001u));
    EXPECT_EQ(sbc::parse_ipv4("0.0.0.0"), ip_address::v4(0u));
    EXPECT_EQ(sbc::parse_ipv4("255.255.255.255"), ip_address::v4(0xffffffffu));
    for (const char* bad : {"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.-4", "01.2.3.4", "1..3.4", "a.b.c.d", " 1.2.3.4",
                            "1.2.3.4 "})
        EXPECT_FALSE(sbc::parse_ipv4(bad)) << bad;
    EXPECT_EQ(to_string(ip_address::v4(0xc6120001u)), "198.18.0.1");
    EXPECT_EQ(to_string(ip_address::v4(0xffffffffu)), "255.255.255.255");
}

TEST(config, the_learned_timer_floor_follows_a_short_no_response_timer_unless_given)
{
    auto r = parse_config(with_interface("[retry]\nno_response_ms = 150\n", good_address), "x.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    EXPECT_EQ(r.cfg->retry.min_no_response_ms, 150u) << "the default 200 would be above no_response_ms";
    r = parse_config(with_interface("[retry]\nno_response_ms = 3000\nmin_no_response_ms = 80\n", good_address), "x.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    EXPECT_EQ(r.cfg->retry.min_no_response_ms, 80u);
    EXPECT_EQ(r.cfg->retry.no_response_ms, 3000u);
}

TEST(config, splits_host_and_port_including_bracketed_ipv6)
{
    auto hp = parse_host_port("127.0.0.1:9090");
    ASSERT_TRUE(hp);
    EXPECT_EQ(hp->host, "127.0.0.1");
    EXPECT_EQ(hp->port, 9090);
    hp = parse_host_port("[::1]:80");
    ASSERT_TRUE(hp);
    EXPECT_EQ(hp->host, "::1");
    for (const char* bad : {"", ":80", "host", "host:", "host:65536", "::1:80", "host:0"})
        EXPECT_FALSE(parse_host_port(bad)) << bad;
}

}  // namespace
}  // namespace sbc::control
