// The media relay through the production dataplane (process_burst on the test thread over a
// net_ring port, media set up by start_media as sbcd does): table-driven packet cases, each
// a sequence of received RTP/RTCP frames and, per frame, the frame that must leave (compared
// byte for byte against one built independently, so every header and checksum is checked)
// or the relay drop it must count. One call: leg A (caller) offers 198.18.0.10:4000, leg B
// answers 198.18.0.20:6000; the SBC's media address is 198.18.0.1, ports 20000..20099.
#include <array>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dataplane/rtp_stage.h"
#include "rtp/relay.h"
#include "rtp/sdp.h"
#include "tests/eal/frame_builder.h"
#include "tests/eal/harness.h"

namespace sbc::test {
namespace {

namespace dp = sbc::dataplane;

constexpr uint32_t a_ip = ipv4(198, 18, 0, 10);
constexpr uint32_t a_nat_ip = ipv4(198, 18, 0, 99);  // where A's packets really come from
constexpr uint32_t b_ip = ipv4(198, 18, 0, 20);
constexpr mac a_mac{0x02, 0, 0, 0, 0, 0x10};
constexpr mac a_nat_mac{0x02, 0, 0, 0, 0, 0x99};
constexpr mac b_mac{0x02, 0, 0, 0, 0, 0x20};
constexpr uint64_t call_id = 0x1234;

std::string sdp(const char* ip, uint16_t port)
{
    return std::string("v=0\r\no=- 1 1 IN IP4 ") + ip + "\r\ns=-\r\nc=IN IP4 " + ip + "\r\nt=0 0\r\nm=audio " +
           std::to_string(port) + " RTP/AVP 0\r\n";
}

/// A G.711 RTP packet (12-byte header + 160 bytes) with sequence `seq`.
bytes rtp_packet(uint16_t seq, uint32_t ts = 0)
{
    bytes p = pattern(172, static_cast<uint8_t>(seq));
    p[0] = 0x80;
    p[1] = 0;  // PCMU
    p[2] = static_cast<uint8_t>(seq >> 8);
    p[3] = static_cast<uint8_t>(seq);
    for (int i = 0; i < 4; ++i) p[4 + i] = static_cast<uint8_t>(ts >> (24 - 8 * i));
    return p;
}

/// A minimal RTCP receiver report (8 bytes): V=2, PT=201.
bytes rtcp_packet() { return {0x80, 201, 0x00, 0x01, 0xde, 0xad, 0xbe, 0xef}; }

bytes frame(const mac& dst_mac, const mac& src_mac, uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport,
            const bytes& payload, uint16_t id = 0x4321)
{
    return ethernet({dst_mac, src_mac, 0}, ethertype_ipv4,
                    ipv4_packet({src, dst, proto_udp, 61, 0xb8, id, ip_flag_df}, udp_datagram(src, dst, sport, dport, payload)));
}

struct step {
    bytes input;
    std::optional<bytes> output;            ///< the frame that must leave
    std::optional<rtp::relay_drop> drop;    ///< or the drop counted
};

struct media_case {
    std::string name;
    rtp::latching mode = rtp::latching::symmetric;
    std::function<std::vector<step>(const mac& ours, uint16_t pa, uint16_t pb, dp::dataplane_runtime&)> steps;
};

class media_relay : public ::testing::Test {
protected:
    void start(rtp::latching mode)
    {
        h_ = std::make_unique<harness>();
        ASSERT_TRUE(h_->ok()) << h_->error();
        rtp::media_config c;
        c.enabled = true;
        c.addresses = {ip_address::v4(our_ip)};
        c.port_min = 20000;
        c.port_max = 20099;
        c.mode = mode;
        c.quarantine_ms = 5000;
        c.sessions_per_worker = 64;
        std::string err;
        ASSERT_TRUE(h_->set_media_egress(c, err)) << err;
        ASSERT_TRUE(dp::start_media(h_->runtime(), c, err)) << err;
        // B has never sent anything: the relay finds its MAC in the neighbour table.
        h_->runtime().shared->neighbours.insert(ip_address::v4(b_ip), b_mac, 1);
        pb_ = offer_answer(call_id, "198.18.0.10", 4000, "198.18.0.20", 6000, pa_);
    }
    /// Runs an offer from A and an answer from B through worker 0's media sessions; returns the
    /// port facing B and sets `pa` to the one facing A.
    uint16_t offer_answer(uint64_t call, const char* aip, uint16_t aport, const char* bip, uint16_t bport, uint16_t& pa)
    {
        auto& m = *h_->worker(0).media;
        std::array<char, 1024> out{};
        std::size_t len = 0;
        rtp::sdp s;
        EXPECT_EQ(m.rewrite_sdp(call, sip::media_leg::b, "application/sdp", sdp(aip, aport), out, len, 1),
                  sip::sdp_verdict::rewritten);
        EXPECT_TRUE(rtp::parse_sdp({out.data(), len}, s));
        const uint16_t pb = s.media[0].port;
        EXPECT_EQ(m.rewrite_sdp(call, sip::media_leg::a, "application/sdp", sdp(bip, bport), out, len, 1),
                  sip::sdp_verdict::rewritten);
        EXPECT_TRUE(rtp::parse_sdp({out.data(), len}, s));
        pa = s.media[0].port;
        return pb;
    }
    uint64_t drops(rtp::relay_drop r) { return h_->worker(0).media_counters.drops[static_cast<std::size_t>(r)].get(); }

    std::unique_ptr<harness> h_;
    uint16_t pa_ = 0, pb_ = 0;
};

std::vector<media_case> cases()
{
    std::vector<media_case> t;
    t.push_back({"relays_rtp_both_ways_with_rewritten_headers_and_correct_checksums", rtp::latching::symmetric,
                 [](const mac& ours, uint16_t pa, uint16_t pb, dp::dataplane_runtime&) {
                     const bytes p1 = rtp_packet(1), p2 = rtp_packet(7);
                     return std::vector<step>{
                         {frame(ours, a_mac, a_ip, 4000, our_ip, pa, p1), frame(b_mac, ours, our_ip, pb, b_ip, 6000, p1), {}},
                         {frame(ours, b_mac, b_ip, 6000, our_ip, pb, p2, 0x77), frame(a_mac, ours, our_ip, pa, a_ip, 4000, p2, 0x77), {}},
                     };
                 }});
    t.push_back({"symmetric_latching_sends_back_to_where_a_really_sends_from", rtp::latching::symmetric,
                 [](const mac& ours, uint16_t pa, uint16_t pb, dp::dataplane_runtime&) {
                     const bytes p1 = rtp_packet(1), p2 = rtp_packet(2);
                     return std::vector<step>{
                         {frame(ours, a_nat_mac, a_nat_ip, 31000, our_ip, pa, p1), frame(b_mac, ours, our_ip, pb, b_ip, 6000, p1), {}},
                         {frame(ours, b_mac, b_ip, 6000, our_ip, pb, p2), frame(a_nat_mac, ours, our_ip, pa, a_nat_ip, 31000, p2), {}},
                         // once latched, another source on A's port is refused
                         {frame(ours, a_mac, a_ip, 4000, our_ip, pa, p1), {}, rtp::relay_drop::source_mismatch},
                     };
                 }});
    t.push_back({"strict_mode_accepts_only_the_sdp_address", rtp::latching::strict,
                 [](const mac& ours, uint16_t pa, uint16_t pb, dp::dataplane_runtime&) {
                     const bytes p1 = rtp_packet(1);
                     return std::vector<step>{
                         {frame(ours, a_nat_mac, a_nat_ip, 31000, our_ip, pa, p1), {}, rtp::relay_drop::source_mismatch},
                         {frame(ours, a_mac, a_ip, 4000, our_ip, pa, p1), frame(b_mac, ours, our_ip, pb, b_ip, 6000, p1), {}},
                     };
                 }});
    t.push_back({"relays_rtcp_between_the_odd_ports", rtp::latching::symmetric,
                 [](const mac& ours, uint16_t pa, uint16_t pb, dp::dataplane_runtime&) {
                     const bytes r = rtcp_packet();
                     return std::vector<step>{
                         {frame(ours, a_mac, a_ip, 4001, our_ip, static_cast<uint16_t>(pa + 1), r),
                          frame(b_mac, ours, our_ip, static_cast<uint16_t>(pb + 1), b_ip, 6001, r), {}},
                     };
                 }});
    t.push_back({"drops_media_to_a_port_without_a_call", rtp::latching::symmetric,
                 [](const mac& ours, uint16_t, uint16_t, dp::dataplane_runtime&) {
                     return std::vector<step>{
                         {frame(ours, a_mac, a_ip, 4000, our_ip, 20090, rtp_packet(1)), {}, rtp::relay_drop::unknown_port},
                     };
                 }});
    t.push_back({"drops_a_datagram_too_short_for_rtp", rtp::latching::symmetric,
                 [](const mac& ours, uint16_t pa, uint16_t, dp::dataplane_runtime&) {
                     return std::vector<step>{
                         {frame(ours, a_mac, a_ip, 4000, our_ip, pa, bytes{0x80, 0, 0, 1}), {}, rtp::relay_drop::too_short},
                     };
                 }});
    t.push_back({"the_flow_is_gone_after_teardown", rtp::latching::symmetric,
                 [](const mac& ours, uint16_t pa, uint16_t pb, dp::dataplane_runtime& rt) {
                     rt.workers[0]->media->call_ended(call_id, 10);
                     return std::vector<step>{
                         {frame(ours, a_mac, a_ip, 4000, our_ip, pa, rtp_packet(1)), {}, rtp::relay_drop::unknown_port},
                         {frame(ours, b_mac, b_ip, 6000, our_ip, pb, rtp_packet(1)), {}, rtp::relay_drop::unknown_port},
                     };
                 }});
    return t;
}

TEST_F(media_relay, packet_cases)
{
    for (const auto& c : cases()) {
        SCOPED_TRACE(c.name);
        start(c.mode);
        if (HasFatalFailure()) return;
        const auto steps = c.steps(h_->our_mac(), pa_, pb_, h_->runtime());
        for (std::size_t i = 0; i < steps.size(); ++i) {
            SCOPED_TRACE("frame " + std::to_string(i));
            const step& s = steps[i];
            std::array<uint64_t, rtp::relay_drop_count> before{};
            for (std::size_t r = 0; r < before.size(); ++r) before[r] = drops(static_cast<rtp::relay_drop>(r));
            ASSERT_TRUE(h_->receive(s.input));
            h_->poll();
            sent_frames sent = h_->take_sent();
            if (s.output) {
                ASSERT_EQ(sent.size(), 1u);
                EXPECT_EQ(linear_bytes(sent.mbufs[0]), *s.output);
                // Independent checksum checks: 0 when right.
                const bytes out = linear_bytes(sent.mbufs[0]);
                const std::span<const uint8_t> ip(out.data() + 14, out.size() - 14);
                EXPECT_EQ(internet_checksum(ip.subspan(0, 20)), 0);
                EXPECT_EQ(udp_checksum(read32(ip, 12), read32(ip, 16), ip.subspan(20)), 0);
            } else {
                EXPECT_EQ(sent.size(), 0u);
            }
            for (std::size_t r = 0; r < before.size(); ++r) {
                const auto reason = static_cast<rtp::relay_drop>(r);
                EXPECT_EQ(drops(reason) - before[r], s.drop && *s.drop == reason ? 1u : 0u) << rtp::relay_drop_name(reason);
            }
        }
        h_.reset();
    }
}

TEST_F(media_relay, counts_packets_bytes_and_loss_per_direction)
{
    start(rtp::latching::symmetric);
    if (HasFatalFailure()) return;
    const mac ours = h_->our_mac();
    // A sends sequence 1..10 without 4 and 5; B sends 3 packets.
    for (uint16_t seq = 1; seq <= 10; ++seq)
        if (seq != 4 && seq != 5) {
            ASSERT_TRUE(h_->receive(frame(ours, a_mac, a_ip, 4000, our_ip, pa_, rtp_packet(seq, seq * 160u))));
        }
    for (uint16_t seq = 100; seq < 103; ++seq)
        ASSERT_TRUE(h_->receive(frame(ours, b_mac, b_ip, 6000, our_ip, pb_, rtp_packet(seq, seq * 160u))));
    h_->poll();
    EXPECT_EQ(h_->take_sent().size(), 11u);
    const auto& rc = h_->worker(0).media_counters;
    EXPECT_EQ(rc.packets[0].get(), 8u);
    EXPECT_EQ(rc.packets[1].get(), 3u);
    EXPECT_EQ(rc.bytes[0].get(), 8u * 172);
    const auto calls = h_->worker(0).media->calls();
    ASSERT_EQ(calls.size(), 1u);
    ASSERT_EQ(calls[0].streams.size(), 1u);
    const auto& from_a = calls[0].streams[0].rtp[0];
    EXPECT_EQ(from_a.packets, 8u);
    EXPECT_EQ(from_a.lost, 2u);
    EXPECT_EQ(from_a.local.port, pa_);
    EXPECT_TRUE(from_a.latched);
    EXPECT_EQ(calls[0].streams[0].rtp[1].packets, 3u);
    EXPECT_EQ(calls[0].streams[0].rtp[1].lost, 0u);
    // What the call's record gets (media_hook::call_figures): the same flows, with the payload
    // type of the first packet the relay saw from each side (PCMU, 0; 255 would mean none).
    std::array<sbc::cdr_media, 2> fig{};
    ASSERT_TRUE(h_->worker(0).media->call_figures(calls[0].call, fig));
    EXPECT_EQ(fig[0].packets, 8u);
    EXPECT_EQ(fig[0].bytes, 8u * 172);
    EXPECT_EQ(fig[0].lost, 2u);
    EXPECT_EQ(fig[0].payload_type, 0);
    EXPECT_EQ(fig[1].packets, 3u);
    EXPECT_EQ(fig[1].payload_type, 0);
}

TEST_F(media_relay, ports_of_an_ended_call_stay_quarantined)
{
    start(rtp::latching::symmetric);
    if (HasFatalFailure()) return;
    auto& m = *h_->worker(0).media;
    m.call_ended(call_id, 100);
    // Every other pair of worker 0 can be handed out; the two quarantined ones cannot.
    std::set<uint16_t> seen;
    std::array<char, 1024> out{};
    std::size_t len = 0;
    for (uint64_t call = 1; call < 40; ++call) {
        for (auto leg : {sip::media_leg::b, sip::media_leg::a}) {
            if (m.rewrite_sdp(call + 1000, leg, "application/sdp", sdp("198.18.0.11", 4000), out, len, 200) !=
                sip::sdp_verdict::rewritten)
                break;
            rtp::sdp s;
            ASSERT_TRUE(rtp::parse_sdp({out.data(), len}, s));
            seen.insert(s.media[0].port);
        }
    }
    EXPECT_EQ(seen.count(pa_), 0u);
    EXPECT_EQ(seen.count(pb_), 0u);
    EXPECT_EQ(seen.size(), 48u);  // 50 pairs in 20000..20099, minus the 2 in quarantine
    // A late packet to the old port is dropped, not relayed into another call.
    ASSERT_TRUE(h_->receive(frame(h_->our_mac(), a_mac, a_ip, 4000, our_ip, pa_, rtp_packet(1))));
    h_->poll();
    EXPECT_EQ(h_->take_sent().size(), 0u);
}

}  // namespace
}  // namespace sbc::test
