// Unit tests of the probed peers' health: table-driven sequences of probe results and passive
// verdicts -> state after each step (down after N failures in a row, up after M successes in
// a row, codes outside accepted_codes count as failures, passive failures take a probed peer
// down and only good probes bring it back), plus the RTT and counters kept; and the passive
// side's hand-over for probed peers (no trial calls, the threshold reported once); late
// replies (after the timeout, before the next probe) counted and judged as answers.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "control/passive_health.h"
#include "control/probe.h"
#include "control/probe_health.h"

using namespace sbc;

namespace {

enum class in : uint8_t { reply, timeout, unreachable, passive };

struct step {
    in what;
    uint16_t code;       ///< reply: its status code
    bool down_after;     ///< expected state after the step
    const char* change;  ///< expected change: "" none, else a substring of its why
};

struct sequence {
    const char* name;
    unsigned down_after;
    unsigned up_after;
    std::vector<uint16_t> accepted;
    std::vector<step> steps;
};

const std::vector<sequence> sequences = {
    {"down after two timeouts in a row",
     2, 2, {200},
     {{in::reply, 200, false, ""}, {in::timeout, 0, false, ""}, {in::timeout, 0, true, "probe timeout x2"},
      {in::timeout, 0, true, ""}}},
    {"a good probe between failures resets the count",
     2, 2, {200},
     {{in::timeout, 0, false, ""}, {in::reply, 200, false, ""}, {in::timeout, 0, false, ""},
      {in::reply, 200, false, ""}}},
    {"a code outside accepted_codes is a failure",
     2, 2, {200},
     {{in::reply, 503, false, ""}, {in::reply, 503, true, "code 503 x2"}}},
    {"mixed failures count together; the last one is the why",
     3, 1, {200},
     {{in::timeout, 0, false, ""}, {in::reply, 404, false, ""}, {in::reply, 500, true, "code 500 x3"}}},
    {"up only after M good probes in a row",
     1, 3, {200},
     {{in::timeout, 0, true, "probe timeout"}, {in::reply, 200, true, ""}, {in::reply, 200, true, ""},
      {in::timeout, 0, true, ""}, {in::reply, 200, true, ""}, {in::reply, 200, true, ""},
      {in::reply, 200, false, "3 probes answered 200"}}},
    {"a configured code such as 404 counts as up",
     1, 1, {200, 404},
     {{in::reply, 404, false, ""}, {in::timeout, 0, true, "probe timeout"}, {in::reply, 404, false, "1 probe answered 404"}}},
    {"passive failures take a probed peer down; good probes bring it back",
     2, 2, {200},
     {{in::reply, 200, false, ""}, {in::passive, 0, true, "passive: 503"}, {in::reply, 200, true, ""},
      {in::reply, 200, false, "2 probes answered"}}},
    {"a good probe just before the passive verdict does not count towards coming back",
     5, 2, {200},
     {{in::reply, 200, false, ""}, {in::passive, 0, true, "passive"}, {in::reply, 200, true, ""},
      {in::reply, 200, false, "answered"}}},
    {"an ICMP unreachable about a probe is a failure, counted with timeouts",
     3, 1, {200},
     {{in::unreachable, 0, false, ""}, {in::timeout, 0, false, ""}, {in::reply, 200, false, ""},
      {in::timeout, 0, false, ""}, {in::unreachable, 0, false, ""}, {in::unreachable, 0, true, "icmp unreachable x3"}}},
    {"a passive verdict on a peer already down changes nothing",
     1, 1, {200},
     {{in::timeout, 0, true, "probe timeout"}, {in::passive, 0, true, ""}, {in::reply, 200, false, "answered"}}},
};

}  // namespace

TEST(probe_health, sequences_of_probe_results_and_passive_verdicts_give_the_expected_states)
{
    for (const auto& seq : sequences) {
        control::probe_health h{{seq.down_after, seq.up_after, seq.accepted}};
        constexpr uint32_t id = 7;
        for (std::size_t i = 0; i < seq.steps.size(); ++i) {
            const step& s = seq.steps[i];
            std::optional<control::health_change> c;
            switch (s.what) {
            case in::reply: c = h.on_reply(id, s.code, 1500); break;
            case in::timeout: c = h.on_timeout(id); break;
            case in::unreachable: c = h.on_unreachable(id); break;
            case in::passive: c = h.on_passive_down(id, "503"); break;
            }
            SCOPED_TRACE(std::string(seq.name) + ", step " + std::to_string(i + 1));
            EXPECT_EQ(h.of(id).down, s.down_after);
            if (*s.change == '\0') {
                EXPECT_FALSE(c.has_value()) << "unexpected change: " << c->why;
            } else {
                ASSERT_TRUE(c.has_value());
                EXPECT_EQ(c->id, id);
                EXPECT_EQ(c->down, s.down_after);
                EXPECT_NE(c->why.find(s.change), std::string::npos) << c->why;
                EXPECT_EQ(h.of(id).why, c->why);
            }
        }
    }
}

TEST(probe_health, keeps_the_last_rtt_and_counts_failures_and_changes)
{
    control::probe_health h{{2, 1, {200}}};
    EXPECT_EQ(h.of(3).last_rtt_us, -1) << "no probe answered yet";
    h.on_reply(3, 200, 420);
    EXPECT_EQ(h.of(3).last_rtt_us, 420);
    h.on_timeout(3);
    EXPECT_EQ(h.of(3).last_rtt_us, 420) << "a timeout has no RTT: the last one stays";
    h.on_reply(3, 503, 900);
    EXPECT_EQ(h.of(3).last_rtt_us, 900) << "an unaccepted code was still a reply";
    EXPECT_EQ(h.of(3).last_code, 503);
    EXPECT_TRUE(h.of(3).down);
    h.on_reply(3, 200, 300);
    EXPECT_FALSE(h.of(3).down);
    EXPECT_EQ(h.of(3).probes_failed, 2u);
    EXPECT_EQ(h.of(3).changes, 2u);
    EXPECT_EQ(h.of(4).changes, 0u) << "peers are independent";
    h.reset(3);
    EXPECT_EQ(h.of(3).probes_failed, 0u);
    EXPECT_FALSE(h.of(3).down);
}

namespace {
sip::peer_event call_failed(uint32_t id) { return {sip::peer_event_kind::failed, sip::failure_cause::code, 503, id}; }
sip::peer_event call_answered(uint32_t id) { return {sip::peer_event_kind::answered, sip::failure_cause::none, 200, id}; }
}  // namespace

TEST(passive_health_probed, reports_the_threshold_once_and_leaves_the_down_bit_and_trials_to_the_probes)
{
    auto words = std::make_unique<sip::peer_health>();
    std::vector<std::string> log;
    control::passive_health ph{*words, {3, 1000}, [&](const std::string& s) { log.push_back(s); }};
    ph.set_probed(5, true);
    EXPECT_FALSE(ph.on_event(call_failed(5), "p5", 0));
    EXPECT_FALSE(ph.on_event(call_failed(5), "p5", 0));
    EXPECT_TRUE(ph.on_event(call_failed(5), "p5", 0)) << "third failure in a row: the caller takes it down";
    EXPECT_FALSE(ph.on_event(call_failed(5), "p5", 0)) << "reported once, not at every further failure";
    EXPECT_TRUE(words->available(5)) << "the probe state machine writes the down bit, not passive health";
    ph.tick(10'000, [](uint32_t) { return std::string("p5"); });
    EXPECT_FALSE(ph.of(5).trial) << "no trial calls for a probed peer";
    EXPECT_TRUE(log.empty());
    EXPECT_EQ(ph.of(5).why, "503");
    ph.on_event(call_answered(5), "p5", 0);
    EXPECT_EQ(ph.of(5).consecutive, 0u);

    // The same events on a peer that is not probed take it down here.
    for (int i = 0; i < 3; ++i) ph.on_event(call_failed(6), "p6", 0);
    EXPECT_FALSE(words->available(6));
    EXPECT_EQ(ph.of(6).changes, 1u);
}

TEST(probe_health_why, a_connection_failure_on_a_peer_already_down_from_probe_timeouts_names_its_reason)
{
    control::probe_health h{control::probe_policy{}};
    h.on_timeout(3);
    h.on_timeout(3);
    ASSERT_TRUE(h.of(3).down);
    EXPECT_FALSE(h.on_passive_down(3, "connection: certificate name mismatch")) << "no second flip";
    EXPECT_EQ(h.of(3).why, "passive: connection: certificate name mismatch");
}

TEST(probe_health, late_replies_are_counted_and_judged_as_answers)
{
    control::probe_health h{{2, 2, {200}}};
    for (int i = 0; i < 5; ++i) EXPECT_FALSE(h.on_reply(1, 200, 900'000, true).has_value());
    EXPECT_FALSE(h.of(1).down) << "a peer that answers late is never marked down";
    EXPECT_EQ(h.of(1).probes_late, 5u);
    EXPECT_EQ(h.of(1).probes_failed, 0u);
    h.on_reply(1, 503, 900'000, true);
    h.on_reply(1, 503, 900'000, true);
    EXPECT_TRUE(h.of(1).down) << "late or not, an unaccepted code is a failure";
    EXPECT_EQ(h.of(1).probes_late, 7u);
}

// The scheduler and the state machine together, as probe_runner drives them: a peer whose
// replies reach a loaded control core after the probe timeout but before the next probe stays
// up; one whose replies come only after the next probe was sent goes down as before.
namespace {
struct probe_pair {
    control::probe_scheduler sched{1000'000, 300'000};  // microseconds: 1 s interval, 300 ms timeout
    control::probe_health health{{2, 2, {200}}};
    std::vector<control::probe_due> due;
    std::vector<uint32_t> expired;
    /// Runs one interval from `t0`: the probe goes out, its reply (if any) comes `delay_us` later.
    void interval(uint64_t t0, int64_t delay_us)
    {
        expired.clear();
        sched.expired(t0, expired);
        for (uint32_t id : expired) health.on_timeout(id);
        due.clear();
        sched.due(t0, due);
        if (delay_us < 0 || due.empty()) return;
        const uint64_t rx = t0 + static_cast<uint64_t>(delay_us);
        if (auto a = sched.on_reply(due[0].id, due[0].seq, rx)) health.on_reply(due[0].id, 200, a->rtt_us, a->late);
    }
};
}  // namespace

TEST(probe_health, a_healthy_peer_answering_within_the_interval_is_never_marked_down)
{
    probe_pair p;
    const std::vector<uint32_t> ids{4};
    p.sched.set_peers(ids, 0);
    for (uint64_t i = 0; i < 10; ++i) p.interval(i * 1000'000, 950'000);  // 950 ms: past the 300 ms timeout
    EXPECT_FALSE(p.health.of(4).down);
    EXPECT_EQ(p.health.of(4).probes_late, 10u);
    EXPECT_EQ(p.health.of(4).probes_failed, 0u);
    EXPECT_EQ(p.sched.stale_replies(), 0u);
}

TEST(probe_health, a_reply_after_the_next_probe_was_sent_is_a_failure_as_before)
{
    probe_pair p;
    const std::vector<uint32_t> ids{4};
    p.sched.set_peers(ids, 0);
    p.interval(0, -1);  // no reply to the first probe before the second goes out
    p.interval(1000'000, -1);
    // The first probe's reply arrives now, after the second probe was sent: stale.
    EXPECT_FALSE(p.sched.on_reply(4, 1, 1100'000).has_value());
    p.interval(2000'000, -1);
    EXPECT_TRUE(p.health.of(4).down) << "two probes failed in a row";
    EXPECT_EQ(p.health.of(4).probes_failed, 2u);
    EXPECT_EQ(p.sched.stale_replies(), 1u);
}
