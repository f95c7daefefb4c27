// Header and number rules in the proxy (sip-fastpath/proxy_rules.cc): inbound rules run before
// routing (a route matches the normalised number), the stored INVITE carries them to every
// retry, outbound rules run per attempt with that attempt's peer, out-of-dialog requests get
// both, in-dialog requests neither, and each rule's hits are counted. Unit tier, no EAL.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sip-fastpath/proxy.h"
#include "sip-fastpath/route_match.h"
#include "sip-fastpath/sip_rules.h"
#include "tests/unit/proxy_test_util.h"

using namespace sbc::sip;
using sbc::endpoint;
using sbc::sip::testutil::caller;
using sbc::sip::testutil::r1a;
using sbc::sip::testutil::r1b;
using sbc::sip::testutil::sbc_ep;

namespace {

std::string request(const std::string& method, const std::string& user, const std::string& branch)
{
    return method + " sip:" + user + "@198.18.0.1 SIP/2.0\r\n"
           "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=" + branch + "\r\n"
           "Max-Forwards: 70\r\n"
           "From: <sip:alice@198.18.0.2>;tag=a1\r\n"
           "To: <sip:" + user + "@198.18.0.1>\r\n"
           "Call-ID: " + branch + "\r\n"
           "CSeq: 1 " + method + "\r\n"
           "Contact: <sip:alice@198.18.0.2:5060>\r\n"
           "X-Internal: secret\r\n"
           "Content-Length: 0\r\n\r\n";
}

rule make_rule(rule_spec s, const std::string& owner, bool outbound)
{
    rule r;
    EXPECT_FALSE(compile_rule(s, r));
    r.owner = owner;
    r.outbound = outbound;
    return r;
}

struct harness {
    std::shared_ptr<proxy_tables> t = testutil::make_tables({{r1a, 0}, {r1b, 0}}, 1);
    std::unique_ptr<peer_health> h = std::make_unique<peer_health>();
    proxy px{0, 64, 64, 7};
    std::unique_ptr<outbox> out = std::make_unique<outbox>();

    harness()
    {
        auto rt = std::make_shared<rule_tables>();
        rule_spec national;
        national.kind = rule_kind::number;
        national.field = rule_field::ruri;
        national.match = "^0([1-9][0-9]+)$";
        national.replace = "+44$1";
        rule_spec to = national;
        to.field = rule_field::to;
        rule_spec strip;
        strip.kind = rule_kind::header_remove;
        strip.header = "X-Internal";
        rule_spec tag;
        tag.kind = rule_kind::header_add;
        tag.header = "X-Peer";
        tag.value = "${peer}";
        rt->rules.push_back(make_rule(national, "trunk:core", false));
        rt->rules.push_back(make_rule(to, "trunk:core", false));
        rt->rules.push_back(make_rule(strip, "region:region1", true));
        rt->rules.push_back(make_rule(tag, "trunk:core", true));
        rt->trunk_in = {{0, 2}};
        rt->region_out = {{2, 1}};
        rt->trunk_out = {{3, 1}};
        rt->region_in = {{0, 0}};
        t->rules = rt;
        // Only +44 numbers have a route: a number the rules did not normalise gets 404.
        t->routes[0].pattern = "^\\+44";
        t->default_route = -1;
        std::string why;
        t->matcher = route_matcher::compile(t->routes, 1, why);
        EXPECT_TRUE(t->matcher) << why;
    }
    std::vector<std::string> deliver(const std::string& text, endpoint from, uint64_t now = 1000)
    {
        px.on_input(*t, *h, sip_input{text, from, sbc_ep, 0, now}, *out);
        std::vector<std::string> sent;
        for (uint32_t i = 0; i < out->n; ++i) sent.emplace_back(out->msgs[i].data.data(), out->msgs[i].len);
        out->clear();
        return sent;
    }
    const std::string* find(const std::vector<std::string>& v, std::string_view start)
    {
        for (const auto& s : v)
            if (s.rfind(start, 0) == 0) return &s;
        return nullptr;
    }
};

TEST(proxy_rules, inbound_rules_normalise_the_number_before_the_route_matches_it)
{
    harness hx;
    const auto sent = hx.deliver(request("INVITE", "02071234567", "z9hG4bK-n1"), caller);
    const std::string* inv = hx.find(sent, "INVITE ");
    ASSERT_NE(inv, nullptr) << "routed by the normalised number";
    // The normalised number, toward the peer it went to (the Request-URI named the SBC).
    const std::string start = inv->substr(0, inv->find("\r\n"));
    EXPECT_TRUE(start == "INVITE sip:+442071234567@198.18.1.11:5060 SIP/2.0" ||
                start == "INVITE sip:+442071234567@198.18.1.12:5060 SIP/2.0")
        << start;
    EXPECT_NE(inv->find("To: <sip:+442071234567@198.18.0.1>"), std::string::npos);
    EXPECT_EQ(inv->find("X-Internal"), std::string::npos) << "the region's outbound removal";
    EXPECT_NE(inv->find("X-Peer: p"), std::string::npos) << "the trunk's outbound addition";
    EXPECT_EQ(hx.px.stats().rule_hits[0].get(), 1u);
    EXPECT_EQ(hx.px.stats().rule_hits[3].get(), 1u);
    EXPECT_EQ(hx.px.stats().get(proxy_counter::rules_rewritten), 2u) << "once in, once out";
}

TEST(proxy_rules, a_number_the_rules_do_not_match_is_routed_as_it_came)
{
    harness hx;
    const auto sent = hx.deliver(request("INVITE", "alice", "z9hG4bK-n2"), caller);
    ASSERT_NE(hx.find(sent, "SIP/2.0 404"), nullptr);
    EXPECT_EQ(hx.px.stats().rule_hits[0].get(), 0u);
}

TEST(proxy_rules, a_retry_carries_the_inbound_rewrite_and_names_its_own_peer)
{
    harness hx;
    auto sent = hx.deliver(request("INVITE", "02071234567", "z9hG4bK-n3"), caller);
    const std::string* first = hx.find(sent, "INVITE ");
    ASSERT_NE(first, nullptr);
    const std::string first_peer = first->substr(first->find("X-Peer: ") + 8, 2);
    // The first peer answers 503: the call goes to the other peer, rules applied again.
    std::string reply = "SIP/2.0 503 Service Unavailable\r\n";
    const std::size_t via = first->find("Via: ");
    reply += first->substr(via, first->find("Max-Forwards") - via);
    reply += "From: <sip:alice@198.18.0.2>;tag=a1\r\nTo: <sip:+442071234567@198.18.0.1>;tag=p\r\n"
             "Call-ID: z9hG4bK-n3\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n";
    const endpoint from = first_peer == "p0" ? r1a : r1b;
    sent = hx.deliver(reply, from, 1100);
    const std::string* second = hx.find(sent, "INVITE ");
    ASSERT_NE(second, nullptr);
    EXPECT_EQ(second->substr(0, second->find("\r\n")),
              std::string("INVITE sip:+442071234567@") + (first_peer == "p0" ? "198.18.1.12" : "198.18.1.11") +
                  ":5060 SIP/2.0")
        << "retargeted to the retry's own peer";
    EXPECT_NE(second->find(std::string("X-Peer: ") + (first_peer == "p0" ? "p1" : "p0")), std::string::npos);
    EXPECT_EQ(second->find("X-Peer: " + first_peer), std::string::npos);
}

TEST(proxy_rules, out_of_dialog_requests_get_inbound_and_outbound_rules)
{
    harness hx;
    const auto sent = hx.deliver(request("MESSAGE", "02071234567", "z9hG4bK-n4"), caller);
    const std::string* msg = hx.find(sent, "MESSAGE ");
    ASSERT_NE(msg, nullptr);
    EXPECT_EQ(msg->substr(0, msg->find("\r\n")), "MESSAGE sip:+442071234567@198.18.0.1 SIP/2.0");
    EXPECT_EQ(msg->find("X-Internal"), std::string::npos);
}

}  // namespace
