// Unit tests of the control core's ARP policy: gratuitous ARP and gateway resolution at start,
// retries with a limit, learning, refresh and expiry of entries.
#include <gtest/gtest.h>

#include <vector>

#include "control/neighbours.h"

using namespace sbc;

namespace {

struct sent {
    uint16_t iface;
    dataplane::arp_fields f;
};

struct fixture {
    std::unique_ptr<dataplane::neighbour_table> table = std::make_unique<dataplane::neighbour_table>();
    std::vector<sent> out;
    control::neighbour_manager mgr{*table, control::neighbour_policy{10'000, 1000, 3, 10'000},
                                   [this](uint16_t i, const dataplane::arp_fields& f) { out.push_back({i, f}); }};
    std::vector<dataplane::interface_info> ifcs;

    fixture()
    {
        dataplane::interface_info ii;
        ii.address = {ip_address::v4(0xC6120001), 24};  // 198.18.0.1/24
        ii.gateway = ip_address::v4(0xC61200FE);        // 198.18.0.254
        ii.mac = {2, 0, 0, 0, 0, 1};
        ifcs.push_back(ii);
    }
    std::size_t requests_for(uint32_t target) const
    {
        std::size_t n = 0;
        for (const auto& s : out)
            if (s.f.op == 1 && s.f.target_ip == target && s.f.sender_ip != s.f.target_ip) ++n;
        return n;
    }
};

constexpr uint32_t gw = 0xC61200FE;
constexpr uint32_t host = 0xC6120002;

}  // namespace

TEST(neighbour_manager, announces_itself_and_asks_for_the_gateway_at_start)
{
    fixture fx;
    fx.mgr.set_interfaces(fx.ifcs, 0);
    ASSERT_GE(fx.out.size(), 2u);
    EXPECT_EQ(fx.out[0].f.sender_ip, fx.out[0].f.target_ip) << "first frame is a gratuitous ARP";
    EXPECT_EQ(fx.out[0].f.sender_ip, 0xC6120001u);
    EXPECT_EQ(fx.requests_for(gw), 1u);
}

TEST(neighbour_manager, retries_an_unanswered_request_a_bounded_number_of_times)
{
    fixture fx;
    fx.mgr.set_interfaces(fx.ifcs, 0);
    for (uint64_t t = 0; t <= 5000; t += 100) fx.mgr.tick(t);
    EXPECT_EQ(fx.requests_for(gw), 3u) << "3 tries, then a back-off";
    for (uint64_t t = 5000; t <= 15'000; t += 100) fx.mgr.tick(t);
    EXPECT_GT(fx.requests_for(gw), 3u) << "a gateway is tried again after the back-off";
}

TEST(neighbour_manager, stops_asking_once_the_answer_arrives)
{
    fixture fx;
    fx.mgr.set_interfaces(fx.ifcs, 0);
    fx.mgr.seen(0, gw, {2, 0, 0, 0, 0, 0xfe}, 50);
    for (uint64_t t = 100; t <= 5000; t += 100) fx.mgr.tick(t);
    EXPECT_EQ(fx.requests_for(gw), 1u);
    EXPECT_TRUE(fx.table->lookup(sbc::ip_address::v4(gw)).has_value());
    EXPECT_EQ(fx.mgr.counters().learned, 1u);
    EXPECT_EQ(fx.mgr.pending(), 0u);
}

TEST(neighbour_manager, traffic_for_an_unknown_host_does_not_flood_requests)
{
    fixture fx;
    fx.mgr.set_interfaces(fx.ifcs, 0);
    for (int i = 0; i < 100; ++i) fx.mgr.needed(0, host, 10);
    EXPECT_EQ(fx.requests_for(host), 1u);
}

TEST(neighbour_manager, an_old_entry_is_refreshed_and_removed_when_nobody_answers)
{
    fixture fx;
    fx.mgr.set_interfaces(fx.ifcs, 0);
    fx.mgr.seen(0, host, {2, 0, 0, 0, 0, 2}, 0);
    fx.mgr.tick(9000);
    EXPECT_EQ(fx.requests_for(host), 0u) << "young entries are left alone";
    for (uint64_t t = 10'000; t <= 20'000; t += 100) fx.mgr.tick(t);
    EXPECT_EQ(fx.requests_for(host), 3u);
    EXPECT_FALSE(fx.table->lookup(sbc::ip_address::v4(host)).has_value());
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
    EXPECT_TRUE(fx.table->lookup(sbc::ip_address::v4(host)).has_value());
    EXPECT_EQ(fx.mgr.counters().expired, 0u);
}
