// [[trunk]] topology_hiding in sbc.toml: off by default, read per trunk into the proxy tables
// with the process's masking key, and a value that is not a boolean refused with file, line
// and key. Unit tier.
#include <gtest/gtest.h>

#include <string>

#include "control/config.h"
#include "control/proxy_build.h"
#include "sip-fastpath/topology_hiding.h"

namespace sbc::control {
namespace {

const std::string base =
    "[[interface]]\nname = \"core\"\ndevice = \"net_null0\"\naddress = \"198.18.0.1/24\"\n"
    "[[trunk]]\nname = \"t\"\ninterface = \"core\"\nport = 5060\nallow = [\"198.18.0.0/24\"]\n"
    "[[trunk]]\nname = \"u\"\ninterface = \"core\"\nport = 5070\nallow = [\"198.18.0.0/24\"]\n";

std::shared_ptr<const sip::proxy_tables> tables(const config& cfg)
{
    std::vector<dataplane::interface_info> ifs;
    for (const auto& ic : cfg.interfaces) {
        dataplane::interface_info ii;
        ii.name = ic.name;
        ii.address = ic.address;
        ifs.push_back(ii);
    }
    peer_ids ids;
    std::string error;
    auto t = build_proxy_tables(cfg, ifs, 1, ids, error);
    EXPECT_TRUE(t) << error;
    return t;
}

TEST(config_topology_hiding, is_off_unless_a_trunk_asks_and_then_only_on_that_trunk)
{
    std::string text = base;
    text.insert(text.find("allow"), "topology_hiding = true\n");  // trunk "t"
    auto r = parse_config(text, "f.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    EXPECT_TRUE(r.cfg->trunks[0].topology_hiding);
    EXPECT_FALSE(r.cfg->trunks[1].topology_hiding);
    auto t = tables(*r.cfg);
    ASSERT_TRUE(t);
    EXPECT_TRUE(t->trunks[0].topology_hiding);
    EXPECT_FALSE(t->trunks[1].topology_hiding);
    EXPECT_NE(t->hiding_key, 0u);
    EXPECT_EQ(t->hiding_key, tables(*r.cfg)->hiding_key) << "one key for the process: dialogs outlive a reload";
}

TEST(config_topology_hiding, refuses_a_value_that_is_not_a_boolean_with_file_line_and_key)
{
    std::string text = base;
    text.insert(text.find("allow"), "topology_hiding = \"yes\"\n");
    auto r = parse_config(text, "f.toml");
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].file, "f.toml");
    EXPECT_EQ(r.errors[0].line, 9);
    EXPECT_EQ(r.errors[0].key, "trunk[0].topology_hiding");
}

}  // namespace
}  // namespace sbc::control
