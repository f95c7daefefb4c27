// Unit tests of passive peer health: down after N failures in a row, answers reset the count,
// trials after the retest interval, a failed trial puts the peer down again.
#include <gtest/gtest.h>

#include "control/passive_health.h"

using namespace sbc;

namespace {
sip::peer_event fail(uint32_t id, uint16_t code = 503)
{
    return {sip::peer_event_kind::failed, sip::failure_cause::code, code, id};
}
sip::peer_event ok(uint32_t id) { return {sip::peer_event_kind::answered, sip::failure_cause::none, 200, id}; }
}  // namespace

struct passive_fixture : ::testing::Test {
    std::unique_ptr<sip::peer_health> words = std::make_unique<sip::peer_health>();
    std::vector<std::string> log;
    control::passive_health ph{*words, {3, 30'000}, [this](const std::string& s) { log.push_back(s); }};
    std::function<std::string(uint32_t)> names = [](uint32_t id) { return "p" + std::to_string(id); };
};

TEST_F(passive_fixture, a_peer_goes_down_after_n_failures_in_a_row)
{
    ph.on_event(fail(4), "p4", 0);
    ph.on_event(fail(4), "p4", 1);
    EXPECT_TRUE(words->available(4));
    ph.on_event(fail(4, 408), "p4", 2);
    EXPECT_FALSE(words->available(4));
    ASSERT_EQ(log.size(), 1u);
    EXPECT_NE(log[0].find("p4 down"), std::string::npos);
    EXPECT_NE(log[0].find("408"), std::string::npos);
}

TEST_F(passive_fixture, an_answer_resets_the_count)
{
    ph.on_event(fail(1), "p1", 0);
    ph.on_event(fail(1), "p1", 0);
    ph.on_event(ok(1), "p1", 0);
    ph.on_event(fail(1), "p1", 0);
    ph.on_event(fail(1), "p1", 0);
    EXPECT_TRUE(words->available(1));
}

TEST_F(passive_fixture, a_down_peer_gets_a_trial_after_the_interval_and_comes_back_when_it_answers)
{
    for (int i = 0; i < 3; ++i) ph.on_event(fail(2), "p2", 100);
    ph.tick(20'000, names);
    EXPECT_FALSE(words->available(2));
    ph.tick(30'100, names);
    EXPECT_TRUE(words->available(2)) << "trial: new calls may go to it";
    EXPECT_TRUE(ph.of(2).trial);
    ph.on_event(ok(2), "p2", 30'200);
    EXPECT_TRUE(words->available(2));
    EXPECT_FALSE(ph.of(2).down);
}

TEST_F(passive_fixture, a_failed_trial_puts_the_peer_down_for_another_interval)
{
    for (int i = 0; i < 3; ++i) ph.on_event(fail(3), "p3", 0);
    ph.tick(30'000, names);
    ph.on_event({sip::peer_event_kind::failed, sip::failure_cause::timeout, 0, 3}, "p3", 30'500);
    EXPECT_FALSE(words->available(3));
    ph.tick(40'000, names);
    EXPECT_FALSE(words->available(3));
    ph.tick(60'600, names);
    EXPECT_TRUE(words->available(3));
}

TEST_F(passive_fixture, operator_bits_are_left_alone)
{
    words->word[5].store(sip::peer_state::draining);
    for (int i = 0; i < 3; ++i) ph.on_event(fail(5), "p5", 0);
    EXPECT_EQ(words->word[5].load(), sip::peer_state::draining | sip::peer_state::down);
    ph.tick(30'000, names);
    EXPECT_EQ(words->word[5].load(), sip::peer_state::draining);
}

TEST_F(passive_fixture, a_lost_connection_takes_an_unprobed_peer_down_at_once_with_its_reason)
{
    EXPECT_FALSE(ph.on_connection_failed(6, "connection: certificate name mismatch", "p6", 100));
    EXPECT_FALSE(words->available(6)) << "one connection failure is enough, no threshold";
    EXPECT_EQ(ph.of(6).why, "connection: certificate name mismatch");
    ASSERT_EQ(log.size(), 1u);
    EXPECT_NE(log[0].find("p6 down: connection: certificate name mismatch"), std::string::npos);
    ph.tick(30'200, names);
    EXPECT_TRUE(words->available(6)) << "a trial after the retest interval, as for failed calls";
}

TEST_F(passive_fixture, a_lost_connection_of_a_probed_peer_is_left_to_its_prober)
{
    ph.set_probed(7, true);
    EXPECT_TRUE(ph.on_connection_failed(7, "connection: connection refused", "p7", 0));
    EXPECT_TRUE(words->available(7)) << "the probe state machine owns a probed peer's down bit";
}

TEST_F(passive_fixture, an_unprobed_peer_whose_connection_is_up_again_is_up_at_once)
{
    ph.on_connection_failed(8, "connection: connection refused", "p8", 0);
    EXPECT_FALSE(words->available(8));
    ph.on_connection_up(8, "p8");
    EXPECT_TRUE(words->available(8)) << "no wait for the retest interval: the connection is what failed it";
    ph.set_probed(9, true);
    ph.on_connection_up(9, "p9");
    EXPECT_TRUE(words->available(9));
}
