// Unit tests of what the proxy does when a message it produced cannot leave the SBC (too big
// for its transport, next hop unresolved, no buffer): a local failure, never the peer's. The
// caller hears at once (513 for size, 503 otherwise), no peer event is posted and no failure
// is counted against a peer, and the cause is counted. Pure: datagrams in, datagrams out.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sip-fastpath/proxy.h"
#include "sip-fastpath/sip_message.h"
#include "tests/unit/proxy_test_util.h"

using namespace sbc::sip;
using sbc::endpoint;
using sbc::ip_address;
using sbc::ip_prefix;
using sbc::sip::testutil::caller;
using sbc::sip::testutil::ip;
using sbc::sip::testutil::r1a;
using sbc::sip::testutil::r1b;
using sbc::sip::testutil::sbc_ep;

namespace {

std::shared_ptr<proxy_tables> make_tables()
{
    return testutil::make_tables({{r1a, 0}, {r1b, 0}}, 1);
}

/// An INVITE from the caller whose text is about `size` bytes: a padding header fills it.
std::string invite(const std::string& call_id, std::size_t size = 0)
{
    const std::string body = "v=0\r\no=- 1 1 IN IP4 198.18.0.2\r\ns=-\r\nc=IN IP4 198.18.0.2\r\nt=0 0\r\nm=audio 6000 RTP/AVP 0\r\n";
    std::string head = "INVITE sip:+15550100@198.18.0.1 SIP/2.0\r\n"
                       "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-" + call_id + "\r\n"
                       "Max-Forwards: 70\r\n"
                       "From: <sip:alice@198.18.0.2>;tag=a1\r\n"
                       "To: <sip:+15550100@198.18.0.1>\r\n"
                       "Call-ID: " + call_id + "\r\n"
                       "CSeq: 1 INVITE\r\n"
                       "Contact: <sip:alice@198.18.0.2:5060>\r\n"
                       "Content-Type: application/sdp\r\n"
                       "Content-Length: " + std::to_string(body.size()) + "\r\n";
    const std::size_t fixed = head.size() + body.size() + 2 + std::string("X-Pad: \r\n").size();
    if (size > fixed) head += "X-Pad: " + std::string(size - fixed, 'p') + "\r\n";
    return head + "\r\n" + body;
}

struct sent {
    endpoint src, dst;
    std::string text;
    [[nodiscard]] bool starts(std::string_view s) const { return text.rfind(s, 0) == 0; }
    [[nodiscard]] bool has(std::string_view s) const { return text.find(s) != std::string::npos; }
};

struct harness {
    std::shared_ptr<proxy_tables> t = make_tables();
    std::unique_ptr<peer_health> h = std::make_unique<peer_health>();
    proxy px{0, 64, 64, 7};
    std::unique_ptr<outbox> out = std::make_unique<outbox>();
    std::vector<peer_event> events;
    uint64_t now = 1000;

    std::vector<sent> take()
    {
        std::vector<sent> r;
        for (uint32_t i = 0; i < out->n; ++i)
            r.push_back({out->msgs[i].src, out->msgs[i].dst, std::string(out->msgs[i].bytes())});
        for (uint32_t i = 0; i < out->n_events; ++i) events.push_back(out->events[i]);
        out->clear();
        return r;
    }
    std::vector<sent> deliver(const std::string& text, endpoint from)
    {
        const sip_input in{text, from, sbc_ep, 0, now};
        px.on_input(*t, *h, in, *out);
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
    std::vector<sent> send_failed(const sent& s, send_failure why)
    {
        px.on_send_failed(*t, *h, s.text, s.dst, why, now, *out);
        return take();
    }
    [[nodiscard]] uint64_t stat(proxy_counter c) const { return px.stats().get(c); }
    /// Failures counted against any peer, of any class.
    [[nodiscard]] uint64_t peer_failures() const
    {
        uint64_t n = 0;
        for (const auto& by_class : px.stats().failures_by_peer)
            for (const auto& c : by_class) n += c.get();
        return n;
    }
    [[nodiscard]] uint64_t peer_attempts() const
    {
        uint64_t n = 0;
        for (const auto& c : px.stats().attempts_by_peer) n += c.get();
        return n;
    }
};

const sent* find_to(const std::vector<sent>& v, endpoint dst, std::string_view start)
{
    for (const auto& s : v)
        if (s.dst == dst && s.starts(start)) return &s;
    return nullptr;
}

bool any_invite_to_a_peer(const std::vector<sent>& v)
{
    return find_to(v, r1a, "INVITE ") != nullptr || find_to(v, r1b, "INVITE ") != nullptr;
}

/// The INVITE the proxy forwarded in `v`.
const sent* forwarded(const std::vector<sent>& v)
{
    for (const auto& s : v)
        if (s.starts("INVITE ") && (s.dst == r1a || s.dst == r1b)) return &s;
    return nullptr;
}

/// A response from a peer to the INVITE `req` as the SBC sent it (its Via lines, From, To with
/// a tag, Call-ID, CSeq).
std::string reply(const sent& req, int code, const std::string& reason)
{
    message m;
    parse(req.text, m);
    std::string r = "SIP/2.0 " + std::to_string(code) + " " + reason + "\r\n";
    for (unsigned i = 0; i < m.header_count; ++i) {
        const header& hd = m.headers[i];
        if (hd.id == header_id::via || hd.id == header_id::from || hd.id == header_id::call_id || hd.id == header_id::cseq)
            r += std::string(m.text(hd.line));
        if (hd.id == header_id::to) r += "To: " + std::string(m.text(hd.value)) + ";tag=peer\r\n";
    }
    return r + "Content-Length: 0\r\n\r\n";
}

}  // namespace

TEST(proxy_send_failed, an_invite_too_big_for_udp_once_forwarded_is_answered_513_at_once_and_blames_no_peer)
{
    harness hx;
    // Fits one datagram as the caller sent it; our Via and Record-Route push it over.
    const std::string inv = invite("big1", max_udp_payload - 40);
    ASSERT_LE(inv.size(), max_udp_payload);
    auto out = hx.deliver(inv, caller);
    EXPECT_NE(find_to(out, caller, "SIP/2.0 100"), nullptr);
    const sent* refused = find_to(out, caller, "SIP/2.0 513 Message Too Large");
    ASSERT_NE(refused, nullptr) << "answered at once, not after the peers' no-response timers";
    EXPECT_TRUE(refused->has("branch=z9hG4bK-big1"));
    EXPECT_FALSE(refused->has("z9hG4bKsT")) << refused->text;
    EXPECT_FALSE(any_invite_to_a_peer(out)) << "no peer can receive it";
    EXPECT_EQ(hx.stat(proxy_counter::send_failed_too_big), 1u);
    EXPECT_EQ(hx.stat(proxy_counter::calls_failed), 1u);

    auto later = hx.tick(2500);
    EXPECT_FALSE(any_invite_to_a_peer(later)) << "no failover either";
    EXPECT_TRUE(hx.events.empty()) << "no peer event: the peers stay up";
    EXPECT_EQ(hx.peer_failures(), 0u);
    EXPECT_EQ(hx.peer_attempts(), 0u) << "nothing was attempted on a peer";
    EXPECT_EQ(hx.stat(proxy_counter::retries_timeout), 0u);
    EXPECT_EQ(hx.px.stats().active_by_peer[0].get() + hx.px.stats().active_by_peer[1].get(), 0u);
}

TEST(proxy_send_failed, an_invite_larger_than_one_datagram_is_answered_513_not_503)
{
    harness hx;
    auto out = hx.deliver(invite("huge", max_udp_message + 10), caller);
    EXPECT_NE(find_to(out, caller, "SIP/2.0 513"), nullptr);
    EXPECT_FALSE(any_invite_to_a_peer(out));
    EXPECT_EQ(hx.stat(proxy_counter::send_failed_too_big), 1u);
    EXPECT_EQ(hx.stat(proxy_counter::table_full), 0u) << "the table is not full";
}

TEST(proxy_send_failed, an_out_of_dialog_request_too_big_once_forwarded_is_answered_513)
{
    harness hx;
    std::string msg = invite("msg1", max_udp_payload - 40);
    msg.replace(0, 6, "MESSAGE");
    const std::size_t cseq = msg.find("CSeq: 1 INVITE");
    msg.replace(cseq, 14, "CSeq: 1 MESSAGE");
    auto out = hx.deliver(msg, caller);
    EXPECT_NE(find_to(out, caller, "SIP/2.0 513"), nullptr);
    EXPECT_EQ(find_to(out, r1a, "MESSAGE "), nullptr);
    EXPECT_EQ(find_to(out, r1b, "MESSAGE "), nullptr);
    EXPECT_EQ(hx.stat(proxy_counter::send_failed_too_big), 1u);
}

TEST(proxy_send_failed, an_unresolved_next_hop_for_the_current_attempt_gets_503_at_once_without_blame)
{
    harness hx;
    auto out = hx.deliver(invite("unres"), caller);
    const sent* att = forwarded(out);
    ASSERT_NE(att, nullptr);
    auto after = hx.send_failed(*att, send_failure::unresolved);
    const sent* refused = find_to(after, caller, "SIP/2.0 503");
    ASSERT_NE(refused, nullptr);
    EXPECT_TRUE(refused->has("branch=z9hG4bK-unres"));
    EXPECT_FALSE(any_invite_to_a_peer(after)) << "the other peer is not tried: the failure is ours";
    EXPECT_EQ(hx.stat(proxy_counter::send_failed_unresolved), 1u);

    auto later = hx.tick(2500);
    EXPECT_FALSE(any_invite_to_a_peer(later));
    EXPECT_NE(find_to(later, caller, "SIP/2.0 503"), nullptr) << "our final is repeated until the ACK";
    EXPECT_TRUE(hx.events.empty());
    EXPECT_EQ(hx.peer_failures(), 0u);
    EXPECT_EQ(hx.stat(proxy_counter::retries_timeout), 0u);
    EXPECT_EQ(hx.stat(proxy_counter::exhausted), 0u);
}

TEST(proxy_send_failed, an_invite_the_dataplane_found_too_big_gets_513)
{
    harness hx;
    auto out = hx.deliver(invite("dpbig"), caller);
    const sent* att = forwarded(out);
    ASSERT_NE(att, nullptr);
    auto after = hx.send_failed(*att, send_failure::too_big);
    EXPECT_NE(find_to(after, caller, "SIP/2.0 513"), nullptr);
    EXPECT_TRUE(hx.events.empty());
    EXPECT_EQ(hx.peer_failures(), 0u);
    EXPECT_EQ(hx.stat(proxy_counter::send_failed_too_big), 1u);
}

TEST(proxy_send_failed, a_stale_attempt_or_its_ack_changes_nothing_but_the_count)
{
    harness hx;
    auto out = hx.deliver(invite("stale"), caller);
    ASSERT_NE(forwarded(out), nullptr);
    const sent first = *forwarded(out);
    auto moved = hx.deliver(reply(first, 503, "Service Unavailable"), first.dst);
    const sent* ack = find_to(moved, first.dst, "ACK ");
    ASSERT_NE(ack, nullptr);
    const sent* second = forwarded(moved);
    ASSERT_NE(second, nullptr) << "the call moved to the other peer";
    const sent second_copy = *second;

    EXPECT_TRUE(hx.send_failed(first, send_failure::no_buffer).empty()) << "the first attempt is over";
    EXPECT_TRUE(hx.send_failed(*ack, send_failure::no_route).empty()) << "an ACK is never answered";
    EXPECT_EQ(hx.stat(proxy_counter::send_failed_no_buffer), 1u);
    EXPECT_EQ(hx.stat(proxy_counter::send_failed_no_route), 1u);

    // The call goes on on the second peer.
    auto ok = hx.deliver(reply(second_copy, 200, "OK"), second_copy.dst);
    EXPECT_NE(find_to(ok, caller, "SIP/2.0 200"), nullptr);
}

TEST(proxy_send_failed, a_too_big_in_dialog_request_is_answered_513_to_its_sender_and_a_response_only_counted)
{
    harness hx;
    const std::string bye = "BYE sip:bob@198.18.1.11:5060 SIP/2.0\r\n"
                            "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-bye1\r\n"
                            "Route: <sip:198.18.0.1:5060;lr;w=00>\r\n"
                            "Max-Forwards: 70\r\n"
                            "From: <sip:alice@198.18.0.2>;tag=a1\r\n"
                            "To: <sip:bob@198.18.1.11>;tag=b1\r\n"
                            "Call-ID: dlg1\r\n"
                            "CSeq: 2 BYE\r\n"
                            "Content-Length: 0\r\n\r\n";
    auto out = hx.deliver(bye, caller);
    const sent* fwd = find_to(out, r1a, "BYE ");
    ASSERT_NE(fwd, nullptr);
    auto after = hx.send_failed(*fwd, send_failure::too_big);
    ASSERT_EQ(after.size(), 1u);
    const sent& refused = after[0];
    EXPECT_EQ(refused.dst, caller);
    EXPECT_EQ(refused.src, sbc_ep);
    EXPECT_TRUE(refused.starts("SIP/2.0 513 Message Too Large\r\nVia: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-bye1\r\n"))
        << refused.text;
    EXPECT_FALSE(refused.has("z9hG4bKsL")) << "our Via is not the sender's to see";
    EXPECT_TRUE(refused.has("CSeq: 2 BYE"));
    EXPECT_EQ(hx.stat(proxy_counter::send_failed_too_big), 1u);

    // Another cause: the sender retransmits; and a response is never answered.
    EXPECT_TRUE(hx.send_failed(*fwd, send_failure::no_buffer).empty());
    EXPECT_TRUE(hx.send_failed(refused, send_failure::too_big).empty());
    EXPECT_EQ(hx.stat(proxy_counter::send_failed_too_big), 2u);
    EXPECT_TRUE(hx.events.empty());
}
