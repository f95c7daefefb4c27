// Unit tests of OPTIONS scheduling (one probe per interval per peer, first probes spread,
// replies matched by sequence with their RTT, timeouts, late and foreign replies refused) and
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
    EXPECT_EQ(*rtt, 730u);
    EXPECT_FALSE(s.on_reply(1, out[0].seq, 12 * ms).has_value()) << "a retransmitted reply counts once";
    EXPECT_EQ(s.late_replies(), 3u);
    std::vector<uint32_t> expired;
    s.expired(900 * ms, expired);
    EXPECT_TRUE(expired.empty()) << "the probe was answered";
}

TEST(probe_scheduler, times_out_an_unanswered_probe_once_and_refuses_its_late_reply)
{
    control::probe_scheduler s{1000 * ms, 300 * ms};
    const std::vector<uint32_t> ids{2};
    s.set_peers(ids, 0);
    std::vector<control::probe_due> out;
    s.due(0, out);
    std::vector<uint32_t> expired;
    s.expired(299 * ms, expired);
    EXPECT_TRUE(expired.empty());
    s.expired(300 * ms, expired);
    ASSERT_EQ(expired.size(), 1u);
    EXPECT_EQ(expired[0], 2u);
    expired.clear();
    s.expired(400 * ms, expired);
    EXPECT_TRUE(expired.empty()) << "one timeout per probe";
    EXPECT_FALSE(s.on_reply(2, out[0].seq, 450 * ms).has_value()) << "too late: already a failure";
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
