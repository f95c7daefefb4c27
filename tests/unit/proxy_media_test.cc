// The proxy with media anchoring (sip::proxy over rtp::media_sessions and a real flow table):
// what caller and callee see in SDP, that the ports live exactly as long as the call, 503
// when no ports are left, and the BYEs of the inactivity timeout. Pure: no EAL.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rtp/media.h"
#include "rtp/sdp.h"
#include "sip-fastpath/proxy.h"
#include "sip-fastpath/sip_message.h"
#include "tests/unit/proxy_test_util.h"

namespace sbc {
namespace {

using sbc::endpoint;
using sip::testutil::sdp_of;
using sip::testutil::with_body;

constexpr uint32_t ip(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
    return (uint32_t{a} << 24) | (uint32_t{b} << 16) | (uint32_t{c} << 8) | d;
}

const endpoint sbc_ep = endpoint::udp4(ip(198, 18, 0, 1), 5060);
const endpoint caller = endpoint::udp4(ip(198, 18, 0, 2), 5060);
const endpoint callee = endpoint::udp4(ip(198, 18, 1, 11), 5060);

std::shared_ptr<sip::proxy_tables> tables()
{
    auto t = std::make_shared<sip::proxy_tables>();
    sip::trunk tr;
    tr.name = "core";
    tr.address = sbc_ep.addr;
    tr.port = sbc_ep.port;
    tr.allow = {ip_prefix{ip_address::v4(ip(198, 18, 0, 0)), 15}};
    t->trunks.push_back(tr);
    sip::peer p;
    p.name = "p0";
    p.address = callee.addr;
    p.port = callee.port;
    t->peers.push_back(p);
    t->index_peers();
    t->regions.resize(1);
    t->regions[0].peers = {0};
    t->groups.push_back({"g", {0}, sip::selector::srv});
    t->routes.push_back({"default", sip::match_field::ruri_user, "", 0});
    t->default_route = 0;
    return t;
}


std::string invite(const std::string& call_id)
{
    return with_body("INVITE sip:bob@198.18.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-" + call_id +
                         "\r\nMax-Forwards: 70\r\nFrom: <sip:alice@198.18.0.2>;tag=a1\r\nTo: <sip:bob@198.18.0.1>\r\n"
                         "Call-ID: " + call_id + "\r\nCSeq: 1 INVITE\r\nContact: <sip:alice@198.18.0.2:5060>\r\n",
                     sdp_of("198.18.0.2", 4000));
}

/// The callee's answer to the INVITE `fwd` as the SBC sent it.
std::string answer(const sip::message& fwd, int code, const std::string& body)
{
    std::string r = "SIP/2.0 " + std::to_string(code) + " X\r\n";
    for (unsigned i = 0; i < fwd.header_count; ++i) {
        const auto& h = fwd.headers[i];
        if (h.id == sip::header_id::via || h.id == sip::header_id::from || h.id == sip::header_id::call_id ||
            h.id == sip::header_id::cseq || h.id == sip::header_id::record_route)
            r += std::string(fwd.text(h.line));
        if (h.id == sip::header_id::to) r += "To: " + std::string(fwd.text(h.value)) + ";tag=b1\r\n";
    }
    return with_body(r + "Contact: <sip:bob@198.18.1.11:5060>\r\n", body);
}

struct out_msg {
    endpoint dst;
    std::string text;
};

struct fixture {
    std::shared_ptr<sip::proxy_tables> t = tables();
    std::unique_ptr<sip::peer_health> h = std::make_unique<sip::peer_health>();
    rtp::flow_table flows{rtp::flow_table_config{{sbc_ep.addr.v4_host()}, 20000, 20007, 1}};  // 4 pairs: 2 calls
    rtp::media_config cfg = [] {
        rtp::media_config c;
        c.enabled = true;
        c.addresses = {ip_address::v4(ip(198, 18, 0, 1))};
        c.inactivity_timeout_s = 2;
        c.sessions_per_worker = 16;
        return c;
    }();
    rtp::media_sessions media{flows, 0, cfg};
    sip::proxy px{0, 64, 64, 7};
    std::unique_ptr<sip::outbox> out = std::make_unique<sip::outbox>();
    uint64_t now = 1000;

    fixture()
    {
        px.set_media(&media);
        tick(10);  // the worker's clock runs before the first call, as in sbcd
    }
    std::vector<out_msg> take()
    {
        std::vector<out_msg> r;
        for (uint32_t i = 0; i < out->n; ++i) r.push_back({out->msgs[i].dst, std::string(out->msgs[i].data.data(), out->msgs[i].len)});
        out->clear();
        return r;
    }
    std::vector<out_msg> deliver(const std::string& text, endpoint from)
    {
        px.on_input(*t, *h, sip::sip_input{text, from, sbc_ep, 0, now}, *out);
        return take();
    }
    std::vector<out_msg> tick(uint64_t ms)
    {
        std::vector<out_msg> all;
        for (uint64_t i = 0; i < ms; i += 10) {
            now += 10;
            px.on_tick(*t, *h, now, *out);
            for (auto& m : take()) all.push_back(std::move(m));
        }
        return all;
    }
    /// INVITE and 200 with SDP; returns the INVITE as forwarded and the 200 as relayed.
    std::pair<out_msg, out_msg> answered_call(const std::string& id)
    {
        auto o = deliver(invite(id), caller);
        const out_msg* fwd = nullptr;
        for (const auto& m : o)
            if (m.dst == callee) fwd = &m;
        EXPECT_NE(fwd, nullptr);
        if (fwd == nullptr) return {};
        out_msg inv = *fwd;
        auto m = std::make_unique<sip::message>();
        sip::parse(inv.text, *m);
        auto o2 = deliver(answer(*m, 200, sdp_of("198.18.1.11", 6000)), callee);
        EXPECT_EQ(o2.size(), 1u);
        if (o2.empty()) return {inv, {}};
        return {inv, o2[0]};
    }
};

rtp::sdp sdp_in(const std::string& msg)
{
    rtp::sdp s;
    const auto at = msg.find("\r\n\r\n");
    EXPECT_TRUE(rtp::parse_sdp(std::string_view(msg).substr(at + 4), s)) << msg;
    return s;
}

TEST(proxy_media, each_side_sees_only_the_sbc_address_and_its_own_port)
{
    fixture f;
    auto [inv, ok] = f.answered_call("m1");
    const rtp::sdp to_b = sdp_in(inv.text), to_a = sdp_in(ok.text);
    EXPECT_EQ(to_b.c_ip, sbc_ep.addr.v4_host());
    EXPECT_EQ(to_a.c_ip, sbc_ep.addr.v4_host());
    EXPECT_NE(to_a.media[0].port, to_b.media[0].port);
    EXPECT_EQ(ok.dst, caller);
    // Content-Length follows the rewritten body.
    EXPECT_NE(inv.text.find("Content-Length: " + std::to_string(inv.text.size() - inv.text.find("\r\n\r\n") - 4)),
              std::string::npos);
    // Packets from the caller arrive on the port the caller was given, and go to the callee.
    const rtp::flow_ref r = f.flows.lookup(0, to_a.media[0].port);
    ASSERT_TRUE(r.found());
    EXPECT_EQ(r.side, 0);
    EXPECT_EQ(rtp::far_ip(f.flows.stream(r.stream).far[1][0].load()), callee.addr.v4_host());
    EXPECT_EQ(rtp::far_port(f.flows.stream(r.stream).far[1][0].load()), 6000);
}

TEST(proxy_media, a_failed_call_gives_its_ports_back_and_a_call_without_ports_gets_503)
{
    fixture f;
    f.answered_call("m1");
    f.answered_call("m2");  // the 4 pairs are taken
    auto o = f.deliver(invite("m3"), caller);
    bool refused = false;
    for (const auto& m : o) refused = refused || (m.dst == caller && m.text.rfind("SIP/2.0 503", 0) == 0);
    EXPECT_TRUE(refused);
    for (const auto& m : o) EXPECT_FALSE(m.dst == callee) << "a call without media ports must not ring anyone";
    EXPECT_EQ(f.media.summary().sessions_active, 2u);
    // A call that fails: its session goes.
    fixture g;
    auto o2 = g.deliver(invite("m4"), caller);
    const out_msg* fwd = nullptr;
    for (const auto& m : o2)
        if (m.dst == callee) fwd = &m;
    ASSERT_NE(fwd, nullptr);
    auto m = std::make_unique<sip::message>();
    sip::parse(fwd->text, *m);
    EXPECT_EQ(g.media.summary().sessions_active, 1u);
    g.deliver(answer(*m, 486, ""), callee);
    EXPECT_EQ(g.media.summary().sessions_active, 0u);
    EXPECT_EQ(g.media.ports().quarantined(), 2u);
}

TEST(proxy_media, a_silent_call_is_ended_with_a_bye_to_each_side)
{
    fixture f;
    f.answered_call("m5");
    auto o = f.tick(2500);
    const out_msg *to_a = nullptr, *to_b = nullptr;
    for (const auto& m : o) {
        if (m.text.rfind("BYE ", 0) != 0) continue;
        (m.dst == caller ? to_a : to_b) = &m;
    }
    ASSERT_NE(to_a, nullptr);
    ASSERT_NE(to_b, nullptr);
    EXPECT_EQ(to_b->dst, callee);
    // To the callee as from the caller, and to the caller as from the callee.
    EXPECT_EQ(to_b->text.rfind("BYE sip:bob@198.18.1.11:5060 SIP/2.0\r\n", 0), 0u) << to_b->text;
    EXPECT_NE(to_b->text.find("From: <sip:alice@198.18.0.2>;tag=a1\r\n"), std::string::npos) << to_b->text;
    EXPECT_NE(to_b->text.find("To: <sip:bob@198.18.0.1>;tag=b1\r\n"), std::string::npos) << to_b->text;
    EXPECT_EQ(to_a->text.rfind("BYE sip:alice@198.18.0.2:5060 SIP/2.0\r\n", 0), 0u) << to_a->text;
    EXPECT_NE(to_a->text.find("From: <sip:bob@198.18.0.1>;tag=b1\r\n"), std::string::npos) << to_a->text;
    EXPECT_NE(to_a->text.find("Call-ID: m5\r\n"), std::string::npos);
    EXPECT_EQ(f.media.summary().sessions_active, 0u);
    EXPECT_EQ(f.px.stats().dialogs_active.get(), 0u);
    sip::message m;
    EXPECT_EQ(sip::parse(to_a->text, m), sip::error::none);
}


TEST(proxy_media, a_reinvite_from_the_callee_moves_its_media_and_the_caller_keeps_its_port)
{
    fixture f;
    auto [inv, ok] = f.answered_call("m6");
    const uint16_t a_port = sdp_in(ok.text).media[0].port;
    const std::string reinvite = with_body(
        "INVITE sip:alice@198.18.0.2:5060 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.1.11:5060;branch=z9hG4bK-re1\r\n"
        "Max-Forwards: 70\r\nRoute: <sip:198.18.0.1:5060;lr;w=00>\r\nFrom: <sip:bob@198.18.0.1>;tag=b1\r\n"
        "To: <sip:alice@198.18.0.2>;tag=a1\r\nCall-ID: m6\r\nCSeq: 7 INVITE\r\n"
        "Contact: <sip:bob@198.18.1.11:5060>\r\n",
        sdp_of("198.18.1.12", 7000));
    auto o = f.deliver(reinvite, callee);
    ASSERT_EQ(o.size(), 1u);
    EXPECT_EQ(o[0].dst, caller);
    const rtp::sdp s = sdp_in(o[0].text);
    EXPECT_EQ(s.c_ip, sbc_ep.addr.v4_host());
    EXPECT_EQ(s.media[0].port, a_port);
    // What the caller sends now goes to the callee's new address.
    const rtp::flow_ref r = f.flows.lookup(0, a_port);
    ASSERT_TRUE(r.found());
    EXPECT_EQ(rtp::far_ip(f.flows.stream(r.stream).far[1][0].load()), ip(198, 18, 1, 12));
    EXPECT_EQ(rtp::far_port(f.flows.stream(r.stream).far[1][0].load()), 7000);
}

}  // namespace
}  // namespace sbc
