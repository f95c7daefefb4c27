// Unit tests of the config loader: a full file, defaults, and every kind of mistake an operator
// makes, each expected to be reported with its line and dotted key.
#include "control/config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace sbc::control {
namespace {

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

[retry]
codes = [408, 503, 504]
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
    EXPECT_EQ(format_prefix(core.address), "198.18.0.1/24");
    ASSERT_TRUE(core.gateway);
    EXPECT_EQ(format_ipv4(*core.gateway), "198.18.0.254");
    EXPECT_EQ(core.vlan, 100);
    EXPECT_EQ(core.media_port_min, 30000);
    EXPECT_EQ(core.media_port_max, 39999);
    EXPECT_EQ(core.line, 22);
    const auto& access = c.interfaces[1];
    EXPECT_EQ(access.name, "access");
    EXPECT_EQ(format_prefix(access.address), "198.19.0.1/30");
    EXPECT_FALSE(access.gateway);
    EXPECT_EQ(access.line, 30);
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

// One interface, good unless a case changes it; line numbers below count from 1 here.
std::string with_interface(const std::string& before, const std::string& iface_lines)
{
    return before + "[[interface]]\nname = \"core\"\ndevice = \"net_null0\"\n" + iface_lines;
}

struct bad_case {
    const char* description;
    std::string text;
    int line;
    const char* key;
    const char* message_contains;
};

class config_bad : public ::testing::TestWithParam<bad_case> {};

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

const std::string good_address = "address = \"198.18.0.1/24\"\n";

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
    [](const ::testing::TestParamInfo<bad_case>& info) {
        std::string n = info.param.description;
        for (char& ch : n)
            if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
        return n;
    });

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

TEST(config, accepts_sections_that_later_issues_parse)
{
    auto r = parse_config(with_interface("[health]\nwhatever = 1\n[[region]]\nname = \"r1\"\n[dns]\nservers = []\n",
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
    EXPECT_EQ(parse_ipv4("198.18.0.1"), 0xc6120001u);
    EXPECT_EQ(parse_ipv4("0.0.0.0"), 0u);
    EXPECT_EQ(parse_ipv4("255.255.255.255"), 0xffffffffu);
    for (const char* bad : {"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.-4", "01.2.3.4", "1..3.4", "a.b.c.d", " 1.2.3.4",
                            "1.2.3.4 "})
        EXPECT_FALSE(parse_ipv4(bad)) << bad;
    EXPECT_EQ(format_ipv4(0xc6120001u), "198.18.0.1");
    EXPECT_EQ(format_ipv4(0xffffffffu), "255.255.255.255");
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
