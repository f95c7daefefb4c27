// Unit tests of peer selection: RFC 2782 priorities and weights (shares within a chi-square
// bound), zero weights, skipping down and already tried peers, and the other selectors.
#include <gtest/gtest.h>

#include <map>

#include "sip-fastpath/peer_select.h"

using namespace sbc::sip;

namespace {

struct spec {
    uint16_t priority, weight;
};

struct fixture {
    proxy_tables t;
    std::unique_ptr<peer_health> h = std::make_unique<peer_health>();
    select_state st;
    explicit fixture(std::initializer_list<spec> peers)
    {
        t.regions.resize(1);
        for (const auto& s : peers) {
            peer p;
            p.id = static_cast<uint32_t>(t.peers.size());
            p.priority = s.priority;
            p.weight = s.weight;
            t.regions[0].peers.push_back(p.id);
            t.peers.push_back(p);
        }
    }
    std::map<uint32_t, int> draw(int n, selector sel = selector::srv, std::span<const uint32_t> tried = {})
    {
        std::map<uint32_t, int> c;
        for (int i = 0; i < n; ++i)
            ++c[select_peer(
                t, *h, {.region = 0, .sel = sel, .tried = tried, .call_hash = static_cast<uint64_t>(i) * 7919}, st)];
        return c;
    }
};

}  // namespace

TEST(peer_select, lowest_priority_value_always_wins_while_available)
{
    fixture f{{20, 100}, {10, 1}, {30, 100}};
    auto c = f.draw(1000);
    EXPECT_EQ(c[1], 1000);
    f.h->word[1].store(peer_state::down);
    c = f.draw(1000);
    EXPECT_EQ(c[0], 1000) << "next priority once the best is down";
}

TEST(peer_select, weights_share_calls_within_a_chi_square_bound)
{
    fixture f{{10, 60}, {10, 30}, {10, 10}};
    const int n = 30000;
    auto c = f.draw(n);
    const double expected[] = {0.6 * n, 0.3 * n, 0.1 * n};
    double chi2 = 0;
    for (uint32_t i = 0; i < 3; ++i) chi2 += (c[i] - expected[i]) * (c[i] - expected[i]) / expected[i];
    // 2 degrees of freedom: P(chi2 > 13.8) = 0.001.
    EXPECT_LT(chi2, 13.8) << c[0] << " " << c[1] << " " << c[2];
}

TEST(peer_select, all_zero_weights_spread_evenly)
{
    fixture f{{10, 0}, {10, 0}};
    auto c = f.draw(10000);
    EXPECT_GT(c[0], 4500);
    EXPECT_GT(c[1], 4500);
}

TEST(peer_select, a_zero_weight_peer_beside_weighted_ones_is_rarely_chosen)
{
    fixture f{{10, 0}, {10, 100}};
    auto c = f.draw(20000);
    EXPECT_LT(c[0], 400) << "chosen only when the random draw is 0 (about 1 in 101)";
    EXPECT_GT(c[0], 50);
}

TEST(peer_select, tried_and_disabled_peers_are_skipped_and_none_is_reported)
{
    fixture f{{10, 50}, {10, 50}};
    const uint32_t tried[] = {0};
    auto c = f.draw(100, selector::srv, tried);
    EXPECT_EQ(c[1], 100);
    f.h->word[1].store(peer_state::draining);
    c = f.draw(10, selector::srv, tried);
    EXPECT_EQ(c[no_peer], 10);
}

TEST(peer_select, round_robin_and_hash_selectors)
{
    fixture f{{10, 1}, {10, 1}, {10, 1}};
    auto rr = f.draw(300, selector::round_robin);
    EXPECT_EQ(rr[0], 100);
    EXPECT_EQ(rr[1], 100);
    EXPECT_EQ(rr[2], 100);
    const uint32_t a = select_peer(f.t, *f.h, {.region = 0, .sel = selector::hash_call_id, .call_hash = 12345}, f.st);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(select_peer(f.t, *f.h, {.region = 0, .sel = selector::hash_call_id, .call_hash = 12345}, f.st), a);
}

TEST(peer_select, least_calls_picks_the_idlest_peer)
{
    fixture f{{10, 1}, {10, 1}, {10, 1}};
    std::array<std::atomic<uint32_t>, 3> active{};
    active[0] = 5;
    active[1] = 1;
    active[2] = 3;
    EXPECT_EQ(select_peer(f.t, *f.h, {.region = 0, .sel = selector::least_calls, .active = active}, f.st), 1u);
}

TEST(peer_select, a_suspect_peer_takes_no_new_call_while_another_of_its_region_is_up)
{
    fixture f{{10, 50}, {20, 50}, {20, 50}};
    f.h->word[0].store(peer_state::suspect);
    auto c = f.draw(1000);
    EXPECT_EQ(c[0], 0) << "passed over whatever its priority";
    EXPECT_EQ(c[1] + c[2], 1000);
    EXPECT_GT(c[1], 350) << "the others keep their weights";
    f.h->word[1].store(peer_state::suspect);
    c = f.draw(100, selector::round_robin);
    EXPECT_EQ(c[2], 100);
    std::array<std::atomic<uint32_t>, 3> active{};
    active[2] = 50;
    EXPECT_EQ(select_peer(f.t, *f.h, {.region = 0, .sel = selector::least_calls, .active = active}, f.st), 2u)
        << "even when it is the busiest";
}

TEST(peer_select, when_every_available_peer_of_the_region_is_suspect_they_are_used_as_usual)
{
    fixture f{{10, 50}, {20, 50}};
    f.h->word[0].store(peer_state::suspect);
    f.h->word[1].store(peer_state::suspect);
    auto c = f.draw(100);
    EXPECT_EQ(c[0], 100) << "priority decides again";
    f.h->word[1].store(peer_state::down);
    c = f.draw(100);
    EXPECT_EQ(c[0], 100) << "the only other peer is down: the suspect one is used";
    f.h->word[1].store(0);
    const uint32_t tried[] = {1};
    c = f.draw(100, selector::srv, tried);
    EXPECT_EQ(c[0], 100) << "the only other peer was tried: the suspect one is next";
    f.h->word[1].store(peer_state::draining);
    c = f.draw(100);
    EXPECT_EQ(c[0], 100);
}

TEST(peer_select, among_peers_all_down_the_last_resort_still_prefers_one_not_suspect)
{
    fixture f{{10, 50}, {20, 50}};
    f.h->word[0].store(peer_state::down | peer_state::suspect);
    f.h->word[1].store(peer_state::down);
    EXPECT_EQ(select_peer(f.t, *f.h, {.region = 0, .sel = selector::srv}, f.st), no_peer) << "all down";
    EXPECT_EQ(select_peer(f.t, *f.h, {.region = 0, .sel = selector::srv, .ignore_down = true}, f.st), 1u);
    f.h->word[1].store(peer_state::down | peer_state::suspect);
    EXPECT_EQ(select_peer(f.t, *f.h, {.region = 0, .sel = selector::srv, .ignore_down = true}, f.st), 0u);
}
