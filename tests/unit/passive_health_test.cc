// Unit tests of passive peer health: down after N failures in a row, answers reset the count,
// trials after the retest interval, a failed trial puts the peer down again; suspect peers
// (one silence or ICMP unreachable) and what clears them.
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

// Suspect peers: one silence or ICMP unreachable, and nothing heard since.
namespace {
sip::peer_event silent(uint32_t id) { return {sip::peer_event_kind::failed, sip::failure_cause::timeout, 0, id}; }
sip::peer_event unreachable(uint32_t id) { return {sip::peer_event_kind::failed, sip::failure_cause::icmp, 0, id}; }
}  // namespace

struct suspect_fixture : passive_fixture {
    std::vector<uint32_t> probed_now;
    suspect_fixture()
    {
        ph.on_suspect([this](uint32_t id) { probed_now.push_back(id); });
    }
    bool suspect(uint32_t id) const { return words->suspect(id); }
};

TEST_F(suspect_fixture, one_silence_makes_a_peer_suspect_once_logged_counted_and_probed_at_once)
{
    ph.on_event(silent(1), "p1", 100);
    EXPECT_TRUE(suspect(1));
    EXPECT_TRUE(words->available(1)) << "suspect is a preference of selection, not down";
    ASSERT_EQ(log.size(), 1u);
    EXPECT_NE(log[0].find("p1 suspect: timeout"), std::string::npos) << log[0];
    EXPECT_EQ(probed_now, std::vector<uint32_t>{1});
    ph.on_event(silent(1), "p1", 200);
    EXPECT_EQ(log.size(), 1u) << "no second line while it stays suspect";
    EXPECT_EQ(probed_now.size(), 1u) << "no second probe either";
    EXPECT_EQ(ph.of(1).suspect_marks, 1u);
    EXPECT_TRUE(ph.of(1).suspect);
}

TEST_F(suspect_fixture, one_icmp_unreachable_makes_a_peer_suspect)
{
    ph.on_event(unreachable(2), "p2", 0);
    EXPECT_TRUE(suspect(2));
    EXPECT_NE(log.at(0).find("icmp unreachable"), std::string::npos);
}

TEST_F(suspect_fixture, a_503_is_an_answer_not_a_suspicion_and_clears_one)
{
    ph.on_event(fail(3, 503), "p3", 0);
    EXPECT_FALSE(suspect(3)) << "a final response says the peer is alive";
    EXPECT_TRUE(probed_now.empty());
    ph.on_event(silent(3), "p3", 10);
    ASSERT_TRUE(suspect(3));
    ph.on_event(fail(3, 503), "p3", 20);
    EXPECT_FALSE(suspect(3));
    ASSERT_EQ(log.size(), 3u);
    EXPECT_NE(log[1].find("p3 no longer suspect: answered 503"), std::string::npos) << log[1];
    EXPECT_NE(log[2].find("p3 down: 3 failures in a row"), std::string::npos) << "the failures still count toward down";
}

TEST_F(suspect_fixture, an_answered_call_or_a_probe_reply_clears_it_and_it_can_come_back)
{
    ph.on_event(silent(4), "p4", 0);
    ph.on_event(ok(4), "p4", 10);
    EXPECT_FALSE(suspect(4));
    EXPECT_NE(log.back().find("p4 no longer suspect: answered 200"), std::string::npos) << log.back();
    ph.on_event(silent(4), "p4", 20);
    EXPECT_TRUE(suspect(4));
    EXPECT_EQ(ph.of(4).suspect_marks, 2u);
    EXPECT_TRUE(ph.heard_from(4, "probe answered 200", "p4"));
    EXPECT_FALSE(suspect(4));
    EXPECT_NE(log.back().find("p4 no longer suspect: probe answered 200"), std::string::npos) << log.back();
    const std::size_t lines = log.size();
    EXPECT_FALSE(ph.heard_from(4, "probe answered 200", "p4")) << "not suspect: nothing to clear";
    EXPECT_EQ(log.size(), lines) << "logged once per change";
}

TEST_F(suspect_fixture, a_response_of_a_kind_it_does_not_know_clears_suspect_but_judges_no_call)
{
    // A 503 and a silence (suspect), then a response of a kind that ends no attempt (such as a
    // provisional one): alive, so no longer suspect, but the failures in a row still count.
    ph.on_event(fail(5), "p5", 20);
    ph.on_event(silent(5), "p5", 21);
    ASSERT_TRUE(suspect(5));
    ph.on_event({static_cast<sip::peer_event_kind>(200), sip::failure_cause::none, 100, 5}, "p5", 22);
    EXPECT_FALSE(suspect(5)) << "it answered something";
    EXPECT_EQ(ph.of(5).consecutive, 2u) << "but a response that ends no attempt resets nothing";
    ph.on_event(fail(5), "p5", 23);
    EXPECT_FALSE(words->available(5)) << "the third failure in a row takes it down as before";
}

TEST_F(suspect_fixture, down_and_up_thresholds_are_those_of_before)
{
    ph.on_event(silent(6), "p6", 0);
    ph.on_event(silent(6), "p6", 1);
    EXPECT_TRUE(words->available(6)) << "suspect, not down, after two silences";
    ph.on_event(silent(6), "p6", 2);
    EXPECT_FALSE(words->available(6)) << "down after passive_down_after (3), as before";
    ph.tick(100, names);
    EXPECT_FALSE(suspect(6)) << "down says more: the mark goes";
    ph.tick(30'010, names);
    EXPECT_TRUE(words->available(6)) << "a trial after the retest interval, as before";
    ph.on_event(ok(6), "p6", 30'020);
    EXPECT_FALSE(ph.of(6).down);
    EXPECT_FALSE(suspect(6));
}

TEST_F(suspect_fixture, a_peer_already_down_is_not_marked_suspect)
{
    ph.on_connection_failed(7, "connection: connection refused", "p7", 0);
    log.clear();
    ph.on_event(silent(7), "p7", 10);
    EXPECT_FALSE(suspect(7));
    EXPECT_TRUE(probed_now.empty());
    EXPECT_TRUE(log.empty());
}

TEST_F(suspect_fixture, with_nothing_heard_for_a_retest_interval_calls_may_try_it_again)
{
    ph.on_event(silent(8), "p8", 100);
    ph.tick(30'000, names);
    EXPECT_TRUE(suspect(8));
    ph.tick(30'100, names);
    EXPECT_FALSE(suspect(8)) << "a peer that never answers OPTIONS is not shunned for ever";
    EXPECT_NE(log.back().find("p8 no longer suspect: nothing heard for 30 s"), std::string::npos) << log.back();
    ph.on_event(silent(8), "p8", 30'200);
    EXPECT_TRUE(suspect(8)) << "its next silence marks it again";
}

TEST_F(suspect_fixture, a_probed_peer_is_suspect_on_one_silence_and_reported_at_the_threshold)
{
    ph.set_probed(9, true);
    EXPECT_FALSE(ph.on_event(silent(9), "p9", 0));
    EXPECT_TRUE(suspect(9));
    EXPECT_EQ(probed_now, std::vector<uint32_t>{9}) << "an early probe of its own rhythm";
    EXPECT_FALSE(ph.on_event(silent(9), "p9", 1));
    EXPECT_TRUE(ph.on_event(silent(9), "p9", 2)) << "the threshold is reported as before";
    EXPECT_TRUE(words->available(9)) << "its prober writes the down bit";
}
