// Unit tests of where the proxy lets in-dialog requests go (routed by our Record-Route): only
// toward a configured peer, toward a party of a dialog it holds (the caller, either side's
// Contact), or from a peer; anything else is answered 481 or 403 and reaches nobody. And the
// answers to what it did forward come back, from a party no trunk allows too, while a random
// source stays denied. Pure: datagrams in, datagrams out, no EAL.
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

const endpoint neighbour = endpoint::udp4(ip(198, 18, 0, 3), 5060);       ///< another trunk source
const endpoint caller_contact = endpoint::udp4(ip(198, 18, 0, 7), 5062);  ///< the caller's Contact host
const endpoint callee_contact = endpoint::udp4(ip(198, 18, 5, 5), 5080);  ///< no trunk source, no peer
const endpoint stranger = endpoint::udp4(ip(203, 0, 113, 9), 5060);       ///< nobody's

std::shared_ptr<proxy_tables> make_tables()
{
    return testutil::make_tables({{r1a, 0, 10}, {r1b, 0, 20}}, 1);  // every call goes to r1a
}

struct sent {
    endpoint src, dst;
    std::string text;
    std::unique_ptr<message> m = std::make_unique<message>();
};
using batch = std::vector<std::unique_ptr<sent>>;

struct harness {
    std::shared_ptr<proxy_tables> t = make_tables();
    std::unique_ptr<peer_health> h = std::make_unique<peer_health>();
    proxy px;
    std::unique_ptr<outbox> out = std::make_unique<outbox>();
    uint64_t now = 1000;

    explicit harness(uint32_t dialogs = 64) : px(0, 64, dialogs, 7) {}

    batch deliver(const std::string& text, endpoint from)
    {
        const sip_input in{text, from, sbc_ep, 0, now};
        px.on_input(*t, *h, in, *out);
        batch r;
        for (uint32_t i = 0; i < out->n; ++i) {
            auto s = std::make_unique<sent>();
            s->src = out->msgs[i].src;
            s->dst = out->msgs[i].dst;
            s->text.assign(out->msgs[i].data.data(), out->msgs[i].len);
            parse(s->text, *s->m);
            r.push_back(std::move(s));
        }
        out->clear();
        return r;
    }
    [[nodiscard]] uint64_t stat(proxy_counter c) const { return px.stats().get(c); }
};

std::string invite(const std::string& call_id)
{
    return "INVITE sip:+15550100@198.18.0.1 SIP/2.0\r\n"
           "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-" + call_id + "\r\n"
           "Max-Forwards: 70\r\n"
           "From: <sip:alice@198.18.0.2>;tag=a1\r\n"
           "To: <sip:+15550100@198.18.0.1>\r\n"
           "Call-ID: " + call_id + "\r\n"
           "CSeq: 1 INVITE\r\n"
           "Contact: <sip:alice@198.18.0.7:5062>\r\n"
           "Content-Length: 0\r\n\r\n";
}

/// A response to `req` (as the SBC sent it): its Via, From, Call-ID, CSeq and Record-Route
/// lines, a To tag past 100, and `extra` headers.
std::string reply(const sent& req, int code, const std::string& reason, const std::string& extra = "")
{
    const message& m = *req.m;
    std::string r = "SIP/2.0 " + std::to_string(code) + " " + reason + "\r\n";
    for (unsigned i = 0; i < m.header_count; ++i) {
        const header& hd = m.headers[i];
        if (hd.id == header_id::via || hd.id == header_id::from || hd.id == header_id::call_id ||
            hd.id == header_id::cseq || hd.id == header_id::record_route)
            r += std::string(m.text(hd.line));
        if (hd.id == header_id::to) {
            r += "To: " + std::string(m.text(hd.value));
            if (code > 100 && !m.to.has_tag) r += ";tag=b1";
            r += "\r\n";
        }
    }
    return r + extra + "Content-Length: 0\r\n\r\n";
}

/// An in-dialog request routed by our Record-Route, toward `ruri`, from `from_uri`'s side.
std::string routed(const std::string& method, const std::string& ruri, const std::string& call_id,
                   const endpoint& from, int cseq = 2)
{
    const bool from_callee = from == r1a || from == r1b;
    const std::string at = from_callee ? "198.18.1.11:5060" : from == neighbour ? "198.18.0.3:5060" : "198.18.0.2:5060";
    const std::string ours = "<sip:alice@198.18.0.2>;tag=a1", theirs = "<sip:+15550100@198.18.0.1>;tag=b1";
    return method + " " + ruri + " SIP/2.0\r\n"
           "Via: SIP/2.0/UDP " + at + ";branch=z9hG4bK-" + method + std::to_string(cseq) + "\r\n"
           "Route: <sip:198.18.0.1:5060;lr;w=00>\r\n"
           "Max-Forwards: 70\r\n"
           "From: " + (from_callee ? theirs : ours) + "\r\n"
           "To: " + (from_callee ? ours : theirs) + "\r\n"
           "Call-ID: " + call_id + "\r\n"
           "CSeq: " + std::to_string(cseq) + " " + method + "\r\n"
           "Content-Length: 0\r\n\r\n";
}

const sent* find_to(const batch& v, endpoint dst, std::string_view start)
{
    for (const auto& s : v)
        if (s->dst == dst && s->text.rfind(start, 0) == 0) return s.get();
    return nullptr;
}

/// The INVITE as forwarded to r1a, after the caller sent it.
const sent* offer(harness& hx, const std::string& call_id, batch& keep)
{
    keep = hx.deliver(invite(call_id), caller);
    return find_to(keep, r1a, "INVITE ");
}

/// A call answered by r1a whose 2xx names `contact` (a Contact header line, or none).
void answered(harness& hx, const std::string& call_id,
              const std::string& contact = "Contact: <sip:bob@198.18.5.5:5080>\r\n")
{
    batch inv;
    const sent* fwd = offer(hx, call_id, inv);
    ASSERT_NE(fwd, nullptr);
    const batch ok = hx.deliver(reply(*fwd, 200, "OK", contact), r1a);
    ASSERT_NE(find_to(ok, caller, "SIP/2.0 200"), nullptr);
}

}  // namespace

TEST(proxy_in_dialog, a_bye_toward_a_host_that_is_no_peer_without_a_dialog_is_answered_481_and_reaches_nobody)
{
    harness hx;
    const batch b = hx.deliver(routed("BYE", "sip:bob@203.0.113.9:5060", "nodialog", caller), caller);
    ASSERT_EQ(b.size(), 1u) << "only the answer";
    EXPECT_EQ(b[0]->dst, caller);
    EXPECT_EQ(b[0]->text.rfind("SIP/2.0 481", 0), 0u) << b[0]->text;
    EXPECT_EQ(hx.stat(proxy_counter::in_dialog_refused), 1u);
    EXPECT_EQ(hx.stat(proxy_counter::in_dialog), 0u);
}

TEST(proxy_in_dialog, a_bye_toward_a_host_outside_the_dialog_is_answered_403_and_reaches_nobody)
{
    harness hx;
    answered(hx, "d403");
    if (testing::Test::HasFatalFailure()) return;
    const batch b = hx.deliver(routed("BYE", "sip:bob@203.0.113.9:5060", "d403", caller), caller);
    ASSERT_EQ(b.size(), 1u) << "only the answer";
    EXPECT_EQ(b[0]->dst, caller);
    EXPECT_EQ(b[0]->text.rfind("SIP/2.0 403", 0), 0u) << b[0]->text;
    EXPECT_EQ(hx.stat(proxy_counter::in_dialog_refused), 1u);
    EXPECT_EQ(hx.px.stats().dialogs_active.get(), 1u) << "a refused BYE ends nothing";
}

TEST(proxy_in_dialog, an_ack_toward_a_host_outside_the_dialog_is_dropped_unanswered_and_counted)
{
    harness hx;
    answered(hx, "dack");
    if (testing::Test::HasFatalFailure()) return;
    const batch b = hx.deliver(routed("ACK", "sip:bob@203.0.113.9:5060", "dack", caller, 1), caller);
    EXPECT_TRUE(b.empty());
    EXPECT_EQ(hx.stat(proxy_counter::in_dialog_refused), 1u);
}

TEST(proxy_in_dialog, requests_toward_a_party_of_the_dialog_or_a_peer_are_forwarded)
{
    struct row {
        const char* what;
        endpoint from;
        std::string ruri;
        endpoint to;
    };
    const std::vector<row> rows{
        {"the callee's Contact, on another host than the peer", caller, "sip:bob@198.18.5.5:5080", callee_contact},
        {"the callee's Contact host on another port (a target refresh)", caller, "sip:bob@198.18.5.5:5090",
         endpoint::udp4(ip(198, 18, 5, 5), 5090)},
        {"a configured peer", caller, "sip:bob@198.18.1.12:5060", r1b},
        {"the dialog's caller, from another trunk source", neighbour, "sip:alice@198.18.0.2:5060", caller},
        {"the caller's Contact", neighbour, "sip:alice@198.18.0.7:5062", caller_contact},
    };
    for (const row& r : rows) {
        SCOPED_TRACE(r.what);
        harness hx;
        answered(hx, "party");
        if (testing::Test::HasFatalFailure()) return;
        const batch b = hx.deliver(routed("BYE", r.ruri, "party", r.from), r.from);
        ASSERT_EQ(b.size(), 1u);
        EXPECT_EQ(b[0]->dst, r.to) << b[0]->text;
        EXPECT_EQ(b[0]->text.rfind("BYE ", 0), 0u) << b[0]->text;
        EXPECT_EQ(hx.stat(proxy_counter::in_dialog), 1u);
        EXPECT_EQ(hx.stat(proxy_counter::in_dialog_refused), 0u);
    }
}

TEST(proxy_in_dialog, a_peers_requests_go_where_it_says_before_and_after_the_answer)
{
    harness hx;
    batch inv;
    const sent* fwd = offer(hx, "early", inv);
    ASSERT_NE(fwd, nullptr);
    hx.deliver(reply(*fwd, 183, "Session Progress", "Contact: <sip:bob@198.18.1.11:5060>\r\n"), r1a);
    // Early dialog: no dialog entry yet; the peer's UPDATE toward the caller's Contact goes.
    const batch up = hx.deliver(routed("UPDATE", "sip:alice@198.18.0.7:5062", "early", r1a, 1), r1a);
    ASSERT_EQ(up.size(), 1u);
    EXPECT_EQ(up[0]->dst, caller_contact);
    // The caller's PRACK toward the peer goes too.
    const batch pr = hx.deliver(routed("PRACK", "sip:bob@198.18.1.11:5060", "early", caller), caller);
    ASSERT_EQ(pr.size(), 1u);
    EXPECT_EQ(pr[0]->dst, r1a);
    // After the answer, the peer's BYE toward the caller.
    hx.deliver(reply(*fwd, 200, "OK", "Contact: <sip:bob@198.18.1.11:5060>\r\n"), r1a);
    const batch bye = hx.deliver(routed("BYE", "sip:alice@198.18.0.7:5062", "early", r1a, 3), r1a);
    ASSERT_EQ(bye.size(), 1u);
    EXPECT_EQ(bye[0]->dst, caller_contact);
    EXPECT_EQ(hx.stat(proxy_counter::in_dialog), 3u);
    EXPECT_EQ(hx.stat(proxy_counter::in_dialog_refused), 0u);
}

TEST(proxy_in_dialog, before_the_answer_the_caller_may_reach_peers_only)
{
    harness hx;
    batch inv;
    const sent* fwd = offer(hx, "early2", inv);
    ASSERT_NE(fwd, nullptr);
    hx.deliver(reply(*fwd, 183, "Session Progress", "Contact: <sip:bob@198.18.5.5:5080>\r\n"), r1a);
    const batch pr = hx.deliver(routed("PRACK", "sip:bob@198.18.5.5:5080", "early2", caller), caller);
    ASSERT_EQ(pr.size(), 1u) << "no dialog holds the 18x's Contact yet";
    EXPECT_EQ(pr[0]->dst, caller);
    EXPECT_EQ(pr[0]->text.rfind("SIP/2.0 481", 0), 0u) << pr[0]->text;
}

TEST(proxy_in_dialog, a_call_the_dialog_table_could_not_hold_reaches_its_peer_and_nothing_else)
{
    harness hx(1);
    answered(hx, "held");
    answered(hx, "unheld", "Contact: <sip:bob@198.18.1.11:5060>\r\n");
    if (testing::Test::HasFatalFailure()) return;
    EXPECT_EQ(hx.px.stats().dialogs_active.get(), 1u);
    const batch away = hx.deliver(routed("BYE", "sip:bob@198.18.5.5:5080", "unheld", caller), caller);
    ASSERT_EQ(away.size(), 1u);
    EXPECT_EQ(away[0]->text.rfind("SIP/2.0 481", 0), 0u) << "no dialog names that host: " << away[0]->text;
    const batch peer = hx.deliver(routed("BYE", "sip:bob@198.18.1.11:5060", "unheld", caller, 3), caller);
    ASSERT_EQ(peer.size(), 1u);
    EXPECT_EQ(peer[0]->dst, r1a);
}

TEST(proxy_in_dialog, the_answer_of_a_callee_contact_no_trunk_allows_is_relayed_to_the_caller)
{
    harness hx;
    answered(hx, "back");
    if (testing::Test::HasFatalFailure()) return;
    const batch b = hx.deliver(routed("BYE", "sip:bob@198.18.5.5:5080", "back", caller), caller);
    const sent* bye = find_to(b, callee_contact, "BYE ");
    ASSERT_NE(bye, nullptr);
    const batch ok = hx.deliver(reply(*bye, 200, "OK"), callee_contact);
    ASSERT_EQ(ok.size(), 1u);
    EXPECT_EQ(ok[0]->dst, caller);
    EXPECT_EQ(ok[0]->text.rfind("SIP/2.0 200", 0), 0u) << ok[0]->text;
    EXPECT_EQ(hx.stat(proxy_counter::source_denied), 0u);
    EXPECT_EQ(hx.px.stats().dialogs_active.get(), 0u) << "the BYE's 200 ends the dialog";
}

TEST(proxy_in_dialog, the_same_answer_from_a_random_host_is_still_denied)
{
    harness hx;
    answered(hx, "rand");
    if (testing::Test::HasFatalFailure()) return;
    const batch b = hx.deliver(routed("BYE", "sip:bob@198.18.5.5:5080", "rand", caller), caller);
    const sent* bye = find_to(b, callee_contact, "BYE ");
    ASSERT_NE(bye, nullptr);
    EXPECT_TRUE(hx.deliver(reply(*bye, 200, "OK"), stranger).empty());
    EXPECT_EQ(hx.stat(proxy_counter::source_denied), 1u);
    EXPECT_EQ(hx.px.stats().dialogs_active.get(), 1u);
}

TEST(proxy_in_dialog, a_party_cannot_have_its_answer_reflected_to_a_random_host)
{
    harness hx;
    answered(hx, "reflect");
    if (testing::Test::HasFatalFailure()) return;
    const batch b = hx.deliver(routed("BYE", "sip:bob@198.18.5.5:5080", "reflect", caller), caller);
    const sent* bye = find_to(b, callee_contact, "BYE ");
    ASSERT_NE(bye, nullptr);
    std::string forged = reply(*bye, 200, "OK");
    const std::size_t at = forged.find("sbc-src=");
    ASSERT_NE(at, std::string::npos) << forged;
    forged.replace(at + 8, 13, "cb007109.13c4");  // 203.0.113.9:5060
    EXPECT_TRUE(hx.deliver(forged, callee_contact).empty());
    EXPECT_EQ(hx.stat(proxy_counter::source_denied), 1u);
}

TEST(proxy_in_dialog, a_request_from_a_party_no_trunk_allows_is_still_denied)
{
    harness hx;
    answered(hx, "req");
    if (testing::Test::HasFatalFailure()) return;
    EXPECT_TRUE(hx.deliver(routed("BYE", "sip:alice@198.18.0.7:5062", "req", r1a), callee_contact).empty());
    EXPECT_EQ(hx.stat(proxy_counter::source_denied), 1u);
}
