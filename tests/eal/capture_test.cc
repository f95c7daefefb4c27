// SIP capture through the production dataplane (net_ring ports): sbcd's capture service
// (control/capture_service.h) with the worker's copies (dataplane/capture.h), read back from
// the pcap file. A 4,000-byte INVITE received as IPv4 fragments is written as the one packet
// it was reassembled into (length fixed, fragment fields cleared, checksums right); sbcd's 100
// Trying byte for byte as it was sent; the INVITE relayed as fragments as the one datagram it
// was before fragmentation; a pattern that matches nothing copies nothing.
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <rte_mbuf.h>

#include "control/capture_service.h"
#include "control/pcap_writer.h"
#include "sip-fastpath/proxy.h"
#include "tests/eal/frame_builder.h"
#include "tests/eal/harness.h"

namespace sbc::test {
namespace {

namespace dp = sbc::dataplane;

constexpr uint32_t caller_ip = ipv4(198, 18, 0, 2);
constexpr uint32_t callee_ip = ipv4(198, 18, 1, 11);
constexpr uint16_t sip_port = 5060;
constexpr mac caller_mac{0x02, 0, 0, 0, 0, 0x02};
constexpr mac gateway_mac{0x02, 0, 0, 0, 0, 0xfe};

std::shared_ptr<const sip::proxy_tables> tables()
{
    auto t = std::make_shared<sip::proxy_tables>();
    t->trunks.push_back(access_trunk());
    sip::peer p;
    p.name = "r1/peer1";
    p.id = 0;
    p.address = ip_address::v4(callee_ip);
    p.port = sip_port;
    p.weight = 10;
    p.region = 0;
    p.trunk = 0;
    t->peers.push_back(p);
    t->index_peers();
    t->regions.push_back({"r1", {0}});
    t->groups.push_back({"g1", {0}, sip::selector::srv});
    t->routes.push_back({"default", sip::match_field::ruri_user, ".*", 0});
    t->default_route = 0;
    return t;
}

std::string invite(std::size_t body)
{
    const std::string sdp = "v=0\r\no=- 1 1 IN IP4 198.18.0.2\r\ns=-\r\nc=IN IP4 198.18.0.2\r\nt=0 0\r\n"
                            "m=audio 40000 RTP/AVP 0\r\na=x-pad:" + std::string(body, 'p') + "\r\n";
    return "INVITE sip:+15551234@198.18.0.1 SIP/2.0\r\n"
           "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-cap1\r\n"
           "Max-Forwards: 70\r\n"
           "From: <sip:alice@198.18.0.2>;tag=a1\r\n"
           "To: <sip:+15551234@198.18.0.1>\r\n"
           "Call-ID: call-capture@198.18.0.2\r\n"
           "CSeq: 1 INVITE\r\n"
           "Contact: <sip:alice@198.18.0.2:5060>\r\n"
           "Content-Type: application/sdp\r\n"
           "Content-Length: " + std::to_string(sdp.size()) + "\r\n\r\n" + sdp;
}

void receive_fragmented(harness& h, const std::string& text)
{
    const bytes payload(text.begin(), text.end());
    const bytes udp = udp_datagram(caller_ip, our_ip, sip_port, sip_port, payload);
    for (const bytes& f : ipv4_fragments({caller_ip, our_ip, proto_udp, 64, 0, 0x1111, 0}, udp, 1480))
        ASSERT_TRUE(h.receive(ethernet({h.our_mac(), caller_mac, 0}, ethertype_ipv4, f)));
}

/// The frames of a pcap file (record bodies), after checking its header.
std::vector<bytes> pcap_frames(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    const bytes s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<bytes> out;
    if (s.size() < 24) {
        ADD_FAILURE() << path << " has no pcap header";
        return out;
    }
    EXPECT_EQ(s[0] | s[1] << 8 | s[2] << 16 | uint32_t{s[3]} << 24, control::pcap_magic_micro);
    std::size_t at = 24;
    while (at + 16 <= s.size()) {
        const uint32_t incl = s[at + 8] | s[at + 9] << 8 | s[at + 10] << 16 | uint32_t{s[at + 11]} << 24;
        at += 16;
        if (at + incl > s.size()) break;
        out.emplace_back(s.begin() + static_cast<long>(at), s.begin() + static_cast<long>(at + incl));
        at += incl;
    }
    EXPECT_EQ(at, s.size()) << "records fill the file exactly";
    return out;
}

struct packet {
    uint32_t src = 0, dst = 0;
    uint16_t frag = 0;  ///< flags and offset
    uint8_t tos = 0;
    bool ip_checksum_ok = false, udp_checksum_ok = false;
    std::string sip;
};

packet decode(const bytes& frame)
{
    packet p;
    if (frame.size() < 14 + 20 + 8) return p;
    const auto ip = std::span(frame).subspan(14);
    EXPECT_EQ(read16(ip, 2), ip.size()) << "IPv4 total length is the packet's";
    p.tos = ip[1];
    p.frag = read16(ip, 6);
    p.src = read32(ip, 12);
    p.dst = read32(ip, 16);
    p.ip_checksum_ok = internet_checksum(ip.first(20)) == 0;
    const auto udp = ip.subspan(20);
    EXPECT_EQ(read16(udp, 4), udp.size()) << "UDP length is the datagram's";
    p.udp_checksum_ok = read16(udp, 6) == 0 || udp_checksum(p.src, p.dst, udp) == 0;
    p.sip.assign(udp.begin() + 8, udp.end());
    return p;
}

std::string temp_pcap(const char* name) { return "/tmp/sbc_eal_capture_" + std::to_string(getpid()) + "_" + name + ".pcap"; }

TEST(capture, a_fragmented_invite_is_written_whole_in_and_out_and_a_small_answer_as_sent)
{
    harness h(4095, 1);
    ASSERT_TRUE(h.ok()) << h.error();
    h.set_proxy(tables());
    h.runtime().shared->neighbours.insert(ip_address::v4(caller_ip), caller_mac, 1);
    h.runtime().shared->neighbours.insert(ip_address::v4(our_gateway), gateway_mac, 1);
    h.poll_worker(0);

    control::capture_service cap(h.runtime());
    control::capture_request r;
    r.path = temp_pcap("whole");
    std::string error;
    ASSERT_TRUE(cap.start(r, error)) << error;
    const std::string inv = invite(4000);
    receive_fragmented(h, inv);
    h.poll();
    const sent_frames sent = h.take_sent();
    ASSERT_TRUE(cap.stop(error)) << error;
    const control::capture_status st = cap.status();
    EXPECT_FALSE(st.running);
    EXPECT_EQ(st.stopped, "stopped by the operator");
    EXPECT_EQ(st.dropped_ring_full + st.dropped_no_buffer, 0u);

    const auto frames = pcap_frames(r.path);
    ASSERT_EQ(frames.size(), 3u) << "the INVITE in, the 100 Trying and the INVITE out";
    EXPECT_EQ(st.messages, 3u);
    const packet in = decode(frames[0]);
    EXPECT_EQ(in.src, caller_ip);
    EXPECT_EQ(in.frag & 0x3fff, 0) << "no fragment fields: one packet";
    EXPECT_TRUE(in.ip_checksum_ok);
    EXPECT_TRUE(in.udp_checksum_ok);
    EXPECT_EQ(in.sip, inv) << "the reassembled datagram's SIP text";

    // What was sent: the 100 Trying in one frame, the INVITE in fragments.
    std::vector<bytes> trying;
    for (auto* m : sent.mbufs) {
        const bytes b = linear_bytes(m);
        if (b.size() > 34 && read32(b, 14 + 16) == caller_ip) trying.push_back(b);
    }
    ASSERT_EQ(trying.size(), 1u);
    // In the order the worker copied them; the 100 Trying and the relayed INVITE come from the
    // same outbox, in whichever order the proxy wrote them.
    const std::size_t ti = decode(frames[1]).dst == caller_ip ? 1 : 2;
    const packet t = decode(frames[ti]);
    EXPECT_EQ(t.sip.rfind("SIP/2.0 100 Trying\r\n", 0), 0u) << t.sip.substr(0, 60);
    EXPECT_TRUE(frames[ti] == trying[0]) << "the 100 Trying byte for byte as sent (headers, DSCP, checksums)";

    const packet out = decode(frames[3 - ti]);
    EXPECT_EQ(out.src, our_ip);
    EXPECT_EQ(out.dst, callee_ip);
    EXPECT_EQ(out.frag, 0x4000) << "DF, no offset: the datagram before fragmentation";
    EXPECT_TRUE(out.ip_checksum_ok);
    EXPECT_TRUE(out.udp_checksum_ok) << "the UDP checksum covers the whole datagram";
    EXPECT_EQ(out.sip.rfind("INVITE sip:+15551234@198.18.1.11:5060 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.0.1:5060;", 0), 0u);
    EXPECT_GT(out.sip.size(), inv.size()) << "with our Via and Record-Route";
    EXPECT_EQ(out.tos, t.tos) << "the DSCP of the fragments, as of every SIP frame sbcd sends";
    std::remove(r.path.c_str());
}

TEST(capture, a_pattern_that_matches_nothing_copies_nothing_and_one_that_matches_keeps_the_call)
{
    harness h(4095, 1);
    ASSERT_TRUE(h.ok()) << h.error();
    h.set_proxy(tables());
    h.runtime().shared->neighbours.insert(ip_address::v4(caller_ip), caller_mac, 1);
    h.runtime().shared->neighbours.insert(ip_address::v4(our_gateway), gateway_mac, 1);
    h.poll_worker(0);
    control::capture_service cap(h.runtime());
    std::string error;

    control::capture_request none;
    none.path = temp_pcap("none");
    none.patterns = {{sip::capture_field::callid, "^other-call@"}, {sip::capture_field::from, "bob@"}};
    ASSERT_TRUE(cap.start(none, error)) << error;
    control::capture_request second = none;
    second.path = temp_pcap("second");
    EXPECT_FALSE(cap.start(second, error)) << "one capture at a time";
    EXPECT_NE(error.find("already running"), std::string::npos) << error;
    receive_fragmented(h, invite(100));
    h.poll();
    (void)h.take_sent();
    ASSERT_TRUE(cap.stop(error)) << error;
    EXPECT_EQ(pcap_frames(none.path).size(), 0u);
    EXPECT_EQ(h.worker().capture_stats.copied.get(), 0u);

    control::capture_request one;
    one.path = temp_pcap("one");
    one.patterns = {{sip::capture_field::callid, "^other-call@"}, {sip::capture_field::from, "alice@"}};
    ASSERT_TRUE(cap.start(one, error)) << error;
    std::string again = invite(100);
    again.replace(again.find("z9hG4bK-cap1"), 12, "z9hG4bK-cap2");
    again.replace(again.find("call-capture@"), 13, "call-capture2");
    receive_fragmented(h, again);
    h.poll();
    (void)h.take_sent();
    ASSERT_TRUE(cap.stop(error)) << error;
    EXPECT_EQ(pcap_frames(one.path).size(), 3u) << "the INVITE in, with what sbcd sent for it (100, INVITE out)";
    std::remove(none.path.c_str());
    std::remove(one.path.c_str());
    std::remove(second.path.c_str());
}

}  // namespace
}  // namespace sbc::test
