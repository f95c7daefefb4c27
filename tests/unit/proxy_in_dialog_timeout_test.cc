// Unit tests of calls already up on a peer that died: a BYE, re-INVITE or UPDATE the proxy
// relays to a peer and that the peer leaves unanswered is answered 408 to its sender when the
// peer's no-answer timer runs out (or at once on ICMP unreachable), a BYE's dialog and media
// end with it, and it is counted; an answer in time, or a request toward the caller, leaves
// nothing to answer. Pure: datagrams in, datagrams out, no EAL.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sip-fastpath/media_hook.h"
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

/// Media that records which calls ended; bodies pass unchanged.
struct ended_media final : media_hook {
    std::vector<uint64_t> ended;
    sdp_verdict rewrite_sdp(uint64_t, media_leg, std::string_view, std::string_view, std::span<char>, std::size_t&,
                            uint64_t) noexcept override
    {
        return sdp_verdict::unchanged;
    }
    void call_ended(uint64_t call, uint64_t) noexcept override { ended.push_back(call); }
    uint32_t silent_calls(uint64_t, std::span<uint64_t>) noexcept override { return 0; }
};

struct sent {
    endpoint src, dst;
    std::string text;
};
using batch = std::vector<sent>;

struct harness {
    std::shared_ptr<proxy_tables> t = testutil::make_tables({{r1a, 0, 10}, {r1b, 0, 20}}, 1);  // calls go to r1a
    std::unique_ptr<peer_health> h = std::make_unique<peer_health>();
    ended_media media;
    proxy px;
    std::unique_ptr<outbox> out = std::make_unique<outbox>();
    uint64_t now = 1000;

    explicit harness(uint32_t dialogs = 64) : px(0, 64, dialogs, 7) { px.set_media(&media); }

    batch take()
    {
        batch r;
        for (uint32_t i = 0; i < out->n; ++i)
            r.push_back({out->msgs[i].src, out->msgs[i].dst, std::string(out->msgs[i].data.data(), out->msgs[i].len)});
        out->clear();
        return r;
    }
    batch deliver(const std::string& text, endpoint from)
    {
        const sip_input in{text, from, sbc_ep, 0, now};
        px.on_input(*t, *h, in, *out);
        return take();
    }
    /// Runs the proxy's timers up to `ms` from now, a few ms at a time as the worker does.
    batch wait(uint64_t ms)
    {
        batch r;
        for (const uint64_t end = now + ms; now < end;) {
            now += 10 < end - now ? 10 : end - now;
            px.on_tick(*t, *h, now, *out);
            for (sent& s : take()) r.push_back(std::move(s));
        }
        return r;
    }
    [[nodiscard]] uint64_t stat(proxy_counter c) const { return px.stats().get(c); }
    [[nodiscard]] uint64_t dialogs() const { return px.stats().dialogs_active.get(); }
};

const sent* find_to(const batch& v, endpoint dst, std::string_view start)
{
    for (const sent& s : v)
        if (s.dst == dst && s.text.starts_with(start)) return &s;
    return nullptr;
}

/// A response to `req` as the SBC sent it: its Via, From, Call-ID and CSeq, To with a tag.
std::string reply(const std::string& req, int code, const std::string& reason)
{
    message m;
    parse(req, m);
    std::string r = "SIP/2.0 " + std::to_string(code) + " " + reason + "\r\n";
    for (unsigned i = 0; i < m.header_count; ++i) {
        const header& hd = m.headers[i];
        if (hd.id == header_id::via || hd.id == header_id::from || hd.id == header_id::call_id ||
            hd.id == header_id::cseq || hd.id == header_id::record_route)
            r += std::string(m.text(hd.line));
        if (hd.id == header_id::to) r += "To: " + std::string(m.text(hd.value)) + (m.to.has_tag ? "" : ";tag=b1") + "\r\n";
    }
    return r + "Contact: <sip:bob@198.18.1.11:5060>\r\nContent-Length: 0\r\n\r\n";
}

/// A call from the caller answered by r1a, under Call-ID `id`.
void call_up(harness& hx, const std::string& id)
{
    const std::string inv = "INVITE sip:+15550100@198.18.0.1 SIP/2.0\r\n"
                            "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-inv-" + id + "\r\n"
                            "Max-Forwards: 70\r\n"
                            "From: <sip:alice@198.18.0.2>;tag=a1\r\n"
                            "To: <sip:+15550100@198.18.0.1>\r\n"
                            "Call-ID: " + id + "\r\n"
                            "CSeq: 1 INVITE\r\n"
                            "Contact: <sip:alice@198.18.0.2:5060>\r\n"
                            "Content-Length: 0\r\n\r\n";
    const batch b = hx.deliver(inv, caller);
    const sent* fwd = find_to(b, r1a, "INVITE ");
    ASSERT_NE(fwd, nullptr);
    ASSERT_NE(find_to(hx.deliver(reply(fwd->text, 200, "OK"), r1a), caller, "SIP/2.0 200"), nullptr);
    ASSERT_EQ(hx.dialogs(), 1u);
}

/// An in-dialog request routed by our Record-Route from `from` (the caller or r1a) toward
/// the other side.
std::string routed(const std::string& method, const std::string& id, const endpoint& from, int cseq = 2)
{
    const bool from_callee = from == r1a;
    const std::string ours = "<sip:alice@198.18.0.2>;tag=a1", theirs = "<sip:+15550100@198.18.0.1>;tag=b1";
    return method + (from_callee ? " sip:alice@198.18.0.2:5060" : " sip:bob@198.18.1.11:5060") + " SIP/2.0\r\n"
           "Via: SIP/2.0/UDP " + (from_callee ? "198.18.1.11" : "198.18.0.2") + ":5060;branch=z9hG4bK-" + method +
           std::to_string(cseq) + "\r\n"
           "Route: <sip:198.18.0.1:5060;lr;w=00>\r\n"
           "Max-Forwards: 70\r\n"
           "From: " + (from_callee ? theirs : ours) + "\r\n"
           "To: " + (from_callee ? ours : theirs) + "\r\n"
           "Call-ID: " + id + "\r\n"
           "CSeq: " + std::to_string(cseq) + " " + method + "\r\n"
           "Content-Length: 0\r\n\r\n";
}

}  // namespace

TEST(proxy_in_dialog_timeout, a_bye_to_a_silent_peer_is_answered_408_at_its_timer_and_the_call_ends)
{
    harness hx;
    hx.h->no_response_ms[0].store(300);  // r1a's learned no-answer timer
    call_up(hx, "dead");
    if (testing::Test::HasFatalFailure()) return;
    const batch b = hx.deliver(routed("BYE", "dead", caller), caller);
    ASSERT_NE(find_to(b, r1a, "BYE "), nullptr);
    EXPECT_TRUE(hx.wait(290).empty()) << "nothing before the peer's timer";
    EXPECT_EQ(hx.dialogs(), 1u);
    // The sender retransmits meanwhile: relayed again, still one deadline.
    ASSERT_NE(find_to(hx.deliver(routed("BYE", "dead", caller), caller), r1a, "BYE "), nullptr);
    const batch late = hx.wait(20);
    ASSERT_EQ(late.size(), 1u);
    const sent& a = late[0];
    EXPECT_EQ(a.dst, caller);
    EXPECT_EQ(a.src, sbc_ep);
    EXPECT_TRUE(a.text.starts_with("SIP/2.0 408 Request Timeout\r\n")) << a.text;
    EXPECT_NE(a.text.find("branch=z9hG4bK-BYE2"), std::string::npos) << a.text;
    EXPECT_EQ(a.text.find("z9hG4bKsL"), std::string::npos) << "our own Via stays ours:\n" << a.text;
    EXPECT_NE(a.text.find("CSeq: 2 BYE"), std::string::npos) << a.text;
    EXPECT_EQ(hx.dialogs(), 0u);
    EXPECT_EQ(hx.media.ended.size(), 1u) << "the call's media freed with it";
    EXPECT_EQ(hx.stat(proxy_counter::in_dialog_timeouts), 1u);
    EXPECT_TRUE(hx.wait(2000).empty()) << "answered once";
}

TEST(proxy_in_dialog_timeout, a_200_in_time_is_relayed_and_no_408_follows)
{
    harness hx;
    call_up(hx, "alive");
    if (testing::Test::HasFatalFailure()) return;
    const batch b = hx.deliver(routed("BYE", "alive", caller), caller);
    const sent* fwd = find_to(b, r1a, "BYE ");
    ASSERT_NE(fwd, nullptr);
    hx.wait(200);
    ASSERT_NE(find_to(hx.deliver(reply(fwd->text, 200, "OK"), r1a), caller, "SIP/2.0 200"), nullptr);
    EXPECT_EQ(hx.dialogs(), 0u);
    EXPECT_TRUE(hx.wait(3000).empty());
    EXPECT_EQ(hx.stat(proxy_counter::in_dialog_timeouts), 0u);
}

TEST(proxy_in_dialog_timeout, a_reinvite_to_a_silent_peer_is_answered_408_at_the_default_timer_and_the_call_stays)
{
    harness hx;  // nothing learned for r1a: retry.no_response_ms (1000 ms) applies
    call_up(hx, "reinv");
    if (testing::Test::HasFatalFailure()) return;
    ASSERT_NE(find_to(hx.deliver(routed("INVITE", "reinv", caller), caller), r1a, "INVITE "), nullptr);
    EXPECT_TRUE(hx.wait(990).empty());
    const batch late = hx.wait(20);
    ASSERT_NE(find_to(late, caller, "SIP/2.0 408"), nullptr);
    EXPECT_NE(late[0].text.find("CSeq: 2 INVITE"), std::string::npos) << late[0].text;
    EXPECT_EQ(hx.dialogs(), 1u) << "the caller ends the call (with a BYE) if it wants";
    EXPECT_EQ(hx.stat(proxy_counter::in_dialog_timeouts), 1u);
}

TEST(proxy_in_dialog_timeout, a_provisional_to_a_reinvite_shows_the_peer_alive)
{
    harness hx;
    call_up(hx, "ringing");
    if (testing::Test::HasFatalFailure()) return;
    const batch b = hx.deliver(routed("INVITE", "ringing", caller), caller);
    const sent* fwd = find_to(b, r1a, "INVITE ");
    ASSERT_NE(fwd, nullptr);
    ASSERT_NE(find_to(hx.deliver(reply(fwd->text, 100, "Trying"), r1a), caller, "SIP/2.0 100"), nullptr);
    EXPECT_TRUE(hx.wait(3000).empty());
    EXPECT_EQ(hx.stat(proxy_counter::in_dialog_timeouts), 0u);
}

TEST(proxy_in_dialog_timeout, an_update_to_a_silent_peer_is_answered_408)
{
    harness hx;
    call_up(hx, "upd");
    if (testing::Test::HasFatalFailure()) return;
    ASSERT_NE(find_to(hx.deliver(routed("UPDATE", "upd", caller), caller), r1a, "UPDATE "), nullptr);
    ASSERT_NE(find_to(hx.wait(1010), caller, "SIP/2.0 408"), nullptr);
    EXPECT_EQ(hx.dialogs(), 1u);
}

TEST(proxy_in_dialog_timeout, a_bye_toward_the_caller_waits_for_nothing)
{
    harness hx;
    hx.h->no_response_ms[0].store(300);
    call_up(hx, "tocaller");
    if (testing::Test::HasFatalFailure()) return;
    ASSERT_NE(find_to(hx.deliver(routed("BYE", "tocaller", r1a), r1a), caller, "BYE "), nullptr);
    EXPECT_TRUE(hx.wait(3000).empty()) << "no party but a peer is timed";
    EXPECT_EQ(hx.stat(proxy_counter::in_dialog_timeouts), 0u);
    EXPECT_EQ(hx.stat(proxy_counter::in_dialog_untracked), 0u);
}

TEST(proxy_in_dialog_timeout, an_icmp_unreachable_quoting_the_bye_answers_408_at_once)
{
    harness hx;
    call_up(hx, "icmp");
    if (testing::Test::HasFatalFailure()) return;
    const batch b = hx.deliver(routed("BYE", "icmp", caller), caller);
    const sent* fwd = find_to(b, r1a, "BYE ");
    ASSERT_NE(fwd, nullptr);
    const std::string quoted = fwd->text.substr(0, 200);  // what an ICMP error quotes: the start
    hx.px.on_icmp_unreachable(*hx.t, *hx.h, quoted, r1b, hx.now, *hx.out);
    EXPECT_TRUE(hx.take().empty()) << "an error from elsewhere names nothing we sent there";
    hx.px.on_icmp_unreachable(*hx.t, *hx.h, quoted, r1a, hx.now, *hx.out);
    const batch now = hx.take();
    ASSERT_EQ(now.size(), 1u);
    EXPECT_TRUE(now[0].text.starts_with("SIP/2.0 408")) << now[0].text;
    EXPECT_EQ(now[0].dst, caller);
    EXPECT_EQ(hx.dialogs(), 0u);
    EXPECT_EQ(hx.stat(proxy_counter::in_dialog_timeouts), 1u);
    EXPECT_TRUE(hx.wait(2000).empty()) << "not answered again at the timer";
}

TEST(proxy_in_dialog_timeout, a_bye_to_a_silent_tls_peer_is_answered_408_too)
{
    // A TCP or TLS peer that dies silently keeps its connection up while the kernel retransmits:
    // the stream delivers nothing, and the caller must not wait 32 s for that either.
    harness hx;
    hx.t->trunks[0].tls_port = 5061;
    hx.t->peers[0].proto = sbc::transport::tls;
    hx.t->peers[0].port = 5061;
    hx.t->index_peers();
    hx.h->no_response_ms[0].store(300);
    const endpoint peer_conn{r1a.addr, 5061, sbc::transport::tls, 7};  // the stream thread's connection
    const std::string inv = "INVITE sip:+15550100@198.18.0.1 SIP/2.0\r\n"
                            "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-inv-tls\r\n"
                            "Max-Forwards: 70\r\n"
                            "From: <sip:alice@198.18.0.2>;tag=a1\r\n"
                            "To: <sip:+15550100@198.18.0.1>\r\n"
                            "Call-ID: tls-dead\r\n"
                            "CSeq: 1 INVITE\r\n"
                            "Contact: <sip:alice@198.18.0.2:5060>\r\n"
                            "Content-Length: 0\r\n\r\n";
    const batch b = hx.deliver(inv, caller);
    const sent* fwd = nullptr;
    for (const sent& x : b)
        if (x.dst.addr == r1a.addr && x.dst.proto == sbc::transport::tls && x.text.starts_with("INVITE ")) fwd = &x;
    ASSERT_NE(fwd, nullptr) << "the INVITE goes to the peer over TLS";
    std::string ok = reply(fwd->text, 200, "OK");
    ok.replace(ok.find("<sip:bob@198.18.1.11:5060>"), 26, "<sip:bob@198.18.1.11:5061;transport=tls>");
    ASSERT_NE(find_to(hx.deliver(ok, peer_conn), caller, "SIP/2.0 200"), nullptr);
    std::string bye = routed("BYE", "tls-dead", caller);
    bye.replace(bye.find("sip:bob@198.18.1.11:5060"), 24, "sip:bob@198.18.1.11:5061;transport=tls");
    bool relayed = false;
    for (const sent& x : hx.deliver(bye, caller)) relayed = relayed || (x.dst.proto == sbc::transport::tls && x.text.starts_with("BYE "));
    ASSERT_TRUE(relayed) << "the BYE goes to the peer over TLS";
    EXPECT_TRUE(hx.wait(290).empty());
    const batch late = hx.wait(20);
    ASSERT_EQ(late.size(), 1u);
    EXPECT_EQ(late[0].dst, caller);
    EXPECT_TRUE(late[0].text.starts_with("SIP/2.0 408 Request Timeout\r\n")) << late[0].text;
    EXPECT_EQ(hx.dialogs(), 0u);
    EXPECT_EQ(hx.stat(proxy_counter::in_dialog_timeouts), 1u);
}

TEST(proxy_in_dialog_timeout, a_full_pending_table_is_counted_and_the_request_still_relayed)
{
    harness hx(1);  // one dialog: one pending request
    call_up(hx, "full");
    if (testing::Test::HasFatalFailure()) return;
    ASSERT_NE(find_to(hx.deliver(routed("INVITE", "full", caller, 2), caller), r1a, "INVITE "), nullptr);
    ASSERT_NE(find_to(hx.deliver(routed("UPDATE", "full", caller, 3), caller), r1a, "UPDATE "), nullptr);
    EXPECT_EQ(hx.stat(proxy_counter::in_dialog_untracked), 1u);
    const batch late = hx.wait(1010);
    ASSERT_EQ(late.size(), 1u) << "only the tracked one is answered";
    EXPECT_NE(late[0].text.find("CSeq: 2 INVITE"), std::string::npos) << late[0].text;
}
