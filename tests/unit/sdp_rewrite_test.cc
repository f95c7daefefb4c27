// SDP parse and rewrite for media anchoring (rtp/sdp.h): which tokens change, that every
// other byte is kept, and what the parse reads for the relay. Unit tier, no EAL.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "rtp/sdp.h"

namespace sbc::rtp {
namespace {

std::string rewrite(const std::string& body, std::string_view addr, std::initializer_list<uint16_t> ports)
{
    sdp parsed;
    EXPECT_TRUE(parse_sdp(body, parsed));
    sdp_rewrite r;
    r.address = addr;
    unsigned i = 0;
    for (uint16_t p : ports) r.port[i++] = p;
    std::array<char, 4096> out{};
    const std::size_t n = rewrite_sdp(body, parsed, r, out);
    EXPECT_NE(n, 0u);
    return std::string(out.data(), n);
}

const std::string offer =
    "v=0\r\n"
    "o=alice 2890844526 2890844526 IN IP4 198.18.0.10\r\n"
    "s=-\r\n"
    "c=IN IP4 198.18.0.10\r\n"
    "t=0 0\r\n"
    "m=audio 49170 RTP/AVP 0 8 101\r\n"
    "a=rtpmap:0 PCMU/8000\r\n"
    "a=rtpmap:101 telephone-event/8000\r\n"
    "a=fmtp:101 0-15\r\n"
    "a=sendrecv\r\n";

struct rewrite_case {
    const char* what;
    std::string body;
    std::initializer_list<uint16_t> ports;
    std::string expected;
};

TEST(sdp_rewrite, replaces_only_addresses_ports_and_rtcp_and_keeps_every_other_byte)
{
    const std::string addr = "198.19.0.1";
    const rewrite_case cases[] = {
        {"session-level c= and one m-line; o= names the SBC, the session id and version kept", offer, {30000},
         "v=0\r\n"
         "o=alice 2890844526 2890844526 IN IP4 198.19.0.1\r\n"
         "s=-\r\n"
         "c=IN IP4 198.19.0.1\r\n"
         "t=0 0\r\n"
         "m=audio 30000 RTP/AVP 0 8 101\r\n"
         "a=rtpmap:0 PCMU/8000\r\n"
         "a=rtpmap:101 telephone-event/8000\r\n"
         "a=fmtp:101 0-15\r\n"
         "a=sendrecv\r\n"},
        {"media-level c= on each of two m-lines, a=rtcp with and without address",
         "v=0\r\no=- 1 1 IN IP4 10.0.0.1\r\ns=x\r\nt=0 0\r\n"
         "m=audio 4000 RTP/AVP 8\r\nc=IN IP4 10.0.0.1\r\na=rtcp:4001\r\n"
         "m=video 5000 RTP/AVP 96\r\nc=IN IP4 10.0.0.2\r\na=rtcp:5003 IN IP4 10.0.0.3\r\na=rtpmap:96 H264/90000\r\n",
         {30000, 30004},
         "v=0\r\no=- 1 1 IN IP4 198.19.0.1\r\ns=x\r\nt=0 0\r\n"
         "m=audio 30000 RTP/AVP 8\r\nc=IN IP4 198.19.0.1\r\na=rtcp:30001\r\n"
         "m=video 30004 RTP/AVP 96\r\nc=IN IP4 198.19.0.1\r\na=rtcp:30005 IN IP4 198.19.0.1\r\na=rtpmap:96 H264/90000\r\n"},
        {"rtcp-mux: a=rtcp names the RTP port itself",
         "v=0\r\ns=-\r\nc=IN IP4 10.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\na=rtcp:4000\r\na=rtcp-mux\r\n",
         {30002},
         "v=0\r\ns=-\r\nc=IN IP4 198.19.0.1\r\nt=0 0\r\nm=audio 30002 RTP/AVP 0\r\na=rtcp:30002\r\na=rtcp-mux\r\n"},
        {"hold: the direction attribute stays",
         "v=0\r\ns=-\r\nc=IN IP4 10.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\na=sendonly\r\n", {30000},
         "v=0\r\ns=-\r\nc=IN IP4 198.19.0.1\r\nt=0 0\r\nm=audio 30000 RTP/AVP 0\r\na=sendonly\r\n"},
        {"a rejected stream (port 0) keeps port 0, the accepted one is anchored",
         "v=0\r\ns=-\r\nc=IN IP4 10.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\nm=video 0 RTP/AVP 96\r\n",
         {30000, 30004},
         "v=0\r\ns=-\r\nc=IN IP4 198.19.0.1\r\nt=0 0\r\nm=audio 30000 RTP/AVP 0\r\nm=video 0 RTP/AVP 96\r\n"},
        {"an IPv6 originator of IPv4 media: the leg sees no address of the other side",
         "v=0\r\no=bob 7 8 IN IP6 2001:db8::5\r\ns=-\r\nc=IN IP4 10.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n", {30000},
         "v=0\r\no=bob 7 8 IN IP4 198.19.0.1\r\ns=-\r\nc=IN IP4 198.19.0.1\r\nt=0 0\r\nm=audio 30000 RTP/AVP 0\r\n"},
        {"an o= of another shape is kept as it came",
         "v=0\r\no=bob 7 IN IP4\r\ns=-\r\nc=IN IP4 10.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n", {30000},
         "v=0\r\no=bob 7 IN IP4\r\ns=-\r\nc=IN IP4 198.19.0.1\r\nt=0 0\r\nm=audio 30000 RTP/AVP 0\r\n"},
        {"unknown lines, LF-only line ends and port/count are kept",
         "v=0\ns=-\nc=IN IP4 10.0.0.1\nt=0 0\nx=anything goes here\nm=audio 4000/2 RTP/AVP 0\na=foo:bar\n",
         {30000},
         "v=0\ns=-\nc=IN IP4 198.19.0.1\nt=0 0\nx=anything goes here\nm=audio 30000/2 RTP/AVP 0\na=foo:bar\n"},
    };
    for (const auto& c : cases) EXPECT_EQ(rewrite(c.body, addr, c.ports), c.expected) << c.what;
}

TEST(sdp_rewrite, reads_addresses_ports_rtcp_and_clock_rate_for_the_relay)
{
    const std::string body =
        "v=0\r\ns=-\r\nc=IN IP4 10.0.0.1\r\nt=0 0\r\n"
        "m=audio 4000 RTP/AVP 0\r\n"
        "m=audio 4100 RTP/AVP 96\r\nc=IN IP4 10.0.0.9\r\na=rtpmap:96 opus/48000/2\r\na=rtcp:4200 IN IP4 10.0.0.8\r\n"
        "m=audio 4300 RTP/AVP 0\r\na=rtcp-mux\r\n"
        "m=application 5000 UDP/BFCP *\r\n";
    sdp s;
    ASSERT_TRUE(parse_sdp(body, s));
    ASSERT_EQ(s.n_media, 4u);
    EXPECT_EQ(s.media[0].ip(s.c_ip), 0x0a000001u);
    EXPECT_EQ(s.media[0].port, 4000);
    EXPECT_EQ(s.media[0].rtcp_port, 0);  // RTP + 1 by default
    EXPECT_EQ(s.media[0].clock_hz, 8000u);
    EXPECT_EQ(s.media[1].ip(s.c_ip), 0x0a000009u);
    EXPECT_EQ(s.media[1].clock_hz, 48000u);
    EXPECT_EQ(s.media[1].rtcp_port, 4200);
    EXPECT_EQ(s.media[1].rtcp_ip, 0x0a000008u);
    EXPECT_TRUE(s.media[2].rtcp_mux);
    EXPECT_TRUE(s.media[0].rtp);
    EXPECT_FALSE(s.media[3].rtp);
}

TEST(sdp_rewrite, refuses_bodies_that_are_not_sdp)
{
    sdp s;
    EXPECT_FALSE(parse_sdp("", s));
    EXPECT_FALSE(parse_sdp("<xml/>", s));
    EXPECT_FALSE(parse_sdp("v=0\r\nm=audio notaport RTP/AVP 0\r\n", s));
    EXPECT_FALSE(parse_sdp("v=0\r\nthis is not a line\r\n", s));
    EXPECT_FALSE(parse_sdp("v=0\r\nc=IN IP4 300.1.1.1\r\n", s));
}

TEST(sdp_rewrite, marks_ipv6_media_so_that_it_is_not_anchored)
{
    sdp s;
    ASSERT_TRUE(parse_sdp("v=0\r\ns=-\r\nc=IN IP6 2001:db8::1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n", s));
    EXPECT_TRUE(s.ipv6);
}

TEST(sdp_rewrite, reports_a_body_that_does_not_fit)
{
    sdp s;
    ASSERT_TRUE(parse_sdp(offer, s));
    sdp_rewrite r;
    r.address = "198.19.0.1";
    r.port[0] = 30000;
    std::array<char, 40> small{};
    EXPECT_EQ(rewrite_sdp(offer, s, r, small), 0u);
}

}  // namespace
}  // namespace sbc::rtp
