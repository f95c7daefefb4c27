// Unit tests of OPTIONS scheduling (one probe per interval per peer, first probes spread,
// replies matched by sequence with their RTT, a probe failed only when its successor is due,
// late replies before then counted late, stale and foreign replies refused, early and one-off
// probes) and
// of the probe's text (a valid OPTIONS whose branch reads back as the peer and sequence).
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "control/probe.h"
#include "sip-fastpath/probe_branch.h"
#include "sip-fastpath/sip_message.h"

using namespace sbc;

namespace {
constexpr uint64_t ms = 1000;  // the scheduler counts microseconds
}

TEST(probe_scheduler, sends_one_probe_per_interval_per_peer_and_spreads_the_first_ones)
{
    control::probe_scheduler s{1000 * ms, 500 * ms};
    const std::vector<uint32_t> ids{3, 9};
    s.set_peers(ids, 0);
    std::vector<control::probe_due> out;
    s.due(0, out);
    ASSERT_EQ(out.size(), 1u) << "the second peer's first probe is half an interval later";
    EXPECT_EQ(out[0].id, 3u);
    out.clear();
    s.due(500 * ms, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].id, 9u);
    out.clear();
    s.due(999 * ms, out);
    EXPECT_TRUE(out.empty());
    s.due(1000 * ms, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].id, 3u);
    EXPECT_EQ(out[0].seq, 2u);
    EXPECT_EQ(s.sent(3), 2u);
    EXPECT_EQ(s.sent(9), 1u);
    EXPECT_TRUE(s.probed(3));
    EXPECT_FALSE(s.probed(4));
}

TEST(probe_scheduler, matches_a_reply_by_sequence_and_gives_its_rtt)
{
    control::probe_scheduler s{1000 * ms, 500 * ms};
    const std::vector<uint32_t> ids{1};
    s.set_peers(ids, 0);
    std::vector<control::probe_due> out;
    s.due(10 * ms, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_FALSE(s.on_reply(1, out[0].seq + 1, 11 * ms).has_value()) << "another sequence number";
    EXPECT_FALSE(s.on_reply(2, out[0].seq, 11 * ms).has_value()) << "another peer";
    const auto rtt = s.on_reply(1, out[0].seq, 10 * ms + 730);
    ASSERT_TRUE(rtt.has_value());
    EXPECT_EQ(rtt->rtt_us, 730u);
    EXPECT_FALSE(rtt->late);
    EXPECT_FALSE(rtt->once);
    EXPECT_FALSE(s.on_reply(1, out[0].seq, 12 * ms).has_value()) << "a retransmitted reply counts once";
    EXPECT_EQ(s.stale_replies(), 3u);
    std::vector<uint32_t> expired;
    s.expired(900 * ms, expired);
    EXPECT_TRUE(expired.empty()) << "the probe was answered";
}

TEST(probe_scheduler, fails_an_unanswered_probe_once_when_the_next_is_due_and_refuses_a_reply_after_that)
{
    control::probe_scheduler s{1000 * ms, 300 * ms};
    const std::vector<uint32_t> ids{2};
    s.set_peers(ids, 0);
    std::vector<control::probe_due> out;
    s.due(0, out);
    std::vector<uint32_t> expired;
    s.expired(300 * ms, expired);
    EXPECT_TRUE(expired.empty()) << "past its timeout, but a reply may still come before the next probe";
    s.expired(999 * ms, expired);
    EXPECT_TRUE(expired.empty());
    s.expired(1000 * ms, expired);
    ASSERT_EQ(expired.size(), 1u) << "the next probe is due and nothing came: failed";
    EXPECT_EQ(expired[0], 2u);
    const uint32_t first = out[0].seq;
    out.clear();
    s.due(1000 * ms, out);
    ASSERT_EQ(out.size(), 1u);
    expired.clear();
    s.expired(1100 * ms, expired);
    EXPECT_TRUE(expired.empty()) << "one failure per probe";
    EXPECT_FALSE(s.on_reply(2, first, 1050 * ms).has_value()) << "after the next probe was sent: already a failure";
    EXPECT_EQ(s.stale_replies(), 1u);
}

TEST(probe_scheduler, a_reply_after_the_timeout_but_before_the_next_probe_is_late_not_failed)
{
    control::probe_scheduler s{1000 * ms, 300 * ms};
    const std::vector<uint32_t> ids{5};
    s.set_peers(ids, 0);
    std::vector<control::probe_due> out;
    s.due(0, out);
    std::vector<uint32_t> expired;
    s.expired(800 * ms, expired);
    const auto a = s.on_reply(5, out[0].seq, 800 * ms);
    ASSERT_TRUE(a.has_value()) << "a loaded machine handled it late: still the answer to this probe";
    EXPECT_TRUE(a->late);
    EXPECT_EQ(a->rtt_us, 800 * ms);
    s.expired(1000 * ms, expired);
    EXPECT_TRUE(expired.empty()) << "answered: nothing fails when the next probe goes out";
    EXPECT_EQ(s.stale_replies(), 0u);
}

TEST(probe_scheduler, each_probe_takes_the_timeout_it_is_given_at_most_the_interval)
{
    control::probe_scheduler s{1000 * ms, 300 * ms};
    const std::vector<uint32_t> ids{1};
    s.set_peers(ids, 0);
    std::vector<control::probe_due> out;
    s.due(0, out);
    s.set_timeout(1, 120 * ms);  // a learned no-answer timer shorter than the configured one
    auto a = s.on_reply(1, out[0].seq, 150 * ms);
    ASSERT_TRUE(a.has_value());
    EXPECT_TRUE(a->late) << "150 ms is past the 120 ms this probe was given";
    out.clear();
    s.due(1000 * ms, out);
    s.set_timeout(1, 5000 * ms);  // more than the interval: held to it
    a = s.on_reply(1, out[0].seq, 1990 * ms);
    ASSERT_TRUE(a.has_value());
    EXPECT_FALSE(a->late);
    out.clear();
    s.due(2000 * ms, out);
    ASSERT_EQ(out.size(), 1u);
    a = s.on_reply(1, out[0].seq, 2200 * ms);
    ASSERT_TRUE(a.has_value());
    EXPECT_FALSE(a->late) << "a new probe starts with the configured timeout again";
}

TEST(probe_scheduler, probe_now_sends_a_probed_peers_next_probe_early_unless_one_is_outstanding)
{
    control::probe_scheduler s{1000 * ms, 300 * ms};
    const std::vector<uint32_t> ids{3};
    s.set_peers(ids, 0);
    std::vector<control::probe_due> out;
    s.due(0, out);
    EXPECT_FALSE(s.probe_now(3, 100 * ms)) << "its probe is outstanding: its answer comes soon enough";
    ASSERT_TRUE(s.on_reply(3, out[0].seq, 10 * ms).has_value());
    EXPECT_TRUE(s.probe_now(3, 200 * ms));
    out.clear();
    s.due(200 * ms, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].id, 3u);
    EXPECT_FALSE(out[0].once);
    out.clear();
    s.due(1000 * ms, out);
    EXPECT_TRUE(out.empty()) << "the rhythm goes on from the early probe";
    s.due(1200 * ms, out);
    EXPECT_EQ(out.size(), 1u);
}

TEST(probe_scheduler, a_peer_not_probed_gets_one_off_probes_whose_reply_is_matched_and_never_fails)
{
    control::probe_scheduler s{1000 * ms, 300 * ms};
    const std::vector<uint32_t> probed{1};
    s.set_peers(probed, 0);
    std::vector<control::probe_due> out;
    s.due(0, out);
    out.clear();
    EXPECT_TRUE(s.probe_now(7, 50 * ms));
    EXPECT_FALSE(s.probe_now(7, 60 * ms)) << "asked twice before it went out: one probe";
    s.due(60 * ms, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].id, 7u);
    EXPECT_TRUE(out[0].once);
    EXPECT_FALSE(s.probed(7)) << "a one-off probe does not make it a probed peer";
    std::vector<uint32_t> expired;
    s.expired(5000 * ms, expired);
    for (uint32_t id : expired) EXPECT_NE(id, 7u) << "a one-off probe never fails";
    const auto a = s.on_reply(7, out[0].seq, 5000 * ms);
    ASSERT_TRUE(a.has_value());
    EXPECT_TRUE(a->once);
    EXPECT_FALSE(s.on_reply(7, out[0].seq, 5001 * ms).has_value()) << "counted once";
    out.clear();
    s.due(5002 * ms, out);
    for (const auto& d : out) EXPECT_NE(d.id, 7u) << "no rhythm for it";
}

TEST(probe_scheduler, a_peer_no_longer_probed_is_forgotten_and_others_keep_their_rhythm)
{
    control::probe_scheduler s{1000 * ms, 300 * ms};
    const std::vector<uint32_t> both{1, 2};
    s.set_peers(both, 0);
    std::vector<control::probe_due> out;
    s.due(600 * ms, out);
    ASSERT_EQ(out.size(), 2u);
    const std::vector<uint32_t> one{2};
    s.set_peers(one, 650 * ms);
    EXPECT_FALSE(s.probed(1));
    EXPECT_FALSE(s.on_reply(1, out[0].seq, 700 * ms).has_value());
    std::vector<uint32_t> expired;
    s.expired(2000 * ms, expired);
    ASSERT_EQ(expired.size(), 1u) << "only the peer still probed times out";
    EXPECT_EQ(expired[0], 2u);
    out.clear();
    s.due(1499 * ms, out);
    EXPECT_TRUE(out.empty()) << "peer 2 keeps its rhythm (next at 1500 ms), no extra probe on reload";
}

TEST(probe_text, is_a_valid_options_whose_branch_names_the_peer_and_sequence)
{
    std::array<char, 512> buf;
    control::probe_text_args a;
    a.local = endpoint::udp4(0xc6120001, 5060);  // 198.18.0.1
    a.peer = endpoint::udp4(0xc612010b, 5062);   // 198.18.1.11
    a.peer_id = 42;
    a.seq = 0x1234abcd;
    const std::size_t n = control::write_probe_options(buf, a);
    ASSERT_GT(n, 0u);
    const std::string_view text(buf.data(), n);
    auto m = std::make_unique<sip::message>();
    ASSERT_EQ(sip::parse(text, *m), sip::error::none) << text;
    EXPECT_EQ(m->req_method, sip::method::options);
    EXPECT_EQ(m->text(m->request_uri), "sip:198.18.1.11:5062");
    EXPECT_EQ(m->max_forwards, 70);
    EXPECT_EQ(m->cseq_method, sip::method::options);
    EXPECT_TRUE(m->has_content_length);
    EXPECT_EQ(m->content_length, 0u);
    ASSERT_TRUE(m->has_top_via);
    sip::probe_id id;
    ASSERT_TRUE(sip::read_probe_branch(m->text(m->top_via.branch), id));
    EXPECT_EQ(id.peer, 42u);
    EXPECT_EQ(id.seq, 0x1234abcdu);
    EXPECT_NE(text.find("Via: SIP/2.0/UDP 198.18.0.1:5060;"), std::string_view::npos) << text;
    EXPECT_FALSE(m->call_id().empty());
    EXPECT_EQ(control::write_probe_options(std::span<char>(buf.data(), 100), a), 0u) << "too small: nothing";
}

TEST(probe_text, to_a_tls_peer_names_the_fqdn_we_present_in_from_and_contact)
{
    std::array<char, 1024> buf;
    control::probe_text_args a;
    a.local = endpoint{ip_address::v4(0xc6120001), 5061, transport::tls, 0};
    a.peer = endpoint{ip_address::v4(0xc612010b), 5061, transport::tls, 0};
    a.peer_id = 7;
    a.seq = 1;
    a.fqdn = "sbc.example.net";
    const std::size_t n = control::write_probe_options(buf, a);
    ASSERT_GT(n, 0u);
    const std::string_view text(buf.data(), n);
    auto m = std::make_unique<sip::message>();
    ASSERT_EQ(sip::parse(text, *m), sip::error::none) << text;
    EXPECT_NE(text.find("Via: SIP/2.0/TLS 198.18.0.1:5061;"), std::string_view::npos) << text;
    EXPECT_NE(text.find("From: <sip:sbc@sbc.example.net:5061>;tag="), std::string_view::npos) << text;
    EXPECT_NE(text.find("Contact: <sip:sbc@sbc.example.net:5061;transport=tls>"), std::string_view::npos) << text;
    a.fqdn = {};
    const std::size_t n2 = control::write_probe_options(buf, a);
    EXPECT_NE(std::string_view(buf.data(), n2).find("Contact: <sip:sbc@198.18.0.1:5061;transport=tls>"),
              std::string_view::npos) << "no fqdn: our address";
}

TEST(probe_branch, other_branches_are_not_probes)
{
    sip::probe_id id;
    EXPECT_FALSE(sip::is_probe_branch("z9hG4bKsT0100000001000100"));
    EXPECT_FALSE(sip::read_probe_branch("z9hG4bKsP002a", id)) << "too short";
    EXPECT_FALSE(sip::read_probe_branch("z9hG4bKsP002a1234abcx", id)) << "not hex";
    char b[sip::branch_probe_len];
    sip::write_probe_branch(b, {4095, 7});
    ASSERT_TRUE(sip::read_probe_branch({b, sizeof b}, id));
    EXPECT_EQ(id.peer, 4095u);
    EXPECT_EQ(id.seq, 7u);
}
