// SIP messages larger than one packet through the production dataplane (net_ring ports):
// the fragmenting of a UDP datagram we originate (each fragment's IPv4 header and checksum,
// the reassembled datagram equal to the one a plain UDP sender would write, refusals by
// reason), and a call whose INVITE and 200 OK carry a 4,000-byte SDP: received as fragments,
// reassembled, relayed, and sent on as fragments whose reassembly holds the body intact.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <rte_mbuf.h>

#include "dataplane/counters.h"
#include "dataplane/udp_fragment.h"
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

/// One IPv4 fragment as sent, decoded independently of the dataplane.
struct fragment {
    uint32_t src = 0, dst = 0;
    uint16_t id = 0;
    bool more = false, dont_fragment = false;
    uint32_t offset = 0;  ///< bytes
    bool checksum_ok = false;
    bytes frame_l2;       ///< the Ethernet header
    bytes payload;        ///< after the IPv4 header
    std::size_t frame_size = 0;
};

std::vector<fragment> decode_fragments(const std::vector<rte_mbuf*>& mbufs)
{
    std::vector<fragment> out;
    for (auto* m : mbufs) {
        const bytes b = linear_bytes(m);
        if (b.size() < 14 + 20 || read16(b, 12) != ethertype_ipv4) {
            ADD_FAILURE() << "not an untagged IPv4 frame";
            continue;
        }
        const auto ip = std::span(b).subspan(14);
        fragment f;
        f.frame_size = b.size();
        f.frame_l2.assign(b.begin(), b.begin() + 14);
        EXPECT_EQ(ip[0], 0x45);
        EXPECT_EQ(ip[9], proto_udp);
        EXPECT_EQ(read16(ip, 2), ip.size()) << "total length is the frame's";
        f.id = read16(ip, 4);
        const uint16_t ff = read16(ip, 6);
        f.dont_fragment = (ff & ip_flag_df) != 0;
        f.more = (ff & 0x2000) != 0;
        f.offset = uint32_t{ff & 0x1fffu} * 8;
        f.checksum_ok = internet_checksum(ip.first(20)) == 0;
        f.src = read32(ip, 12);
        f.dst = read32(ip, 16);
        f.payload.assign(ip.begin() + 20, ip.end());
        out.push_back(std::move(f));
    }
    return out;
}

/// The UDP datagram the fragments of id `id` from `src` make, in offset order; empty when
/// they do not make one whole (a gap, an overlap, no last fragment).
bytes reassemble(std::vector<fragment> frags, uint32_t dst)
{
    frags.erase(std::remove_if(frags.begin(), frags.end(), [&](const fragment& f) { return f.dst != dst; }), frags.end());
    std::sort(frags.begin(), frags.end(), [](const fragment& a, const fragment& b) { return a.offset < b.offset; });
    bytes whole;
    for (std::size_t i = 0; i < frags.size(); ++i) {
        if (frags[i].offset != whole.size() || frags[i].id != frags[0].id) return {};
        if (frags[i].more != (i + 1 < frags.size())) return {};
        whole.insert(whole.end(), frags[i].payload.begin(), frags[i].payload.end());
    }
    return whole;
}

const dp::interface_info& first_interface(harness& h)
{
    return h.runtime().shared->snap.current->interfaces[0];
}

struct size_case {
    std::size_t payload;
    std::size_t fragments;
};

class udp_fragments : public ::testing::TestWithParam<size_case> {};

TEST_P(udp_fragments, reassemble_to_the_datagram_a_plain_udp_sender_writes_with_every_checksum_right)
{
    harness h(2047);
    ASSERT_TRUE(h.ok()) << h.error();
    const bytes text = pattern(GetParam().payload, 5);
    const endpoint src = endpoint::udp4(our_ip, sip_port), dst = endpoint::udp4(callee_ip, 5062);
    std::array<rte_mbuf*, dp::max_fragments> frags;
    uint32_t n = 0;
    ASSERT_EQ(dp::frame_udp4_fragments(h.worker().pool, first_interface(h), gateway_mac.data(), src, dst,
                                       {reinterpret_cast<const char*>(text.data()), text.size()}, 0x4242, 1500, frags, n),
              dp::fragment_result::ok);
    ASSERT_EQ(n, GetParam().fragments);
    const auto got = decode_fragments({frags.begin(), frags.begin() + n});
    for (const auto& f : got) {
        EXPECT_TRUE(f.checksum_ok) << "IPv4 header checksum of the fragment at " << f.offset;
        EXPECT_FALSE(f.dont_fragment);
        EXPECT_EQ(f.id, 0x4242);
        EXPECT_LE(f.frame_size, 14u + 1500u) << "no fragment over the MTU";
        EXPECT_EQ(f.offset % 8, 0u);
        EXPECT_EQ(bytes(f.frame_l2.begin(), f.frame_l2.begin() + 6), bytes(gateway_mac.begin(), gateway_mac.end()));
    }
    const bytes whole = reassemble(got, callee_ip);
    const bytes want = udp_datagram(our_ip, callee_ip, sip_port, 5062, text);
    ASSERT_EQ(whole.size(), want.size()) << "the fragments make one datagram";
    EXPECT_TRUE(whole == want) << "byte for byte, with the UDP checksum over the whole datagram";
    EXPECT_EQ(udp_checksum(our_ip, callee_ip, whole), 0);
    rte_pktmbuf_free_bulk(frags.data(), n);
    EXPECT_EQ(h.mbufs_in_use(), 0u);
}

INSTANTIATE_TEST_SUITE_P(sizes, udp_fragments,
                         ::testing::Values(size_case{1473, 2}, size_case{4000, 3}, size_case{8992, 7},
                                           size_case{dp::max_udp4_payload, 45}),
                         [](const ::testing::TestParamInfo<size_case>& i) { return "payload_" + std::to_string(i.param.payload); });

TEST(udp_fragments_refused, over_one_datagram_and_without_enough_mbufs_with_nothing_left_allocated)
{
    harness h(2047);
    ASSERT_TRUE(h.ok()) << h.error();
    const endpoint src = endpoint::udp4(our_ip, sip_port), dst = endpoint::udp4(callee_ip, 5060);
    std::array<rte_mbuf*, dp::max_fragments> frags;
    uint32_t n = 7;
    const std::string big(dp::max_udp4_payload + 1, 'x');
    EXPECT_EQ(dp::frame_udp4_fragments(h.worker().pool, first_interface(h), gateway_mac.data(), src, dst, big, 1, 1500,
                                       frags, n),
              dp::fragment_result::too_big);
    EXPECT_EQ(n, 0u);
    // A pool with fewer mbufs than the datagram needs fragments: none is taken.
    rte_mempool* small = rte_pktmbuf_pool_create("sbc_test_frag_small", 15, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    ASSERT_NE(small, nullptr);
    const std::string large(30000, 'y');
    EXPECT_EQ(dp::frame_udp4_fragments(small, first_interface(h), gateway_mac.data(), src, dst, large, 2, 1500, frags, n),
              dp::fragment_result::no_buffer);
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(rte_mempool_in_use_count(small), 0u);
    rte_mempool_free(small);
}

// --- a call with 4,000-byte SDPs through the SIP path

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
    for (uint16_t c : {408, 503, 504}) t->retry.codes.set(c);
    return t;
}

std::string sdp_of(std::size_t size, char fill)
{
    std::string s = "v=0\r\no=- 1 1 IN IP4 198.18.0.2\r\ns=-\r\nc=IN IP4 198.18.0.2\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\n";
    while (s.size() + 80 < size) s += "a=x-pad:" + std::string(68, fill) + "\r\n";
    s += "a=x-end:" + std::string(size - s.size() - 10, fill) + "\r\n";
    return s;
}

std::string invite_with(const std::string& sdp)
{
    return "INVITE sip:+15551234@198.18.0.1 SIP/2.0\r\n"
           "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-big1\r\n"
           "Max-Forwards: 70\r\n"
           "From: <sip:alice@198.18.0.2>;tag=a1\r\n"
           "To: <sip:+15551234@198.18.0.1>\r\n"
           "Call-ID: call-large@198.18.0.2\r\n"
           "CSeq: 1 INVITE\r\n"
           "Contact: <sip:alice@198.18.0.2:5060>\r\n"
           "Content-Type: application/sdp\r\n"
           "Content-Length: " + std::to_string(sdp.size()) + "\r\n\r\n" + sdp;
}

/// `text` from (src, 5060) to our trunk as IPv4 fragments of at most 1480 bytes of UDP each.
void receive_fragmented(harness& h, const mac& from, uint32_t src, const std::string& text, uint16_t id)
{
    const bytes payload(text.begin(), text.end());
    const bytes udp = udp_datagram(src, our_ip, sip_port, sip_port, payload);
    for (const bytes& f : ipv4_fragments({src, our_ip, proto_udp, 64, 0, id, 0}, udp, 1480))
        ASSERT_TRUE(h.receive(ethernet({h.our_mac(), from, 0}, ethertype_ipv4, f)));
}

/// The SIP text of the datagram the fragments to `dst` make (their UDP checksum checked).
std::string text_to(const std::vector<fragment>& frags, uint32_t dst)
{
    const bytes whole = reassemble(frags, dst);
    if (whole.size() < 8) return {};
    EXPECT_EQ(udp_checksum(our_ip, dst, whole), 0) << "UDP checksum over the reassembled datagram";
    return std::string(whole.begin() + 8, whole.end());
}

/// The header `name` of `text` (the first), without its name, or "".
std::string header(const std::string& text, const std::string& name)
{
    const std::size_t at = text.find("\r\n" + name + ": ");
    if (at == std::string::npos) return {};
    const std::size_t start = at + 4 + name.size();
    return text.substr(start, text.find("\r\n", start) - start);
}

TEST(sip_large, an_invite_and_its_200_ok_with_4000_byte_sdps_cross_as_fragments_with_their_bodies_intact)
{
    harness h(2047, 1);
    ASSERT_TRUE(h.ok()) << h.error();
    h.set_proxy(tables());
    h.runtime().shared->neighbours.insert(ip_address::v4(caller_ip), caller_mac, 1);
    h.runtime().shared->neighbours.insert(ip_address::v4(our_gateway), gateway_mac, 1);
    h.poll_worker(0);

    const std::string offer = sdp_of(4000, 'o');
    const std::string inv = invite_with(offer);
    ASSERT_GT(inv.size(), 4096u) << "larger than a setup's own buffer";
    receive_fragmented(h, caller_mac, caller_ip, inv, 0x1111);
    h.poll();
    const sent_frames sent = h.take_sent();
    auto frags = decode_fragments(sent.mbufs);
    const std::string out = text_to(frags, callee_ip);
    ASSERT_FALSE(out.empty()) << "the INVITE reached the callee as fragments that make one datagram";
    const auto pieces = [](std::size_t sip_bytes) { return static_cast<long>((sip_bytes + 8 + 1479) / 1480); };
    const long invite_frags = pieces(out.size());
    EXPECT_GE(invite_frags, 3);
    EXPECT_EQ(std::count_if(frags.begin(), frags.end(), [](const fragment& f) { return f.dst == callee_ip; }), invite_frags)
        << "the INVITE with our Via and Record-Route, in fragments of 1480 bytes of UDP";
    EXPECT_EQ(out.rfind("INVITE sip:+15551234@198.18.1.11:5060 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.0.1:5060;branch=z9hG4bK", 0), 0u) << out.substr(0, 200);
    EXPECT_NE(out.find("\r\nRecord-Route: <sip:198.18.0.1"), std::string::npos);
    ASSERT_GE(out.size(), offer.size());
    EXPECT_EQ(out.substr(out.size() - offer.size()), offer) << "the SDP byte for byte";
    EXPECT_EQ(header(out, "Content-Length"), std::to_string(offer.size()));
    for (const auto& f : frags) EXPECT_TRUE(f.checksum_ok);

    // The callee's 200 OK with its own 4,000-byte answer, back through us to the caller.
    const std::string answer = sdp_of(4000, 'a');
    std::string ok = "SIP/2.0 200 OK\r\n";
    std::size_t pos = out.find("\r\n") + 2;
    while (true) {
        const std::size_t e = out.find("\r\n", pos);
        if (e == pos) break;
        const std::string line = out.substr(pos, e - pos);
        for (const char* hname : {"Via:", "From:", "Call-ID:", "CSeq:", "Record-Route:"})
            if (line.rfind(hname, 0) == 0) ok += line + "\r\n";
        if (line.rfind("To:", 0) == 0) ok += line + ";tag=b1\r\n";
        pos = e + 2;
    }
    ok += "Contact: <sip:bob@198.18.1.11:5060>\r\nContent-Type: application/sdp\r\nContent-Length: " +
          std::to_string(answer.size()) + "\r\n\r\n" + answer;
    receive_fragmented(h, gateway_mac, callee_ip, ok, 0x2222);
    h.poll();
    const sent_frames sent_back = h.take_sent();
    frags = decode_fragments(sent_back.mbufs);
    const std::string back = text_to(frags, caller_ip);
    ASSERT_FALSE(back.empty()) << "the 200 OK reached the caller as fragments that make one datagram";
    EXPECT_EQ(back.rfind("SIP/2.0 200 OK\r\n", 0), 0u) << back.substr(0, 200);
    EXPECT_NE(back.find("\r\nVia: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-big1\r\n"), std::string::npos);
    EXPECT_EQ(back.find("z9hG4bKsT"), std::string::npos) << "our Via is popped";
    EXPECT_EQ(back.substr(back.size() - answer.size()), answer) << "the answer's SDP byte for byte";

    const auto v = h.counters();
    EXPECT_EQ(static_cast<long>(v.stage_packets[static_cast<std::size_t>(dp::stage::frag)]), pieces(inv.size()) + pieces(ok.size()))
        << "every fragment received went through reassembly";
    EXPECT_EQ(static_cast<long>(v.sip_fragments_sent), invite_frags + pieces(back.size()));
    EXPECT_EQ(v.drops_total(), 0u);
    EXPECT_EQ(h.worker().proxy->stats().get(sip::proxy_counter::send_failed_too_big), 0u);
    EXPECT_EQ(h.worker().proxy->stats().get(sip::proxy_counter::calls_answered), 1u);
}

}  // namespace
}  // namespace sbc::test
