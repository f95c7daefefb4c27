// Unit tests of call admission (sip-fastpath/admission.h, call_admission.cc): the GCRA rate
// limiter, exact counts under threads, and two proxies (workers 0 and 1) sharing one set of
// node-wide counts: trunk, node and peer limits, refusals with Retry-After, counts back to 0
// however a call ends. Pure: datagrams in, datagrams out, no EAL.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "sip-fastpath/admission.h"
#include "sip-fastpath/proxy.h"
#include "tests/unit/proxy_test_util.h"

using namespace sbc::sip;
using sbc::endpoint;
using sbc::sip::testutil::caller;
using sbc::sip::testutil::r1a;
using sbc::sip::testutil::r1b;
using sbc::sip::testutil::r2a;
using sbc::sip::testutil::sbc_ep;

namespace {

struct gcra_case {
    const char* name;
    uint32_t rate;
    uint32_t burst;
    std::vector<uint64_t> at_ms;  ///< arrival times
    std::string expect;           ///< '+' admitted, '-' refused, per arrival
};

class gcra_cases : public testing::TestWithParam<gcra_case> {};

TEST_P(gcra_cases, admits_the_rate_and_burst_it_is_given)
{
    const gcra_case& c = GetParam();
    std::atomic<uint64_t> tat{0};
    std::string got;
    for (uint64_t ms : c.at_ms) got += gcra_conforms(tat, ms * 1'000'000ull, c.rate, c.burst) ? '+' : '-';
    EXPECT_EQ(got, c.expect);
}

INSTANTIATE_TEST_SUITE_P(
    table, gcra_cases,
    testing::Values(
        gcra_case{"one_per_second_burst_one", 1, 1, {1000, 1000, 1500, 2000, 2999, 3000}, "+--+-+"},
        gcra_case{"ten_per_second_burst_three_at_once", 10, 3, {5000, 5000, 5000, 5000, 5100, 5100}, "+++-+-"},
        gcra_case{"a_quiet_time_refills_the_burst_and_no_more", 10, 3, {0, 0, 0, 10000, 10000, 10000, 10000}, "++++++-"},
        gcra_case{"steady_arrivals_at_the_rate_all_pass", 100, 1, {1000, 1010, 1020, 1030, 1040}, "+++++"},
        gcra_case{"arrivals_faster_than_the_rate_pass_at_the_rate", 100, 1, {1000, 1005, 1010, 1015, 1020}, "+-+-+"},
        gcra_case{"no_rate_is_no_limit", 0, 1, {1, 1, 1, 1}, "++++"}),
    [](const testing::TestParamInfo<gcra_case>& i) { return std::string(i.param.name); });

TEST(admission_counts, a_limit_holds_exactly_across_threads)
{
    // Two threads race for 1000 slots 5000 times each: exactly 1000 taken, none lost.
    std::atomic<uint32_t> count{0};
    std::atomic<uint32_t> taken{0};
    auto race = [&] {
        for (int i = 0; i < 5000; ++i)
            if (admission_take(count, 1000)) taken.fetch_add(1);
    };
    std::thread a(race), b(race);
    a.join();
    b.join();
    EXPECT_EQ(taken.load(), 1000u);
    EXPECT_EQ(count.load(), 1000u);
    for (uint32_t i = 0; i < 1000; ++i) admission_give(count);
    EXPECT_EQ(count.load(), 0u);
}

TEST(admission_counts, a_refused_call_counts_nothing)
{
    admission a;
    EXPECT_EQ(a.admit_call(0, 1, 0, 1, 0, 1000), admission_refusal::none);
    EXPECT_EQ(a.admit_call(0, 1, 0, 1, 0, 1000), admission_refusal::trunk_calls);
    EXPECT_EQ(a.admit_call(1, 0, 0, 1, 2, 1000), admission_refusal::none);
    EXPECT_EQ(a.admit_call(2, 0, 0, 1, 2, 1000), admission_refusal::node_calls);
    EXPECT_EQ(a.trunk_calls(2), 0u) << "the node's refusal gave the trunk's count back";
    EXPECT_EQ(a.calls(), 2u);
}

std::string invite(const std::string& call_id)
{
    return "INVITE sip:+15550100@198.18.0.1 SIP/2.0\r\n"
           "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-" + call_id + "\r\n"
           "Max-Forwards: 70\r\nFrom: <sip:alice@198.18.0.2>;tag=a1\r\nTo: <sip:+15550100@198.18.0.1>\r\n"
           "Call-ID: " + call_id + "\r\nCSeq: 1 INVITE\r\nContact: <sip:alice@198.18.0.2:5060>\r\n"
           "Content-Length: 0\r\n\r\n";
}

struct sent {
    endpoint dst;
    std::string text;
    std::unique_ptr<message> m = std::make_unique<message>();
};
using sent_list = std::vector<std::unique_ptr<sent>>;

/// Two workers' proxies over one set of tables, one health array and one admission object.
struct node {
    std::shared_ptr<proxy_tables> t = testutil::make_tables({{r1a, 0}, {r1b, 0}, {r2a, 1}}, 2);
    std::unique_ptr<peer_health> h = std::make_unique<peer_health>();
    std::unique_ptr<admission> adm = std::make_unique<admission>();
    proxy px0{0, 64, 64, 7};
    proxy px1{1, 64, 64, 9};
    std::unique_ptr<outbox> out = std::make_unique<outbox>();
    uint64_t now = 1000;

    node()
    {
        px0.set_admission(adm.get());
        px1.set_admission(adm.get());
    }
    proxy& worker(int w) { return w == 0 ? px0 : px1; }
    sent_list take()
    {
        sent_list r;
        for (uint32_t i = 0; i < out->n; ++i) {
            auto s = std::make_unique<sent>();
            s->dst = out->msgs[i].dst;
            s->text.assign(out->msgs[i].data.data(), out->msgs[i].len);
            parse(s->text, *s->m);
            r.push_back(std::move(s));
        }
        out->clear();
        return r;
    }
    sent_list deliver(int w, const std::string& text, endpoint from)
    {
        worker(w).on_input(*t, *h, sip_input{text, from, sbc_ep, 0, now}, *out);
        return take();
    }
    void tick(int w, uint64_t ms)
    {
        for (uint64_t i = 0; i < ms; i += 10) {
            now += 10;
            worker(w).on_tick(*t, *h, now, *out);
            take();
        }
    }
    uint64_t counter(proxy_counter c) const { return px0.stats().get(c) + px1.stats().get(c); }
    uint32_t peer_calls() const { return adm->calls_on_peer(0) + adm->calls_on_peer(1) + adm->calls_on_peer(2); }
};

const sent* find_to(const sent_list& v, endpoint dst, std::string_view start)
{
    for (const auto& s : v)
        if (s->dst == dst && s->text.rfind(start, 0) == 0) return s.get();
    return nullptr;
}

/// The INVITE the SBC sent to a peer, or null.
const sent* attempt(const sent_list& v)
{
    for (const auto& s : v)
        if (!(s->dst == caller) && s->text.rfind("INVITE ", 0) == 0) return s.get();
    return nullptr;
}

/// A peer's response to the request `req` as the SBC sent it.
std::string reply(const sent& req, int code, const std::string& reason)
{
    const message& m = *req.m;
    std::string r = "SIP/2.0 " + std::to_string(code) + " " + reason + "\r\n";
    for (unsigned i = 0; i < m.header_count; ++i) {
        const header& hd = m.headers[i];
        if (hd.id == header_id::via || hd.id == header_id::from || hd.id == header_id::call_id ||
            hd.id == header_id::cseq || hd.id == header_id::record_route)
            r += std::string(m.text(hd.line));
        if (hd.id == header_id::to) r += "To: " + std::string(m.text(hd.value)) + (code > 100 ? ";tag=peer" : "") + "\r\n";
    }
    if (code >= 200 && code < 300) r += "Contact: <sip:callee@" + sbc::to_string(req.dst.addr) + ":5060>\r\n";
    return r + "Content-Length: 0\r\n\r\n";
}

/// An answered call on worker `w`: its peer.
endpoint answer(node& n, int w, const std::string& call_id)
{
    const sent_list out = n.deliver(w, invite(call_id), caller);
    const sent* att = attempt(out);
    if (att == nullptr) return endpoint{};
    n.deliver(w, reply(*att, 200, "OK"), att->dst);
    return att->dst;
}

/// BYE from the caller (to the peer) or from the peer (to the caller), through worker `w`, and its 200.
void hang_up(node& n, int w, const std::string& call_id, endpoint peer, bool from_caller)
{
    const std::string worker = w == 0 ? "00" : "01";
    const std::string target = from_caller ? "sip:callee@" + sbc::to_string(peer.addr) + ":5060" : "sip:alice@198.18.0.2:5060";
    const std::string via = from_caller ? "198.18.0.2:5060" : sbc::to_string(peer.addr) + ":5060";
    const std::string bye = "BYE " + target + " SIP/2.0\r\nVia: SIP/2.0/UDP " + via + ";branch=z9hG4bK-bye" + call_id +
                            "\r\nRoute: <sip:198.18.0.1:5060;lr;w=" + worker + ">\r\nMax-Forwards: 70\r\n"
                            "From: <sip:alice@198.18.0.2>;tag=a1\r\nTo: <sip:+15550100@198.18.0.1>;tag=peer\r\n"
                            "Call-ID: " + call_id + "\r\nCSeq: 2 BYE\r\nContent-Length: 0\r\n\r\n";
    const sent_list fwd = n.deliver(w, bye, from_caller ? caller : peer);
    const sent* out = find_to(fwd, from_caller ? peer : caller, "BYE ");
    ASSERT_NE(out, nullptr) << "the BYE is relayed, never refused by admission";
    n.deliver(w, reply(*out, 200, "OK"), from_caller ? peer : caller);
}

TEST(admission, a_trunk_limit_of_two_is_two_for_the_node_not_per_worker)
{
    node n;
    n.t->trunks[0].max_calls = 2;
    const endpoint p1 = answer(n, 0, "c1");
    const endpoint p2 = answer(n, 1, "c2");
    EXPECT_EQ(n.adm->trunk_calls(0), 2u);
    for (int w : {0, 1}) {
        const sent_list out = n.deliver(w, invite("c3-" + std::to_string(w)), caller);
        ASSERT_EQ(out.size(), 1u) << "refused, no attempt";
        EXPECT_EQ(out[0]->text.rfind("SIP/2.0 503 Service Unavailable (trunk call limit)\r\n", 0), 0u) << out[0]->text;
        EXPECT_NE(out[0]->text.find("\r\nRetry-After: 5\r\n"), std::string::npos) << out[0]->text;
    }
    EXPECT_EQ(n.counter(proxy_counter::admission_trunk_calls), 2u);
    EXPECT_EQ(n.px0.stats().refused_by_trunk[0].get() + n.px1.stats().refused_by_trunk[0].get(), 2u);
    hang_up(n, 0, "c1", p1, true);
    EXPECT_EQ(n.adm->trunk_calls(0), 1u);
    EXPECT_NE(attempt(n.deliver(1, invite("c4"), caller)), nullptr) << "a call ended: a new one is taken";
    hang_up(n, 1, "c2", p2, false);
}

TEST(admission, counts_return_to_zero_however_calls_end)
{
    node n;
    n.t->trunks[0].max_calls = 10;
    n.t->peers[0].max_calls = 10;
    // Answered and ended by the caller, and by the callee.
    const endpoint a = answer(n, 0, "bye-a");
    const endpoint b = answer(n, 1, "bye-b");
    EXPECT_EQ(n.adm->calls(), 2u);
    EXPECT_EQ(n.peer_calls(), 2u);
    hang_up(n, 0, "bye-a", a, true);
    hang_up(n, 1, "bye-b", b, false);
    EXPECT_EQ(n.adm->calls(), 0u) << "after BYEs";
    // A final failure relayed (486), after the peer rang.
    {
        const sent_list out = n.deliver(0, invite("fail"), caller);
        const sent* att = attempt(out);
        ASSERT_NE(att, nullptr);
        n.deliver(0, reply(*att, 180, "Ringing"), att->dst);
        EXPECT_EQ(n.adm->calls(), 1u);
        EXPECT_NE(find_to(n.deliver(0, reply(*att, 486, "Busy Here"), att->dst), caller, "SIP/2.0 486"), nullptr);
    }
    EXPECT_EQ(n.adm->calls(), 0u) << "after 486";
    // Every peer answers 503: the caller's 503 ends it.
    {
        sent_list out = n.deliver(1, invite("all503"), caller);
        const sent* att = attempt(out);
        for (int i = 0; i < 3 && att != nullptr; ++i) {
            sent_list next = n.deliver(1, reply(*att, 503, "Service Unavailable"), att->dst);
            att = attempt(next);
            out = std::move(next);  // att points into it
            if (i == 2) {
                EXPECT_NE(find_to(out, caller, "SIP/2.0 503"), nullptr) << "every peer failed: 503 upstream";
            }
        }
    }
    EXPECT_EQ(n.adm->calls(), 0u) << "after 503s";
    // CANCEL while ringing.
    {
        const sent_list out = n.deliver(0, invite("cancel"), caller);
        const sent* att = attempt(out);
        ASSERT_NE(att, nullptr);
        n.deliver(0, reply(*att, 180, "Ringing"), att->dst);
        const std::string cancel =
            "CANCEL sip:+15550100@198.18.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-cancel\r\n"
            "Max-Forwards: 70\r\nFrom: <sip:alice@198.18.0.2>;tag=a1\r\nTo: <sip:+15550100@198.18.0.1>\r\n"
            "Call-ID: cancel\r\nCSeq: 1 CANCEL\r\nContent-Length: 0\r\n\r\n";
        n.deliver(0, cancel, caller);
        n.deliver(0, reply(*att, 487, "Request Terminated"), att->dst);
    }
    EXPECT_EQ(n.adm->calls(), 0u);
    EXPECT_EQ(n.adm->trunk_calls(0), 0u);
    EXPECT_EQ(n.peer_calls(), 0u);
    // And the slots' release later gives nothing back twice.
    n.tick(0, 40'000);
    n.tick(1, 40'000);
    EXPECT_EQ(n.adm->calls(), 0u);
    EXPECT_EQ(n.peer_calls(), 0u);
}

TEST(admission, a_lowered_limit_refuses_new_calls_until_the_calls_up_end_below_it)
{
    // A reload publishes new tables over the same counts.
    node n;
    n.t->trunks[0].max_calls = 3;
    const endpoint a = answer(n, 0, "low-a");
    const endpoint b = answer(n, 1, "low-b");
    n.t->trunks[0].max_calls = 1;
    EXPECT_EQ(attempt(n.deliver(0, invite("low-c"), caller)), nullptr) << "2 calls up, limit 1";
    hang_up(n, 0, "low-a", a, true);
    EXPECT_EQ(attempt(n.deliver(1, invite("low-d"), caller)), nullptr) << "1 call up, limit 1";
    hang_up(n, 1, "low-b", b, true);
    EXPECT_NE(attempt(n.deliver(0, invite("low-e"), caller)), nullptr) << "under the limit again";
    EXPECT_EQ(n.counter(proxy_counter::admission_trunk_calls), 2u);
}

TEST(admission, a_retransmitted_invite_of_an_admitted_call_is_not_refused)
{
    node n;
    n.t->trunks[0].max_calls = 1;
    ASSERT_NE(attempt(n.deliver(0, invite("r1"), caller)), nullptr);
    const sent_list again = n.deliver(0, invite("r1"), caller);
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0]->text.rfind("SIP/2.0 100", 0), 0u) << "answered from state: " << again[0]->text;
    EXPECT_EQ(n.counter(proxy_counter::admission_trunk_calls), 0u);
}

TEST(admission, the_node_limit_and_the_trunk_rate_refuse_with_their_own_reason)
{
    node n;
    n.t->admission.max_calls = 1;
    n.t->admission.refuse_code = 486;
    n.t->admission.retry_after_s = 30;
    ASSERT_NE(attempt(n.deliver(0, invite("n1"), caller)), nullptr);
    const sent_list out = n.deliver(1, invite("n2"), caller);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0]->text.rfind("SIP/2.0 486 Busy Here (node call limit)\r\n", 0), 0u) << out[0]->text;
    EXPECT_NE(out[0]->text.find("\r\nRetry-After: 30\r\n"), std::string::npos) << "RFC 3261 20.33 allows it on 486";
    EXPECT_EQ(n.counter(proxy_counter::admission_node_calls), 1u);

    node r;
    r.t->trunks[0].calls_per_second = 1;
    r.t->trunks[0].calls_burst = 1;
    r.t->admission.refuse_code = 403;
    ASSERT_NE(attempt(r.deliver(0, invite("r1"), caller)), nullptr);
    const sent_list over = r.deliver(1, invite("r2"), caller);
    ASSERT_EQ(over.size(), 1u);
    EXPECT_EQ(over[0]->text.rfind("SIP/2.0 403 Forbidden (trunk call rate)\r\n", 0), 0u) << over[0]->text;
    EXPECT_EQ(over[0]->text.find("Retry-After"), std::string::npos) << "not with 403";
    EXPECT_EQ(r.adm->calls(), 1u) << "a call refused for its rate counts nothing";
    r.now += 1000;
    EXPECT_NE(attempt(r.deliver(1, invite("r3"), caller)), nullptr) << "a second later it passes";
    EXPECT_EQ(r.counter(proxy_counter::admission_trunk_rate), 1u);
}

TEST(admission, a_full_peer_is_passed_over_and_when_all_are_full_the_caller_gets_503_with_retry_after)
{
    node n;
    for (auto& p : n.t->peers) p.max_calls = 1;
    std::vector<endpoint> peers;
    for (int i = 0; i < 3; ++i) peers.push_back(answer(n, i % 2, "f" + std::to_string(i)));
    // One call on each peer, whatever worker set it up: the full ones were passed over.
    EXPECT_EQ(n.adm->calls_on_peer(0), 1u);
    EXPECT_EQ(n.adm->calls_on_peer(1), 1u);
    EXPECT_EQ(n.adm->calls_on_peer(2), 1u);
    EXPECT_TRUE(peers[2] == r2a) << "the third call went to the other region";
    const sent_list out = n.deliver(1, invite("f3"), caller);
    EXPECT_EQ(attempt(out), nullptr) << "never a call to a full peer";
    const sent* refused = find_to(out, caller, "SIP/2.0 503 Service Unavailable (peer call limit)\r\n");
    ASSERT_NE(refused, nullptr);
    EXPECT_NE(refused->text.find("\r\nRetry-After: 5\r\n"), std::string::npos);
    EXPECT_EQ(n.counter(proxy_counter::admission_peers_full), 1u);
    EXPECT_GE(n.counter(proxy_counter::admission_peer_skips), 3u);
    EXPECT_EQ(n.adm->calls(), 3u) << "the refused call gave its trunk and node counts back";
    uint64_t skips = 0;
    for (uint32_t id = 0; id < 3; ++id)
        skips += n.px0.stats().full_skips_by_peer[id].get() + n.px1.stats().full_skips_by_peer[id].get();
    EXPECT_EQ(skips, n.counter(proxy_counter::admission_peer_skips));
    hang_up(n, 0, "f0", peers[0], true);
    EXPECT_NE(attempt(n.deliver(1, invite("f4"), caller)), nullptr) << "room again on the peer whose call ended";
}

TEST(admission, least_calls_selects_by_the_calls_of_every_worker)
{
    node n;
    n.t->groups[0].sel = selector::least_calls;
    const endpoint first = answer(n, 0, "l1");
    const sent_list out = n.deliver(1, invite("l2"), caller);
    const sent* att = attempt(out);
    ASSERT_NE(att, nullptr);
    EXPECT_FALSE(att->dst == first) << "worker 1 sees worker 0's call on " << sbc::to_string(first.addr);
    EXPECT_TRUE(att->dst == r1a || att->dst == r1b) << "still the local region";
}

}  // namespace
