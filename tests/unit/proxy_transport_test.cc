// Unit tests of the proxy over every pair of transports (RFC 3261 section 18, RFC 5658,
// RFC 5626): a caller on UDP, TCP or TLS calls through a trunk to a peer on UDP, TCP or TLS,
// and each side sees what it must: our Via naming the leg's transport, each message sent on
// the right transport and connection, one Record-Route when both legs are the same, two when
// they differ (with the FQDN we present on each side), responses and the callee's requests
// back on the caller's own connection, in-dialog requests with all of our Route entries gone,
// and no retransmission over a stream. Pure: messages in, messages out, no EAL.
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/address.h"
#include "sip-fastpath/proxy.h"
#include "sip-fastpath/proxy_tables.h"
#include "sip-fastpath/sip_message.h"
#include "tests/unit/sip_test_util.h"

using namespace sbc::sip;
using sbc::endpoint;
using sbc::ip_address;
using sbc::ip_prefix;
using sbc::transport;
namespace testutil = sbc::sip::testutil;

namespace {

constexpr std::array<transport, 3> all_transports{transport::udp, transport::tcp, transport::tls};
constexpr sbc::connection_id caller_conn = 42;  // the caller's connection to us
constexpr sbc::connection_id peer_conn = 77;    // the connection the peer's messages arrive on

ip_address addr(std::string_view text)
{
    return sbc::parse_address(text).value_or(ip_address{});
}

std::string name(transport p)
{
    return std::string(sbc::transport_param_name(p));
}

/// The port a trunk and a peer listen on for `p` in these tests (TLS on 5061).
uint16_t port_of(transport p)
{
    return p == transport::tls ? 5061 : 5060;
}

/// ";transport=tcp" on a stream leg, nothing for UDP: as in our Record-Route.
std::string transport_param(transport p)
{
    return p == transport::udp ? "" : ";transport=" + name(p);
}

/// Our Record-Route entry for `host` on a leg of transport `p`.
std::string our_rr(std::string_view host, transport p, uint16_t port = 0)
{
    return "<sip:" + std::string(host) + ":" + std::to_string(port != 0 ? port : port_of(p)) + transport_param(p) +
           ";lr;w=00>";
}

/// How the call is laid out: the caller's transport in, the peers' transport out, which trunk
/// the peers use and the names the SBC presents.
struct layout {
    transport in = transport::udp;
    transport out = transport::udp;
    uint16_t peer_trunk = 0;        ///< 0: the caller's trunk; 1: the carrier trunk
    bool carrier_udp_only = false;  ///< trunk 1 listens on UDP only
    std::string access_fqdn;        ///< trunk 0's
    std::string carrier_fqdn;       ///< trunk 1's
    std::string region_fqdn;
};

/// Trunk 0 "access" 198.18.0.1 (the caller's), trunk 1 "carrier" 198.18.1.1; two peers in one
/// region on the layout's trunk and transport (at 198.18.0.11/12 or 198.18.1.11/12).
std::shared_ptr<proxy_tables> make_tables(const layout& l)
{
    auto t = std::make_shared<proxy_tables>();
    trunk access;
    access.name = "access";
    access.address = addr("198.18.0.1");
    access.port = 5060;
    access.tcp_port = 5060;
    access.tls_port = 5061;
    access.fqdn = l.access_fqdn;
    access.allow = {ip_prefix{addr("198.18.0.0"), 24}};
    t->trunks.push_back(access);
    trunk carrier = access;
    carrier.name = "carrier";
    carrier.address = addr("198.18.1.1");
    carrier.fqdn = l.carrier_fqdn;
    carrier.allow = {};
    if (l.carrier_udp_only) carrier.tcp_port = carrier.tls_port = 0;
    t->trunks.push_back(carrier);
    t->regions.resize(1);
    t->regions[0].name = "region1";
    t->regions[0].fqdn = l.region_fqdn;
    const std::string net = l.peer_trunk == 0 ? "198.18.0." : "198.18.1.";
    for (const char* host : {"11", "12"}) {
        peer p;
        p.id = static_cast<uint32_t>(t->peers.size());
        p.name = "callee" + std::to_string(p.id);
        p.address = addr(net + host);
        p.port = port_of(l.out);
        p.proto = l.out;
        p.priority = 10;
        p.weight = 50;
        p.trunk = l.peer_trunk;
        t->regions[0].peers.push_back(p.id);
        t->peers.push_back(p);
    }
    t->index_peers();
    peer_group g;
    g.name = "cloud";
    g.regions = {0};
    t->groups.push_back(g);
    route r;
    r.name = "default";
    t->routes.push_back(r);
    t->default_route = 0;
    for (uint16_t c : {408, 503, 504}) t->retry.codes.set(c);
    t->retry.no_response_ms = 1000;
    t->retry.max_attempts = 4;
    return t;
}

struct sent {
    endpoint src, dst;
    testutil::parsed_text p;
    sent(endpoint s, endpoint d, std::string text) : src(s), dst(d), p(std::move(text)) {}
    [[nodiscard]] const std::string& text() const { return p.text; }
    [[nodiscard]] const message& m() const { return *p.m; }
    [[nodiscard]] bool starts(std::string_view s) const { return p.text.rfind(s, 0) == 0; }
    /// Our top Via's sent-protocol transport ("UDP", "TCP", "TLS").
    [[nodiscard]] std::string via_transport() const { return std::string(m().text(m().top_via.transport)); }
    /// The values of every header called `header`, one per line, in order.
    [[nodiscard]] std::vector<std::string> values(std::string_view header) const
    {
        std::vector<std::string> r;
        const std::string prefix = "\r\n" + std::string(header) + ": ";
        for (std::size_t at = p.text.find(prefix); at != std::string::npos; at = p.text.find(prefix, at + 1)) {
            const std::size_t from = at + prefix.size();
            r.push_back(p.text.substr(from, p.text.find("\r\n", from) - from));
        }
        return r;
    }
};

using batch = std::vector<const sent*>;

const sent* find(const batch& b, std::string_view start)
{
    for (const sent* s : b)
        if (s->starts(start)) return s;
    return nullptr;
}

std::size_t count(const batch& b, std::string_view start)
{
    std::size_t n = 0;
    for (const sent* s : b) n += s->starts(start) ? 1 : 0;
    return n;
}

struct harness {
    layout l;
    std::shared_ptr<proxy_tables> t = make_tables(l);
    std::unique_ptr<peer_health> h = std::make_unique<peer_health>();
    proxy px{0, 64, 64, 7};
    std::unique_ptr<outbox> out = std::make_unique<outbox>();
    std::vector<std::unique_ptr<sent>> all;  // keeps every message for the test's life
    uint64_t now = 1000;

    explicit harness(layout lay) : l(std::move(lay)), t(make_tables(l)) {}

    /// The caller: 198.18.0.2, on its own connection when on a stream.
    [[nodiscard]] endpoint caller() const
    {
        const bool s = sbc::is_stream(l.in);
        return endpoint{addr("198.18.0.2"), static_cast<uint16_t>(s ? 40000 : 5060), l.in, s ? caller_conn : 0};
    }
    /// Where the caller reaches us: the access trunk on its transport.
    [[nodiscard]] endpoint caller_side() const { return t->trunks[0].local(l.in); }
    /// A message from peer `to` (the endpoint we sent to) as it arrives: on the connection the
    /// stream thread delivers it on.
    [[nodiscard]] endpoint from_peer(const endpoint& to) const
    {
        endpoint e = to;
        if (sbc::is_stream(e.proto)) e.conn = peer_conn;
        return e;
    }
    [[nodiscard]] endpoint peer_side() const { return t->trunks[l.peer_trunk].leg_local(l.out); }

    batch take()
    {
        batch r;
        for (uint32_t i = 0; i < out->n; ++i) {
            all.push_back(std::make_unique<sent>(out->msgs[i].src, out->msgs[i].dst,
                                                 std::string(out->msgs[i].data.data(), out->msgs[i].len)));
            r.push_back(all.back().get());
        }
        out->clear();
        return r;
    }
    batch deliver(const std::string& text, const endpoint& from, const endpoint& local, uint16_t trunk)
    {
        const sip_input in{text, from, local, trunk, now};
        px.on_input(*t, *h, in, *out);
        return take();
    }
    batch from_caller(const std::string& text) { return deliver(text, caller(), caller_side(), 0); }
    batch from_callee(const std::string& text, const endpoint& peer)
    {
        return deliver(text, from_peer(peer), peer_side(), l.peer_trunk);
    }
    batch tick(uint64_t ms)
    {
        batch r;
        for (uint64_t i = 0; i < ms; i += 10) {
            now += 10;
            px.on_tick(*t, *h, now, *out);
            for (const sent* s : take()) r.push_back(s);
        }
        return r;
    }
};

/// The caller's INVITE as it sends it on its transport.
std::string invite(const harness& hx, const std::string& call_id)
{
    const endpoint c = hx.caller();
    const std::string at = "198.18.0.2:" + std::to_string(c.port);
    return testutil::request("INVITE", "sip:+15550100@198.18.0.1")
        .set("Via", "SIP/2.0/" + std::string(sbc::transport_via_name(c.proto)) + " " + at + ";branch=z9hG4bK-" + call_id)
        .set("From", "<sip:alice@198.18.0.2>;tag=a1")
        .set("To", "<sip:+15550100@198.18.0.1>")
        .set("Call-ID", call_id)
        .set("Contact", "<sip:alice@" + at + transport_param(c.proto) + ">")
        .text();
}

/// The caller's Contact URI (where the callee's requests are addressed).
std::string caller_target(const harness& hx)
{
    return "sip:alice@198.18.0.2:" + std::to_string(hx.caller().port) + transport_param(hx.l.in);
}

/// The peer's Contact URI.
std::string callee_target(const endpoint& peer)
{
    return "sip:callee@" + sbc::to_string(peer.addr) + ":" + std::to_string(peer.port) + transport_param(peer.proto);
}

/// The peer's response to the request `req` it received from us: every Via and Record-Route
/// copied back, a To tag on anything but 100, its Contact on a 2xx.
std::string answer(const sent& req, int code, std::string_view reason)
{
    testutil::draft d = testutil::response(code, reason);
    d.headers.clear();
    const message& m = req.m();
    for (unsigned i = 0; i < m.header_count; ++i) {
        const header& hd = m.headers[i];
        const std::string v(m.text(hd.value));
        switch (hd.id) {
        case header_id::via: d.add("Via", v); break;
        case header_id::record_route: d.add("Record-Route", v); break;
        case header_id::from: d.add("From", v); break;
        case header_id::call_id: d.add("Call-ID", v); break;
        case header_id::cseq: d.add("CSeq", v); break;
        case header_id::to: d.add("To", code > 100 ? v + ";tag=b1" : v); break;
        default: break;
        }
    }
    if (code >= 200 && code < 300) d.add("Contact", "<" + callee_target(req.dst) + ">");
    d.add("Content-Length", "0");
    return d.text();
}

/// The INVITE we forwarded in `b` (to one of the peers).
const sent* forwarded(const batch& b)
{
    return find(b, "INVITE ");
}

/// A call from INVITE to the BYE's 200 over one pair of transports, every step's output kept.
struct call_trace {
    batch setup, answered, ack, bye, bye_ok;
    const sent* trying = nullptr;
    const sent* inv = nullptr;
    const sent* ok = nullptr;
    const sent* ack_out = nullptr;
    const sent* bye_out = nullptr;
    const sent* bye_ok_out = nullptr;
    std::vector<std::string> rr_caller;  ///< Record-Route values the caller got with the 200
};

void run_call(harness& hx, call_trace& c)
{
    const std::string id = "call-" + name(hx.l.in) + "-" + name(hx.l.out);
    c.setup = hx.from_caller(invite(hx, id));
    c.trying = find(c.setup, "SIP/2.0 100");
    c.inv = forwarded(c.setup);
    ASSERT_NE(c.inv, nullptr);
    const endpoint peer = c.inv->dst;
    c.answered = hx.from_callee(answer(*c.inv, 200, "OK"), peer);
    c.ok = find(c.answered, "SIP/2.0 200");
    ASSERT_NE(c.ok, nullptr);
    c.rr_caller = c.ok->values("Record-Route");

    // The caller's ACK: its route set is the Record-Route list reversed, in one Route header.
    std::string route;
    for (auto it = c.rr_caller.rbegin(); it != c.rr_caller.rend(); ++it) route += (route.empty() ? "" : ", ") + *it;
    const endpoint ce = hx.caller();
    const std::string caller_via = "SIP/2.0/" + std::string(sbc::transport_via_name(ce.proto)) + " 198.18.0.2:" +
                                   std::to_string(ce.port);
    c.ack = hx.from_caller(testutil::request("ACK", callee_target(peer))
                               .set("Via", caller_via + ";branch=z9hG4bK-ack")
                               .set("Route", route)
                               .set("From", "<sip:alice@198.18.0.2>;tag=a1")
                               .set("To", "<sip:+15550100@198.18.0.1>;tag=b1")
                               .set("Call-ID", id)
                               .set("CSeq", "1 ACK")
                               .text());
    c.ack_out = find(c.ack, "ACK ");

    // The callee's BYE: its route set is the Record-Route list as it got it, one header each.
    testutil::draft bye = testutil::request("BYE", caller_target(hx));
    bye.set("Via", "SIP/2.0/" + std::string(sbc::transport_via_name(peer.proto)) + " " + sbc::to_string(peer) +
                       ";branch=z9hG4bK-bye");
    for (const std::string& rr : c.inv->values("Record-Route")) bye.add("Route", rr);
    bye.set("From", "<sip:+15550100@198.18.0.1>;tag=b1")
        .set("To", "<sip:alice@198.18.0.2>;tag=a1")
        .set("Call-ID", id)
        .set("CSeq", "1 BYE");
    c.bye = hx.from_callee(bye.text(), peer);
    c.bye_out = find(c.bye, "BYE ");
    ASSERT_NE(c.bye_out, nullptr);

    // The caller's 200 to the BYE, which we relay to the callee.
    std::string ok = answer(*c.bye_out, 200, "OK");
    c.bye_ok = hx.from_caller(ok);
    c.bye_ok_out = find(c.bye_ok, "SIP/2.0 200");
}

/// Runs `check` for a call over each of the nine (in, out) pairs, the layout otherwise `base`.
template <class Check>
void for_each_pair(const layout& base, Check check)
{
    for (transport in : all_transports)
        for (transport out : all_transports) {
            SCOPED_TRACE("caller on " + name(in) + ", peer on " + name(out));
            layout l = base;
            l.in = in;
            l.out = out;
            harness hx(l);
            call_trace c;
            run_call(hx, c);
            if (testing::Test::HasFatalFailure()) return;
            check(hx, c);
        }
}

}  // namespace

TEST(proxy_transport, the_invite_goes_to_the_peer_on_its_transport_with_our_via_for_that_leg)
{
    for_each_pair({}, [](harness& hx, const call_trace& c) {
        const endpoint peer = c.inv->dst;
        EXPECT_EQ(peer.proto, hx.l.out);
        EXPECT_EQ(peer.port, port_of(hx.l.out));
        EXPECT_EQ(peer.conn, 0u) << "the stream thread picks its connection to the peer";
        EXPECT_TRUE(peer.addr == addr("198.18.0.11") || peer.addr == addr("198.18.0.12")) << sbc::to_string(peer);
        EXPECT_TRUE(c.inv->src.same_place(hx.t->trunks[0].local(hx.l.out))) << "from the peer's trunk, on its transport";
        EXPECT_EQ(c.inv->via_transport(), sbc::transport_via_name(hx.l.out)) << c.inv->text();
        const std::vector<std::string> vias = c.inv->values("Via");
        ASSERT_EQ(vias.size(), 2u) << c.inv->text();
        EXPECT_EQ(vias[0].rfind("SIP/2.0/" + std::string(sbc::transport_via_name(hx.l.out)) + " 198.18.0.1:" +
                                    std::to_string(port_of(hx.l.out)) + ";branch=z9hG4bKsT",
                                0),
                  0u)
            << vias[0];
        EXPECT_EQ(vias[1].rfind("SIP/2.0/" + std::string(sbc::transport_via_name(hx.l.in)), 0), 0u)
            << "the caller's Via is kept: " << vias[1];
    });
}

TEST(proxy_transport, record_route_is_single_on_one_transport_and_doubled_when_the_transports_differ)
{
    for_each_pair({}, [](harness& hx, const call_trace& c) {
        const std::vector<std::string> rr = c.inv->values("Record-Route");
        if (hx.l.in == hx.l.out) {
            EXPECT_EQ(rr, std::vector<std::string>{our_rr("198.18.0.1", hx.l.out)}) << c.inv->text();
        } else {
            // RFC 5658: the top one for the peer's side, the second for the caller's.
            EXPECT_EQ(rr, (std::vector<std::string>{our_rr("198.18.0.1", hx.l.out), our_rr("198.18.0.1", hx.l.in)}))
                << c.inv->text();
        }
        EXPECT_EQ(c.rr_caller, rr) << "the caller gets the same list with the 200";
    });
}

TEST(proxy_transport, trying_and_the_answer_go_back_on_the_callers_own_connection)
{
    for_each_pair({}, [](harness& hx, const call_trace& c) {
        ASSERT_NE(c.trying, nullptr);
        EXPECT_EQ(c.trying->dst, hx.caller()) << "100 Trying to " << sbc::to_string(c.trying->dst);
        EXPECT_EQ(c.trying->dst.conn, hx.caller().conn);
        EXPECT_TRUE(c.trying->src.same_place(hx.caller_side()));
        EXPECT_EQ(c.ok->dst, hx.caller()) << "200 OK to " << sbc::to_string(c.ok->dst);
        EXPECT_EQ(c.ok->dst.conn, hx.caller().conn);
        EXPECT_EQ(c.ok->dst.proto, hx.l.in);
        EXPECT_EQ(c.ok->values("Via").size(), 1u) << "our Via is removed: " << c.ok->text();
    });
}

TEST(proxy_transport, the_callers_ack_follows_its_route_set_to_the_callee_without_our_routes)
{
    for_each_pair({}, [](harness& hx, const call_trace& c) {
        ASSERT_NE(c.ack_out, nullptr) << "the ACK was not forwarded";
        ASSERT_EQ(c.ack.size(), 1u);
        EXPECT_TRUE(c.ack_out->dst.same_place(c.inv->dst)) << "to the callee: " << sbc::to_string(c.ack_out->dst);
        EXPECT_EQ(c.ack_out->dst.proto, hx.l.out);
        EXPECT_EQ(c.ack_out->dst.conn, 0u);
        EXPECT_TRUE(c.ack_out->values("Route").empty()) << "all of our Route entries are removed: " << c.ack_out->text();
        EXPECT_EQ(c.ack_out->via_transport(), sbc::transport_via_name(hx.l.out));
        EXPECT_TRUE(c.ack_out->src.same_place(hx.t->trunks[0].local(hx.l.out)));
    });
}

TEST(proxy_transport, the_callees_bye_reaches_the_caller_on_its_connection_without_our_routes)
{
    for_each_pair({}, [](harness& hx, const call_trace& c) {
        EXPECT_EQ(c.bye.size(), 1u);
        EXPECT_EQ(c.bye_out->dst, hx.caller()) << "BYE to " << sbc::to_string(c.bye_out->dst);
        EXPECT_EQ(c.bye_out->dst.conn, hx.caller().conn) << "on the connection the caller opened";
        EXPECT_TRUE(c.bye_out->values("Route").empty()) << "all of our Route entries are removed: " << c.bye_out->text();
        EXPECT_EQ(c.bye_out->via_transport(), sbc::transport_via_name(hx.l.in)) << c.bye_out->text();
        EXPECT_TRUE(c.bye_out->src.same_place(hx.caller_side()));
        EXPECT_EQ(hx.px.stats().get(proxy_counter::in_dialog), 2u) << "the ACK and the BYE";
    });
}

TEST(proxy_transport, the_byes_200_goes_back_to_the_callee_where_its_bye_came_from)
{
    for_each_pair({}, [](harness& hx, const call_trace& c) {
        ASSERT_NE(c.bye_ok_out, nullptr);
        EXPECT_EQ(c.bye_ok_out->dst, hx.from_peer(c.inv->dst)) << "to " << sbc::to_string(c.bye_ok_out->dst);
        EXPECT_TRUE(c.bye_ok_out->src.same_place(hx.t->trunks[0].local(hx.l.out)));
        EXPECT_EQ(hx.px.stats().dialogs_active.get(), 0u) << "the dialog ended";
    });
}

TEST(proxy_transport, an_invite_is_repeated_on_udp_only_and_a_silent_peer_is_left_on_every_transport)
{
    for (transport out : all_transports) {
        SCOPED_TRACE("peer on " + name(out));
        layout l;
        l.in = transport::tcp;
        l.out = out;
        harness hx(l);
        const batch first = hx.from_caller(invite(hx, "silent"));
        const sent* inv = forwarded(first);
        ASSERT_NE(inv, nullptr);
        const batch early = hx.tick(900);
        std::size_t again = 0;
        for (const sent* s : early) again += s->starts("INVITE ") && s->dst == inv->dst ? 1 : 0;
        if (out == transport::udp)
            EXPECT_GE(again, 1u) << "Timer A on UDP";
        else
            EXPECT_EQ(again, 0u) << "no Timer A over a stream";
        EXPECT_EQ(count(early, "INVITE "), again) << "no other peer before the no-response timer";
        const batch later = hx.tick(200);
        const sent* next = forwarded(later);
        ASSERT_NE(next, nullptr) << "the no-response timer moves the call on every transport";
        EXPECT_FALSE(next->dst.same_place(inv->dst));
        EXPECT_EQ(hx.px.stats().get(proxy_counter::retries_timeout), 1u);
    }
}

TEST(proxy_transport, a_final_failure_is_repeated_until_the_ack_on_udp_only)
{
    for (transport in : all_transports) {
        SCOPED_TRACE("caller on " + name(in));
        layout l;
        l.in = in;
        l.out = transport::tls;
        harness hx(l);
        const sent* inv = forwarded(hx.from_caller(invite(hx, "busy")));
        ASSERT_NE(inv, nullptr);
        const batch b = hx.from_callee(answer(*inv, 486, "Busy Here"), inv->dst);
        const sent* busy = find(b, "SIP/2.0 486");
        ASSERT_NE(busy, nullptr);
        EXPECT_EQ(busy->dst, hx.caller());
        const sent* ack = find(b, "ACK ");
        ASSERT_NE(ack, nullptr) << "hop-by-hop ACK to the peer";
        EXPECT_EQ(ack->dst, inv->dst);
        EXPECT_EQ(ack->via_transport(), "TLS");
        const batch later = hx.tick(2000);
        if (in == transport::udp)
            EXPECT_GE(count(later, "SIP/2.0 486"), 1u) << "Timer G on UDP";
        else
            EXPECT_EQ(count(later, "SIP/2.0 486"), 0u) << "no Timer G over a stream";
    }
}

TEST(proxy_transport, the_503_after_every_peer_failed_goes_to_the_callers_connection)
{
    for (transport in : all_transports) {
        SCOPED_TRACE("caller on " + name(in));
        layout l;
        l.in = in;
        l.out = transport::tcp;
        harness hx(l);
        const sent* inv = forwarded(hx.from_caller(invite(hx, "fail")));
        ASSERT_NE(inv, nullptr);
        const sent* inv2 = forwarded(hx.from_callee(answer(*inv, 503, "Service Unavailable"), inv->dst));
        ASSERT_NE(inv2, nullptr) << "the other peer";
        const batch b = hx.from_callee(answer(*inv2, 503, "Service Unavailable"), inv2->dst);
        const sent* refused = find(b, "SIP/2.0 503");
        ASSERT_NE(refused, nullptr);
        EXPECT_EQ(refused->dst, hx.caller());
        EXPECT_EQ(refused->dst.conn, hx.caller().conn);
        EXPECT_NE(refused->text().find("Retry-After: 30"), std::string::npos) << refused->text();
    }
}

TEST(proxy_transport, a_cancel_on_a_stream_is_answered_on_its_connection_and_so_is_the_487)
{
    layout l;
    l.in = transport::tls;
    l.out = transport::tcp;
    harness hx(l);
    const sent* inv = forwarded(hx.from_caller(invite(hx, "cancel")));
    ASSERT_NE(inv, nullptr);
    hx.from_callee(answer(*inv, 180, "Ringing"), inv->dst);
    const std::string cancel = testutil::request("CANCEL", "sip:+15550100@198.18.0.1")
                                   .set("Via", "SIP/2.0/TLS 198.18.0.2:40000;branch=z9hG4bK-cancel")
                                   .set("From", "<sip:alice@198.18.0.2>;tag=a1")
                                   .set("To", "<sip:+15550100@198.18.0.1>")
                                   .set("Call-ID", "cancel")
                                   .set("CSeq", "1 CANCEL")
                                   .text();
    const batch c = hx.from_caller(cancel);
    const sent* ok = find(c, "SIP/2.0 200");
    ASSERT_NE(ok, nullptr);
    EXPECT_EQ(ok->dst, hx.caller());
    const sent* fwd = find(c, "CANCEL ");
    ASSERT_NE(fwd, nullptr);
    EXPECT_EQ(fwd->dst, inv->dst);
    EXPECT_EQ(fwd->via_transport(), "TCP");
    const batch fin = hx.from_callee(answer(*inv, 487, "Request Terminated"), inv->dst);
    const sent* terminated = find(fin, "SIP/2.0 487");
    ASSERT_NE(terminated, nullptr);
    EXPECT_EQ(terminated->dst, hx.caller());
}

TEST(proxy_transport, a_peer_on_another_trunk_doubles_the_record_route_on_one_transport)
{
    for (transport p : all_transports) {
        SCOPED_TRACE(name(p));
        layout l;
        l.in = p;
        l.out = p;
        l.peer_trunk = 1;
        harness hx(l);
        call_trace c;
        run_call(hx, c);
        ASSERT_FALSE(testing::Test::HasFatalFailure());
        EXPECT_TRUE(c.inv->src.same_place(hx.t->trunks[1].local(p))) << "the call leaves from the peer's trunk";
        EXPECT_EQ(c.inv->values("Record-Route"), (std::vector<std::string>{our_rr("198.18.1.1", p), our_rr("198.18.0.1", p)}))
            << c.inv->text();
        ASSERT_NE(c.ack_out, nullptr);
        EXPECT_TRUE(c.ack_out->values("Route").empty()) << c.ack_out->text();
        EXPECT_TRUE(c.ack_out->src.same_place(hx.t->trunks[1].local(p)));
        EXPECT_EQ(c.bye_out->dst, hx.caller());
        EXPECT_TRUE(c.bye_out->values("Route").empty()) << c.bye_out->text();
        EXPECT_TRUE(c.bye_out->src.same_place(hx.caller_side())) << "back out of the caller's trunk";
        ASSERT_NE(c.bye_ok_out, nullptr);
        EXPECT_TRUE(c.bye_ok_out->src.same_place(hx.t->trunks[1].local(p))) << "the BYE's 200 leaves from the peer's trunk";
    }
}

TEST(proxy_transport, one_trunk_and_one_transport_keep_a_single_record_route)
{
    for (transport p : all_transports) {
        SCOPED_TRACE(name(p));
        layout l;
        l.in = p;
        l.out = p;
        harness hx(l);
        call_trace c;
        run_call(hx, c);
        ASSERT_FALSE(testing::Test::HasFatalFailure());
        EXPECT_EQ(c.inv->values("Record-Route").size(), 1u) << c.inv->text();
        EXPECT_EQ(c.bye_out->dst, hx.caller());
    }
}

TEST(proxy_transport, record_route_names_the_fqdn_presented_on_each_side_and_routes_by_it_come_back_to_us)
{
    layout l;
    l.in = transport::udp;
    l.out = transport::tls;
    l.peer_trunk = 1;
    l.access_fqdn = "access.sbc.example.net";
    l.carrier_fqdn = "carrier.sbc.example.net";
    l.region_fqdn = "Cloud.SBC.example.com";
    {
        harness hx(l);
        call_trace c;
        run_call(hx, c);
        ASSERT_FALSE(testing::Test::HasFatalFailure());
        EXPECT_EQ(c.inv->values("Record-Route"),
                  (std::vector<std::string>{our_rr("Cloud.SBC.example.com", transport::tls),
                                            our_rr("access.sbc.example.net", transport::udp)}))
            << "the region's name toward its peers: " << c.inv->text();
        ASSERT_NE(c.ack_out, nullptr) << "our FQDN routes are recognised";
        EXPECT_TRUE(c.ack_out->values("Route").empty()) << c.ack_out->text();
        EXPECT_TRUE(c.ack_out->src.same_place(hx.t->trunks[1].local(transport::tls)));
        EXPECT_EQ(c.bye_out->dst, hx.caller());
        EXPECT_TRUE(c.bye_out->values("Route").empty()) << c.bye_out->text();
    }
    l.region_fqdn.clear();
    {
        harness hx(l);
        call_trace c;
        run_call(hx, c);
        ASSERT_FALSE(testing::Test::HasFatalFailure());
        EXPECT_EQ(c.inv->values("Record-Route"),
                  (std::vector<std::string>{our_rr("carrier.sbc.example.net", transport::tls),
                                            our_rr("access.sbc.example.net", transport::udp)}))
            << "the peer trunk's name without a region name: " << c.inv->text();
        EXPECT_TRUE(c.bye_out->values("Route").empty()) << c.bye_out->text();
    }
}

TEST(proxy_transport, a_tls_peer_behind_a_udp_only_trunk_is_reached_from_the_trunks_udp_port)
{
    layout l;
    l.in = transport::udp;
    l.out = transport::tls;
    l.peer_trunk = 1;
    l.carrier_udp_only = true;
    harness hx(l);
    call_trace c;
    run_call(hx, c);
    ASSERT_FALSE(testing::Test::HasFatalFailure());
    const endpoint from{addr("198.18.1.1"), 5060, transport::tls, 0};
    EXPECT_TRUE(c.inv->src.same_place(from));
    EXPECT_EQ(c.inv->dst.proto, transport::tls);
    EXPECT_EQ(c.inv->values("Via")[0].rfind("SIP/2.0/TLS 198.18.1.1:5060;", 0), 0u) << c.inv->text();
    EXPECT_EQ(c.inv->values("Record-Route"),
              (std::vector<std::string>{our_rr("198.18.1.1", transport::tls, 5060), our_rr("198.18.0.1", transport::udp)}))
        << c.inv->text();
    ASSERT_NE(c.ack_out, nullptr);
    EXPECT_TRUE(c.ack_out->values("Route").empty()) << c.ack_out->text();
    EXPECT_EQ(c.bye_out->dst, hx.caller());
}

TEST(proxy_transport, a_route_naming_our_address_without_our_parameters_is_not_taken_for_ours)
{
    layout l;
    harness hx(l);
    const std::string bye = testutil::request("BYE", "sip:callee@198.18.0.11:5060")
                                .set("Via", "SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-x")
                                .set("Route", "<sip:198.18.0.1:5060;lr>")
                                .set("From", "<sip:alice@198.18.0.2>;tag=a1")
                                .set("To", "<sip:bob@198.18.0.1>;tag=b1")
                                .set("Call-ID", "not-ours")
                                .set("CSeq", "2 BYE")
                                .text();
    const batch b = hx.from_caller(bye);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_TRUE(b[0]->starts("SIP/2.0 481")) << "not a dialog of ours: " << b[0]->text();
    EXPECT_EQ(hx.px.stats().get(proxy_counter::in_dialog), 0u);
}
