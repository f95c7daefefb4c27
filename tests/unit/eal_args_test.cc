// Unit tests of the EAL arguments sbcd derives from its config.
#include <gtest/gtest.h>

#include <algorithm>

#include "dataplane/runtime.h"

using sbc::dataplane::eal_arguments;
using sbc::dataplane::eal_options;

namespace {
bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }
std::string after(const std::vector<std::string>& v, const std::string& s)
{
    auto it = std::find(v.begin(), v.end(), s);
    return it == v.end() || it + 1 == v.end() ? "" : *(it + 1);
}
}  // namespace

TEST(eal_arguments, one_lcore_per_worker_plus_the_main_lcore)
{
    eal_options o;
    o.workers = 3;
    o.cpus = 8;
    auto a = eal_arguments(o);
    EXPECT_EQ(after(a, "-l"), "0-3");
}

TEST(eal_arguments, share_cpus_when_there_are_more_lcores_than_cpus)
{
    eal_options o;
    o.workers = 2;
    o.cpus = 2;
    auto a = eal_arguments(o);
    EXPECT_TRUE(has(a, "--lcores=0@0,1@1,2@0"));
}

TEST(eal_arguments, vdevs_without_pci_and_pci_addresses_allowed_explicitly)
{
    eal_options o;
    o.devices = {"net_ring0"};
    auto a = eal_arguments(o);
    EXPECT_EQ(after(a, "--vdev"), "net_ring0");
    EXPECT_TRUE(has(a, "--no-pci"));
    o.devices = {"0000:3b:00.0"};
    a = eal_arguments(o);
    EXPECT_EQ(after(a, "-a"), "0000:3b:00.0");
    EXPECT_FALSE(has(a, "--no-pci"));
}

TEST(eal_arguments, memory_hugepages_prefix_and_operator_args_last)
{
    eal_options o;
    o.no_huge = false;
    o.memory_mb = 2048;
    o.file_prefix = "sbc-edge1";
    o.extra = {"--log-level=pmd:debug"};
    auto a = eal_arguments(o);
    EXPECT_FALSE(has(a, "--no-huge"));
    EXPECT_EQ(after(a, "-m"), "2048");
    EXPECT_TRUE(has(a, "--file-prefix=sbc-edge1"));
    EXPECT_EQ(a.back(), "--log-level=pmd:debug");
}

TEST(eal_arguments, device_port_name_is_the_vdev_name_without_options)
{
    EXPECT_EQ(sbc::dataplane::device_port_name("net_ring0,nodeaction=r:0:CREATE"), "net_ring0");
    EXPECT_EQ(sbc::dataplane::device_port_name("0000:3b:00.0"), "0000:3b:00.0");
}
