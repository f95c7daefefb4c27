// Unit tests of the neighbour table: what the workers can look up after the control core
// learns, refreshes and removes entries; capacity limits; concurrent readers never see a torn
// entry.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "dataplane/neighbour.h"

using sbc::ip_address;
using sbc::dataplane::mac_addr;
using sbc::dataplane::neighbour_table;

namespace {
constexpr uint32_t ip4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
    return (uint32_t{a} << 24) | (uint32_t{b} << 16) | (uint32_t{c} << 8) | d;
}
constexpr ip_address v4(uint32_t host_order) { return ip_address::v4(host_order); }
constexpr ip_address ip(uint8_t a, uint8_t b, uint8_t c, uint8_t d) { return v4(ip4(a, b, c, d)); }
mac_addr mac(uint8_t last) { return {0x02, 0, 0, 0, 0, last}; }
}  // namespace

TEST(neighbour_table, finds_what_was_learned_and_nothing_else)
{
    auto t = std::make_unique<neighbour_table>();
    EXPECT_TRUE(t->insert(ip(198, 18, 0, 2), mac(2), 10));
    ASSERT_TRUE(t->lookup(ip(198, 18, 0, 2)).has_value());
    EXPECT_EQ(*t->lookup(ip(198, 18, 0, 2)), mac(2));
    EXPECT_FALSE(t->lookup(ip(198, 18, 0, 3)).has_value());
    EXPECT_FALSE(t->lookup(v4(0)).has_value());
    EXPECT_EQ(t->size(), 1u);
}

TEST(neighbour_table, an_update_replaces_the_mac_without_a_second_entry)
{
    auto t = std::make_unique<neighbour_table>();
    t->insert(ip(198, 18, 0, 2), mac(2), 10);
    t->insert(ip(198, 18, 0, 2), mac(9), 20);
    EXPECT_EQ(*t->lookup(ip(198, 18, 0, 2)), mac(9));
    EXPECT_EQ(t->size(), 1u);
    EXPECT_EQ(*t->updated_ms(ip(198, 18, 0, 2)), 20u);
}

TEST(neighbour_table, removal_keeps_colliding_entries_reachable)
{
    auto t = std::make_unique<neighbour_table>();
    // Enough entries that probe chains overlap, then remove every third one.
    for (uint32_t i = 1; i <= 600; ++i) ASSERT_TRUE(t->insert(v4(ip4(10, 0, 0, 0) + i), mac(static_cast<uint8_t>(i)), i));
    for (uint32_t i = 1; i <= 600; i += 3) ASSERT_TRUE(t->remove(v4(ip4(10, 0, 0, 0) + i)));
    for (uint32_t i = 1; i <= 600; ++i) {
        const bool removed = (i - 1) % 3 == 0;
        EXPECT_EQ(t->lookup(v4(ip4(10, 0, 0, 0) + i)).has_value(), !removed) << i;
    }
    EXPECT_EQ(t->size(), 400u);
    EXPECT_FALSE(t->remove(ip(10, 0, 0, 1)));
}

TEST(neighbour_table, refuses_inserts_beyond_its_capacity_instead_of_overwriting)
{
    auto t = std::make_unique<neighbour_table>();
    std::size_t accepted = 0;
    for (uint32_t i = 1; i <= 2 * neighbour_table::capacity; ++i)
        if (t->insert(v4(i), mac(1), 0)) ++accepted;
    EXPECT_LE(accepted, neighbour_table::capacity);
    EXPECT_GT(accepted, neighbour_table::capacity / 2);
    EXPECT_EQ(t->size(), accepted);
    EXPECT_EQ(t->entries().size(), accepted);
}

TEST(neighbour_table, readers_never_see_a_mac_that_was_never_written)
{
    auto t = std::make_unique<neighbour_table>();
    const ip_address a = ip(198, 18, 0, 7);
    t->insert(a, mac(1), 0);
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> bad{0}, reads{0};
    std::thread reader([&] {
        while (!stop.load()) {
            auto m = t->lookup(a);
            if (m && !(*m == mac(1) || *m == mac(2))) bad.fetch_add(1);
            reads.fetch_add(1);
        }
    });
    // Write until the reader has raced the writer for a while (bounded: a loaded machine may
    // start the reader late).
    for (int i = 0; i < 200000 || (reads.load() < 10000 && i < 200'000'000); ++i)
        t->insert(a, i % 2 ? mac(1) : mac(2), static_cast<uint64_t>(i));
    stop = true;
    reader.join();
    EXPECT_EQ(bad.load(), 0u);
    EXPECT_GT(reads.load(), 0u);
}

TEST(neighbour_table, keeps_ipv6_neighbours_apart_from_ipv4_ones)
{
    auto t = std::make_unique<neighbour_table>();
    const ip_address a = *sbc::parse_address("2001:2:0:1::10"), b = *sbc::parse_address("fe80::10");
    EXPECT_TRUE(t->insert(a, mac(1), 5));
    EXPECT_TRUE(t->insert(b, mac(2), 6));
    EXPECT_TRUE(t->insert(ip(198, 18, 0, 10), mac(3), 7));
    EXPECT_EQ(*t->lookup(a), mac(1));
    EXPECT_EQ(*t->lookup(b), mac(2));
    EXPECT_EQ(*t->lookup(ip(198, 18, 0, 10)), mac(3));
    EXPECT_FALSE(t->lookup(*sbc::parse_address("2001:2:0:1::11")).has_value());
    EXPECT_FALSE(t->insert(*sbc::parse_address("::"), mac(4), 8)) << "the unspecified address is never a neighbour";
    EXPECT_EQ(t->size(), 3u);
    EXPECT_EQ(t->entries().size(), 3u);
    EXPECT_TRUE(t->remove(a));
    EXPECT_FALSE(t->lookup(a).has_value());
    EXPECT_EQ(*t->lookup(b), mac(2));
    // Many IPv6 entries whose probe chains overlap stay reachable after removals.
    for (uint32_t i = 1; i <= 600; ++i) {
        std::array<uint8_t, 16> v{0x20, 0x01, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
        ASSERT_TRUE(t->insert(ip_address::v6(v), mac(static_cast<uint8_t>(i)), i)) << i;
    }
    for (uint32_t i = 3; i <= 600; i += 3) {
        std::array<uint8_t, 16> v{0x20, 0x01, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
        ASSERT_TRUE(t->remove(ip_address::v6(v)));
    }
    for (uint32_t i = 1; i <= 600; ++i) {
        std::array<uint8_t, 16> v{0x20, 0x01, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
        EXPECT_EQ(t->lookup(ip_address::v6(v)).has_value(), i % 3 != 0) << i;
    }
}

TEST(path_mtu_table, records_a_lowered_mtu_never_below_1280_and_forgets_it_after_ten_minutes)
{
    auto t = std::make_unique<sbc::dataplane::path_mtu_table>();
    const ip_address far = *sbc::parse_address("2001:2:0:9::30");
    EXPECT_FALSE(t->lookup(far).has_value());
    EXPECT_TRUE(t->record(far, 1400, 1000));
    EXPECT_EQ(*t->lookup(far), 1400u);
    EXPECT_TRUE(t->record(far, 576, 2000)) << "an IPv4-sized MTU";
    EXPECT_EQ(*t->lookup(far), 1280u) << "raised to IPv6's minimum";
    EXPECT_FALSE(t->record(ip(198, 18, 0, 10), 1280, 0)) << "IPv6 only";
    EXPECT_EQ(t->expire(2000 + 599'999), 0u);
    EXPECT_EQ(t->expire(2000 + 600'000), 1u);
    EXPECT_FALSE(t->lookup(far).has_value());
}
