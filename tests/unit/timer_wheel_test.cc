// Unit tests of the timer wheel: timers fire at their time (not before), cancel and re-arm,
// horizons beyond one lap, and the output budget that pauses expiry.
#include <gtest/gtest.h>

#include <vector>

#include "common/timer_wheel.h"

using sbc::timer_wheel;

TEST(timer_wheel, fires_each_timer_once_at_its_time)
{
    timer_wheel w(16);
    w.start(1000);
    w.schedule(1, 1005);
    w.schedule(2, 1010);
    std::vector<uint32_t> fired;
    auto rec = [&](uint32_t s) { fired.push_back(s); };
    auto more = [] { return true; };
    w.advance(1004, rec, more);
    EXPECT_TRUE(fired.empty());
    w.advance(1005, rec, more);
    EXPECT_EQ(fired, std::vector<uint32_t>{1});
    w.advance(1100, rec, more);
    EXPECT_EQ(fired, (std::vector<uint32_t>{1, 2}));
    EXPECT_FALSE(w.armed(1));
}

TEST(timer_wheel, cancelled_and_rearmed_timers)
{
    timer_wheel w(4);
    w.start(0);
    w.schedule(0, 10);
    w.cancel(0);
    w.schedule(1, 10);
    w.schedule(1, 20);
    std::vector<uint32_t> fired;
    w.advance(15, [&](uint32_t s) { fired.push_back(s); }, [] { return true; });
    EXPECT_TRUE(fired.empty());
    w.advance(20, [&](uint32_t s) { fired.push_back(s); }, [] { return true; });
    EXPECT_EQ(fired, std::vector<uint32_t>{1});
}

TEST(timer_wheel, a_timer_beyond_one_lap_waits_for_its_time)
{
    timer_wheel w(2);
    w.start(0);
    w.schedule(0, timer_wheel::buckets + 7);
    int fired = 0;
    for (uint64_t t = 1; t <= timer_wheel::buckets + 6; t += 50) w.advance(t, [&](uint32_t) { ++fired; }, [] { return true; });
    w.advance(timer_wheel::buckets + 6, [&](uint32_t) { ++fired; }, [] { return true; });
    EXPECT_EQ(fired, 0);
    w.advance(timer_wheel::buckets + 7, [&](uint32_t) { ++fired; }, [] { return true; });
    EXPECT_EQ(fired, 1);
}

TEST(timer_wheel, a_full_output_pauses_expiry_without_losing_timers)
{
    timer_wheel w(8);
    w.start(0);
    for (uint32_t s = 0; s < 8; ++s) w.schedule(s, 5);
    int budget = 3, fired = 0;
    w.advance(10, [&](uint32_t) { ++fired; --budget; }, [&] { return budget > 0; });
    EXPECT_EQ(fired, 3);
    budget = 100;
    w.advance(10, [&](uint32_t) { ++fired; --budget; }, [&] { return budget > 0; });
    EXPECT_EQ(fired, 8);
}
