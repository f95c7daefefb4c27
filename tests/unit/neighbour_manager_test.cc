// Unit tests of the control core's neighbour policy: gratuitous ARP and gateway resolution at
// start, retries with a limit, learning, refresh and expiry of entries; the same for IPv6 with
// Neighbor Discovery (unsolicited NA, solicitations to the solicited-node group).
#include <gtest/gtest.h>

#include <vector>

#include "control/neighbours.h"

using namespace sbc;

namespace {

struct sent {
    uint16_t iface;
    dataplane::arp_fields f;
};
struct sent_nd {
    uint16_t iface;
    dataplane::nd_fields f;
};

struct fixture {
    std::unique_ptr<dataplane::neighbour_table> table = std::make_unique<dataplane::neighbour_table>();
    std::vector<sent> out;
    std::vector<sent_nd> out_nd;
    control::neighbour_manager mgr{*table, control::neighbour_policy{10'000, 1000, 3, 10'000},
                                   [this](uint16_t i, const dataplane::arp_fields& f) { out.push_back({i, f}); },
                                   [this](uint16_t i, const dataplane::nd_fields& f) { out_nd.push_back({i, f}); }};
    std::vector<dataplane::interface_info> ifcs;

    fixture()
    {
        dataplane::interface_info ii;
        ii.address = {ip_address::v4(0xC6120001), 24};  // 198.18.0.1/24
        ii.gateway = ip_address::v4(0xC61200FE);        // 198.18.0.254
        ii.mac = {2, 0, 0, 0, 0, 1};
        ifcs.push_back(ii);
    }
    void add_ipv6()
    {
        ifcs[0].address6 = {*parse_address("2001:db8:0:1::1"), 64};
        ifcs[0].link_local6 = dataplane::link_local_of(ifcs[0].mac);
        ifcs[0].gateway6 = *parse_address("fe80::1");
    }
    std::size_t solicitations_for(const char* target) const
    {
        const auto t = parse_address(target)->v6_bytes();
        std::size_t n = 0;
        for (const auto& s : out_nd)
            if (s.f.type == dataplane::icmp6::neighbour_solicitation && s.f.target == t) ++n;
        return n;
    }
    std::size_t requests_for(uint32_t target) const
    {
        std::size_t n = 0;
        for (const auto& s : out)
            if (s.f.op == 1 && s.f.target_ip == target && s.f.sender_ip != s.f.target_ip) ++n;
        return n;
    }
};

constexpr uint32_t gw_ip = 0xC61200FE;
constexpr uint32_t host_ip = 0xC6120002;
const ip_address gw = ip_address::v4(gw_ip);
const ip_address host = ip_address::v4(host_ip);

}  // namespace

TEST(neighbour_manager, announces_itself_and_asks_for_the_gateway_at_start)
{
    fixture fx;
    fx.mgr.set_interfaces(fx.ifcs, 0);
    ASSERT_GE(fx.out.size(), 2u);
    EXPECT_EQ(fx.out[0].f.sender_ip, fx.out[0].f.target_ip) << "first frame is a gratuitous ARP";
    EXPECT_EQ(fx.out[0].f.sender_ip, 0xC6120001u);
    EXPECT_EQ(fx.requests_for(gw_ip), 1u);
}

TEST(neighbour_manager, retries_an_unanswered_request_a_bounded_number_of_times)
{
    fixture fx;
    fx.mgr.set_interfaces(fx.ifcs, 0);
    for (uint64_t t = 0; t <= 5000; t += 100) fx.mgr.tick(t);
    EXPECT_EQ(fx.requests_for(gw_ip), 3u) << "3 tries, then a back-off";
    for (uint64_t t = 5000; t <= 15'000; t += 100) fx.mgr.tick(t);
    EXPECT_GT(fx.requests_for(gw_ip), 3u) << "a gateway is tried again after the back-off";
}

TEST(neighbour_manager, stops_asking_once_the_answer_arrives)
{
    fixture fx;
    fx.mgr.set_interfaces(fx.ifcs, 0);
    fx.mgr.seen(0, gw, {2, 0, 0, 0, 0, 0xfe}, 50);
    for (uint64_t t = 100; t <= 5000; t += 100) fx.mgr.tick(t);
    EXPECT_EQ(fx.requests_for(gw_ip), 1u);
    EXPECT_TRUE(fx.table->lookup(gw).has_value());
    EXPECT_EQ(fx.mgr.counters().learned, 1u);
    EXPECT_EQ(fx.mgr.pending(), 0u);
}

TEST(neighbour_manager, traffic_for_an_unknown_host_does_not_flood_requests)
{
    fixture fx;
    fx.mgr.set_interfaces(fx.ifcs, 0);
    for (int i = 0; i < 100; ++i) fx.mgr.needed(0, host, 10);
    EXPECT_EQ(fx.requests_for(host_ip), 1u);
}

TEST(neighbour_manager, an_old_entry_is_refreshed_and_removed_when_nobody_answers)
{
    fixture fx;
    fx.mgr.set_interfaces(fx.ifcs, 0);
    fx.mgr.seen(0, host, {2, 0, 0, 0, 0, 2}, 0);
    fx.mgr.tick(9000);
    EXPECT_EQ(fx.requests_for(host_ip), 0u) << "young entries are left alone";
    for (uint64_t t = 10'000; t <= 20'000; t += 100) fx.mgr.tick(t);
    EXPECT_EQ(fx.requests_for(host_ip), 3u);
    EXPECT_FALSE(fx.table->lookup(host).has_value());
    EXPECT_EQ(fx.mgr.counters().expired, 1u);
}

TEST(neighbour_manager, a_refreshed_entry_stays_when_the_neighbour_answers)
{
    fixture fx;
    fx.mgr.set_interfaces(fx.ifcs, 0);
    fx.mgr.seen(0, host, {2, 0, 0, 0, 0, 2}, 0);
    fx.mgr.tick(10'000);
    fx.mgr.seen(0, host, {2, 0, 0, 0, 0, 2}, 10'050);
    for (uint64_t t = 10'100; t <= 15'000; t += 100) fx.mgr.tick(t);
    EXPECT_TRUE(fx.table->lookup(host).has_value());
    EXPECT_EQ(fx.mgr.counters().expired, 0u);
}

TEST(neighbour_manager, announces_both_ipv6_addresses_and_solicits_the_ipv6_gateway_at_start)
{
    fixture fx;
    fx.add_ipv6();
    fx.mgr.set_interfaces(fx.ifcs, 0);
    ASSERT_GE(fx.out_nd.size(), 3u);
    const auto ll = fx.ifcs[0].link_local6.v6_bytes();
    EXPECT_EQ(to_string(fx.ifcs[0].link_local6), "fe80::ff:fe00:1");
    EXPECT_EQ(fx.out_nd[0].f.type, dataplane::icmp6::neighbour_advertisement);
    EXPECT_EQ(fx.out_nd[0].f.target, ll);
    EXPECT_EQ(fx.out_nd[0].f.dst, dataplane::all_nodes);
    EXPECT_EQ(fx.out_nd[0].f.flags, dataplane::icmp6::na_override) << "unsolicited: override, not solicited";
    EXPECT_EQ(fx.out_nd[1].f.target, parse_address("2001:db8:0:1::1")->v6_bytes());
    ASSERT_EQ(fx.solicitations_for("fe80::1"), 1u);
    const auto& ns = fx.out_nd[2].f;
    EXPECT_EQ(ns.src, ll) << "a link-local gateway is asked from our link-local address";
    EXPECT_EQ(to_string(ip_address::v6(ns.dst)), "ff02::1:ff00:1") << "its solicited-node group";
    EXPECT_EQ(ns.eth_dst, (dataplane::mac_addr{0x33, 0x33, 0xff, 0x00, 0x00, 0x01}));
    EXPECT_EQ(fx.requests_for(gw_ip), 1u) << "IPv4 resolves beside it";
}

TEST(neighbour_manager, an_ipv6_next_hop_is_retried_learned_and_expired_like_an_ipv4_one)
{
    fixture fx;
    fx.add_ipv6();
    fx.mgr.set_interfaces(fx.ifcs, 0);
    const ip_address peer = *parse_address("2001:db8:0:1::20");
    for (int i = 0; i < 50; ++i) fx.mgr.needed(0, peer, 10);
    EXPECT_EQ(fx.solicitations_for("2001:db8:0:1::20"), 1u) << "traffic does not flood solicitations";
    EXPECT_EQ(fx.out_nd.back().f.src, parse_address("2001:db8:0:1::1")->v6_bytes()) << "a global target: our global source";
    for (uint64_t t = 100; t <= 5000; t += 100) fx.mgr.tick(t);
    EXPECT_EQ(fx.solicitations_for("2001:db8:0:1::20"), 3u);
    fx.mgr.seen(0, peer, {2, 0, 0, 0, 0, 0x20}, 6000);
    ASSERT_TRUE(fx.table->lookup(peer).has_value());
    EXPECT_EQ(*fx.table->lookup(peer), (dataplane::mac_addr{2, 0, 0, 0, 0, 0x20}));
    EXPECT_FALSE(fx.table->lookup(ip_address::v4(0xC6120002)).has_value()) << "the families stay apart";
    for (uint64_t t = 16'000; t <= 30'000; t += 100) fx.mgr.tick(t);
    EXPECT_FALSE(fx.table->lookup(peer).has_value()) << "silent past the timeout and the retries";
}
