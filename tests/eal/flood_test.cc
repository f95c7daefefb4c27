// Flood protection before SIP parsing through the production dataplane (process_burst on the
// test thread over net_ring ports): UDP SIP from unknown, untrusted and trusted sources against
// the per-source buckets and the deny list that the control core would publish
// (dataplane/flood_policy.h). What is dropped never enters the SIP stage (its stage counter),
// is never answered, and is counted by reason; an untrusted source over its rate, or sending
// malformed messages, is reported to the control core; a trusted one never is.
// Trunk 198.18.0.1:5060 allowing 198.18.0.0/24 (untrusted unless the test marks it trusted).
#include <memory>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "dataplane/counters.h"
#include "dataplane/events.h"
#include "dataplane/flood_policy.h"
#include "sip-fastpath/proxy.h"
#include "tests/eal/frame_builder.h"
#include "tests/eal/harness.h"

namespace sbc::test {
namespace {

namespace dp = sbc::dataplane;

constexpr uint32_t caller_ip = ipv4(198, 18, 0, 2);
constexpr uint32_t stranger_ip = ipv4(198, 51, 100, 7);
constexpr uint16_t sip_port = 5060;
constexpr mac caller_mac{0x02, 0, 0, 0, 0, 0x02};
constexpr mac gateway_mac{0x02, 0, 0, 0, 0, 0xfe};

constexpr uint16_t carrier_port = 5062;  ///< a second trunk, trusted, for 198.18.0.2 only

/// `own_burst`: the access trunk's own untrusted_trunk_burst ([[trunk]]); unset: [flood]'s.
std::shared_ptr<const sip::proxy_tables> tables(bool trusted_trunk, uint32_t own_burst = sip::trunk::from_flood)
{
    auto t = std::make_shared<sip::proxy_tables>();
    sip::trunk tr = access_trunk();
    tr.trusted = trusted_trunk;
    tr.untrusted_trunk_burst = own_burst;
    t->trunks.push_back(tr);
    sip::trunk carrier = access_trunk();
    carrier.name = "carrier";
    carrier.port = carrier_port;
    carrier.trusted = true;
    carrier.allow = {ip_prefix{ip_address::v4(caller_ip), 32}};
    t->trunks.push_back(carrier);
    t->index_peers();
    return t;
}

bytes sip_frame(const harness& h, const mac& l2src, uint32_t src, std::string_view text, uint16_t dport = sip_port)
{
    const bytes payload(text.begin(), text.end());
    return ethernet({h.our_mac(), l2src, 0}, ethertype_ipv4,
                    ipv4_packet({src, our_ip, proto_udp, 64, 0, 0x99, ip_flag_df},
                                udp_datagram(src, our_ip, sip_port, dport, payload)));
}

/// OPTIONS to the SBC itself: answered 200 by the proxy when it gets through.
std::string options(uint32_t src, int n)
{
    const std::string from = std::to_string(src >> 24) + "." + std::to_string((src >> 16) & 255) + "." +
                             std::to_string((src >> 8) & 255) + "." + std::to_string(src & 255);
    std::string s = "OPTIONS sip:198.18.0.1 SIP/2.0\r\n";
    s += "Via: SIP/2.0/UDP " + from + ":5060;branch=z9hG4bK-fl" + std::to_string(n) + "\r\n";
    s += "Max-Forwards: 70\r\n";
    s += "From: <sip:probe@" + from + ">;tag=f" + std::to_string(n) + "\r\n";
    s += "To: <sip:198.18.0.1>\r\n";
    s += "Call-ID: flood-" + std::to_string(n) + "@" + from + "\r\n";
    s += "CSeq: 1 OPTIONS\r\n";
    s += "Content-Length: 0\r\n\r\n";
    return s;
}

/// An INVITE whose CSeq names BYE: parsed, then rejected 400 by the proxy (malformed).
std::string bad_invite(int n)
{
    std::string s = "INVITE sip:+15551234@198.18.0.1 SIP/2.0\r\n";
    s += "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-bad" + std::to_string(n) + "\r\n";
    s += "Max-Forwards: 70\r\nFrom: <sip:alice@198.18.0.2>;tag=a1\r\nTo: <sip:+15551234@198.18.0.1>\r\n";
    s += "Call-ID: bad-" + std::to_string(n) + "@198.18.0.2\r\nCSeq: 1 BYE\r\nContent-Length: 0\r\n\r\n";
    return s;
}

class flood : public ::testing::Test {
protected:
    void start(bool trusted_trunk, dp::flood_limits limits, std::vector<ip_address> denied = {},
               uint32_t own_burst = sip::trunk::from_flood)
    {
        h_ = std::make_unique<harness>(2047, 1);
        ASSERT_TRUE(h_->ok()) << h_->error();
        h_->set_proxy(tables(trusted_trunk, own_burst));
        h_->runtime().shared->neighbours.insert(ip_address::v4(caller_ip), caller_mac, 0);
        h_->runtime().shared->neighbours.insert(ip_address::v4(stranger_ip), gateway_mac, 0);
        limits_ = limits;
        publish(std::move(denied));
    }
    /// What the control core does: the limits and the deny list, published under RCU.
    void publish(std::vector<ip_address> denied)
    {
        auto p = std::make_unique<dp::flood_policy>();
        p->limits = limits_;
        p->set_denied(denied);
        dp::publish_flood_policy(h_->runtime().shared->flood, std::move(p));
    }
    /// Sends `n` OPTIONS from `src` in one go, then lets the worker run.
    void send(const mac& l2, uint32_t src, int n, int first = 0)
    {
        for (int i = 0; i < n; ++i) ASSERT_TRUE(h_->receive(sip_frame(*h_, l2, src, options(src, first + i))));
        h_->poll();
    }
    uint64_t drops(dp::drop_reason r) { return h_->counters().drops[static_cast<std::size_t>(r)]; }
    uint64_t sip_stage() { return h_->counters().stage_packets[static_cast<std::size_t>(dp::stage::sip)]; }
    uint64_t ipv4_stage() { return h_->counters().stage_packets[static_cast<std::size_t>(dp::stage::ipv4)]; }
    uint64_t stat(sip::proxy_counter c) { return h_->worker().proxy->stats().get(c); }
    /// The source reports in the events posted so far.
    std::vector<dp::event> reports()
    {
        std::vector<dp::event> v;
        for (const auto& e : h_->take_events())
            if (e.kind == dp::event_kind::source_report) v.push_back(e);
        return v;
    }

    std::unique_ptr<harness> h_;
    dp::flood_limits limits_;
};

dp::flood_limits tight()
{
    dp::flood_limits l;
    l.trusted_rate = 1;
    l.trusted_burst = 6;
    l.untrusted_rate = 1;
    l.untrusted_burst = 4;
    l.unknown_rate = 1;
    l.unknown_burst = 3;
    l.deny_after_malformed = 3;
    return l;
}

TEST_F(flood, a_flood_from_an_unknown_source_is_dropped_before_the_sip_stage_and_never_answered)
{
    start(false, tight());
    send(gateway_mac, stranger_ip, 20);
    EXPECT_EQ(drops(dp::drop_reason::flood_unknown_source), 17u);
    EXPECT_EQ(sip_stage(), 3u) << "only the unknown sources' burst reaches the parser";
    EXPECT_EQ(stat(sip::proxy_counter::source_denied), 3u) << "and the proxy's own check still drops those";
    EXPECT_EQ(h_->take_sent().size(), 0u);
    EXPECT_TRUE(reports().empty()) << "unknown sources are dropped, not reported";
    EXPECT_EQ(h_->mbufs_in_use(), 0u);

    // The unknown sources' bucket is dry now: the next ones end in the first stage, before
    // the IPv4 and UDP stages (early_screen), under the same reason, and take no token.
    const uint64_t ipv4_before = ipv4_stage();
    send(gateway_mac, stranger_ip, 10, 20);
    EXPECT_EQ(drops(dp::drop_reason::flood_unknown_source), 27u);
    EXPECT_EQ(ipv4_stage(), ipv4_before) << "dropped in the first stage";
    EXPECT_EQ(sip_stage(), 3u);
    EXPECT_EQ(h_->take_sent().size(), 0u);
    EXPECT_EQ(h_->mbufs_in_use(), 0u);
}

TEST_F(flood, an_untrusted_source_over_its_rate_is_dropped_reported_and_then_denied)
{
    start(false, tight());
    send(caller_mac, caller_ip, 30);
    EXPECT_EQ(drops(dp::drop_reason::flood_rate_untrusted), 26u);
    EXPECT_EQ(sip_stage(), 4u);
    EXPECT_EQ(stat(sip::proxy_counter::options_answered), 4u) << "its burst is served";
    EXPECT_EQ(h_->take_sent().size(), 4u) << "what is dropped gets no answer";
    const auto r = reports();
    ASSERT_EQ(r.size(), 1u) << "one report, not one per dropped packet";
    EXPECT_EQ(r[0].ip, ip_address::v4(caller_ip));
    EXPECT_EQ(r[0].code, static_cast<uint16_t>(dp::deny_reason::rate));

    // The control core denies it: its next packets are dropped as denied, before parsing.
    publish({ip_address::v4(caller_ip)});
    const uint64_t before = sip_stage();
    send(caller_mac, caller_ip, 5, 100);
    EXPECT_EQ(drops(dp::drop_reason::flood_denied), 5u);
    EXPECT_EQ(sip_stage(), before);
    EXPECT_EQ(h_->take_sent().size(), 0u);
    EXPECT_EQ(h_->mbufs_in_use(), 0u);
}

TEST_F(flood, a_denied_source_is_dropped_from_its_first_packet_and_others_are_not)
{
    dp::flood_limits l;  // the defaults: nothing here comes near them
    start(false, l, {ip_address::v4(caller_ip)});
    const uint64_t ipv4_before = ipv4_stage();
    // In one burst: its SIP datagrams, then one to a port no trunk listens on, which the first
    // stage leaves to the UDP stage (a decision made for a source holds for that address and
    // port only).
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(h_->receive(sip_frame(*h_, caller_mac, caller_ip, options(caller_ip, i))));
    ASSERT_TRUE(h_->receive(sip_frame(*h_, caller_mac, caller_ip, options(caller_ip, 3), 5999)));
    h_->poll();
    EXPECT_EQ(drops(dp::drop_reason::flood_denied), 3u);
    EXPECT_EQ(ipv4_stage(), ipv4_before + 1) << "a denied source's SIP datagrams end in the first stage";
    EXPECT_EQ(sip_stage(), 0u);
    EXPECT_EQ(h_->take_sent().size(), 0u);
    constexpr uint32_t neighbour_ip = ipv4(198, 18, 0, 3);
    h_->runtime().shared->neighbours.insert(ip_address::v4(neighbour_ip), caller_mac, 0);
    send(caller_mac, neighbour_ip, 2);
    EXPECT_EQ(stat(sip::proxy_counter::options_answered), 2u) << "another allowed source still gets through";
    EXPECT_EQ(h_->take_sent().size(), 2u);
}

TEST_F(flood, the_first_stage_judges_each_datagram_by_its_own_trunk_within_one_burst)
{
    // 198.18.0.2 is denied: untrusted on the access trunk (dropped), trusted on the carrier
    // trunk (never denied). One burst to both in turn: the first stage keeps its last trunk
    // lookup, and must not take one trunk's answer for the other's port.
    dp::flood_limits l;
    start(false, l, {ip_address::v4(caller_ip)});
    for (int i = 0; i < 4; ++i)
        ASSERT_TRUE(
            h_->receive(sip_frame(*h_, caller_mac, caller_ip, options(caller_ip, i), i % 2 ? carrier_port : sip_port)));
    h_->poll();
    EXPECT_EQ(drops(dp::drop_reason::flood_denied), 2u) << "its datagrams to the untrusted trunk";
    EXPECT_EQ(stat(sip::proxy_counter::options_answered), 2u) << "its datagrams to the trusted trunk are served";
    EXPECT_EQ(h_->take_sent().size(), 2u);
    EXPECT_EQ(h_->mbufs_in_use(), 0u);
}

TEST_F(flood, a_trusted_source_over_its_rate_is_rate_limited_but_never_reported_nor_denied)
{
    // The trunk is trusted; even a stale deny entry for its source does not drop it.
    start(true, tight(), {ip_address::v4(caller_ip)});
    send(caller_mac, caller_ip, 20);
    EXPECT_EQ(drops(dp::drop_reason::flood_rate_trusted), 14u);
    EXPECT_EQ(drops(dp::drop_reason::flood_denied), 0u);
    EXPECT_EQ(sip_stage(), 6u);
    EXPECT_EQ(stat(sip::proxy_counter::options_answered), 6u);
    EXPECT_TRUE(reports().empty());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(h_->receive(sip_frame(*h_, caller_mac, caller_ip, bad_invite(i))));
    h_->poll();
    EXPECT_TRUE(reports().empty()) << "malformed messages from a trusted source are not reported either";
}

TEST_F(flood, an_untrusted_source_sending_malformed_messages_is_reported)
{
    start(false, tight());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(h_->receive(sip_frame(*h_, caller_mac, caller_ip, bad_invite(i))));
    h_->poll();
    EXPECT_EQ(stat(sip::proxy_counter::rejected), 3u);
    const auto r = reports();
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].ip, ip_address::v4(caller_ip));
    EXPECT_EQ(r[0].code, static_cast<uint16_t>(dp::deny_reason::malformed));
}

TEST_F(flood, forged_sources_of_an_untrusted_trunk_share_its_bucket_and_churn_no_table)
{
    // Each forged source is new, with a full bucket of its own: only the trunk's shared bucket
    // (untrusted_trunk_rate) stops them.
    dp::flood_limits l = tight();
    l.untrusted_trunk_rate = 1;
    l.untrusted_trunk_burst = 5;
    start(false, l);
    auto forged = [](int i) { return ipv4(198, 18, 0, static_cast<uint8_t>(100 + i)); };
    for (int i = 0; i < 30; ++i) h_->runtime().shared->neighbours.insert(ip_address::v4(forged(i)), caller_mac, 0);
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(h_->receive(sip_frame(*h_, caller_mac, forged(i), options(forged(i), i))));
    h_->poll();
    EXPECT_EQ(drops(dp::drop_reason::flood_rate_untrusted_trunk), 15u);
    EXPECT_EQ(drops(dp::drop_reason::flood_rate_untrusted), 0u) << "each source is within its own rate";
    EXPECT_EQ(sip_stage(), 5u) << "the trunk's burst is parsed, the rest is not";
    EXPECT_EQ(stat(sip::proxy_counter::options_answered), 5u);
    EXPECT_EQ(h_->take_sent().size(), 5u) << "what is dropped gets no answer";
    EXPECT_TRUE(reports().empty()) << "no forged source is reported: none is over its own rate";
    EXPECT_NE(h_->worker().guard->table.find(ip_address::v4(forged(4))), nullptr);
    EXPECT_EQ(h_->worker().guard->table.find(ip_address::v4(forged(5))), nullptr)
        << "a source dropped for its trunk takes no entry in the source table";

    // The trunk's bucket is dry: the next forged sources end in the first stage, same reason.
    const uint64_t ipv4_before = ipv4_stage();
    for (int i = 20; i < 30; ++i) ASSERT_TRUE(h_->receive(sip_frame(*h_, caller_mac, forged(i), options(forged(i), i))));
    h_->poll();
    EXPECT_EQ(drops(dp::drop_reason::flood_rate_untrusted_trunk), 25u);
    EXPECT_EQ(ipv4_stage(), ipv4_before) << "dropped in the first stage";
    EXPECT_EQ(sip_stage(), 5u);

    // The carrier's source on its trusted trunk is not in that bucket; on the untrusted trunk
    // it is (trust is the trunk's).
    send(caller_mac, caller_ip, 1, 100);
    EXPECT_EQ(drops(dp::drop_reason::flood_rate_untrusted_trunk), 26u);
    ASSERT_TRUE(h_->receive(sip_frame(*h_, caller_mac, caller_ip, options(caller_ip, 200), carrier_port)));
    ASSERT_TRUE(h_->receive(sip_frame(*h_, caller_mac, caller_ip, options(caller_ip, 201), carrier_port)));
    h_->poll();
    EXPECT_EQ(drops(dp::drop_reason::flood_rate_untrusted_trunk), 26u);
    EXPECT_EQ(stat(sip::proxy_counter::options_answered), 7u) << "the trusted trunk's messages are served";
    // By trunk (sbc_trunk_flood_dropped_total): every drop, in either stage, is the open trunk's.
    EXPECT_EQ(h_->worker().guard->untrusted_trunk_dropped[0].get(), 26u);
    EXPECT_EQ(h_->worker().guard->untrusted_trunk_dropped[1].get(), 0u);
    EXPECT_EQ(h_->mbufs_in_use(), 0u);
}

TEST_F(flood, a_trunk_with_its_own_untrusted_trunk_burst_is_held_to_it)
{
    // [flood] would let 8 through at once; the access trunk's own burst ([[trunk]]) is 3.
    dp::flood_limits l = tight();
    l.untrusted_trunk_rate = 1;
    l.untrusted_trunk_burst = 8;
    start(false, l, {}, 3);
    auto forged = [](int i) { return ipv4(198, 18, 0, static_cast<uint8_t>(100 + i)); };
    for (int i = 0; i < 12; ++i) h_->runtime().shared->neighbours.insert(ip_address::v4(forged(i)), caller_mac, 0);
    for (int i = 0; i < 12; ++i) ASSERT_TRUE(h_->receive(sip_frame(*h_, caller_mac, forged(i), options(forged(i), i))));
    h_->poll();
    EXPECT_EQ(stat(sip::proxy_counter::options_answered), 3u);
    EXPECT_EQ(drops(dp::drop_reason::flood_rate_untrusted_trunk), 9u);
    EXPECT_EQ(h_->worker().guard->untrusted_trunk_dropped[0].get(), 9u);
    EXPECT_EQ(h_->mbufs_in_use(), 0u);
}

TEST_F(flood, without_a_published_policy_nothing_is_screened)
{
    h_ = std::make_unique<harness>(2047, 1);
    ASSERT_TRUE(h_->ok()) << h_->error();
    h_->set_proxy(tables(false));
    h_->runtime().shared->neighbours.insert(ip_address::v4(caller_ip), caller_mac, 0);
    send(caller_mac, caller_ip, 30);
    EXPECT_EQ(sip_stage(), 30u);
    EXPECT_EQ(stat(sip::proxy_counter::options_answered), 30u);
}

}  // namespace
}  // namespace sbc::test
