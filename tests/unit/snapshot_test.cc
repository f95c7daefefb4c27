// Unit tests of dataplane/snapshot.h without EAL: finding an interface by port and VLAN, and
// never dropping one silently when the by-port index is full.
#include "dataplane/snapshot.h"

#include <gtest/gtest.h>

namespace sbc::dataplane {
namespace {

interface_info on(uint16_t port, uint16_t vlan)
{
    interface_info ii;
    ii.port_id = port;
    ii.vlan = vlan;
    return ii;
}

TEST(snapshot, finds_each_interface_by_port_and_vlan)
{
    snapshot s;
    s.interfaces = {on(0, 0), on(0, 100), on(3, 0)};
    EXPECT_EQ(s.index_interfaces(), 0u);
    EXPECT_EQ(s.find_interface(0, 0), 0);
    EXPECT_EQ(s.find_interface(0, 100), 1);
    EXPECT_EQ(s.find_interface(3, 0), 2);
    EXPECT_EQ(s.find_interface(3, 100), no_interface);
    EXPECT_EQ(s.find_interface(max_ports, 0), no_interface);
}

TEST(snapshot, counts_a_fifth_vlan_on_one_port_instead_of_dropping_it_silently)
{
    snapshot s;
    for (uint16_t v = 1; v <= max_interfaces_per_port + 1; ++v) s.interfaces.push_back(on(1, v));
    EXPECT_EQ(s.index_interfaces(), 1u);
    for (uint16_t v = 1; v <= max_interfaces_per_port; ++v) EXPECT_EQ(s.find_interface(1, v), v - 1);
}

TEST(snapshot, counts_an_interface_on_a_port_beyond_the_table_instead_of_aliasing_it)
{
    snapshot s;
    s.interfaces = {on(0, 0), on(max_ports, 7)};
    EXPECT_EQ(s.index_interfaces(), 1u);
    // Port 32 used to land in port 0's slots (32 % 32): a VLAN 7 frame on port 0 found it.
    EXPECT_EQ(s.find_interface(0, 7), no_interface);
    EXPECT_EQ(s.find_interface(0, 0), 0);
}

TEST(snapshot, gives_the_interface_address_in_the_common_vocabulary)
{
    interface_info ii;
    ii.address = 0xC6120001;  // 198.18.0.1
    ii.netmask = netmask_of(24);
    EXPECT_EQ(to_string(ii.prefix()), "198.18.0.1/24");
    EXPECT_EQ(ii.ip(), ip_address::v4(0xC6120001));
    EXPECT_FALSE(ii.gateway_ip().is_v4());
    ii.gateway = 0xC61200FE;
    EXPECT_EQ(to_string(ii.gateway_ip()), "198.18.0.254");
    EXPECT_EQ(netmask_of(0), 0u);
    EXPECT_EQ(netmask_of(32), 0xffffffffu);
    EXPECT_EQ(netmask_of(15), 0xfffe0000u);
}

}  // namespace
}  // namespace sbc::dataplane
