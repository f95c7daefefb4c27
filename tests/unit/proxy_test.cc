// Unit tests of the proxy core: what callers and peers see for each call-setup case of
// design.md section 2 (retry on 408/503/504 or silence, same region first, no retry after
// ringing, 503 when exhausted, CANCEL, in-dialog routing, table limits). Pure: datagrams in,
// datagrams out, no EAL.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sip-fastpath/proxy.h"
#include "sip-fastpath/proxy_ids.h"
#include "sip-fastpath/retarget.h"
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
using sbc::sip::testutil::r2a;
using sbc::sip::testutil::sbc_ep;

namespace {

std::shared_ptr<proxy_tables> make_tables()
{
    return testutil::make_tables({{r1a, 0}, {r1b, 0}, {r2a, 1}}, 2);
}

std::string invite(const std::string& call_id, const std::string& branch = "z9hG4bK-c1")
{
    const std::string body = "v=0\r\no=- 1 1 IN IP4 198.18.0.2\r\ns=-\r\nc=IN IP4 198.18.0.2\r\nt=0 0\r\nm=audio 6000 RTP/AVP 0\r\n";
    return "INVITE sip:+15550100@198.18.0.1 SIP/2.0\r\n"
           "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=" + branch + "\r\n"
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
    endpoint src, dst;
    std::string text;
    std::unique_ptr<message> m = std::make_unique<message>();
};

struct harness {
    std::shared_ptr<proxy_tables> t = make_tables();
    std::unique_ptr<peer_health> h = std::make_unique<peer_health>();
    proxy px{0, 64, 64, 7};
    std::unique_ptr<outbox> out = std::make_unique<outbox>();
    std::vector<peer_event> events;
    uint64_t now = 1000;

    std::vector<std::unique_ptr<sent>> take()
    {
        std::vector<std::unique_ptr<sent>> r;
        for (uint32_t i = 0; i < out->n; ++i) {
            auto s = std::make_unique<sent>();
            s->src = out->msgs[i].src;
            s->dst = out->msgs[i].dst;
            s->text.assign(out->msgs[i].data.data(), out->msgs[i].len);
            parse(s->text, *s->m);
            r.push_back(std::move(s));
        }
        for (uint32_t i = 0; i < out->n_events; ++i) events.push_back(out->events[i]);
        out->clear();
        return r;
    }
    std::vector<std::unique_ptr<sent>> deliver(const std::string& text, endpoint from)
    {
        const sip_input in{text, from, sbc_ep, 0, now};
        px.on_input(*t, *h, in, *out);
        return take();
    }
    std::vector<std::unique_ptr<sent>> tick(uint64_t ms)
    {
        std::vector<std::unique_ptr<sent>> all;
        for (uint64_t i = 0; i < ms; i += 10) {
            now += 10;
            px.on_tick(*t, *h, now, *out);
            for (auto& s : take()) all.push_back(std::move(s));  // the dataplane drains it every loop
        }
        return all;
    }
};

/// A response from a peer to the INVITE `req` (as the SBC sent it), with a To tag.
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
            if (code > 100) r += ";tag=peer" + std::to_string(code);
            r += "\r\n";
        }
    }
    r += extra;
    r += "Content-Length: 0\r\n\r\n";
    return r;
}

const sent* find_to(const std::vector<std::unique_ptr<sent>>& v, endpoint dst, std::string_view start)
{
    for (const auto& s : v)
        if (s->dst == dst && s->text.rfind(start, 0) == 0) return s.get();
    return nullptr;
}

}  // namespace

TEST(proxy, answers_100_at_once_and_forwards_the_invite_with_its_via_and_record_route)
{
    harness hx;
    auto out = hx.deliver(invite("c1"), caller);
    ASSERT_EQ(out.size(), 2u);
    const sent* trying = find_to(out, caller, "SIP/2.0 100");
    ASSERT_NE(trying, nullptr);
    const sent* fwd = out[1]->dst == caller ? out[0].get() : out[1].get();
    EXPECT_TRUE(fwd->dst == r1a || fwd->dst == r1b) << "first attempt in the local region";
    EXPECT_TRUE(fwd->m->ok()) << fwd->text;
    EXPECT_EQ(fwd->m->max_forwards, 69);
    txn_id id;
    EXPECT_TRUE(read_branch(fwd->m->text(fwd->m->top_via.branch), id));
    EXPECT_NE(fwd->text.find("Record-Route: <sip:198.18.0.1:5060;lr;w=00>"), std::string::npos) << fwd->text;
    EXPECT_NE(fwd->text.find("branch=z9hG4bK-c1"), std::string::npos) << "the caller's Via is kept";
    EXPECT_EQ(fwd->src, sbc_ep);
}

TEST(proxy, a_503_moves_the_call_to_the_other_peer_of_the_region_and_acks_the_503)
{
    harness hx;
    auto out = hx.deliver(invite("c2"), caller);
    const sent* first = out[0]->dst == caller ? out[1].get() : out[0].get();
    const endpoint other = first->dst == r1a ? r1b : r1a;
    auto out2 = hx.deliver(reply(*first, 503, "Service Unavailable"), first->dst);
    EXPECT_NE(find_to(out2, first->dst, "ACK "), nullptr) << "hop-by-hop ACK for the 503";
    EXPECT_NE(find_to(out2, other, "INVITE "), nullptr) << "retry on the other local peer";
    EXPECT_EQ(find_to(out2, caller, "SIP/2.0"), nullptr) << "the caller sees nothing of the failure";
    ASSERT_FALSE(hx.events.empty());
    EXPECT_EQ(hx.events.back().kind, peer_event_kind::failed);
    EXPECT_EQ(hx.events.back().code, 503);
    EXPECT_EQ(hx.px.stats().get(proxy_counter::retries_code), 1u);
}

TEST(proxy, the_other_region_is_tried_only_when_every_local_peer_failed)
{
    harness hx;
    auto out = hx.deliver(invite("c3"), caller);
    const sent* a1 = out[0]->dst == caller ? out[1].get() : out[0].get();
    auto out2 = hx.deliver(reply(*a1, 503, "Service Unavailable"), a1->dst);
    const endpoint other = a1->dst == r1a ? r1b : r1a;
    const sent* a2 = find_to(out2, other, "INVITE ");
    ASSERT_NE(a2, nullptr);
    auto out3 = hx.deliver(reply(*a2, 504, "Server Time-out"), other);
    EXPECT_NE(find_to(out3, r2a, "INVITE "), nullptr) << "region2 after region1 is exhausted";
    EXPECT_EQ(hx.px.stats().get(proxy_counter::failover_region), 1u);
}

TEST(proxy, when_every_peer_fails_the_caller_gets_503_with_retry_after)
{
    harness hx;
    auto out = hx.deliver(invite("c4"), caller);
    const sent* att = out[0]->dst == caller ? out[1].get() : out[0].get();
    std::vector<std::unique_ptr<sent>> last;
    for (int i = 0; i < 3; ++i) {
        last = hx.deliver(reply(*att, 503, "Service Unavailable"), att->dst);
        const sent* next = nullptr;
        for (const auto& s : last)
            if (s->text.rfind("INVITE ", 0) == 0) next = s.get();
        if (next == nullptr) break;
        // keep the message alive beyond `last` being replaced
        static std::vector<std::vector<std::unique_ptr<sent>>> keep;
        keep.push_back(std::move(last));
        att = next;
        last.clear();
    }
    const sent* final503 = find_to(last, caller, "SIP/2.0 503");
    ASSERT_NE(final503, nullptr);
    EXPECT_NE(final503->text.find("Retry-After: 30"), std::string::npos) << final503->text;
    EXPECT_EQ(hx.px.stats().get(proxy_counter::exhausted), 1u);
}

TEST(proxy, a_486_is_relayed_unchanged_and_never_retried)
{
    harness hx;
    auto out = hx.deliver(invite("c5"), caller);
    const sent* att = out[0]->dst == caller ? out[1].get() : out[0].get();
    auto out2 = hx.deliver(reply(*att, 486, "Busy Here"), att->dst);
    const sent* busy = find_to(out2, caller, "SIP/2.0 486 Busy Here");
    ASSERT_NE(busy, nullptr);
    EXPECT_EQ(busy->text.find("branch=z9hG4bKsT"), std::string::npos) << "our Via is removed";
    EXPECT_EQ(find_to(out2, r1a, "INVITE "), nullptr);
    EXPECT_EQ(find_to(out2, r1b, "INVITE "), nullptr);
    EXPECT_NE(find_to(out2, att->dst, "ACK "), nullptr);
}

TEST(proxy, no_retry_once_the_callee_rang)
{
    harness hx;
    auto out = hx.deliver(invite("c6"), caller);
    const sent* att = out[0]->dst == caller ? out[1].get() : out[0].get();
    auto ring = hx.deliver(reply(*att, 180, "Ringing"), att->dst);
    EXPECT_NE(find_to(ring, caller, "SIP/2.0 180"), nullptr);
    auto out2 = hx.deliver(reply(*att, 503, "Service Unavailable"), att->dst);
    EXPECT_NE(find_to(out2, caller, "SIP/2.0 503"), nullptr) << "relayed, no double ringing";
    for (const auto& s : out2) EXPECT_NE(s->text.rfind("INVITE ", 0), 0u);
}

TEST(proxy, a_silent_peer_is_left_after_the_no_response_timer)
{
    harness hx;
    auto out = hx.deliver(invite("c7"), caller);
    const sent* att = out[0]->dst == caller ? out[1].get() : out[0].get();
    auto early = hx.tick(900);
    EXPECT_NE(find_to(early, att->dst, "INVITE "), nullptr) << "Timer A retransmits to the same peer";
    const endpoint other = att->dst == r1a ? r1b : r1a;
    EXPECT_EQ(find_to(early, other, "INVITE "), nullptr) << "not before the no-response timer";
    auto later = hx.tick(200);
    EXPECT_NE(find_to(later, other, "INVITE "), nullptr);
    EXPECT_EQ(hx.px.stats().get(proxy_counter::retries_timeout), 1u);
}

TEST(proxy, a_silent_peer_is_left_after_its_learned_timer_not_no_response_ms)
{
    harness hx;
    // Both peers of region 1 (ids 0 and 1) have a learned timer of 250 ms (control/peer_timer.h).
    hx.h->no_response_ms[0].store(250);
    hx.h->no_response_ms[1].store(250);
    auto out = hx.deliver(invite("c7l"), caller);
    const sent* att = out[0]->dst == caller ? out[1].get() : out[0].get();
    const endpoint other = att->dst == r1a ? r1b : r1a;
    auto early = hx.tick(200);
    EXPECT_EQ(find_to(early, other, "INVITE "), nullptr) << "not before the learned timer";
    auto later = hx.tick(100);
    EXPECT_NE(find_to(later, other, "INVITE "), nullptr) << "failed over at 250 ms, not at no_response_ms (1000)";
    EXPECT_EQ(hx.px.stats().get(proxy_counter::retries_timeout), 1u);
}

TEST(proxy, the_first_response_of_an_attempt_reports_the_peers_response_time_once)
{
    harness hx;
    auto out = hx.deliver(invite("c7r"), caller);
    const sent* att = out[0]->dst == caller ? out[1].get() : out[0].get();
    hx.tick(30);
    hx.deliver(reply(*att, 100, "Trying"), att->dst);
    hx.tick(20);
    hx.deliver(reply(*att, 180, "Ringing"), att->dst);
    std::vector<peer_event> responded;
    for (const auto& e : hx.events)
        if (e.kind == peer_event_kind::responded) responded.push_back(e);
    ASSERT_EQ(responded.size(), 1u) << "the 180 is not the first response";
    EXPECT_EQ(responded[0].peer_id, att->dst == r1a ? 0u : 1u);
    EXPECT_EQ(responded[0].code, 100);
    EXPECT_EQ(responded[0].rtt_us, 30'000u);
}

TEST(proxy, icmp_unreachable_moves_the_call_at_once)
{
    harness hx;
    auto out = hx.deliver(invite("c8"), caller);
    const sent* att = out[0]->dst == caller ? out[1].get() : out[0].get();
    hx.px.on_icmp_unreachable(*hx.t, *hx.h, std::string_view(att->text).substr(0, 500), att->dst, hx.now, *hx.out);
    auto after = hx.take();
    const endpoint other = att->dst == r1a ? r1b : r1a;
    EXPECT_NE(find_to(after, other, "INVITE "), nullptr);
    EXPECT_EQ(hx.px.stats().get(proxy_counter::retries_icmp), 1u);
}

TEST(proxy, a_ringing_call_whose_peer_is_lost_is_answered_at_once_and_not_tried_elsewhere)
{
    harness hx;
    auto out = hx.deliver(invite("c8r"), caller);
    const sent* att = out[0]->dst == caller ? out[1].get() : out[0].get();
    const std::string sent_invite = att->text;
    const endpoint peer = att->dst;
    auto ring = hx.deliver(reply(*att, 180, "Ringing"), peer);
    ASSERT_NE(find_to(ring, caller, "SIP/2.0 180"), nullptr);
    hx.px.on_icmp_unreachable(*hx.t, *hx.h, std::string_view(sent_invite).substr(0, 500), peer, hx.now, *hx.out);
    auto after = hx.take();
    EXPECT_NE(find_to(after, caller, "SIP/2.0 503"), nullptr) << "the caller is not left ringing until Timer C";
    for (const auto& m : after) EXPECT_NE(m->text.rfind("INVITE ", 0), 0u) << "no second ringing phone";
}

TEST(proxy, answered_call_is_a_dialog_until_bye_and_its_200)
{
    harness hx;
    auto out = hx.deliver(invite("c9"), caller);
    const sent* att = out[0]->dst == caller ? out[1].get() : out[0].get();
    auto ok = hx.deliver(reply(*att, 200, "OK", "Contact: <sip:callee@198.18.1.11:5060>\r\n"), att->dst);
    const sent* ok_up = find_to(ok, caller, "SIP/2.0 200");
    ASSERT_NE(ok_up, nullptr);
    EXPECT_NE(ok_up->text.find("Record-Route: <sip:198.18.0.1:5060;lr;w=00>"), std::string::npos);
    EXPECT_EQ(hx.px.stats().dialogs_active.get(), 1u);
    const std::string bye =
        "BYE sip:callee@198.18.1.11:5060 SIP/2.0\r\n"
        "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-bye1\r\n"
        "Route: <sip:198.18.0.1:5060;lr;w=00>\r\n"
        "Max-Forwards: 70\r\nFrom: <sip:alice@198.18.0.2>;tag=a1\r\nTo: <sip:+15550100@198.18.0.1>;tag=peer200\r\n"
        "Call-ID: c9\r\nCSeq: 2 BYE\r\nContent-Length: 0\r\n\r\n";
    auto fwd = hx.deliver(bye, caller);
    const sent* bye_out = find_to(fwd, r1a, "BYE ");
    ASSERT_NE(bye_out, nullptr) << "loose routing to the Request-URI";
    EXPECT_EQ(bye_out->text.find("Route:"), std::string::npos) << "our Route is removed";
    auto back = hx.deliver(reply(*bye_out, 200, "OK"), r1a);
    const sent* ok_bye = find_to(back, caller, "SIP/2.0 200");
    ASSERT_NE(ok_bye, nullptr) << "the BYE's 200 goes back to the caller by our Via";
    EXPECT_EQ(hx.px.stats().dialogs_active.get(), 0u);
    EXPECT_EQ(hx.px.stats().active_by_peer[0].get() + hx.px.stats().active_by_peer[1].get(), 0u);
}

TEST(proxy, cancel_while_ringing_gives_200_and_the_peers_487_to_the_caller)
{
    harness hx;
    auto out = hx.deliver(invite("c10"), caller);
    const sent* att = out[0]->dst == caller ? out[1].get() : out[0].get();
    hx.deliver(reply(*att, 180, "Ringing"), att->dst);
    const std::string cancel =
        "CANCEL sip:+15550100@198.18.0.1 SIP/2.0\r\n"
        "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-c1\r\n"
        "Max-Forwards: 70\r\nFrom: <sip:alice@198.18.0.2>;tag=a1\r\nTo: <sip:+15550100@198.18.0.1>\r\n"
        "Call-ID: c10\r\nCSeq: 1 CANCEL\r\nContent-Length: 0\r\n\r\n";
    auto c = hx.deliver(cancel, caller);
    EXPECT_NE(find_to(c, caller, "SIP/2.0 200"), nullptr);
    const sent* cancel_out = find_to(c, att->dst, "CANCEL ");
    ASSERT_NE(cancel_out, nullptr);
    EXPECT_EQ(cancel_out->m->text(cancel_out->m->top_via.branch), att->m->text(att->m->top_via.branch))
        << "CANCEL carries the INVITE's branch";
    auto fin = hx.deliver(reply(*att, 487, "Request Terminated"), att->dst);
    EXPECT_NE(find_to(fin, caller, "SIP/2.0 487"), nullptr);
    EXPECT_NE(find_to(fin, att->dst, "ACK "), nullptr);
}

TEST(proxy, a_full_call_table_answers_503_and_recovers)
{
    harness hx;
    std::vector<std::vector<std::unique_ptr<sent>>> keep;
    for (int i = 0; i < 64; ++i) keep.push_back(hx.deliver(invite("full" + std::to_string(i), "z9hG4bK-f" + std::to_string(i)), caller));
    auto refused = hx.deliver(invite("one-too-many", "z9hG4bK-x"), caller);
    ASSERT_EQ(refused.size(), 1u);
    EXPECT_EQ(refused[0]->text.rfind("SIP/2.0 503", 0), 0u);
    EXPECT_NE(refused[0]->text.find("Retry-After:"), std::string::npos);
    EXPECT_EQ(hx.px.stats().get(proxy_counter::table_full), 1u);
    // Every call fails over to region 2... then ends; once released, new calls are taken again.
    hx.tick(40'000);
    auto again = hx.deliver(invite("after", "z9hG4bK-y"), caller);
    EXPECT_NE(find_to(again, caller, "SIP/2.0 100"), nullptr);
}

TEST(proxy, a_source_outside_the_trunk_gets_no_answer)
{
    harness hx;
    auto out = hx.deliver(invite("evil"), endpoint::udp4(ip(203, 0, 113, 9), 5060));
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(hx.px.stats().get(proxy_counter::source_denied), 1u);
}

TEST(proxy, a_retransmitted_invite_is_answered_from_state_not_forwarded_again)
{
    harness hx;
    hx.deliver(invite("c11"), caller);
    auto again = hx.deliver(invite("c11"), caller);
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0]->text.rfind("SIP/2.0 100", 0), 0u);
    EXPECT_EQ(hx.px.stats().get(proxy_counter::retransmissions_absorbed), 1u);
}

TEST(proxy, a_malformed_invite_is_answered_400)
{
    harness hx;
    std::string bad = invite("c12");
    bad.replace(bad.find("CSeq: 1 INVITE"), 14, "CSeq: 1 BYE   ");
    auto out = hx.deliver(bad, caller);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0]->text.rfind("SIP/2.0 400", 0), 0u) << out[0]->text;
}

TEST(proxy, down_peers_get_no_new_calls)
{
    harness hx;
    hx.h->word[0].store(peer_state::down);
    for (int i = 0; i < 20; ++i) {
        auto out = hx.deliver(invite("d" + std::to_string(i), "z9hG4bK-d" + std::to_string(i)), caller);
        EXPECT_EQ(find_to(out, r1a, "INVITE "), nullptr);
        EXPECT_NE(find_to(out, r1b, "INVITE "), nullptr);
    }
}

TEST(proxy, when_every_peer_is_marked_down_the_call_is_still_tried_on_them)
{
    harness hx;
    for (uint32_t id = 0; id < 3; ++id) hx.h->word[id].store(peer_state::down);
    auto out = hx.deliver(invite("all-down"), caller);
    EXPECT_TRUE(find_to(out, r1a, "INVITE ") != nullptr || find_to(out, r1b, "INVITE ") != nullptr)
        << "the local region first, down or not";
    EXPECT_EQ(hx.px.stats().get(proxy_counter::all_down_tried), 1u);
    hx.h->word[0].store(peer_state::disabled);
    hx.h->word[1].store(peer_state::draining);
    auto out2 = hx.deliver(invite("all-down-2", "z9hG4bK-ad2"), caller);
    EXPECT_NE(find_to(out2, r2a, "INVITE "), nullptr) << "the operator's draining and disabled are respected";
}

TEST(proxy, while_draining_new_calls_get_503_and_calls_in_progress_go_on)
{
    harness hx;
    auto out = hx.deliver(invite("before"), caller);
    const sent* att = out[0]->dst == caller ? out[1].get() : out[0].get();
    hx.h->node.store(peer_health::node_draining);
    auto refused = hx.deliver(invite("during", "z9hG4bK-dr"), caller);
    ASSERT_EQ(refused.size(), 1u);
    EXPECT_EQ(refused[0]->text.rfind("SIP/2.0 503", 0), 0u);
    EXPECT_NE(refused[0]->text.find("Retry-After:"), std::string::npos);
    auto ok = hx.deliver(reply(*att, 200, "OK"), att->dst);
    EXPECT_NE(find_to(ok, caller, "SIP/2.0 200"), nullptr) << "the call in progress completes";
    const std::string options =
        "OPTIONS sip:198.18.0.1:5060 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-o1\r\n"
        "Max-Forwards: 70\r\nFrom: <sip:lb@198.18.0.2>;tag=o\r\nTo: <sip:198.18.0.1>\r\nCall-ID: opt1\r\n"
        "CSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n";
    auto probe = hx.deliver(options, caller);
    ASSERT_EQ(probe.size(), 1u);
    EXPECT_EQ(probe[0]->text.rfind("SIP/2.0 503", 0), 0u) << "load balancers see the SBC going away";
    hx.h->node.store(0);
    probe = hx.deliver(options, caller);
    EXPECT_EQ(probe[0]->text.rfind("SIP/2.0 200", 0), 0u);
}

TEST(proxy, new_calls_are_counted_by_trunk_and_by_route)
{
    harness hx;
    hx.deliver(invite("t1"), caller);
    hx.deliver(invite("t2", "z9hG4bK-t2"), caller);
    EXPECT_EQ(hx.px.stats().invites_by_trunk[0].get(), 2u);
    EXPECT_EQ(hx.px.stats().invites_by_route[0].get(), 2u) << "the default route";
    hx.t->default_route = -1;
    hx.deliver(invite("t3", "z9hG4bK-t3"), caller);
    EXPECT_EQ(hx.px.stats().invites_by_route[proxy_stats::max_counted].get(), 1u) << "no route";
}

TEST(proxy, an_options_to_the_sbc_says_which_methods_bodies_and_extensions_it_relays)
{
    harness hx;
    const std::string options =
        "OPTIONS sip:198.18.0.1:5060 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-o2\r\n"
        "Max-Forwards: 70\r\nFrom: <sip:lb@198.18.0.2>;tag=o\r\nTo: <sip:198.18.0.1>\r\nCall-ID: opt2\r\n"
        "CSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n";
    auto probe = hx.deliver(options, caller);
    ASSERT_EQ(probe.size(), 1u);
    const std::string& text = probe[0]->text;
    EXPECT_EQ(text.rfind("SIP/2.0 200", 0), 0u) << text;
    EXPECT_NE(text.find("\r\nAllow: INVITE, ACK, BYE, CANCEL, OPTIONS, PRACK, UPDATE, INFO, REFER, NOTIFY, "
                        "SUBSCRIBE, MESSAGE\r\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("\r\nAccept: application/sdp\r\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\r\nSupported: 100rel, timer\r\n"), std::string::npos) << text;
    auto rsp = std::make_unique<message>();
    parse(text, *rsp);
    EXPECT_TRUE(rsp->ok()) << error_name(rsp->first_error);
    EXPECT_NE(rsp->find(header_id::allow), nullptr);
    EXPECT_NE(rsp->find(header_id::supported), nullptr);
}

/// invite(call_id, branch) with the Request-URI `ruri`.
std::string invite_to(const std::string& ruri, const std::string& call_id, const std::string& branch = "z9hG4bK-c1")
{
    std::string inv = invite(call_id, branch);
    return inv.replace(0, inv.find(" SIP/2.0"), "INVITE " + ruri);
}

/// What the SBC sent toward a peer of `out` (the other message is the 100), and its start line.
const sent* attempt_of(const std::vector<std::unique_ptr<sent>>& out)
{
    return out[0]->dst == caller ? out[1].get() : out[0].get();
}
std::string start_line(const sent& s)
{
    return s.text.substr(0, s.text.find("\r\n"));
}

// RFC 3261 16.5, 16.6 step 2: a Request-URI naming the SBC leaves with the peer in it.
TEST(proxy, a_request_uri_naming_the_sbc_is_retargeted_to_each_peer_and_the_cancel_matches)
{
    harness hx;
    const std::string ours = "sip:+15550100@198.18.0.1:5060;transport=tcp;user=phone;maddr=198.18.0.1";
    auto out = hx.deliver(invite_to(ours, "rt1"), caller);
    ASSERT_EQ(out.size(), 2u);
    const sent* att = attempt_of(out);
    const auto host_of = [](const sent& s) { return std::string(s.dst.addr == r1a.addr ? "198.18.1.11" : "198.18.1.12"); };
    const std::string uri = "sip:+15550100@" + host_of(*att) + ":5060;user=phone";
    EXPECT_EQ(start_line(*att), "INVITE " + uri + " SIP/2.0")
        << "the peer's address and port, no transport or maddr of ours, the other parameters kept";
    // The first peer fails: the retry names its own peer.
    auto retry = hx.deliver(reply(*att, 503, "Service Unavailable"), att->dst);
    const sent* second = nullptr;
    for (const auto& s : retry)
        if (s->text.rfind("INVITE ", 0) == 0) second = s.get();
    ASSERT_NE(second, nullptr);
    EXPECT_NE(host_of(*second), host_of(*att));
    const std::string uri2 = "sip:+15550100@" + host_of(*second) + ":5060;user=phone";
    EXPECT_EQ(start_line(*second), "INVITE " + uri2 + " SIP/2.0");
    // Our ACK of the 503 and the CANCEL of the retry carry the Request-URI of the INVITE they
    // belong to (RFC 3261 17.1.1.3, 9.1).
    const sent* ack = find_to(retry, att->dst, "ACK ");
    ASSERT_NE(ack, nullptr);
    EXPECT_EQ(start_line(*ack), "ACK " + uri + " SIP/2.0");
    hx.deliver(reply(*second, 180, "Ringing"), second->dst);
    const std::string cancel =
        "CANCEL " + ours + " SIP/2.0\r\n"
        "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-c1\r\n"
        "Max-Forwards: 70\r\nFrom: <sip:alice@198.18.0.2>;tag=a1\r\nTo: <sip:+15550100@198.18.0.1>\r\n"
        "Call-ID: rt1\r\nCSeq: 1 CANCEL\r\nContent-Length: 0\r\n\r\n";
    auto c = hx.deliver(cancel, caller);
    const sent* cancel_out = find_to(c, second->dst, "CANCEL ");
    ASSERT_NE(cancel_out, nullptr);
    EXPECT_EQ(start_line(*cancel_out), "CANCEL " + uri2 + " SIP/2.0");
}

TEST(proxy, a_request_uri_naming_someone_else_goes_as_it_came)
{
    harness hx;
    int n = 0;
    for (const char* uri : {"sip:+15550100@carrier.example;user=phone", "sip:+15550100@198.18.0.1:5999"}) {
        // A domain, and our address with a port that is none of the trunk's: not the SBC.
        const std::string id = "rt-" + std::to_string(++n);
        auto out = hx.deliver(invite_to(uri, id, "z9hG4bK-" + id), caller);
        ASSERT_EQ(out.size(), 2u) << uri;
        EXPECT_EQ(start_line(*attempt_of(out)), std::string("INVITE ") + uri + " SIP/2.0");
    }
}

TEST(retarget, writes_the_peers_host_port_and_transport_and_keeps_the_user_parameters_and_headers)
{
    const auto write = [](const std::string& kept, bool sips, endpoint peer, std::string_view name) {
        uri u;
        EXPECT_TRUE(parse_uri(kept, span{0, static_cast<uint16_t>(kept.size())}, u)) << kept;
        ruri_parts r;
        r.user = u.user;
        r.params = u.params;
        r.headers = u.headers;
        r.sips = sips;
        r.ours = true;
        char out[max_retarget_size];
        return std::string(out, write_retargeted(out, kept, r, peer, name));
    };
    endpoint tls = endpoint::udp4(0xC612010B, 5061);  // 198.18.1.11
    tls.proto = sbc::transport::tls;
    endpoint tcp = endpoint::udp4(0xC612010B, 5070);
    tcp.proto = sbc::transport::tcp;
    const std::string kept = "sips:bob@sbc.example;user=phone;transport=tls;MADDR=198.18.0.1?Subject=x";
    EXPECT_EQ(write(kept, true, tls, "gw.example"), "sips:bob@gw.example:5061;user=phone?Subject=x");
    EXPECT_EQ(write(kept, true, tcp, ""), "sip:bob@198.18.1.11:5070;transport=tcp;user=phone?Subject=x")
        << "sips only toward TLS";
    EXPECT_EQ(write("sip:bob@198.18.0.1;lr", false, tls, ""), "sip:bob@198.18.1.11:5061;transport=tls;lr");
    EXPECT_EQ(write("sip:198.18.0.1", false, r1a, ""), "sip:198.18.1.11:5060") << "no user part";
}

TEST(retarget, a_peer_of_the_tables_gives_its_host_port_as_built_and_the_same_uri_as_formatting_it)
{
    proxy_tables t;
    peer p;
    p.address = sbc::ip_address::v4(0xC612010B);  // 198.18.1.11
    p.port = 5070;
    p.proto = sbc::transport::tcp;
    t.peers.push_back(p);
    const std::string kept = "sip:bob@198.18.0.1;user=phone";
    uri u;
    ASSERT_TRUE(parse_uri(kept, span{0, static_cast<uint16_t>(kept.size())}, u));
    ruri_parts r;
    r.user = u.user;
    r.params = u.params;
    r.ours = true;
    char a[max_retarget_size], b[max_retarget_size];
    const std::string formatted(retargeted(t, kept, r, p.remote(), 0, a));
    EXPECT_EQ(formatted, "sip:bob@198.18.1.11:5070;transport=tcp;user=phone");
    t.peers[0].uri_host = "198.18.1.11:5070";  // as proxy_build writes it
    EXPECT_EQ(std::string(retargeted(t, kept, r, p.remote(), 0, b)), formatted);
    t.peers[0].uri_host = "copied.example:5070";  // proves the copy is what is written
    EXPECT_EQ(std::string(retargeted(t, kept, r, p.remote(), 0, b)), "sip:bob@copied.example:5070;transport=tcp;user=phone");
    endpoint elsewhere = p.remote();
    elsewhere.port = 5080;
    EXPECT_EQ(std::string(retargeted(t, kept, r, elsewhere, 0, b)), "sip:bob@198.18.1.11:5080;transport=tcp;user=phone")
        << "an attempt somewhere else than the table's peer formats its own endpoint";
}
