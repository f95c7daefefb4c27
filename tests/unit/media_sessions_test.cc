// Per-worker media sessions (rtp/media.h) over a real flow table: ports facing each leg,
// the far ends learned from SDP, teardown, port quarantine, the inactivity report, and the
// RFC 3550 loss and jitter arithmetic. Unit tier, no EAL.
#include <gtest/gtest.h>

#include <array>
#include <set>
#include <string>

#include "rtp/media.h"
#include "rtp/sdp.h"

namespace sbc::rtp {
namespace {

constexpr uint32_t sbc_ip = 0xc6130001;  // 198.19.0.1

std::string sdp_body(const char* ip, uint16_t port)
{
    return std::string("v=0\r\no=- 1 1 IN IP4 ") + ip + "\r\ns=-\r\nc=IN IP4 " + ip + "\r\nt=0 0\r\nm=audio " +
           std::to_string(port) + " RTP/AVP 0\r\na=sendrecv\r\n";
}

struct fixture {
    flow_table table;
    media_config cfg;
    media_sessions m;

    explicit fixture(uint32_t quarantine_ms = 5000, uint32_t timeout_s = 60, uint16_t port_max = 20099)
        : table(flow_table_config{{sbc_ip}, 20000, port_max, 2}),
          cfg(make_cfg(quarantine_ms, timeout_s)),
          m(table, 0, cfg)
    {
    }
    static media_config make_cfg(uint32_t q, uint32_t t)
    {
        media_config c;
        c.enabled = true;
        c.addresses = {ip_address::v4(sbc_ip)};
        c.quarantine_ms = q;
        c.inactivity_timeout_s = t;
        c.sessions_per_worker = 64;
        return c;
    }
    /// Rewrites `body` for leg `to`; returns the port the rewritten m-line carries (0: unchanged).
    uint16_t pass(uint64_t call, sip::media_leg to, const std::string& body, uint64_t now = 1000,
                  sip::sdp_verdict want = sip::sdp_verdict::rewritten)
    {
        std::array<char, 2048> out{};
        std::size_t len = 0;
        const auto v = m.rewrite_sdp(call, to, "application/sdp", body, out, len, now);
        EXPECT_EQ(v, want);
        if (v != sip::sdp_verdict::rewritten) return 0;
        sdp s;
        EXPECT_TRUE(parse_sdp({out.data(), len}, s));
        EXPECT_EQ(s.c_ip, sbc_ip);
        return s.media[0].port;
    }
};

TEST(media_sessions, offer_and_answer_get_our_ports_facing_each_leg_and_the_table_knows_both)
{
    fixture f;
    const uint16_t to_b = f.pass(7, sip::media_leg::b, sdp_body("198.18.0.10", 4000));
    const uint16_t to_a = f.pass(7, sip::media_leg::a, sdp_body("198.18.1.10", 6000));
    ASSERT_NE(to_b, 0);
    ASSERT_NE(to_a, 0);
    EXPECT_NE(to_a, to_b);
    EXPECT_EQ(to_a % 2, 0);
    EXPECT_EQ(to_b % 2, 0);
    // Worker 0 of 2 owns the lower half of 20000..20099.
    EXPECT_EQ(f.table.owner_of(to_a), 0);
    EXPECT_EQ(f.table.owner_of(to_b), 0);
    // Packets from A arrive on the port A was given (to_a) and go to B's SDP address.
    const flow_ref from_a = f.table.lookup(0, to_a);
    ASSERT_TRUE(from_a.found());
    EXPECT_EQ(from_a.side, 0);
    EXPECT_EQ(from_a.rtcp, 0);
    const media_stream& st = f.table.stream(from_a.stream);
    EXPECT_EQ(far_ip(st.far[1][0].load()), 0xc612010au);
    EXPECT_EQ(far_port(st.far[1][0].load()), 6000);
    EXPECT_EQ(far_port(st.far[0][1].load()), 4001);  // A's RTCP: RTP + 1
    const flow_ref from_b = f.table.lookup(0, to_b);
    ASSERT_TRUE(from_b.found());
    EXPECT_EQ(from_b.stream, from_a.stream);
    EXPECT_EQ(from_b.side, 1);
    EXPECT_TRUE(f.table.lookup(0, static_cast<uint16_t>(to_b + 1)).rtcp);
    // A retransmitted or repeated offer keeps the same ports.
    EXPECT_EQ(f.pass(7, sip::media_leg::b, sdp_body("198.18.0.10", 4000)), to_b);
    EXPECT_EQ(f.m.summary().sessions_active, 1u);
}

TEST(media_sessions, bodies_that_are_not_sdp_pass_unchanged_and_allocate_nothing)
{
    fixture f;
    std::array<char, 256> out{};
    std::size_t len = 0;
    EXPECT_EQ(f.m.rewrite_sdp(1, sip::media_leg::b, "text/plain", sdp_body("1.2.3.4", 4000), out, len, 0),
              sip::sdp_verdict::unchanged);
    EXPECT_EQ(f.m.rewrite_sdp(1, sip::media_leg::b, "application/sdp", "garbage", out, len, 0),
              sip::sdp_verdict::unchanged);
    EXPECT_EQ(f.m.summary().sessions_active, 0u);
    EXPECT_EQ(f.m.summary().counters[static_cast<std::size_t>(media_counter::sdp_unparsable)], 1u);
}

TEST(media_sessions, teardown_removes_the_flows_and_ports_come_back_only_after_quarantine)
{
    // 20000..20007 over 2 workers: worker 0 has 2 pairs, exactly one call's worth.
    fixture f(5000, 60, 20007);
    const uint16_t to_b = f.pass(1, sip::media_leg::b, sdp_body("198.18.0.10", 4000), 1000);
    const uint16_t to_a = f.pass(1, sip::media_leg::a, sdp_body("198.18.1.10", 6000), 1000);
    EXPECT_EQ(f.m.ports().free_count(), 0u);
    // A second call finds no ports: refused, not half set up.
    f.pass(2, sip::media_leg::b, sdp_body("198.18.0.11", 4000), 1000, sip::sdp_verdict::refused);
    EXPECT_EQ(f.m.summary().counters[static_cast<std::size_t>(media_counter::no_ports)], 1u);
    f.m.call_ended(1, 2000);
    EXPECT_FALSE(f.table.lookup(0, to_a).found());
    EXPECT_FALSE(f.table.lookup(0, to_b).found());
    EXPECT_FALSE(f.table.lookup(0, static_cast<uint16_t>(to_a + 1)).found());
    EXPECT_EQ(f.m.ports().quarantined(), 2u);
    f.m.tick(6999);  // 4999 ms after teardown: still quarantined
    f.pass(3, sip::media_leg::b, sdp_body("198.18.0.12", 4000), 6999, sip::sdp_verdict::refused);
    f.m.tick(7000);
    EXPECT_EQ(f.m.ports().free_count(), 2u);
    EXPECT_NE(f.pass(4, sip::media_leg::b, sdp_body("198.18.0.12", 4000), 7000), 0);
}

TEST(media_sessions, a_call_whose_media_stops_is_reported_after_the_timeout_until_it_ends)
{
    fixture f(5000, 2);
    f.pass(9, sip::media_leg::b, sdp_body("198.18.0.10", 4000), 1000);
    std::array<uint64_t, 4> calls{};
    uint32_t n = 0;
    for (uint64_t t = 1001; t < 2999; t += 50) n += f.m.silent_calls(t, calls);
    EXPECT_EQ(n, 0u);
    // Media arrives at 2500 (as the relay records it): the deadline moves to 4500.
    const flow_ref r = f.table.lookup(0, 20000);  // the first pair taken: facing A
    ASSERT_TRUE(r.found());
    const media_stream& st = f.table.stream(r.stream);
    f.table.stats(st.addr[0], st.port[0]).last_ms.set(2500);
    for (uint64_t t = 2999; t < 4499; t += 50) n += f.m.silent_calls(t, calls);
    EXPECT_EQ(n, 0u);
    for (uint64_t t = 4499; t < 4700 && n == 0; t += 10) n += f.m.silent_calls(t, calls);
    ASSERT_EQ(n, 1u);
    EXPECT_EQ(calls[0], 9u);
    // Not ended (a call still ringing): reported again after another timeout, counted once.
    for (uint64_t t = 4700; t < 6800 && n == 1; t += 10) n += f.m.silent_calls(t, calls);
    EXPECT_EQ(n, 2u);
    EXPECT_EQ(f.m.summary().counters[static_cast<std::size_t>(media_counter::sessions_silent)], 1u);
    // Ended: never again.
    f.m.call_ended(9, 6800);
    for (uint64_t t = 6800; t < 12000; t += 100) n += f.m.silent_calls(t, calls);
    EXPECT_EQ(n, 2u);
}

TEST(media_sessions, an_ended_call_adds_its_packets_loss_and_jitter_to_the_node_figures)
{
    fixture f;
    f.pass(5, sip::media_leg::b, sdp_body("198.18.0.10", 4000), 1000);
    f.pass(5, sip::media_leg::a, sdp_body("198.18.1.10", 6000), 1000);
    const flow_ref r = f.table.lookup(0, 20000);
    ASSERT_TRUE(r.found());
    const media_stream& st = f.table.stream(r.stream);
    // From A: 500 packets, 5 lost, 3 ms of jitter (24 units of 8 kHz, << 4 as RFC 3550 A.8 keeps it).
    flow_stats& a = f.table.stats(st.addr[0], st.port[0]);
    a.packets.set(500);
    a.lost.set(5);
    a.jitter.set(24 << 4);
    // From B: 400 packets, none lost, 0.5 ms.
    flow_stats& b = f.table.stats(st.addr[1], st.port[1]);
    b.packets.set(400);
    b.jitter.set(4 << 4);
    // A call with no packets at all adds nothing to the histogram.
    f.pass(6, sip::media_leg::b, sdp_body("198.18.0.11", 4000), 1000);
    f.m.call_ended(6, 1500);
    EXPECT_EQ(f.m.summary().jitter_flows, (std::array<uint64_t, jitter_buckets>{}));

    f.m.call_ended(5, 2000);
    const media_summary s = f.m.summary();
    EXPECT_EQ(s.counters[static_cast<std::size_t>(media_counter::ended_rtp_packets)], 900u);
    EXPECT_EQ(s.counters[static_cast<std::size_t>(media_counter::ended_rtp_lost)], 5u);
    // 0.5 ms in the first bucket (<= 1 ms), 3 ms in the third (<= 5 ms).
    std::array<uint64_t, jitter_buckets> want{};
    want[0] = 1;
    want[2] = 1;
    EXPECT_EQ(s.jitter_flows, want);
    EXPECT_EQ(s.jitter_sum_us, 3500u);
}

TEST(rtp_stats, counts_sequence_gaps_as_loss_across_a_wrap)
{
    flow_stats s;
    uint32_t ts = 0;
    for (uint32_t seq = 65530; seq < 65550; ++seq) {
        if (seq == 65534 || seq == 65537 || seq == 65538) continue;  // three lost, one before the wrap
        rtp_account(s, static_cast<uint16_t>(seq), ts, ts + 1000);
        ts += 160;
    }
    EXPECT_EQ(s.lost.get(), 3u);
}

TEST(rtp_stats, jitter_follows_rfc3550_for_regular_and_irregular_arrivals)
{
    flow_stats even;
    for (uint32_t i = 0; i < 50; ++i) rtp_account(even, static_cast<uint16_t>(i), i * 160, 5000 + i * 160);
    EXPECT_EQ(even.jitter.get(), 0u);
    // Every packet 80 units late or early in turn: |D| = 80 each time after the first, and
    // J converges to 80 (J += (|D| - J) / 16).
    flow_stats alt;
    for (uint32_t i = 0; i < 400; ++i)
        rtp_account(alt, static_cast<uint16_t>(i), i * 160, 5000 + i * 160 + (i % 2 ? 40 : -40));
    EXPECT_NEAR(alt.jitter.get() / 16.0, 80.0, 1.0);
}

}  // namespace
}  // namespace sbc::rtp
