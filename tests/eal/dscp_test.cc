// DSCP on what sbcd sends, through the production code on a net_ring port: SIP the workers
// send (a call's INVITE and 100 Trying), SIP framed for the control core's probes and large
// SIP as IPv4 fragments carry the interface's dscp_sip in their TOS byte (0x60, CS3, by
// default); relayed RTP and RTCP carry its dscp_rtp (0xb8, EF, by default) whatever the
// sender marked. Every IPv4 header checksum (and UDP checksum) is checked independently.
// A non-default value shows too. Interface 0 is 198.18.0.1/24 (tests/eal/harness.h).
#include <array>
#include <string>

#include <gtest/gtest.h>

#include "control/snapshot_build.h"
#include "dataplane/rtp_stage.h"
#include "dataplane/udp_fragment.h"
#include "dataplane/udp_frame.h"
#include "rtp/sdp.h"
#include "tests/eal/frame_builder.h"
#include "tests/eal/harness.h"

namespace sbc::test {
namespace {

namespace dp = sbc::dataplane;

constexpr uint32_t caller_ip = ipv4(198, 18, 0, 2);
constexpr uint32_t callee_ip = ipv4(198, 18, 0, 11);
constexpr mac caller_mac{0x02, 0, 0, 0, 0, 0x02};
constexpr mac callee_mac{0x02, 0, 0, 0, 0, 0x11};
constexpr uint8_t cs3 = 0x60, ef = 0xb8, af41 = 0x88, cs5 = 0xa0;

/// Republishes the snapshot with interface 0's TOS bytes changed, as a reload of dscp_sip and
/// dscp_rtp does; with `media`, the media egress is rebuilt from it as build_snapshot does.
void set_tos(harness& h, uint8_t sip, uint8_t rtp, const rtp::media_config* media = nullptr)
{
    const dp::snapshot& cur = *h.runtime().shared->snap.current;
    auto snap = std::make_unique<dp::snapshot>();
    snap->generation = cur.generation + 1;
    snap->interfaces = cur.interfaces;
    snap->interfaces[0].tos_sip = sip;
    snap->interfaces[0].tos_rtp = rtp;
    snap->proxy = cur.proxy;
    snap->media_egress = cur.media_egress;
    snap->index_interfaces();
    std::string err;
    if (media != nullptr) {
        ASSERT_TRUE(dp::media_egress_of(*media, snap->interfaces, h.runtime().ports, snap->media_egress, err)) << err;
    }
    control::publish_snapshot(h.runtime().shared->snap, std::move(snap));
}

/// Checks one sent IPv4 frame (untagged): its TOS byte and every checksum.
void expect_marked(const bytes& f, uint8_t tos)
{
    ASSERT_GE(f.size(), 14u + 20u);
    ASSERT_EQ(read16(f, 12), ethertype_ipv4);
    const std::span<const uint8_t> ip(f.data() + 14, f.size() - 14);
    EXPECT_EQ(ip[1], tos) << "TOS byte";
    EXPECT_EQ(internet_checksum(ip.first(20)), 0) << "IPv4 header checksum";
    const bool first = (read16(ip, 6) & 0x1fff) == 0, more = (read16(ip, 6) & 0x2000) != 0;
    if (ip[9] == proto_udp && first && !more) {
        EXPECT_EQ(udp_checksum(read32(ip, 12), read32(ip, 16), ip.subspan(20)), 0) << "UDP checksum";
    }
}

std::shared_ptr<const sip::proxy_tables> tables()
{
    auto t = std::make_shared<sip::proxy_tables>();
    t->trunks.push_back(access_trunk());
    sip::peer p;
    p.name = "r1/callee";
    p.id = 0;
    p.address = ip_address::v4(callee_ip);
    p.port = 5060;
    p.weight = 10;
    t->peers.push_back(p);
    t->index_peers();
    t->regions.push_back({"r1", {0}});
    t->groups.push_back({"g1", {0}, sip::selector::srv});
    t->routes.push_back({"default", sip::match_field::ruri_user, ".*", 0});
    t->default_route = 0;
    return t;
}

std::string invite(const std::string& call_id)
{
    return "INVITE sip:+15551234@198.18.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-" + call_id +
           "\r\nMax-Forwards: 70\r\nFrom: <sip:alice@198.18.0.2>;tag=a1\r\nTo: <sip:+15551234@198.18.0.1>\r\n"
           "Call-ID: " + call_id + "\r\nCSeq: 1 INVITE\r\nContact: <sip:alice@198.18.0.2:5060>\r\n"
           "Content-Length: 0\r\n\r\n";
}

bytes sip_in(const harness& h, const std::string& text, uint8_t tos)
{
    const bytes payload(text.begin(), text.end());
    return ethernet({h.our_mac(), caller_mac, 0}, ethertype_ipv4,
                    ipv4_packet({caller_ip, our_ip, proto_udp, 64, tos, 0x99, ip_flag_df},
                                udp_datagram(caller_ip, our_ip, 5060, 5060, payload)));
}

TEST(dscp, sip_a_worker_sends_carries_cs3_and_then_the_configured_value)
{
    harness h;
    ASSERT_TRUE(h.ok()) << h.error();
    h.set_proxy(tables());
    h.runtime().shared->neighbours.insert(ip_address::v4(caller_ip), caller_mac, 1);
    h.runtime().shared->neighbours.insert(ip_address::v4(callee_ip), callee_mac, 1);
    h.poll_worker();
    struct step {
        uint8_t want;
        const char* call;
    };
    for (const step& s : {step{cs3, "dscp-1"}, step{af41, "dscp-2"}}) {
        SCOPED_TRACE(s.call);
        if (s.want != cs3) set_tos(h, s.want, ef);
        ASSERT_TRUE(h.receive(sip_in(h, invite(s.call), 0)));  // the caller marked nothing
        h.poll();
        const sent_frames f = h.take_sent();
        ASSERT_EQ(f.size(), 2u) << "100 Trying to the caller and the INVITE to the callee";
        for (auto* m : f.mbufs) expect_marked(linear_bytes(m), s.want);
    }
}

TEST(dscp, sip_framed_for_probes_and_as_fragments_carries_the_interface_value)
{
    harness h;
    ASSERT_TRUE(h.ok()) << h.error();
    dp::interface_info ifc = h.runtime().shared->snap.current->interfaces[0];
    const endpoint src = endpoint::udp4(our_ip, 5060), dst = endpoint::udp4(callee_ip, 5060);
    for (uint8_t tos : {cs3, cs5}) {
        SCOPED_TRACE(static_cast<int>(tos));
        ifc.tos_sip = tos;
        // One datagram, as control/probe_send.cc frames an OPTIONS probe.
        rte_mbuf* m = rte_pktmbuf_alloc(h.worker().pool);
        ASSERT_NE(m, nullptr);
        ASSERT_TRUE(dp::frame_udp4(m, ifc, callee_mac.data(), src, dst, "OPTIONS sip:x SIP/2.0\r\n\r\n", 7));
        expect_marked(linear_bytes(m), tos);
        rte_pktmbuf_free(m);
        // A datagram over the MTU: every fragment.
        const std::string big(4000, 'x');
        std::array<rte_mbuf*, dp::max_fragments> frags;
        uint32_t n = 0;
        ASSERT_EQ(dp::frame_udp4_fragments(h.worker().pool, ifc, callee_mac.data(), src, dst, big, 9, 1500, frags, n),
                  dp::fragment_result::ok);
        ASSERT_EQ(n, 3u);
        for (uint32_t i = 0; i < n; ++i) expect_marked(linear_bytes(frags[i]), tos);
        rte_pktmbuf_free_bulk(frags.data(), n);
    }
    EXPECT_EQ(h.mbufs_in_use(), 0u);
}

// --- relayed media

bytes rtp_frame(const mac& dst_mac, const mac& src_mac, uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport,
                uint8_t tos, bool rtcp = false)
{
    bytes p = pattern(rtcp ? 8 : 172, 3);
    p[0] = 0x80;
    p[1] = rtcp ? 201 : 0;
    return ethernet({dst_mac, src_mac, 0}, ethertype_ipv4,
                    ipv4_packet({src, dst, proto_udp, 61, tos, 0x4321, ip_flag_df}, udp_datagram(src, dst, sport, dport, p)));
}

std::string sdp(const char* ip, uint16_t port)
{
    return std::string("v=0\r\no=- 1 1 IN IP4 ") + ip + "\r\ns=-\r\nc=IN IP4 " + ip + "\r\nt=0 0\r\nm=audio " +
           std::to_string(port) + " RTP/AVP 0\r\n";
}

/// The [media] of these tests: interface 0's address, ports 20000..20099.
rtp::media_config media_on_interface_0()
{
    rtp::media_config c;
    c.enabled = true;
    c.addresses = {ip_address::v4(our_ip)};
    c.port_min = 20000;
    c.port_max = 20099;
    c.sessions_per_worker = 64;
    return c;
}

/// Sets up media on interface 0 (with `tos_rtp` there) and one call between caller_ip:4000
/// and callee_ip:6000; returns the SBC's ports facing the caller (pa) and the callee (pb).
void media_call(harness& h, uint8_t tos_rtp, uint16_t& pa, uint16_t& pb)
{
    const rtp::media_config c = media_on_interface_0();
    set_tos(h, cs3, tos_rtp, &c);
    if (::testing::Test::HasFatalFailure()) return;
    std::string err;
    ASSERT_TRUE(dp::start_media(h.runtime(), c, err)) << err;
    h.runtime().shared->neighbours.insert(ip_address::v4(callee_ip), callee_mac, 1);
    auto& m = *h.worker(0).media;
    std::array<char, 1024> out{};
    std::size_t len = 0;
    rtp::sdp s;
    ASSERT_EQ(m.rewrite_sdp(1, sip::media_leg::b, "application/sdp", sdp("198.18.0.2", 4000), out, len, 1),
              sip::sdp_verdict::rewritten);
    ASSERT_TRUE(rtp::parse_sdp({out.data(), len}, s));
    pb = s.media[0].port;
    ASSERT_EQ(m.rewrite_sdp(1, sip::media_leg::a, "application/sdp", sdp("198.18.0.11", 6000), out, len, 1),
              sip::sdp_verdict::rewritten);
    ASSERT_TRUE(rtp::parse_sdp({out.data(), len}, s));
    pa = s.media[0].port;
}

/// Sends an RTP packet and an RTCP packet marked `in_tos` from the caller to the SBC's port
/// `pa`; both must be relayed to the callee with TOS `expected` and every checksum right.
void relay_marked(harness& h, uint16_t pa, uint8_t in_tos, uint8_t expected)
{
    ASSERT_TRUE(h.receive(rtp_frame(h.our_mac(), caller_mac, caller_ip, 4000, our_ip, pa, in_tos)));
    ASSERT_TRUE(h.receive(
        rtp_frame(h.our_mac(), caller_mac, caller_ip, 4001, our_ip, static_cast<uint16_t>(pa + 1), in_tos, true)));
    h.poll();
    const sent_frames f = h.take_sent();
    ASSERT_EQ(f.size(), 2u);
    for (auto* m : f.mbufs) {
        const bytes b = linear_bytes(m);
        expect_marked(b, expected);
        EXPECT_EQ(read32(b, 14 + 16), callee_ip) << "relayed to the callee";
    }
}

TEST(dscp, relayed_rtp_and_rtcp_carry_ef_whatever_the_sender_marked)
{
    for (uint8_t configured : {ef, af41}) {
        SCOPED_TRACE(static_cast<int>(configured));
        harness h;
        ASSERT_TRUE(h.ok()) << h.error();
        uint16_t pa = 0, pb = 0;
        media_call(h, configured, pa, pb);
        if (HasFatalFailure()) return;
        // Unmarked, already EF, and marked otherwise (CS5); RTP then RTCP on the odd port.
        for (uint8_t in_tos : {uint8_t{0}, ef, cs5}) {
            SCOPED_TRACE(static_cast<int>(in_tos));
            relay_marked(h, pa, in_tos, configured);
        }
    }
}

/// A reload that changes dscp_rtp publishes a snapshot whose media egress carries it: the
/// next packet of a call already up leaves with the new mark (RTP and RTCP), checksums right.
TEST(dscp, a_snapshot_with_another_dscp_rtp_re_marks_a_call_in_progress)
{
    harness h;
    ASSERT_TRUE(h.ok()) << h.error();
    uint16_t pa = 0, pb = 0;
    media_call(h, ef, pa, pb);
    if (HasFatalFailure()) return;
    const rtp::media_config c = media_on_interface_0();
    for (uint8_t configured : {ef, cs5, af41}) {
        SCOPED_TRACE(static_cast<int>(configured));
        set_tos(h, cs3, configured, &c);
        if (HasFatalFailure()) return;
        relay_marked(h, pa, 0, configured);
    }
}

}  // namespace
}  // namespace sbc::test
