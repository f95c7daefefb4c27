// Unit tests of SIP messages larger than the proxy's fixed 4 KiB buffers (proxy_large.cc):
// an INVITE and a 200 OK with 6,000-byte SDPs are relayed whole, a large INVITE's stored copy
// is what its retransmission and its next attempt send, a large INVITE while every large
// buffer is held is refused 503 and counted, and the buffer comes back when its setup ends.
// Pure: datagrams in, datagrams out.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sip-fastpath/proxy.h"
#include "sip-fastpath/sip_message.h"
#include "tests/unit/proxy_test_util.h"

using namespace sbc::sip;
using sbc::endpoint;
using sbc::sip::testutil::caller;
using sbc::sip::testutil::r1a;
using sbc::sip::testutil::r1b;
using sbc::sip::testutil::sbc_ep;

namespace {

std::string sdp(std::size_t size, char fill)
{
    std::string s = "v=0\r\no=- 1 1 IN IP4 198.18.0.2\r\ns=-\r\nc=IN IP4 198.18.0.2\r\nt=0 0\r\nm=audio 6000 RTP/AVP 0\r\n";
    s += "a=x-pad:" + std::string(size - s.size() - 10, fill) + "\r\n";
    return s;
}

std::string invite(const std::string& call_id, const std::string& body)
{
    return "INVITE sip:+15550100@198.18.0.1 SIP/2.0\r\n"
           "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-" + call_id + "\r\n"
           "Max-Forwards: 70\r\n"
           "From: <sip:alice@198.18.0.2>;tag=a1\r\n"
           "To: <sip:+15550100@198.18.0.1>\r\n"
           "Call-ID: " + call_id + "\r\n"
           "CSeq: 1 INVITE\r\n"
           "Contact: <sip:alice@198.18.0.2:5060>\r\n"
           "Content-Type: application/sdp\r\n"
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

struct sent {
    endpoint dst;
    std::string text;
    [[nodiscard]] bool starts(std::string_view s) const { return text.rfind(s, 0) == 0; }
    [[nodiscard]] bool ends(std::string_view s) const
    {
        return text.size() >= s.size() && text.compare(text.size() - s.size(), s.size(), s) == 0;
    }
};

struct harness {
    std::shared_ptr<proxy_tables> t = testutil::make_tables({{r1a, 0, 10}, {r1b, 0, 20}}, 1);  // r1a first
    std::unique_ptr<peer_health> h = std::make_unique<peer_health>();
    proxy px{0, 64, 64, 7};
    std::unique_ptr<outbox> out = std::make_unique<outbox>();
    uint64_t now = 1000;

    std::vector<sent> take()
    {
        std::vector<sent> r;
        for (uint32_t i = 0; i < out->n; ++i) r.push_back({out->msgs[i].dst, std::string(out->msgs[i].bytes())});
        out->clear();
        return r;
    }
    std::vector<sent> deliver(const std::string& text, endpoint from)
    {
        px.on_input(*t, *h, sip_input{text, from, sbc_ep, 0, now}, *out);
        return take();
    }
    std::vector<sent> tick(uint64_t ms)
    {
        std::vector<sent> all;
        for (uint64_t i = 0; i < ms; i += 10) {
            now += 10;
            px.on_tick(*t, *h, now, *out);
            for (auto& s : take()) all.push_back(std::move(s));
        }
        return all;
    }
    [[nodiscard]] uint64_t stat(proxy_counter c) const { return px.stats().get(c); }
};

const sent* find(const std::vector<sent>& v, endpoint dst, std::string_view start)
{
    for (const auto& s : v)
        if (s.dst == dst && s.starts(start)) return &s;
    return nullptr;
}

/// A response of the peer to `req` as we sent it, with `body` (SDP) when not empty.
std::string reply(const sent& req, int code, const std::string& reason, const std::string& body = {})
{
    message m;
    EXPECT_EQ(parse(req.text, m), error::none);
    std::string r = "SIP/2.0 " + std::to_string(code) + " " + reason + "\r\n";
    for (unsigned i = 0; i < m.header_count; ++i) {
        const header& hd = m.headers[i];
        if (hd.id == header_id::via || hd.id == header_id::from || hd.id == header_id::call_id ||
            hd.id == header_id::cseq || hd.id == header_id::record_route)
            r += std::string(m.text(hd.line));
        if (hd.id == header_id::to) r += "To: " + std::string(m.text(hd.value)) + ";tag=peer\r\n";
    }
    if (code == 200) r += "Contact: <sip:bob@198.18.1.11:5060>\r\n";
    if (!body.empty()) r += "Content-Type: application/sdp\r\n";
    return r + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace

TEST(proxy_large, an_invite_and_its_200_ok_with_6000_byte_sdps_are_relayed_whole)
{
    harness hx;
    const std::string offer = sdp(6000, 'o');
    const std::string inv = invite("large1", offer);
    ASSERT_GT(inv.size(), max_out_size);
    auto out = hx.deliver(inv, caller);
    const sent* fwd = find(out, r1a, "INVITE ");
    ASSERT_NE(fwd, nullptr);
    EXPECT_GT(fwd->text.size(), inv.size()) << "with our Via and Record-Route";
    EXPECT_TRUE(fwd->ends("\r\n\r\n" + offer)) << "the SDP byte for byte";

    const std::string answer = sdp(6000, 'a');
    auto back = hx.deliver(reply(*fwd, 200, "OK", answer), r1a);
    const sent* ok = find(back, caller, "SIP/2.0 200 OK\r\n");
    ASSERT_NE(ok, nullptr);
    EXPECT_NE(ok->text.find("\r\nVia: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-large1\r\n"), std::string::npos);
    EXPECT_EQ(ok->text.find("z9hG4bKsT"), std::string::npos) << "our Via is popped";
    EXPECT_TRUE(ok->ends("\r\n\r\n" + answer));
    EXPECT_EQ(hx.stat(proxy_counter::calls_answered), 1u);
    EXPECT_EQ(hx.stat(proxy_counter::large_busy), 0u);
    EXPECT_EQ(hx.stat(proxy_counter::send_failed_too_big), 0u);
}

TEST(proxy_large, a_large_invite_is_retransmitted_and_failed_over_from_its_stored_copy)
{
    harness hx;
    const std::string offer = sdp(9000, 's');
    auto out = hx.deliver(invite("large2", offer), caller);
    ASSERT_NE(find(out, r1a, "INVITE "), nullptr);
    // Silence: Timer A retransmits, then the no-response timer moves the call to the next peer;
    // both re-read the INVITE from the large buffer the setup holds.
    auto later = hx.tick(1200);
    const sent* again = find(later, r1a, "INVITE ");
    ASSERT_NE(again, nullptr) << "retransmitted to the first peer";
    EXPECT_TRUE(again->ends(offer));
    const sent* next = find(later, r1b, "INVITE ");
    ASSERT_NE(next, nullptr) << "failed over to the second peer";
    EXPECT_TRUE(next->ends("\r\n\r\n" + offer));
}

TEST(proxy_large, a_large_invite_while_every_large_buffer_is_held_gets_503_and_the_buffer_comes_back)
{
    harness hx;
    hx.px.set_large_setups(1);
    const std::string offer = sdp(5000, 'x');
    auto first = hx.deliver(invite("hold1", offer), caller);
    const sent* fwd = find(first, r1a, "INVITE ");
    ASSERT_NE(fwd, nullptr);
    const std::string ringing = reply(*fwd, 180, "Ringing");
    hx.deliver(ringing, r1a);

    auto second = hx.deliver(invite("hold2", offer), caller);
    const sent* refused = find(second, caller, "SIP/2.0 503 Service Unavailable (large messages busy)\r\n");
    ASSERT_NE(refused, nullptr);
    EXPECT_NE(refused->text.find("branch=z9hG4bK-hold2"), std::string::npos);
    EXPECT_NE(refused->text.find("Retry-After:"), std::string::npos);
    EXPECT_EQ(find(second, r1a, "INVITE "), nullptr);
    EXPECT_EQ(find(second, r1b, "INVITE "), nullptr);
    EXPECT_EQ(hx.stat(proxy_counter::large_busy), 1u);
    // A small INVITE meanwhile takes the common path.
    auto small = hx.deliver(invite("small3", sdp(300, 's')), caller);
    EXPECT_NE(find(small, r1a, "INVITE "), nullptr);

    // The first call fails (486), the caller ACKs, its setup lingers and is released: its
    // buffer is free again for the next large INVITE.
    hx.deliver(reply(*fwd, 486, "Busy Here"), r1a);
    std::string ack = "ACK" + invite("hold1", "").substr(6);
    const std::size_t cseq = ack.find("CSeq: 1 INVITE");
    ack.replace(cseq, 14, "CSeq: 1 ACK");
    const std::size_t to = ack.find("To: <sip:+15550100@198.18.0.1>");
    ack.insert(to + 30, ";tag=peer");
    hx.deliver(ack, caller);
    hx.tick(6000);
    auto third = hx.deliver(invite("hold4", offer), caller);
    EXPECT_NE(find(third, r1a, "INVITE "), nullptr) << "the large buffer came back";
    EXPECT_EQ(hx.stat(proxy_counter::large_busy), 1u);
}
