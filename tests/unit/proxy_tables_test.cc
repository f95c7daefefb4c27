// Unit tests of the proxy tables' peer indexes (proxy_tables::index_peers): which peer a
// message from an address and port belongs to, and whether an address is a peer's at all,
// at the largest peer count, with duplicates (the first peer in the table wins, as the
// linear search did) and for addresses that are no peer's.
#include <gtest/gtest.h>

#include <string>

#include "common/address.h"
#include "sip-fastpath/proxy_tables.h"

using sbc::ip_address;
namespace sip = sbc::sip;

namespace {

/// 10.0.x.y: peer i's address in the big table.
ip_address peer_address(uint32_t i) { return ip_address::v4(0x0A000000u + i); }
/// Ports differ too, so that address and endpoint indexes are told apart.
uint16_t peer_port(uint32_t i) { return static_cast<uint16_t>(5060 + i % 7); }

sip::peer make_peer(const ip_address& a, uint16_t port)
{
    sip::peer p;
    p.address = a;
    p.port = port;
    return p;
}

}  // namespace

TEST(proxy_tables, every_one_of_max_peers_is_found_by_address_and_port)
{
    auto t = std::make_unique<sip::proxy_tables>();
    for (uint32_t i = 0; i < sip::max_peers; ++i) t->peers.push_back(make_peer(peer_address(i), peer_port(i)));
    t->index_peers();
    ASSERT_EQ(t->peers.size(), 4096u);
    for (uint32_t i = 0; i < sip::max_peers; ++i) {
        ASSERT_EQ(t->find_peer(peer_address(i), peer_port(i)), i) << sbc::to_string(peer_address(i));
        ASSERT_TRUE(t->is_peer_address(peer_address(i))) << sbc::to_string(peer_address(i));
        ASSERT_EQ(t->find_peer(peer_address(i), static_cast<uint16_t>(peer_port(i) + 7)), sip::no_peer)
            << "right address, wrong port: " << sbc::to_string(peer_address(i));
    }
}

TEST(proxy_tables, addresses_of_no_peer_are_not_found)
{
    auto t = std::make_unique<sip::proxy_tables>();
    for (uint32_t i = 0; i < sip::max_peers; ++i) t->peers.push_back(make_peer(peer_address(i), peer_port(i)));
    t->index_peers();
    for (uint32_t i = sip::max_peers; i < 4 * sip::max_peers; ++i) {
        ASSERT_FALSE(t->is_peer_address(peer_address(i))) << sbc::to_string(peer_address(i));
        ASSERT_EQ(t->find_peer(peer_address(i), peer_port(i)), sip::no_peer) << sbc::to_string(peer_address(i));
    }
    EXPECT_FALSE(t->is_peer_address(ip_address{})) << "the unset address";
    EXPECT_FALSE(t->is_peer_address(ip_address::v4(0)));
    EXPECT_EQ(t->find_peer(ip_address{}, 5060), sip::no_peer);
    // An IPv6 address is nobody's IPv4 peer, even one ending in the same 32 bits.
    const auto v6 = sbc::parse_address("::a00:0");
    ASSERT_TRUE(v6.has_value());
    EXPECT_FALSE(t->is_peer_address(*v6));
    EXPECT_EQ(t->find_peer(*v6, peer_port(0)), sip::no_peer);
}

TEST(proxy_tables, with_duplicate_peers_the_first_in_the_table_wins)
{
    auto t = std::make_unique<sip::proxy_tables>();
    const ip_address a = ip_address::v4(0xC612010B), b = ip_address::v4(0xC612010C);
    t->peers.push_back(make_peer(b, 5062));  // 0
    t->peers.push_back(make_peer(a, 5060));  // 1: first at a:5060
    t->peers.push_back(make_peer(a, 5060));  // 2: same endpoint again (another region)
    t->peers.push_back(make_peer(a, 5070));  // 3: same address, another port
    t->peers.push_back(make_peer(b, 5062));  // 4: same as 0
    t->index_peers();
    EXPECT_EQ(t->find_peer(a, 5060), 1u);
    EXPECT_EQ(t->find_peer(a, 5070), 3u);
    EXPECT_EQ(t->find_peer(b, 5062), 0u);
    EXPECT_EQ(t->find_peer(b, 5060), sip::no_peer);
    EXPECT_TRUE(t->is_peer_address(a));
    EXPECT_TRUE(t->is_peer_address(b));
}

TEST(proxy_tables, many_duplicates_among_max_peers_still_find_the_first_of_each)
{
    // Every endpoint four times (four regions naming the same peers): 1,024 distinct ones.
    auto t = std::make_unique<sip::proxy_tables>();
    constexpr uint32_t distinct = sip::max_peers / 4;
    for (uint32_t copy = 0; copy < 4; ++copy)
        for (uint32_t i = 0; i < distinct; ++i) t->peers.push_back(make_peer(peer_address(i), peer_port(i)));
    t->index_peers();
    for (uint32_t i = 0; i < distinct; ++i) {
        ASSERT_EQ(t->find_peer(peer_address(i), peer_port(i)), i);
        ASSERT_TRUE(t->is_peer_address(peer_address(i)));
    }
    EXPECT_FALSE(t->is_peer_address(peer_address(distinct)));
}

TEST(proxy_tables, a_table_without_peers_finds_none)
{
    sip::proxy_tables t;
    t.index_peers();
    EXPECT_EQ(t.find_peer(ip_address::v4(0xC612010B), 5060), sip::no_peer);
    EXPECT_FALSE(t.is_peer_address(ip_address::v4(0xC612010B)));
}
