// Unit tests of dataplane/snapshot.h without EAL: finding an interface by port and VLAN, never
// dropping one silently when the by-port index is full, and an interface's address, on-link
// test and next hop.
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

TEST(snapshot, keeps_the_interface_address_as_configured_in_the_common_vocabulary)
{
    interface_info ii;
    ii.address = {ip_address::v4(0xC6120001), 24};  // 198.18.0.1/24
    EXPECT_EQ(to_string(ii.address), "198.18.0.1/24");
    EXPECT_EQ(ii.address.addr, ip_address::v4(0xC6120001));
    EXPECT_EQ(ii.v4(), 0xC6120001u);
    EXPECT_EQ(ii.v4_mask(), 0xffffff00u);
    EXPECT_FALSE(ii.gateway.is_v4());
    ii.gateway = ip_address::v4(0xC61200FE);
    EXPECT_EQ(to_string(ii.gateway), "198.18.0.254");
}

TEST(snapshot, sends_to_an_on_link_address_directly_and_to_the_gateway_otherwise)
{
    interface_info ii;
    ii.address = {ip_address::v4(0xC6120001), 24};  // 198.18.0.1/24
    const ip_address near = ip_address::v4(0xC612000A), far = ip_address::v4(0x08080808);
    // No gateway: only the subnet is reachable.
    EXPECT_TRUE(ii.on_link(near));
    EXPECT_FALSE(ii.on_link(far));
    EXPECT_EQ(ii.next_hop(near), near);
    EXPECT_TRUE(ii.next_hop(far).is_unspecified());
    EXPECT_EQ(ii.next_hop_v4(far.v4_host()), 0u);
    ii.gateway = ip_address::v4(0xC61200FE);  // 198.18.0.254
    EXPECT_EQ(ii.next_hop(near), near);
    EXPECT_EQ(ii.next_hop(far), ii.gateway);
    // The host-order accessors the IPv4 packet path uses agree with the vocabulary.
    EXPECT_TRUE(ii.on_link_v4(near.v4_host()));
    EXPECT_FALSE(ii.on_link_v4(far.v4_host()));
    EXPECT_EQ(ii.next_hop_v4(near.v4_host()), near.v4_host());
    EXPECT_EQ(ii.next_hop_v4(far.v4_host()), 0xC61200FEu);
}

TEST(snapshot, never_puts_an_address_of_another_family_on_link_or_through_the_gateway)
{
    interface_info ii;
    ii.address = {ip_address::v4(0xC6120001), 24};
    ii.gateway = ip_address::v4(0xC61200FE);
    const std::array<uint8_t, 16> v6{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    EXPECT_FALSE(ii.on_link(ip_address::v6(v6)));
    EXPECT_TRUE(ii.next_hop(ip_address::v6(v6)).is_unspecified());
    EXPECT_FALSE(ii.on_link(ip_address{}));
    EXPECT_TRUE(ii.next_hop(ip_address{}).is_unspecified());
    // An interface with only IPv6 is never on-link for an IPv4 word, not even 0.0.0.0.
    interface_info six;
    six.address6 = {ip_address::v6(v6), 64};
    six.link_local6 = *parse_address("fe80::1:2ff:fe00:1");
    six.gateway6 = *parse_address("fe80::1");
    EXPECT_FALSE(six.on_link_v4(0));
    EXPECT_FALSE(six.on_link(ip_address::v4(0xC612000A)));
    EXPECT_TRUE(six.next_hop(ip_address::v4(0xC612000A)).is_unspecified());
    EXPECT_TRUE(six.on_link(ip_address::v6(v6)));
    EXPECT_TRUE(six.on_link(*parse_address("fe80::99"))) << "link-local is always on-link";
    EXPECT_FALSE(six.on_link(*parse_address("2001:db8:1::5")));
    EXPECT_EQ(six.next_hop(*parse_address("2001:db8:1::5")), six.gateway6);
    EXPECT_TRUE(six.is_ours6(six.link_local6.v6_bytes().data()));
    EXPECT_FALSE(six.is_ours6(parse_address("2001:db8::2")->v6_bytes().data()));
    // An IPv4 interface without IPv6 has no IPv6 neighbours, not even link-local ones.
    EXPECT_FALSE(ii.on_link(*parse_address("fe80::99")));
}

}  // namespace
}  // namespace sbc::dataplane
