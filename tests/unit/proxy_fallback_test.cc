// Unit tests of route fallback on failure classes (sip-fastpath/proxy_fallback.cc): what the
// caller and the peers see when a peer of the route's group answers a final in the route's
// fallback codes (the INVITE goes to the fallback group, the caller never sees that answer),
// when it answers another code, after ringing, when the fallback group runs out, and that a
// call falls back once only; and how [[route]] fallback keys reach the proxy tables. Pure:
// datagrams in, datagrams out, no EAL.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "control/config.h"
#include "control/proxy_build.h"
#include "sip-fastpath/proxy.h"
#include "sip-fastpath/sip_message.h"
#include "tests/unit/proxy_test_util.h"

using namespace sbc::sip;
using sbc::endpoint;
using sbc::sip::testutil::caller;
using sbc::sip::testutil::ip;
using sbc::sip::testutil::r1a;
using sbc::sip::testutil::r1b;
using sbc::sip::testutil::r2a;
using sbc::sip::testutil::sbc_ep;

namespace {

const endpoint r2b = endpoint::udp4(ip(198, 18, 2, 22), 5060);

/// Group 0 "cloud" over region1 (r1a, r1b), the route's own; group 1 "bypass" over region2
/// (r2a, r2b), its fallback for 5xx (less the [retry] codes 503 and 504, as the builder leaves
/// them) and 404.
std::shared_ptr<proxy_tables> make_tables()
{
    auto t = testutil::make_tables({{r1a, 0}, {r1b, 0}, {r2a, 1}, {r2b, 1}}, 2);
    t->groups[0].regions = {0};
    peer_group bypass;
    bypass.name = "bypass";
    bypass.regions = {1};
    t->groups.push_back(bypass);
    route_fallback& f = t->routes[0].fallback;
    f.group = 1;
    for (uint16_t c = 500; c < 600; ++c)
        if (!t->retry.retry_on(c)) f.codes.set(c);
    f.codes.set(404);
    return t;
}

std::string invite(const std::string& call_id)
{
    return "INVITE sip:+15550100@198.18.0.1 SIP/2.0\r\n"
           "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-" + call_id + "\r\n"
           "Max-Forwards: 70\r\n"
           "From: <sip:alice@198.18.0.2>;tag=a1\r\n"
           "To: <sip:+15550100@198.18.0.1>\r\n"
           "Call-ID: " + call_id + "\r\n"
           "CSeq: 1 INVITE\r\n"
           "Contact: <sip:alice@198.18.0.2:5060>\r\n"
           "Content-Length: 0\r\n\r\n";
}

struct sent {
    endpoint src, dst;
    std::string text;
    std::unique_ptr<message> m = std::make_unique<message>();
};
using sent_list = std::vector<std::unique_ptr<sent>>;

struct harness {
    std::shared_ptr<proxy_tables> t = make_tables();
    std::unique_ptr<peer_health> h = std::make_unique<peer_health>();
    proxy px{0, 64, 64, 7};
    std::unique_ptr<outbox> out = std::make_unique<outbox>();
    uint64_t now = 1000;
    std::vector<sent_list> kept;  ///< everything sent, so that pointers into it stay valid

    sent_list& take()
    {
        sent_list r;
        for (uint32_t i = 0; i < out->n; ++i) {
            auto s = std::make_unique<sent>();
            s->src = out->msgs[i].src;
            s->dst = out->msgs[i].dst;
            s->text.assign(out->msgs[i].data.data(), out->msgs[i].len);
            parse(s->text, *s->m);
            r.push_back(std::move(s));
        }
        out->clear();
        kept.push_back(std::move(r));
        return kept.back();
    }
    sent_list& deliver(const std::string& text, endpoint from)
    {
        const sip_input in{text, from, sbc_ep, 0, now};
        px.on_input(*t, *h, in, *out);
        return take();
    }
    sent_list& tick(uint64_t ms)
    {
        sent_list all;
        for (uint64_t i = 0; i < ms; i += 10) {
            now += 10;
            px.on_tick(*t, *h, now, *out);
            for (auto& s : take()) all.push_back(std::move(s));
        }
        kept.push_back(std::move(all));
        return kept.back();
    }
    [[nodiscard]] uint64_t count(proxy_counter c) const { return px.stats().get(c); }
};

/// A peer's response to the INVITE `req` as the SBC sent it, with a To tag.
std::string reply(const sent& req, int code, const std::string& reason)
{
    const message& m = *req.m;
    std::string r = "SIP/2.0 " + std::to_string(code) + " " + reason + "\r\n";
    for (unsigned i = 0; i < m.header_count; ++i) {
        const header& hd = m.headers[i];
        if (hd.id == header_id::via || hd.id == header_id::from || hd.id == header_id::call_id ||
            hd.id == header_id::cseq || hd.id == header_id::record_route)
            r += std::string(m.text(hd.line));
        if (hd.id == header_id::to) r += "To: " + std::string(m.text(hd.value)) + ";tag=peer" + std::to_string(code) + "\r\n";
    }
    return r + "Content-Length: 0\r\n\r\n";
}

/// The first INVITE among `v` not to `other` (nullptr when none).
const sent* invite_in(const sent_list& v, endpoint other = {})
{
    for (const auto& s : v)
        if (s->text.rfind("INVITE ", 0) == 0 && s->dst != other) return s.get();
    return nullptr;
}
const sent* to_caller(const sent_list& v)
{
    for (const auto& s : v)
        if (s->dst == caller && s->text.rfind("SIP/2.0 ", 0) == 0) return s.get();
    return nullptr;
}
bool in_region2(const sent* s) { return s != nullptr && (s->dst == r2a || s->dst == r2b); }
bool in_region1(const sent* s) { return s != nullptr && (s->dst == r1a || s->dst == r1b); }

/// A new call: its first attempt, in the route's own group.
const sent* call(harness& hx, const std::string& id)
{
    const sent* inv = invite_in(hx.deliver(invite(id), caller));
    EXPECT_TRUE(in_region1(inv)) << "the route's own group first";
    return inv;
}

}  // namespace

TEST(proxy_fallback, a_500_from_the_primary_group_sends_the_invite_to_the_fallback_group_unseen_by_the_caller)
{
    harness hx;
    const sent* first = call(hx, "f1");
    ASSERT_NE(first, nullptr);
    auto& out = hx.deliver(reply(*first, 500, "Server Internal Error"), first->dst);
    const sent* moved = invite_in(out);
    ASSERT_TRUE(in_region2(moved)) << "to the fallback group's peers, not the other peer of region1";
    EXPECT_EQ(to_caller(out), nullptr) << "the caller never sees the 500";
    bool acked = false;
    for (const auto& s : out) acked |= s->dst == first->dst && s->text.rfind("ACK ", 0) == 0;
    EXPECT_TRUE(acked) << "the 500 is ACKed hop by hop";
    EXPECT_EQ(moved->m->call_id(), "f1") << "the stored INVITE, re-sent";
    EXPECT_NE(moved->text.find("branch=z9hG4bK-f1"), std::string::npos) << "with the caller's Via";
    EXPECT_EQ(hx.count(proxy_counter::fallbacks), 1u);
    EXPECT_EQ(hx.px.stats().fallbacks_by_route[0].get(), 1u) << "counted for its route";
    EXPECT_EQ(hx.count(proxy_counter::retries_code), 0u) << "a fallback, not a retry";

    auto& ok = hx.deliver(reply(*moved, 200, "OK"), moved->dst);
    const sent* answer = to_caller(ok);
    ASSERT_NE(answer, nullptr);
    EXPECT_EQ(answer->m->status, 200) << "the fallback peer's answer reaches the caller";
    EXPECT_EQ(hx.count(proxy_counter::calls_answered), 1u);
}

TEST(proxy_fallback, a_single_fallback_code_moves_the_call_too)
{
    harness hx;
    const sent* first = call(hx, "f2");
    ASSERT_NE(first, nullptr);
    auto& out = hx.deliver(reply(*first, 404, "Not Found"), first->dst);
    EXPECT_TRUE(in_region2(invite_in(out)));
    EXPECT_EQ(to_caller(out), nullptr);
}

TEST(proxy_fallback, a_486_not_in_the_fallback_codes_goes_to_the_caller)
{
    harness hx;
    const sent* first = call(hx, "f3");
    ASSERT_NE(first, nullptr);
    auto& out = hx.deliver(reply(*first, 486, "Busy Here"), first->dst);
    const sent* busy = to_caller(out);
    ASSERT_NE(busy, nullptr);
    EXPECT_EQ(busy->m->status, 486);
    EXPECT_EQ(invite_in(out), nullptr);
    EXPECT_EQ(hx.count(proxy_counter::fallbacks), 0u);
}

TEST(proxy_fallback, a_500_after_a_180_is_relayed_not_fallen_back)
{
    harness hx;
    const sent* first = call(hx, "f4");
    ASSERT_NE(first, nullptr);
    EXPECT_NE(to_caller(hx.deliver(reply(*first, 180, "Ringing"), first->dst)), nullptr);
    auto& out = hx.deliver(reply(*first, 500, "Server Internal Error"), first->dst);
    const sent* err = to_caller(out);
    ASSERT_NE(err, nullptr);
    EXPECT_EQ(err->m->status, 500) << "a call that rang is not moved";
    EXPECT_EQ(invite_in(out), nullptr);
    EXPECT_EQ(hx.count(proxy_counter::fallbacks), 0u);
}

TEST(proxy_fallback, a_100_trying_does_not_stop_the_fallback)
{
    harness hx;
    const sent* first = call(hx, "f5");
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(to_caller(hx.deliver(reply(*first, 100, "Trying"), first->dst)), nullptr);
    auto& out = hx.deliver(reply(*first, 502, "Bad Gateway"), first->dst);
    EXPECT_TRUE(in_region2(invite_in(out)));
    EXPECT_EQ(to_caller(out), nullptr);
}

TEST(proxy_fallback, a_503_still_retries_within_the_group_and_its_exhaustion_is_answered_as_before)
{
    harness hx;
    const sent* first = call(hx, "f6");
    ASSERT_NE(first, nullptr);
    const sent* second = invite_in(hx.deliver(reply(*first, 503, "Service Unavailable"), first->dst));
    ASSERT_TRUE(in_region1(second)) << "retry on the other peer of the route's group";
    EXPECT_NE(second->dst, first->dst);
    auto& out = hx.deliver(reply(*second, 503, "Service Unavailable"), second->dst);
    EXPECT_EQ(invite_in(out), nullptr) << "a [retry] code never falls back";
    const sent* ans = to_caller(out);
    ASSERT_NE(ans, nullptr);
    EXPECT_EQ(ans->m->status, 503);
    EXPECT_EQ(hx.count(proxy_counter::fallbacks), 0u);
}

TEST(proxy_fallback, the_fallback_group_retries_and_fails_over_on_its_own_then_the_caller_gets_the_primary_answer)
{
    harness hx;
    hx.t->retry.max_attempts = 2;  // counted per group: the fallback group gets its own two
    const sent* first = call(hx, "f7");
    ASSERT_NE(first, nullptr);
    const sent* second = invite_in(hx.deliver(reply(*first, 503, "Service Unavailable"), first->dst));
    ASSERT_TRUE(in_region1(second));
    const sent* fb1 = invite_in(hx.deliver(reply(*second, 500, "Server Internal Error"), second->dst));
    ASSERT_TRUE(in_region2(fb1)) << "falls back even though the route's group used every attempt";
    // Silence from the first fallback peer: its no-response timer moves the call on.
    const sent* fb2 = invite_in(hx.tick(1100), fb1->dst);  // not Timer A's copies to fb1
    ASSERT_TRUE(in_region2(fb2));
    EXPECT_NE(fb2->dst, fb1->dst);
    EXPECT_EQ(hx.count(proxy_counter::retries_timeout), 1u);
    auto& out = hx.deliver(reply(*fb2, 503, "Service Unavailable"), fb2->dst);
    EXPECT_EQ(invite_in(out), nullptr);
    const sent* ans = to_caller(out);
    ASSERT_NE(ans, nullptr);
    EXPECT_EQ(ans->m->status, 500) << "the primary group's answer, not a 503 of our own:\n" << ans->text;
    EXPECT_EQ(ans->text.find("branch=z9hG4bKsT"), std::string::npos) << "our Via is removed";
    EXPECT_NE(ans->text.find("branch=z9hG4bK-f7"), std::string::npos);
    EXPECT_EQ(hx.count(proxy_counter::fallback_exhausted), 1u);
    EXPECT_EQ(hx.count(proxy_counter::exhausted), 0u);
    EXPECT_EQ(hx.count(proxy_counter::calls_failed), 1u);

    // Repeated until the ACK, as any final on UDP.
    auto& again = hx.tick(600);
    const sent* rep = to_caller(again);
    ASSERT_NE(rep, nullptr);
    EXPECT_EQ(rep->m->status, 500);
}

TEST(proxy_fallback, a_final_from_the_fallback_group_goes_to_the_caller_and_never_falls_back_again)
{
    harness hx;
    const sent* first = call(hx, "f8");
    ASSERT_NE(first, nullptr);
    const sent* fb = invite_in(hx.deliver(reply(*first, 500, "Server Internal Error"), first->dst));
    ASSERT_TRUE(in_region2(fb));
    auto& out = hx.deliver(reply(*fb, 502, "Bad Gateway"), fb->dst);
    EXPECT_EQ(invite_in(out), nullptr) << "once only: no chain, no loop";
    const sent* ans = to_caller(out);
    ASSERT_NE(ans, nullptr);
    EXPECT_EQ(ans->m->status, 502) << "the fallback group's answer";
    EXPECT_EQ(hx.count(proxy_counter::fallbacks), 1u);
}

TEST(proxy_fallback, a_route_without_fallback_relays_the_500)
{
    harness hx;
    hx.t->routes[0].fallback = route_fallback{};
    const sent* first = call(hx, "f9");
    ASSERT_NE(first, nullptr);
    auto& out = hx.deliver(reply(*first, 500, "Server Internal Error"), first->dst);
    EXPECT_EQ(invite_in(out), nullptr);
    ASSERT_NE(to_caller(out), nullptr);
    EXPECT_EQ(to_caller(out)->m->status, 500);
}

TEST(proxy_fallback, the_builder_carries_the_keys_into_the_route_less_the_retry_codes)
{
    const std::string text =
        "[[interface]]\nname = \"core\"\ndevice = \"net_null0\"\naddress = \"198.18.0.1/24\"\n"
        "[[trunk]]\nname = \"t\"\ninterface = \"core\"\nallow = [\"0.0.0.0/0\"]\n"
        "[[region]]\nname = \"r1\"\npeers = [ { address = \"198.18.0.11:5060\" } ]\n"
        "[[region]]\nname = \"r2\"\npeers = [ { address = \"198.18.0.21:5060\" } ]\n"
        "[[peer_group]]\nname = \"mcp\"\nregions = [\"r1\"]\n"
        "[[peer_group]]\nname = \"direct\"\nregions = [\"r2\"]\n"
        "[[route]]\nname = \"mobile\"\nmatch = { field = \"ruri_user\", pattern = \"^\\\\+1\" }\npeer_group = \"mcp\"\n"
        "fallback_group = \"direct\"\nfallback_codes = [\"5xx\", 404]\n"
        "[[route]]\nname = \"default\"\npeer_group = \"direct\"\n";
    auto r = sbc::control::parse_config(text, "f.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    std::vector<sbc::dataplane::interface_info> ifs(1);
    ifs[0].name = "core";
    ifs[0].address = sbc::ip_prefix{sbc::ip_address::v4(ip(198, 18, 0, 1)), 24};
    sbc::control::peer_ids ids;
    std::string error;
    auto t = sbc::control::build_proxy_tables(*r.cfg, ifs, 1, ids, error);
    ASSERT_NE(t, nullptr) << error;
    const route_fallback& f = t->routes[0].fallback;
    EXPECT_EQ(f.group, 1) << "the \"direct\" group";
    EXPECT_TRUE(f.applies(500));
    EXPECT_TRUE(f.applies(599));
    EXPECT_TRUE(f.applies(404));
    EXPECT_FALSE(f.applies(503)) << "a [retry] code stays a retry";
    EXPECT_FALSE(f.applies(504));
    EXPECT_FALSE(f.applies(486));
    EXPECT_FALSE(t->routes[1].fallback.applies(500)) << "the default route has none";
    EXPECT_EQ(t->routes[1].fallback.group, no_fallback);
}
