// Unit tests of the adaptive no-answer timer (control/peer_timer.h): table-driven sequences of
// response times and silences, and the timer each leaves published for the workers.
#include <gtest/gtest.h>

#include <cctype>
#include <memory>
#include <string>
#include <vector>

#include "control/peer_timer.h"

using sbc::control::peer_timer;
using sbc::control::timer_bounds;

namespace {

/// One step of a sequence: a response time in ms (sample), or a silence.
struct step {
    enum { sample, silence } what;
    double ms = 0;
};
step rtt(double ms) { return {step::sample, ms}; }
step quiet() { return {step::silence, 0}; }

struct timer_case {
    const char* name;
    timer_bounds bounds;
    std::vector<step> steps;
    uint32_t published_ms;  ///< peer_health::no_response_ms after the steps (0: none learned)
    uint32_t in_force_ms;   ///< what the workers use
};

const peer_timer::name_fn name_of = [](uint32_t id) { return "p" + std::to_string(id); };

class peer_timer_cases : public ::testing::TestWithParam<timer_case> {};

TEST_P(peer_timer_cases, publishes_the_expected_timer)
{
    const timer_case& c = GetParam();
    auto h = std::make_unique<sbc::sip::peer_health>();
    peer_timer pt(*h, c.bounds, [](const std::string&) {});
    for (const step& s : c.steps) {
        if (s.what == step::sample)
            pt.on_sample(3, static_cast<uint64_t>(s.ms * 1000), name_of);
        else
            pt.on_silence(3, name_of);
    }
    EXPECT_EQ(h->no_response_ms[3].load(), c.published_ms);
    EXPECT_EQ(h->no_response_for(3, c.bounds.max_ms), c.in_force_ms);
    EXPECT_EQ(pt.in_force(3), c.in_force_ms);
    EXPECT_EQ(h->no_response_ms[4].load(), 0u) << "other peers are untouched";
}

// The RFC 6298 arithmetic (us): first R -> srtt R, rttvar R/2, timer 3R; then
// rttvar = 3/4 rttvar + 1/4 |srtt - R|, srtt = 7/8 srtt + 1/8 R.
const timer_case cases[] = {
    {"no history: the workers use no_response_ms", {200, 1000}, {}, 0, 1000},
    {"a silence with no history changes nothing", {200, 1000}, {quiet(), quiet()}, 0, 1000},
    {"one fast response: clamped up to the minimum", {200, 1000}, {rtt(20)}, 200, 200},
    {"one response: 3 R", {100, 5000}, {rtt(100)}, 300, 300},
    {"one slow response: clamped down to no_response_ms", {200, 1000}, {rtt(600)}, 1000, 1000},
    // 100: srtt 100, var 50 -> 300; 100: var 37.5, srtt 100 -> 250; 100: var 28.125 -> 212.5 -> 213
    {"steady responses bring the variation down", {50, 5000}, {rtt(100), rtt(100), rtt(100)}, 213, 213},
    // 100 -> (100, 50); 300: var (150 + 200) / 4 = 87.5, srtt 125 -> 475
    {"a jump in response time widens the timer", {50, 5000}, {rtt(100), rtt(300)}, 475, 475},
    // 300: 900 (clamped 1000 -> no: max 5000) -> 900; silence -> 1800; silence -> 3600; -> 5000 (max)
    {"silences double the timer up to no_response_ms", {50, 5000}, {rtt(300), quiet(), quiet(), quiet()}, 5000, 5000},
    // 100: 300; silence: 600; 100: var 28.125... srtt 100, var 37.5 -> 250 (from srtt, not the back-off)
    {"the next response after a back-off recomputes from srtt", {50, 5000}, {rtt(100), quiet(), rtt(100)}, 250, 250},
    {"a back-off at the minimum doubles it", {200, 1000}, {rtt(10), quiet()}, 400, 400},
    {"sub-millisecond responses round up, then clamp", {50, 1000}, {rtt(0.1)}, 50, 50},
};

INSTANTIATE_TEST_SUITE_P(sequences, peer_timer_cases, ::testing::ValuesIn(cases),
                         [](const ::testing::TestParamInfo<timer_case>& i) {
                             std::string n = i.param.name;
                             for (char& ch : n)
                                 if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                             return n;
                         });

TEST(peer_timer, reset_forgets_the_history_of_a_reused_id)
{
    auto h = std::make_unique<sbc::sip::peer_health>();
    peer_timer pt(*h, {200, 1000}, [](const std::string&) {});
    pt.on_sample(5, 100'000, name_of);
    ASSERT_EQ(h->no_response_ms[5].load(), 300u);
    pt.reset(5);
    EXPECT_EQ(h->no_response_ms[5].load(), 0u);
    EXPECT_EQ(pt.in_force(5), 1000u);
    EXPECT_FALSE(pt.of(5).learned);
    EXPECT_EQ(pt.of(5).samples, 0u);
    pt.on_sample(5, 20'000, name_of);
    EXPECT_EQ(h->no_response_ms[5].load(), 200u) << "the new peer's first response starts afresh (3 R, clamped)";
}

TEST(peer_timer, new_bounds_clamp_every_learned_timer_again)
{
    auto h = std::make_unique<sbc::sip::peer_health>();
    peer_timer pt(*h, {200, 1000}, [](const std::string&) {});
    pt.on_sample(1, 600'000, name_of);  // 1800 -> 1000
    pt.on_sample(2, 10'000, name_of);   // 30 -> 200
    ASSERT_EQ(h->no_response_ms[1].load(), 1000u);
    ASSERT_EQ(h->no_response_ms[2].load(), 200u);
    pt.set_bounds({50, 4000}, name_of);
    EXPECT_EQ(h->no_response_ms[1].load(), 1800u);
    EXPECT_EQ(h->no_response_ms[2].load(), 50u);
    EXPECT_EQ(h->no_response_ms[0].load(), 0u) << "a peer with no history stays without";
    EXPECT_EQ(pt.in_force(0), 4000u);
}

TEST(peer_timer, logs_the_first_timer_and_moves_over_a_quarter_not_every_sample)
{
    auto h = std::make_unique<sbc::sip::peer_health>();
    std::vector<std::string> lines;
    peer_timer pt(*h, {50, 5000}, [&](const std::string& l) { lines.push_back(l); });
    pt.on_sample(7, 100'000, name_of);  // 300
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("peer p7: no-answer timer 300 ms learned"), std::string::npos) << lines[0];
    pt.on_sample(7, 100'000, name_of);  // 250: moved 50 of 300, not logged
    EXPECT_EQ(lines.size(), 1u);
    pt.on_sample(7, 100'000, name_of);  // 213: 87 of 300, more than a quarter
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_NE(lines[1].find("300 -> 213 ms"), std::string::npos) << lines[1];
    pt.on_silence(7, name_of);  // 426
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_NE(lines[2].find("backed off"), std::string::npos) << lines[2];
    EXPECT_EQ(pt.of(7).samples, 3u);
    EXPECT_EQ(pt.of(7).silences, 1u);
    EXPECT_EQ(pt.of(7).changes, 3u);
}

}  // namespace
