// Flood protection's data (dataplane/source_guard.h, dataplane/flood_policy.h): token buckets,
// the bounded per-source table and its eviction, trust classification, the published deny set.
// Unit tier: no EAL.
#include <gtest/gtest.h>

#include "dataplane/flood_policy.h"
#include "dataplane/source_guard.h"

namespace sbc::dataplane {
namespace {

ip_address v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
    return ip_address::v4(uint32_t{a} << 24 | uint32_t{b} << 16 | uint32_t{c} << 8 | d);
}

int taken(token_bucket& b, uint32_t now, uint32_t rate, uint32_t burst, int tries)
{
    int n = 0;
    for (int i = 0; i < tries; ++i) n += b.take(now, rate, burst) ? 1 : 0;
    return n;
}

TEST(token_bucket, a_full_bucket_gives_its_burst_at_once_then_nothing)
{
    token_bucket b;
    b.fill(1000, 20);
    EXPECT_EQ(taken(b, 1000, 10, 20, 100), 20);
    EXPECT_FALSE(b.take(1000, 10, 20));
}

TEST(token_bucket, refills_at_its_rate_and_never_beyond_its_burst)
{
    token_bucket b;
    b.fill(0, 20);
    EXPECT_EQ(taken(b, 0, 10, 20, 20), 20);
    EXPECT_EQ(taken(b, 500, 10, 20, 100), 5);    // 10/s for half a second
    EXPECT_EQ(taken(b, 550, 10, 20, 100), 0);    // half a token so far
    EXPECT_EQ(taken(b, 600, 10, 20, 100), 1);    // the halves add up
    EXPECT_EQ(taken(b, 60600, 10, 20, 100), 20); // a minute idle: the burst, not 600
}

TEST(token_bucket, dry_says_what_take_would_do_and_takes_nothing)
{
    token_bucket b;
    b.fill(0, 2);
    EXPECT_FALSE(b.dry(0, 10, 2));
    EXPECT_FALSE(b.dry(0, 10, 2)) << "asking twice takes nothing";
    EXPECT_EQ(taken(b, 0, 10, 2, 10), 2);
    EXPECT_TRUE(b.dry(0, 10, 2));
    EXPECT_TRUE(b.dry(99, 10, 2)) << "0.99 of a token";
    EXPECT_FALSE(b.dry(100, 10, 2)) << "one whole token at 10/s after 100 ms";
    EXPECT_TRUE(b.take(100, 10, 2));
    EXPECT_TRUE(b.dry(100, 10, 2));
    EXPECT_FALSE(b.dry(100, 0, 2)) << "a zero rate is never dry";
}

TEST(aggregate_bucket, is_full_at_its_first_use_and_never_dry_before)
{
    // The worker's clock may start at 0: a plain token_bucket made then would be empty.
    aggregate_bucket b;
    EXPECT_FALSE(b.dry(0, 1, 3)) << "unused: nothing to refuse yet";
    int ok = 0;
    for (int i = 0; i < 5; ++i) ok += b.take(0, 1, 3) ? 1 : 0;
    EXPECT_EQ(ok, 3) << "its whole burst from the first use on";
    EXPECT_TRUE(b.dry(0, 1, 3));
    EXPECT_FALSE(b.dry(1000, 1, 3)) << "one token a second";
}

TEST(token_bucket, a_zero_rate_means_no_limit)
{
    token_bucket b;
    b.fill(0, 1);
    EXPECT_EQ(taken(b, 0, 0, 1, 1000), 1000);
}

TEST(token_bucket, keeps_counting_across_a_wrap_of_the_millisecond_clock)
{
    token_bucket b;
    b.fill(0xffffff00u, 5);
    EXPECT_EQ(taken(b, 0xffffff00u, 1000, 5, 10), 5);
    EXPECT_EQ(taken(b, 0x00000002u, 1000, 5, 10), 5);  // 258 ms later, past the wrap: refilled
}

TEST(source_table, finds_a_source_again_and_tells_new_from_known)
{
    basic_source_table<64, 8> t;
    slot_result r;
    source_entry& e = t.find_or_insert(v4(198, 18, 0, 2), 10, r);
    EXPECT_EQ(r, slot_result::inserted);
    e.malformed = 3;
    source_entry& again = t.find_or_insert(v4(198, 18, 0, 2), 11, r);
    EXPECT_EQ(r, slot_result::found);
    EXPECT_EQ(&again, &e);
    EXPECT_EQ(again.malformed, 3);
    EXPECT_EQ(t.find(v4(198, 18, 0, 3)), nullptr);
}

TEST(source_table, a_full_table_evicts_the_least_recently_used_source_of_the_set)
{
    basic_source_table<8, 8> t;  // one set: every source competes for the same 8 ways
    slot_result r;
    for (uint8_t i = 0; i < 8; ++i) {
        t.find_or_insert(v4(198, 18, 1, i), 100 + i, r);
        EXPECT_EQ(r, slot_result::inserted);
    }
    t.find_or_insert(v4(198, 18, 1, 0), 200, r);  // .0 used again: .1 is now the oldest
    EXPECT_EQ(r, slot_result::found);
    t.find_or_insert(v4(198, 18, 2, 0), 201, r);
    EXPECT_EQ(r, slot_result::evicted);
    EXPECT_EQ(t.find(v4(198, 18, 1, 1)), nullptr);
    EXPECT_NE(t.find(v4(198, 18, 1, 0)), nullptr);
    EXPECT_NE(t.find(v4(198, 18, 2, 0)), nullptr);
    for (uint8_t i = 2; i < 8; ++i) EXPECT_NE(t.find(v4(198, 18, 1, i)), nullptr);
    // A new entry starts clean, not with what the evicted source had.
    EXPECT_EQ(t.find(v4(198, 18, 2, 0))->malformed, 0);
}

sip::proxy_tables tables()
{
    sip::proxy_tables t;
    sip::trunk carrier;
    carrier.name = "carrier";
    carrier.allow.push_back(ip_prefix{v4(198, 18, 1, 0), 24});
    carrier.trusted = true;
    sip::trunk access;
    access.name = "access";
    access.port = 5070;
    access.allow.push_back(ip_prefix{v4(198, 18, 0, 0), 24});
    t.trunks = {carrier, access};
    sip::peer p;
    p.name = "p";
    p.address = v4(198, 18, 2, 11);
    t.peers.push_back(p);
    t.index_peers();
    return t;
}

TEST(trust, peers_and_trusted_trunks_sources_are_trusted_other_allowed_sources_untrusted_the_rest_unknown)
{
    const sip::proxy_tables t = tables();
    EXPECT_EQ(classify(t, 0, v4(198, 18, 1, 5)), trust::trusted);     // the trusted trunk allows it
    EXPECT_EQ(classify(t, 1, v4(198, 18, 0, 5)), trust::untrusted);   // allowed, trunk not trusted
    EXPECT_EQ(classify(t, 1, v4(198, 18, 2, 11)), trust::trusted);    // a peer, on any trunk
    EXPECT_EQ(classify(t, 0, v4(198, 18, 0, 5)), trust::unknown);     // not allowed on this trunk
    EXPECT_EQ(classify(t, 1, v4(203, 0, 113, 9)), trust::unknown);
    EXPECT_EQ(classify(t, 7, v4(198, 18, 0, 5)), trust::unknown);     // no such trunk
    EXPECT_TRUE(trusted_anywhere(t, v4(198, 18, 1, 5)));
    EXPECT_TRUE(trusted_anywhere(t, v4(198, 18, 2, 11)));
    EXPECT_FALSE(trusted_anywhere(t, v4(198, 18, 0, 5)));
}

TEST(flood_policy, holds_exactly_the_denied_sources)
{
    flood_policy p;
    EXPECT_FALSE(p.is_denied(v4(198, 18, 0, 5)));
    std::vector<ip_address> many;
    for (uint8_t i = 0; i < 100; ++i) many.push_back(v4(198, 18, 9, i));
    many.push_back(v4(198, 18, 9, 0));  // once only
    p.set_denied(many);
    EXPECT_EQ(p.denied, 100u);
    for (uint8_t i = 0; i < 100; ++i) EXPECT_TRUE(p.is_denied(v4(198, 18, 9, i)));
    EXPECT_FALSE(p.is_denied(v4(198, 18, 9, 100)));
    EXPECT_FALSE(p.is_denied(v4(198, 18, 0, 5)));
}

}  // namespace
}  // namespace sbc::dataplane
