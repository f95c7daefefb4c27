// Unit tests of call detail records on the worker (sip-fastpath/proxy_cdr.cc): one record per
// call for each way a call ends, with what a billing user reads in it (why it ended, the final
// code and who sent it, every peer tried with its outcome, setup and answer times in order,
// Call-ID, From and To); each call handed over once, retransmissions included; and the media
// figures the media hook adds (rtp::media_sessions::call_figures). Pure: datagrams in,
// records out, no EAL.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "common/call_record.h"
#include "rtp/media.h"
#include "rtp/sdp.h"
#include "sip-fastpath/cdr_sink.h"
#include "sip-fastpath/media_hook.h"
#include "sip-fastpath/peer_select.h"
#include "sip-fastpath/proxy.h"
#include "sip-fastpath/sip_message.h"
#include "tests/unit/proxy_test_util.h"

using namespace sbc::sip;
using sbc::call_record;
using sbc::cdr_end;
using sbc::cdr_final_by;
using sbc::cdr_outcome;
using sbc::endpoint;
using sbc::sip::testutil::caller;
using sbc::sip::testutil::r1a;
using sbc::sip::testutil::r1b;
using sbc::sip::testutil::sbc_ep;

namespace {

/// Keeps every record handed over.
struct recording_sink final : cdr_sink {
    std::vector<call_record> records;
    void call_ended(const call_record& r) noexcept override { records.push_back(r); }
};

/// Media that passes bodies unchanged, reports the calls in `silent` as silent once, and gives
/// fixed figures for the calls in `anchored`.
struct fake_media final : media_hook {
    std::vector<uint64_t> silent;
    std::vector<uint64_t> anchored;
    sdp_verdict rewrite_sdp(uint64_t, media_leg, std::string_view, std::string_view, std::span<char>, std::size_t&,
                            uint64_t) noexcept override
    {
        return sdp_verdict::unchanged;
    }
    void call_ended(uint64_t, uint64_t) noexcept override {}
    uint32_t silent_calls(uint64_t, std::span<uint64_t> calls) noexcept override
    {
        uint32_t n = 0;
        for (uint64_t c : silent)
            if (n < calls.size()) calls[n++] = c;
        silent.clear();
        return n;
    }
    bool call_figures(uint64_t call, std::span<sbc::cdr_media, 2> out) noexcept override
    {
        if (std::find(anchored.begin(), anchored.end(), call) == anchored.end()) return false;
        out[0].packets = 500;
        out[0].bytes = 80'000;
        out[0].lost = 3;
        out[0].jitter_us = 1500;
        out[0].payload_type = 8;
        out[1].packets = 498;
        out[1].payload_type = 8;
        return true;
    }
};

struct sent {
    endpoint src, dst;
    std::string text;
};
using batch = std::vector<sent>;

struct harness {
    std::shared_ptr<proxy_tables> t = testutil::make_tables({{r1a, 0, 10}, {r1b, 0, 20}}, 1);  // r1a first
    std::unique_ptr<peer_health> h = std::make_unique<peer_health>();
    fake_media media;
    recording_sink sink;
    proxy px;
    std::unique_ptr<outbox> out = std::make_unique<outbox>();
    uint64_t now = 10'000;

    explicit harness(uint32_t setups = 64) : px(0, setups, 64, 7)
    {
        px.set_media(&media);
        px.set_cdr_sink(&sink);
    }
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
    /// Runs the proxy's timers up to `ms` from now, 10 ms at a time as the worker does.
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
    /// The records of Call-ID `id`.
    [[nodiscard]] std::vector<call_record> of(const std::string& id) const
    {
        std::vector<call_record> v;
        for (const call_record& r : sink.records)
            if (r.call_id() == id) v.push_back(r);
        return v;
    }
};

const sent* find_to(const batch& v, endpoint dst, std::string_view start)
{
    for (const sent& s : v)
        if (s.dst == dst && s.text.starts_with(start)) return &s;
    return nullptr;
}

std::string invite(const std::string& id)
{
    return "INVITE sip:+15550100@198.18.0.1 SIP/2.0\r\n"
           "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-inv-" + id + "\r\n"
           "Max-Forwards: 70\r\n"
           "From: \"Alice\" <sip:alice@198.18.0.2>;tag=a1\r\n"
           "To: <sip:+15550100@198.18.0.1>\r\n"
           "Call-ID: " + id + "\r\n"
           "CSeq: 1 INVITE\r\n"
           "Contact: <sip:alice@198.18.0.2:5060>\r\n"
           "Content-Length: 0\r\n\r\n";
}

std::string cancel(const std::string& id)
{
    return "CANCEL sip:+15550100@198.18.0.1 SIP/2.0\r\n"
           "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-inv-" + id + "\r\n"
           "Max-Forwards: 70\r\n"
           "From: \"Alice\" <sip:alice@198.18.0.2>;tag=a1\r\n"
           "To: <sip:+15550100@198.18.0.1>\r\n"
           "Call-ID: " + id + "\r\n"
           "CSeq: 1 CANCEL\r\n"
           "Content-Length: 0\r\n\r\n";
}

/// A response to `req` as the SBC sent it: its Vias, From, Call-ID, CSeq and Record-Route, To
/// with a tag.
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

/// An in-dialog request routed by our Record-Route from `from` (the caller or r1a).
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

// ---- steps of a call, 20 ms apart --------------------------------------------------------------

/// The caller's INVITE; returns what the SBC sent to `peer` (empty when nothing).
std::string offer(harness& hx, const std::string& id, endpoint peer = r1a)
{
    const batch b = hx.deliver(invite(id), caller);
    const sent* fwd = find_to(b, peer, "INVITE ");
    hx.now += 20;
    return fwd != nullptr ? fwd->text : std::string{};
}

/// `peer` answers the INVITE it got (`fwd`) with `code`.
void answer(harness& hx, const std::string& fwd, int code, const std::string& reason, endpoint peer = r1a)
{
    ASSERT_FALSE(fwd.empty());
    hx.deliver(reply(fwd, code, reason), peer);
    hx.now += 20;
}

/// A call to r1a that rings and is answered.
void answered(harness& hx, const std::string& id)
{
    const std::string fwd = offer(hx, id);
    answer(hx, fwd, 180, "Ringing");
    answer(hx, fwd, 200, "OK");
}

/// `from` hangs up: its BYE is relayed and the other side answers 200.
void hang_up(harness& hx, const std::string& id, endpoint from)
{
    const endpoint to = from == caller ? r1a : caller;
    const batch b = hx.deliver(routed("BYE", id, from), from);
    const sent* fwd = find_to(b, to, "BYE ");
    ASSERT_NE(fwd, nullptr);
    hx.now += 20;
    ASSERT_NE(find_to(hx.deliver(reply(fwd->text, 200, "OK"), to), from, "SIP/2.0 200"), nullptr);
}

// ---- one row per way a call ends ---------------------------------------------------------------

struct attempt_want {
    uint32_t peer_id;
    cdr_outcome outcome;
    uint16_t code;
};

struct row {
    const char* name;
    std::function<void(harness&, const std::string& id)> run;
    cdr_end end;
    uint16_t final_code;
    cdr_final_by final_by;
    std::vector<attempt_want> attempts;
    bool answered = false;
    bool provisional = false;
    uint16_t route = 0;  ///< the default route; 0xffff: refused before routing
};

const std::vector<row>& rows()
{
    static const std::vector<row> r{
        {"answered_then_the_caller_hangs_up",
         [](harness& hx, const std::string& id) {
             answered(hx, id);
             hx.now += 60'000;
             hang_up(hx, id, caller);
         },
         cdr_end::bye_caller, 200, cdr_final_by::peer, {{0, cdr_outcome::answered, 200}}, true, true},
        {"answered_then_the_callee_hangs_up",
         [](harness& hx, const std::string& id) {
             answered(hx, id);
             hx.now += 30'000;
             hang_up(hx, id, r1a);
         },
         cdr_end::bye_callee, 200, cdr_final_by::peer, {{0, cdr_outcome::answered, 200}}, true, true},
        {"busy_relayed_from_the_peer",
         [](harness& hx, const std::string& id) { answer(hx, offer(hx, id), 486, "Busy Here"); },
         cdr_end::failed, 486, cdr_final_by::peer, {{0, cdr_outcome::code, 486}}},
        {"a_503_retried_on_the_next_peer_which_answers",
         [](harness& hx, const std::string& id) {
             const std::string first = offer(hx, id);
             const batch b = hx.deliver(reply(first, 503, "Service Unavailable"), r1a);
             const sent* second = find_to(b, r1b, "INVITE ");
             ASSERT_NE(second, nullptr);
             hx.now += 20;
             answer(hx, second->text, 200, "OK", r1b);
             hang_up(hx, id, caller);
         },
         cdr_end::bye_caller, 200, cdr_final_by::peer,
         {{0, cdr_outcome::code, 503}, {1, cdr_outcome::answered, 200}}, true},
        {"a_silent_peer_then_the_next_answers",
         [](harness& hx, const std::string& id) {
             offer(hx, id);
             const batch b = hx.wait(1000);  // retry.no_response_ms
             const sent* second = find_to(b, r1b, "INVITE ");
             ASSERT_NE(second, nullptr);
             answer(hx, second->text, 200, "OK", r1b);
             hang_up(hx, id, caller);
         },
         cdr_end::bye_caller, 200, cdr_final_by::peer,
         {{0, cdr_outcome::timeout, 0}, {1, cdr_outcome::answered, 200}}, true},
        {"an_icmp_unreachable_peer_then_the_next_answers",
         [](harness& hx, const std::string& id) {
             const std::string first = offer(hx, id);
             hx.px.on_icmp_unreachable(*hx.t, *hx.h, first, r1a, hx.now, *hx.out);
             const batch b = hx.take();
             const sent* second = find_to(b, r1b, "INVITE ");
             ASSERT_NE(second, nullptr);
             hx.now += 20;
             answer(hx, second->text, 200, "OK", r1b);
             hang_up(hx, id, caller);
         },
         cdr_end::bye_caller, 200, cdr_final_by::peer,
         {{0, cdr_outcome::icmp, 0}, {1, cdr_outcome::answered, 200}}, true},
        {"every_peer_503_and_the_sbc_answers_503",
         [](harness& hx, const std::string& id) {
             const std::string first = offer(hx, id);
             const batch b = hx.deliver(reply(first, 503, "Service Unavailable"), r1a);
             const sent* second = find_to(b, r1b, "INVITE ");
             ASSERT_NE(second, nullptr);
             hx.now += 20;
             answer(hx, second->text, 503, "Service Unavailable", r1b);
         },
         cdr_end::failed, 503, cdr_final_by::sbc, {{0, cdr_outcome::code, 503}, {1, cdr_outcome::code, 503}}},
        {"the_caller_cancels_while_it_rings",
         [](harness& hx, const std::string& id) {
             const std::string fwd = offer(hx, id);
             answer(hx, fwd, 180, "Ringing");
             ASSERT_NE(find_to(hx.deliver(cancel(id), caller), r1a, "CANCEL "), nullptr);
             hx.now += 20;
             answer(hx, fwd, 487, "Request Terminated");
         },
         cdr_end::cancelled, 487, cdr_final_by::peer, {{0, cdr_outcome::cancelled, 487}}, false, true},
        {"media_goes_silent",
         [](harness& hx, const std::string& id) {
             answered(hx, id);
             hx.media.silent.push_back(hash_bytes(id));
             hx.wait(20);
         },
         cdr_end::media_timeout, 200, cdr_final_by::peer, {{0, cdr_outcome::answered, 200}}, true, true},
        {"a_bye_the_callee_never_answers",
         [](harness& hx, const std::string& id) {
             answered(hx, id);
             ASSERT_NE(find_to(hx.deliver(routed("BYE", id, caller), caller), r1a, "BYE "), nullptr);
             ASSERT_NE(find_to(hx.wait(1100), caller, "SIP/2.0 408"), nullptr);
         },
         cdr_end::bye_timeout, 200, cdr_final_by::peer, {{0, cdr_outcome::answered, 200}}, true, true},
        {"still_up_when_the_worker_stops",
         [](harness& hx, const std::string& id) {
             answered(hx, id);
             hx.now += 5000;
             hx.px.cdr_drain(hx.now);
         },
         cdr_end::drain, 200, cdr_final_by::peer, {{0, cdr_outcome::answered, 200}}, true, true},
        {"still_ringing_when_the_worker_stops",
         [](harness& hx, const std::string& id) {
             answer(hx, offer(hx, id), 180, "Ringing");
             hx.px.cdr_drain(hx.now);
         },
         cdr_end::drain, 0, cdr_final_by::none, {{0, cdr_outcome::cancelled, 0}}, false, true},
        {"refused_while_draining",
         [](harness& hx, const std::string& id) {
             hx.h->node.store(peer_health::node_draining);
             ASSERT_NE(find_to(hx.deliver(invite(id), caller), caller, "SIP/2.0 503"), nullptr);
         },
         cdr_end::refused, 503, cdr_final_by::sbc, {}, false, false, 0xffff},
        {"refused_without_a_route",
         [](harness& hx, const std::string& id) {
             hx.t->default_route = -1;
             ASSERT_NE(find_to(hx.deliver(invite(id), caller), caller, "SIP/2.0 404"), nullptr);
         },
         cdr_end::refused, 404, cdr_final_by::sbc, {}, false, false, 0xffff},
        {"refused_by_trunk_admission",
         [](harness& hx, const std::string& id) {
             hx.t->trunks[0].max_calls = 1;
             hx.deliver(invite("other-call"), caller);  // takes the trunk's one call
             ASSERT_NE(find_to(hx.deliver(invite(id), caller), caller, "SIP/2.0 503"), nullptr);
         },
         cdr_end::refused, 503, cdr_final_by::sbc, {}},
        {"refused_when_no_peer_can_take_it",
         [](harness& hx, const std::string& id) {
             for (uint32_t p : {0u, 1u}) hx.h->word[p].store(peer_state::disabled);
             ASSERT_NE(find_to(hx.deliver(invite(id), caller), caller, "SIP/2.0 503"), nullptr);
         },
         cdr_end::refused, 503, cdr_final_by::sbc, {}},
        {"refused_while_overloaded",
         [](harness& hx, const std::string& id) {
             hx.px.set_overload(100);
             ASSERT_NE(find_to(hx.deliver(invite(id), caller), caller, "SIP/2.0 503"), nullptr);
         },
         cdr_end::refused, 503, cdr_final_by::sbc, {}, false, false, 0xffff},
        {"a_retransmitted_invite_is_one_call",
         [](harness& hx, const std::string& id) {
             const std::string fwd = offer(hx, id);
             hx.deliver(invite(id), caller);  // the caller did not hear our 100 yet
             answer(hx, fwd, 486, "Busy Here");
             hx.deliver(invite(id), caller);  // nor our 486: repeated from state
         },
         cdr_end::failed, 486, cdr_final_by::peer, {{0, cdr_outcome::code, 486}}},
        {"a_retransmitted_refused_invite_is_one_call",
         [](harness& hx, const std::string& id) {
             hx.t->default_route = -1;
             hx.deliver(invite(id), caller);
             hx.now += 500;
             ASSERT_NE(find_to(hx.deliver(invite(id), caller), caller, "SIP/2.0 404"), nullptr);
         },
         cdr_end::refused, 404, cdr_final_by::sbc, {}, false, false, 0xffff},
    };
    return r;
}

void PrintTo(const row& r, std::ostream* os) { *os << r.name; }

class proxy_cdr_end : public testing::TestWithParam<row> {};

TEST_P(proxy_cdr_end, makes_one_record_with_what_billing_reads)
{
    const row& w = GetParam();
    harness hx;
    const std::string id = std::string("cdr-") + w.name;
    const uint64_t invite_at = hx.now;
    w.run(hx, id);
    if (testing::Test::HasFatalFailure()) return;
    hx.wait(100);
    hx.px.cdr_drain(hx.now);  // whatever is still up: never a second record of an ended call
    const std::vector<call_record> recs = hx.of(id);
    ASSERT_EQ(recs.size(), 1u) << "records: " << hx.sink.records.size();
    const call_record& r = recs[0];

    EXPECT_EQ(sbc::cdr_end_name(r.end), sbc::cdr_end_name(w.end));
    EXPECT_EQ(r.final_code, w.final_code);
    EXPECT_EQ(sbc::cdr_final_by_name(r.final_by), sbc::cdr_final_by_name(w.final_by));
    EXPECT_EQ(r.call_id(), id);
    EXPECT_FALSE(r.callid_cut);
    EXPECT_EQ(r.from(), "alice");
    EXPECT_EQ(r.to(), "+15550100");
    EXPECT_EQ(r.invite_ms, invite_at);
    EXPECT_EQ(r.trunk, 0);
    EXPECT_EQ(r.route, w.route);
    EXPECT_EQ(r.worker, 0);

    ASSERT_EQ(r.n_attempts, w.attempts.size());
    EXPECT_EQ(r.attempts_total, w.attempts.size());
    uint32_t last_end = 0;
    for (std::size_t i = 0; i < w.attempts.size(); ++i) {
        const sbc::cdr_attempt& a = r.attempts[i];
        EXPECT_EQ(a.peer_id, w.attempts[i].peer_id) << "attempt " << i;
        EXPECT_EQ(sbc::cdr_outcome_name(a.outcome), sbc::cdr_outcome_name(w.attempts[i].outcome)) << "attempt " << i;
        EXPECT_EQ(a.code, w.attempts[i].code) << "attempt " << i;
        EXPECT_GE(a.sent_ms, last_end) << "attempt " << i << " after the one before";
        EXPECT_GE(a.ended_ms, a.sent_ms) << "attempt " << i;
        last_end = a.ended_ms;
    }

    if (w.provisional) {
        EXPECT_GT(r.first_provisional_ms, 0u);
        if (w.answered) {
            EXPECT_LT(r.first_provisional_ms, r.answer_ms);
        }
    } else {
        EXPECT_EQ(r.first_provisional_ms, 0u);
    }
    if (w.answered) {
        EXPECT_GT(r.answer_ms, 0u);
        EXPECT_GE(r.end_ms, r.answer_ms);
        EXPECT_EQ(r.answer_ms, r.attempts[r.n_attempts - 1].ended_ms) << "answered when its attempt was";
    } else {
        EXPECT_EQ(r.answer_ms, 0u);
    }
    if (w.end != cdr_end::refused) {
        EXPECT_GE(r.end_ms, last_end);
    } else {
        EXPECT_EQ(r.end_ms, 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(each_way_a_call_ends, proxy_cdr_end, testing::ValuesIn(rows()),
                         [](const testing::TestParamInfo<row>& i) { return std::string(i.param.name); });

// ---- what the rows leave out ---------------------------------------------------------------------

TEST(proxy_cdr, a_hang_up_ends_the_call_when_the_bye_was_sent_whatever_the_answer_takes)
{
    harness hx;
    answered(hx, "dur");
    const uint64_t answered_at = hx.now - 20;
    hx.now += 90'000;
    const uint64_t bye_at = hx.now;
    const batch b = hx.deliver(routed("BYE", "dur", caller), caller);
    const sent* fwd = find_to(b, r1a, "BYE ");
    ASSERT_NE(fwd, nullptr);
    hx.now += 400;  // a slow 200
    hx.deliver(reply(fwd->text, 200, "OK"), r1a);
    const auto recs = hx.of("dur");
    ASSERT_EQ(recs.size(), 1u);
    EXPECT_EQ(recs[0].invite_ms + recs[0].answer_ms, answered_at);
    EXPECT_EQ(recs[0].invite_ms + recs[0].end_ms, bye_at) << "duration = end_ms - answer_ms: the talk time";
}

TEST(proxy_cdr, media_figures_come_with_the_record_of_a_call_with_media)
{
    harness hx;
    hx.media.anchored.push_back(hash_bytes("med"));
    answered(hx, "med");
    hang_up(hx, "med", r1a);
    answered(hx, "nomed");
    hang_up(hx, "nomed", caller);
    const auto med = hx.of("med");
    ASSERT_EQ(med.size(), 1u);
    EXPECT_TRUE(med[0].has_media);
    EXPECT_EQ(med[0].media[0].packets, 500u);
    EXPECT_EQ(med[0].media[0].lost, 3u);
    EXPECT_EQ(med[0].media[0].jitter_us, 1500u);
    EXPECT_EQ(med[0].media[0].payload_type, 8);
    EXPECT_EQ(med[0].media[1].packets, 498u);
    const auto nomed = hx.of("nomed");
    ASSERT_EQ(nomed.size(), 1u);
    EXPECT_FALSE(nomed[0].has_media);
    EXPECT_EQ(nomed[0].media[0].packets, 0u);
    EXPECT_EQ(nomed[0].media[0].payload_type, 255);
}

TEST(proxy_cdr, a_long_call_id_is_cut_and_says_so)
{
    harness hx;
    const std::string id(150, 'x');
    hx.t->default_route = -1;
    hx.deliver(invite(id), caller);
    ASSERT_EQ(hx.sink.records.size(), 1u);
    const call_record& r = hx.sink.records[0];
    EXPECT_TRUE(r.callid_cut);
    EXPECT_EQ(r.call_id(), id.substr(0, sbc::cdr_callid_size));
}

TEST(proxy_cdr, a_full_call_table_refuses_with_a_record)
{
    harness hx(1);  // one setup
    offer(hx, "holds-the-slot");
    ASSERT_NE(find_to(hx.deliver(invite("no-room"), caller), caller, "SIP/2.0 503"), nullptr);
    const auto recs = hx.of("no-room");
    ASSERT_EQ(recs.size(), 1u);
    EXPECT_EQ(recs[0].end, cdr_end::refused);
    EXPECT_EQ(recs[0].final_code, 503);
    EXPECT_EQ(recs[0].final_by, cdr_final_by::sbc);
    EXPECT_EQ(recs[0].n_attempts, 0);
}

TEST(proxy_cdr, without_a_sink_calls_go_on_and_nothing_is_recorded)
{
    harness hx;
    hx.px.set_cdr_sink(nullptr);
    answered(hx, "quiet");
    hang_up(hx, "quiet", caller);
    hx.px.cdr_drain(hx.now);
    EXPECT_TRUE(hx.sink.records.empty());
    EXPECT_EQ(hx.px.stats().get(proxy_counter::calls_answered), 1u);
}

// ---- media figures from the media sessions ----------------------------------------------------

TEST(media_call_figures, gives_each_directions_rtp_packets_loss_jitter_and_payload_type_of_the_first_m_line)
{
    using namespace sbc::rtp;
    constexpr uint32_t sbc_ip = 0xc6130001;
    flow_table table(flow_table_config{{sbc_ip}, 20000, 20099, 1});
    media_config cfg;
    cfg.enabled = true;
    cfg.addresses = {sbc::ip_address::v4(sbc_ip)};
    cfg.sessions_per_worker = 8;
    media_sessions m(table, 0, cfg);
    auto body = [](const char* ip, uint16_t port) {
        return std::string("v=0\r\no=- 1 1 IN IP4 ") + ip + "\r\ns=-\r\nc=IN IP4 " + ip +
               "\r\nt=0 0\r\nm=audio " + std::to_string(port) + " RTP/AVP 8\r\na=rtpmap:8 PCMA/8000\r\n";
    };
    std::array<char, 2048> out{};
    std::size_t len = 0;
    ASSERT_EQ(m.rewrite_sdp(42, media_leg::b, "application/sdp", body("198.18.0.2", 4000), out, len, 1000),
              sdp_verdict::rewritten);
    sbc::rtp::sdp to_b;
    ASSERT_TRUE(parse_sdp({out.data(), len}, to_b));
    ASSERT_EQ(m.rewrite_sdp(42, media_leg::a, "application/sdp", body("198.18.1.11", 6000), out, len, 1000),
              sdp_verdict::rewritten);
    sbc::rtp::sdp to_a;
    ASSERT_TRUE(parse_sdp({out.data(), len}, to_a));

    std::array<sbc::cdr_media, 2> fig{};
    EXPECT_FALSE(m.call_figures(43, fig)) << "a call without media";
    ASSERT_TRUE(m.call_figures(42, fig));
    EXPECT_EQ(fig[0].packets, 0u);
    EXPECT_EQ(fig[0].payload_type, 255) << "no packet yet";

    // What the relay records for packets from A (arriving on the port A was given, to_a) and
    // from B: counts, the first packet's payload type, RFC 3550 sequence and jitter state.
    flow_stats& from_a = table.stats(0, to_a.media[0].port);
    flow_stats& from_b = table.stats(0, to_b.media[0].port);
    from_a.payload_type.set(8);
    for (uint32_t i = 0; i < 100; ++i) {
        if (i == 40) continue;  // one lost
        from_a.packets.add(1);
        from_a.bytes.add(172);
        rtp_account(from_a, static_cast<uint16_t>(i), i * 160, 5000 + i * 160 + (i % 2 ? 40 : 0));
    }
    from_b.payload_type.set(0);
    from_b.packets.set(7);
    ASSERT_TRUE(m.call_figures(42, fig));
    EXPECT_EQ(fig[0].packets, 99u);
    EXPECT_EQ(fig[0].bytes, 99u * 172);
    EXPECT_EQ(fig[0].lost, 1u);
    EXPECT_EQ(fig[0].payload_type, 8);
    // 40 units of alternating transit at 8 kHz settle near 40 units (5 ms); the figure is the
    // relay's jitter word turned into microseconds at the stream's clock.
    const uint64_t want_us = uint64_t{from_a.jitter.get()} * 1'000'000 / 16 / 8000;
    EXPECT_EQ(fig[0].jitter_us, want_us);
    EXPECT_GT(fig[0].jitter_us, 1000u);
    EXPECT_EQ(fig[1].packets, 7u);
    EXPECT_EQ(fig[1].payload_type, 0);

    m.call_ended(42, 2000);
    EXPECT_FALSE(m.call_figures(42, fig)) << "gone with the call";
}

}  // namespace
