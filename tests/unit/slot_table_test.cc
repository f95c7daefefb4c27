// The slot table (common/slot_table.h): insert, find and erase by key, a full table, the LIFO
// free list (the slot freed last is handed out first), keys that share a bucket, iteration
// over used slots. Unit tier.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "common/slot_table.h"

namespace sbc {
namespace {

struct record {
    uint32_t value = 0;
    uint16_t gen = 0;
};
using table = slot_table<record>;

TEST(slot_table, inserted_keys_are_found_at_their_slot_and_unknown_keys_are_not)
{
    table t(8);
    const auto a = t.insert(0x1234);
    const auto b = t.insert(0x5678);
    ASSERT_NE(a, table::none);
    ASSERT_NE(b, table::none);
    EXPECT_NE(a, b);
    t.at(a).value = 1;
    t.at(b).value = 2;
    EXPECT_EQ(t.find(0x1234), a);
    EXPECT_EQ(t.find(0x5678), b);
    EXPECT_EQ(t.at(t.find(0x5678)).value, 2u);
    EXPECT_EQ(t.key(a), 0x1234u);
    EXPECT_EQ(t.find(0x9999), table::none);
    EXPECT_EQ(t.size(), 2u);
    EXPECT_EQ(t.capacity(), 8u);
    EXPECT_TRUE(t.used(a));
    EXPECT_FALSE(t.used(7));
}

TEST(slot_table, a_fresh_table_hands_out_slots_from_zero_upwards)
{
    table t(4);
    for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(t.insert(100 + i), i);
}

TEST(slot_table, erased_keys_are_no_longer_found_and_others_stay)
{
    table t(8);
    const auto a = t.insert(1);
    const auto b = t.insert(2);
    t.erase(a);
    EXPECT_EQ(t.find(1), table::none);
    EXPECT_EQ(t.find(2), b);
    EXPECT_FALSE(t.used(a));
    EXPECT_EQ(t.size(), 1u);
}

TEST(slot_table, a_full_table_refuses_inserts_until_a_slot_is_erased)
{
    table t(3);
    for (uint64_t k = 1; k <= 3; ++k) ASSERT_NE(t.insert(k), table::none);
    EXPECT_TRUE(t.full());
    EXPECT_EQ(t.insert(4), table::none);
    EXPECT_EQ(t.find(4), table::none);
    t.erase(t.find(2));
    EXPECT_FALSE(t.full());
    EXPECT_NE(t.insert(4), table::none);
    EXPECT_EQ(t.insert(5), table::none);
    for (uint64_t k : {1, 3, 4}) EXPECT_NE(t.find(k), table::none) << k;
}

TEST(slot_table, a_table_of_no_slots_refuses_every_insert)
{
    table t(0);
    EXPECT_EQ(t.insert(1), table::none);
    EXPECT_EQ(t.find(1), table::none);
    EXPECT_TRUE(t.full());
}

TEST(slot_table, the_slot_erased_last_is_handed_out_first_and_keeps_its_record)
{
    table t(8);
    for (uint64_t k = 1; k <= 5; ++k) ASSERT_NE(t.insert(k), table::none);
    const auto s2 = t.find(2);
    const auto s4 = t.find(4);
    t.at(s4).gen = 7;
    t.erase(s2);
    t.erase(s4);
    const auto again = t.insert(40);
    EXPECT_EQ(again, s4);
    // The caller resets the record: a generation number may outlive its entry.
    EXPECT_EQ(t.at(again).gen, 7);
    EXPECT_EQ(t.insert(20), s2);
    EXPECT_EQ(t.insert(60), 5u);  // then the never-used slots, in order
}

TEST(slot_table, keys_in_one_bucket_are_found_and_erased_wherever_they_sit_in_its_chain)
{
    // Capacity 8: 8 buckets, keys that differ only above bit 3 share one.
    table t(8);
    std::vector<uint32_t> slots;
    for (uint64_t i = 0; i < 6; ++i) slots.push_back(t.insert(5 + (i << 8)));
    for (uint64_t i = 0; i < 6; ++i) EXPECT_EQ(t.find(5 + (i << 8)), slots[i]) << i;
    t.erase(slots[0]);  // the chain's tail (inserted first)
    t.erase(slots[3]);  // its middle
    t.erase(slots[5]);  // its head
    for (uint64_t i : {0, 3, 5}) EXPECT_EQ(t.find(5 + (i << 8)), table::none) << i;
    for (uint64_t i : {1, 2, 4}) EXPECT_EQ(t.find(5 + (i << 8)), slots[i]) << i;
    EXPECT_EQ(t.find(5), table::none);
    EXPECT_EQ(t.find(5 + (9 << 8)), table::none);
}

TEST(slot_table, the_same_key_twice_finds_the_newest_then_the_older_once_it_is_erased)
{
    table t(4);
    const auto older = t.insert(9);
    const auto newer = t.insert(9);
    EXPECT_EQ(t.find(9), newer);
    t.erase(newer);
    EXPECT_EQ(t.find(9), older);
}

TEST(slot_table, iteration_visits_exactly_the_used_slots)
{
    table t(16);
    for (uint64_t k = 1; k <= 10; ++k) ASSERT_NE(t.insert(k * 977), table::none);
    t.erase(t.find(3 * 977));
    t.erase(t.find(7 * 977));
    std::set<uint64_t> seen;
    t.for_each([&](uint32_t s) { seen.insert(t.key(s)); });
    EXPECT_EQ(seen.size(), 8u);
    EXPECT_FALSE(seen.contains(3 * 977));
    EXPECT_FALSE(seen.contains(7 * 977));
    EXPECT_TRUE(seen.contains(10 * 977));
}

TEST(slot_table, churn_never_loses_or_duplicates_a_slot)
{
    // Insert and erase many keys against a reference set: every slot is handed out once at a
    // time, and size() follows.
    table t(64);
    std::set<uint64_t> live;
    uint64_t x = 88172645463325252ull;
    for (int round = 0; round < 20000; ++round) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const uint64_t k = x % 200;
        if (live.contains(k)) {
            t.erase(t.find(k));
            live.erase(k);
        } else if (t.insert(k) != table::none) {
            live.insert(k);
        } else {
            EXPECT_EQ(live.size(), 64u);
        }
        ASSERT_EQ(t.size(), live.size());
    }
    std::set<uint32_t> slots;
    for (uint64_t k : live) {
        const auto s = t.find(k);
        ASSERT_NE(s, table::none);
        EXPECT_TRUE(slots.insert(s).second);
    }
}

}  // namespace
}  // namespace sbc
