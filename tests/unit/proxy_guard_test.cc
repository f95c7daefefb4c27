// Unit tests of the proxy's guards (sip-fastpath/proxy_guard.cc), as a caller and a scanner see
// them: a scanner's request gets no answer at all (or [scanner] respond_code), is counted and
// its source handed to the dataplane for denial, while a peer or a trusted trunk's source is
// never matched; an overloaded worker refuses new calls and other out-of-dialog requests with
// 503 and Retry-After, in the share it is given, while BYEs, responses, ACKs and CANCELs of
// calls in progress and retransmissions of calls being set up still go through. Pure: no EAL.
#include <gtest/gtest.h>

#include <optional>

#include <string>
#include <vector>

#include "sip-fastpath/proxy.h"
#include "sip-fastpath/scanner_match.h"
#include "sip-fastpath/sip_message.h"
#include "tests/unit/proxy_test_util.h"

using namespace sbc::sip;
using sbc::endpoint;
using sbc::sip::testutil::caller;
using sbc::sip::testutil::r1a;
using sbc::sip::testutil::r1b;
using sbc::sip::testutil::r2a;
using sbc::sip::testutil::sbc_ep;

namespace {

std::shared_ptr<proxy_tables> tables_with_scanner(scanner_policy policy = {})
{
    auto t = testutil::make_tables({{r1a, 0}, {r1b, 0}, {r2a, 1}}, 2);
    std::string error;
    t->scanner = scanner_matcher::compile(scanner_matcher::with_defaults(true, {}), policy, 1, error);
    EXPECT_TRUE(t->scanner) << error;
    t->overload.retry_after_s = 7;
    return t;
}

std::string request(const std::string& method, const std::string& call_id, const std::string& user_agent,
                    const std::string& branch = "z9hG4bK-g1", const std::string& extra = "")
{
    return method + " sip:+15550100@198.18.0.1 SIP/2.0\r\n"
           "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=" + branch + "\r\n"
           "Max-Forwards: 70\r\n"
           "From: <sip:alice@198.18.0.2>;tag=a1\r\n"
           "To: <sip:+15550100@198.18.0.1>\r\n"
           "Call-ID: " + call_id + "\r\n"
           "CSeq: 1 " + method + "\r\n"
           "Contact: <sip:alice@198.18.0.2:5060>\r\n" +
           (user_agent.empty() ? "" : "User-Agent: " + user_agent + "\r\n") + extra +
           "Content-Length: 0\r\n\r\n";
}

// svmap's OPTIONS as it sends it (captured from Debian's sipvicious), to the trunk's address.
const std::string svmap_options =
    "OPTIONS sip:100@198.18.0.1 SIP/2.0\r\n"
    "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-1130910960;rport\r\n"
    "Max-Forwards: 70\r\n"
    "To: \"sipvicious\"<sip:100@1.1.1.1>\r\n"
    "From: \"sipvicious\"<sip:100@1.1.1.1>;tag=3766303030303031336164370133333738303935373238\r\n"
    "User-Agent: friendly-scanner\r\n"
    "Call-ID: 231359503165934606036116\r\n"
    "Contact: sip:100@198.18.0.2:5060\r\n"
    "CSeq: 1 OPTIONS\r\n"
    "Accept: application/sdp\r\n"
    "Content-Length: 0\r\n\r\n";

struct sent {
    endpoint dst;
    std::string text;
    std::unique_ptr<message> m = std::make_unique<message>();
};

struct harness {
    std::shared_ptr<proxy_tables> t;
    std::unique_ptr<peer_health> h = std::make_unique<peer_health>();
    proxy px{0, 64, 64, 7};
    std::unique_ptr<outbox> out = std::make_unique<outbox>();
    std::optional<sbc::ip_address> denied;  ///< what the last input asked the dataplane to deny

    explicit harness(scanner_policy p = {}) : t(tables_with_scanner(p)) {}

    std::vector<std::unique_ptr<sent>> deliver(const std::string& text, endpoint from)
    {
        const sip_input in{text, from, sbc_ep, 0, 1000};
        px.on_input(*t, *h, in, *out);
        std::vector<std::unique_ptr<sent>> r;
        for (uint32_t i = 0; i < out->n; ++i) {
            auto s = std::make_unique<sent>();
            s->dst = out->msgs[i].dst;
            s->text.assign(out->msgs[i].data.data(), out->msgs[i].len);
            parse(s->text, *s->m);
            r.push_back(std::move(s));
        }
        if (out->fault == source_fault::scanner) denied = from.addr; else denied.reset();
        out->clear();
        return r;
    }
    uint64_t count(proxy_counter c) const { return px.stats().get(c); }
};

const sent* find_to(const std::vector<std::unique_ptr<sent>>& v, endpoint dst, std::string_view start)
{
    for (const auto& s : v)
        if (s->dst == dst && s->text.rfind(start, 0) == 0) return s.get();
    return nullptr;
}

/// The INVITE sent to a peer (either of region1's: they share a priority), or null.
const sent* find_invite(const std::vector<std::unique_ptr<sent>>& v)
{
    for (const auto& s : v)
        if (s->dst != caller && s->text.rfind("INVITE ", 0) == 0) return s.get();
    return nullptr;
}

/// A peer's response to `req` (as the SBC sent it), with a To tag.
std::string reply(const sent& req, int code, const std::string& reason)
{
    const message& m = *req.m;
    std::string r = "SIP/2.0 " + std::to_string(code) + " " + reason + "\r\n";
    for (unsigned i = 0; i < m.header_count; ++i) {
        const header& hd = m.headers[i];
        if (hd.id == header_id::via || hd.id == header_id::from || hd.id == header_id::call_id ||
            hd.id == header_id::cseq || hd.id == header_id::record_route)
            r += std::string(m.text(hd.line));
        if (hd.id == header_id::to) r += "To: " + std::string(m.text(hd.value)) + ";tag=callee\r\n";
    }
    return r + "Contact: <sip:callee@198.18.1.11:5060>\r\nContent-Length: 0\r\n\r\n";
}

}  // namespace

TEST(proxy_scanner, a_scanners_options_gets_no_answer_and_its_source_is_reported)
{
    harness hx;
    auto out = hx.deliver(svmap_options, caller);
    EXPECT_TRUE(out.empty()) << out[0]->text;
    EXPECT_EQ(hx.count(proxy_counter::scanner_dropped), 1u);
    EXPECT_EQ(hx.count(proxy_counter::options_answered), 0u);
    ASSERT_TRUE(hx.denied);
    EXPECT_EQ(*hx.denied, caller.addr);
    EXPECT_EQ(hx.px.stats().scanner_matches[0].get(), 1u) << "shipped list, User-Agent";
}

TEST(proxy_scanner, a_scanners_invite_never_reaches_a_peer)
{
    harness hx;
    auto out = hx.deliver(request("INVITE", "sv1", "friendly-scanner"), caller);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(hx.count(proxy_counter::invites), 0u);
    EXPECT_EQ(hx.px.stats().setups_active.get(), 0u);
}

TEST(proxy_scanner, respond_mode_answers_the_configured_code_and_deny_false_reports_nobody)
{
    scanner_policy p;
    p.action = scanner_action::respond;
    p.deny = false;
    harness hx(p);
    auto out = hx.deliver(svmap_options, caller);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0]->dst, caller);
    EXPECT_EQ(out[0]->text.rfind("SIP/2.0 403 Forbidden\r\n", 0), 0u) << out[0]->text;
    EXPECT_EQ(hx.count(proxy_counter::scanner_answered), 1u);
    EXPECT_FALSE(hx.denied);
    auto ack = hx.deliver(request("ACK", "sv2", "friendly-scanner"), caller);
    EXPECT_TRUE(ack.empty()) << "an ACK is never answered";
}

TEST(proxy_scanner, ordinary_callers_peers_and_trusted_trunks_are_never_matched)
{
    harness hx;
    auto out = hx.deliver(request("INVITE", "ok1", "SIPp"), caller);
    EXPECT_NE(find_invite(out), nullptr) << "an ordinary call goes to a peer";
    EXPECT_FALSE(hx.denied);
    out = hx.deliver(request("OPTIONS", "peer1", "friendly-scanner", "z9hG4bK-p1"), r1b);
    EXPECT_EQ(hx.count(proxy_counter::scanner_dropped), 0u) << "a configured peer is never matched";
    EXPECT_FALSE(out.empty());
    hx.t->trunks[0].trusted = true;
    out = hx.deliver(request("INVITE", "trusted1", "friendly-scanner", "z9hG4bK-t1"), caller);
    EXPECT_EQ(hx.count(proxy_counter::scanner_dropped), 0u) << "a trusted trunk's source is never matched";
    EXPECT_NE(find_invite(out), nullptr);
}

TEST(proxy_overload, a_new_invite_gets_503_with_retry_after_while_a_bye_and_a_response_are_relayed)
{
    harness hx;
    // A call answered before the overload.
    auto out = hx.deliver(request("INVITE", "up1", "SIPp"), caller);
    const sent* att = find_invite(out);
    ASSERT_NE(att, nullptr);
    // A second call being set up when the overload starts.
    auto out2 = hx.deliver(request("INVITE", "setup2", "SIPp", "z9hG4bK-s2"), caller);
    const sent* att2 = find_invite(out2);
    ASSERT_NE(att2, nullptr);
    auto ok = hx.deliver(reply(*att, 200, "OK"), att->dst);
    ASSERT_NE(find_to(ok, caller, "SIP/2.0 200"), nullptr);

    hx.px.set_overload(100);
    auto refused = hx.deliver(request("INVITE", "new3", "SIPp", "z9hG4bK-n3"), caller);
    ASSERT_EQ(refused.size(), 1u);
    EXPECT_EQ(refused[0]->dst, caller);
    EXPECT_EQ(refused[0]->text.rfind("SIP/2.0 503 Service Unavailable (overloaded)\r\n", 0), 0u) << refused[0]->text;
    EXPECT_NE(refused[0]->text.find("\r\nRetry-After: 7\r\n"), std::string::npos) << refused[0]->text;
    EXPECT_EQ(hx.count(proxy_counter::shed_overload), 1u);
    EXPECT_EQ(hx.count(proxy_counter::invites), 3u) << "a refused call was offered all the same";

    auto again = hx.deliver(request("INVITE", "setup2", "SIPp", "z9hG4bK-s2"), caller);
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0]->text.rfind("SIP/2.0 100", 0), 0u) << "a retransmission of a call being set up is not refused";
    auto ringing = hx.deliver(reply(*att2, 180, "Ringing"), att2->dst);
    EXPECT_NE(find_to(ringing, caller, "SIP/2.0 180"), nullptr) << "responses are relayed";

    const std::string bye =
        "BYE sip:callee@198.18.1.11:5060 SIP/2.0\r\n"
        "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-bye1\r\n"
        "Route: <sip:198.18.0.1:5060;lr;w=00>\r\n"
        "Max-Forwards: 70\r\nFrom: <sip:alice@198.18.0.2>;tag=a1\r\nTo: <sip:+15550100@198.18.0.1>;tag=callee\r\n"
        "Call-ID: up1\r\nCSeq: 2 BYE\r\nContent-Length: 0\r\n\r\n";
    auto fwd = hx.deliver(bye, caller);
    EXPECT_NE(find_to(fwd, r1a, "BYE "), nullptr) << "in-dialog requests are never shed";

    const std::string cancel =
        "CANCEL sip:+15550100@198.18.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-s2\r\n"
        "Max-Forwards: 70\r\nFrom: <sip:alice@198.18.0.2>;tag=a1\r\nTo: <sip:+15550100@198.18.0.1>\r\n"
        "Call-ID: setup2\r\nCSeq: 1 CANCEL\r\nContent-Length: 0\r\n\r\n";
    auto cancelled = hx.deliver(cancel, caller);
    EXPECT_NE(find_to(cancelled, caller, "SIP/2.0 200"), nullptr) << "a CANCEL is never shed";
    EXPECT_EQ(hx.count(proxy_counter::shed_overload), 1u);
}

TEST(proxy_overload, other_out_of_dialog_requests_are_shed_but_options_to_the_sbc_is_answered)
{
    harness hx;
    hx.px.set_overload(100);
    auto msg = hx.deliver(request("MESSAGE", "m1", "SIPp"), caller);
    ASSERT_EQ(msg.size(), 1u);
    EXPECT_EQ(msg[0]->text.rfind("SIP/2.0 503", 0), 0u);
    const std::string options =
        "OPTIONS sip:198.18.0.1:5060 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-o1\r\n"
        "Max-Forwards: 70\r\nFrom: <sip:lb@198.18.0.2>;tag=o\r\nTo: <sip:198.18.0.1>\r\nCall-ID: opt1\r\n"
        "CSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n";
    auto probe = hx.deliver(options, caller);
    ASSERT_EQ(probe.size(), 1u);
    EXPECT_EQ(probe[0]->text.rfind("SIP/2.0 200", 0), 0u) << "the SBC's own OPTIONS answer follows [self], not this";
}

TEST(proxy_overload, a_partial_reduction_sheds_untrusted_sources_first_and_none_once_it_ends)
{
    harness hx;
    // deliver_n: 8 new INVITEs from the caller; how many were refused and how many forwarded.
    int serial = 0;
    auto deliver_n = [&](int& refused, int& forwarded) {
        refused = forwarded = 0;
        for (int i = 0; i < 8; ++i, ++serial) {
            const std::string id = "p" + std::to_string(serial);
            auto out = hx.deliver(request("INVITE", id, "SIPp", "z9hG4bK-" + id), caller);
            refused += out.size() == 1 && out[0]->text.rfind("SIP/2.0 503", 0) == 0 ? 1 : 0;
            forwarded += find_invite(out) != nullptr ? 1 : 0;
        }
    };
    int refused = 0, forwarded = 0;
    hx.px.set_overload(25);
    deliver_n(refused, forwarded);
    EXPECT_EQ(refused, 4) << "an untrusted trunk's calls are shed at twice the reduction";
    EXPECT_EQ(forwarded, 4);
    hx.t->trunks[0].trusted = true;
    deliver_n(refused, forwarded);
    EXPECT_EQ(refused, 0) << "a trusted trunk's calls are not shed below a reduction of 50 %";
    EXPECT_EQ(forwarded, 8);
    hx.px.set_overload(75);
    deliver_n(refused, forwarded);
    EXPECT_EQ(refused, 4) << "past 50 %, trusted calls are shed at what is left (75 % -> 50 %)";
    hx.px.set_overload(0);
    auto out = hx.deliver(request("INVITE", "after", "SIPp", "z9hG4bK-after"), caller);
    EXPECT_NE(find_invite(out), nullptr);
    EXPECT_EQ(hx.count(proxy_counter::shed_overload), 8u);
}
