// Unit tests of RFC 7339 overload control: reading a server's feedback from a Via (every form,
// bad values ignored and counted), our feedback stamped into responses (generated and relayed)
// only for clients that advertised `oc`, `oc` advertised in the Via we send to peers, a peer's
// feedback turned into an event, the control core's per-peer state (latest oc-seq, expiry), and
// selection passing over a reduced peer for its share of calls without ever refusing a call
// another peer cannot take. Pure: no EAL.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "control/config.h"
#include "control/oc_peers.h"
#include "sip-fastpath/overload_control.h"
#include "sip-fastpath/peer_select.h"
#include "sip-fastpath/proxy.h"
#include "sip-fastpath/sip_editor.h"
#include "sip-fastpath/sip_message.h"
#include "tests/unit/proxy_test_util.h"

using namespace sbc::sip;
using sbc::endpoint;
using sbc::sip::testutil::caller;
using sbc::sip::testutil::r1a;
using sbc::sip::testutil::r1b;
using sbc::sip::testutil::sbc_ep;

namespace {

/// Parses a response whose top Via has `params` and reads its feedback.
oc_read feedback_of(const std::string& params, oc_feedback& f)
{
    static std::string text;
    static message m;
    text = "SIP/2.0 180 Ringing\r\nVia: SIP/2.0/UDP 198.18.0.1:5060;branch=z9hG4bKsT" + params +
           "\r\nFrom: <sip:a@x>;tag=1\r\nTo: <sip:b@y>;tag=2\r\nCall-ID: c\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n";
    parse(text, m);
    EXPECT_TRUE(m.has_top_via) << text;
    return read_oc_feedback(m.raw, m.top_via.params, f);
}

}  // namespace

TEST(overload_control, reads_every_form_of_loss_feedback_and_ignores_bad_values)
{
    struct row {
        const char* description;
        std::string params;
        oc_read expect;
        int reduction;       // with feedback
        uint32_t validity;   // with feedback
        bool has_seq;
    };
    const std::vector<row> rows = {
        {"full form", ";oc=20;oc-algo=\"loss\";oc-validity=500;oc-seq=1282321615.782", oc_read::feedback, 20, 500, true},
        {"value alone: loss, 500 ms", ";oc=35", oc_read::feedback, 35, 500, false},
        {"upper case and spaces", " ; OC=7 ;oc-validity=2000", oc_read::feedback, 7, 2000, false},
        {"oc=0 ends it", ";oc=0;oc-validity=0;oc-seq=5", oc_read::feedback, 0, 0, true},
        {"validity capped at an hour", ";oc=10;oc-validity=99999999", oc_read::feedback, 10, oc_max_validity_ms, false},
        {"our own bare oc echoed back", ";oc;oc-algo=\"loss\"", oc_read::none, 0, 0, false},
        {"no oc at all", ";received=198.18.0.9", oc_read::none, 0, 0, false},
        {"above 100", ";oc=101", oc_read::invalid, 0, 0, false},
        {"not a number", ";oc=abc", oc_read::invalid, 0, 0, false},
        {"negative", ";oc=-5", oc_read::invalid, 0, 0, false},
        {"another algorithm", ";oc=20;oc-algo=\"rate\"", oc_read::invalid, 0, 0, false},
        {"bad validity", ";oc=20;oc-validity=soon", oc_read::invalid, 0, 0, false},
        {"oc-seq with six decimals", ";oc=20;oc-seq=1.123456", oc_read::invalid, 0, 0, false},
        {"oc-seq not a number", ";oc=20;oc-seq=x.1", oc_read::invalid, 0, 0, false},
    };
    for (const row& r : rows) {
        oc_feedback f;
        EXPECT_EQ(feedback_of(r.params, f), r.expect) << r.description;
        if (r.expect != oc_read::feedback) continue;
        EXPECT_EQ(f.reduction, r.reduction) << r.description;
        EXPECT_EQ(f.validity_ms, r.validity) << r.description;
        EXPECT_EQ(f.has_seq, r.has_seq) << r.description;
    }
}

TEST(overload_control, oc_seq_values_compare_as_decimal_numbers)
{
    oc_feedback a, b, c;
    ASSERT_EQ(feedback_of(";oc=1;oc-seq=1282321615.782", a), oc_read::feedback);
    ASSERT_EQ(feedback_of(";oc=1;oc-seq=1282321615.79", b), oc_read::feedback);
    ASSERT_EQ(feedback_of(";oc=1;oc-seq=1282321616", c), oc_read::feedback);
    EXPECT_LT(a.seq, b.seq) << ".782 is before .79";
    EXPECT_LT(b.seq, c.seq);
}

TEST(overload_control, writes_its_stamp_in_rfc_7339_form)
{
    char buf[oc_stamp_max];
    const std::size_t n = write_oc_stamp(buf, 30, 1000, 1282321615782ull);
    EXPECT_EQ(std::string(buf, n), ";oc=30;oc-algo=\"loss\";oc-validity=1000;oc-seq=1282321615.782");
    char small[10];
    EXPECT_EQ(write_oc_stamp(small, 30, 1000, 5), 0u) << "a buffer too small gets nothing";
}

TEST(overload_control, the_editor_stamps_the_clients_via_when_ours_shares_its_header_line)
{
    // "ours, theirs" in one Via header: ours goes, theirs gets the feedback in place of its
    // bare oc and its algorithm list.
    const std::string text =
        "SIP/2.0 180 Ringing\r\n"
        "Via: SIP/2.0/UDP 198.18.0.1:5060;branch=z9hG4bKsT0000000001000011;oc, SIP/2.0/UDP 198.18.0.2:5060"
        ";branch=z9hG4bK-x;oc;oc-algo=\"loss\";rport=5060\r\n"
        "From: <sip:a@x>;tag=1\r\nTo: <sip:b@y>;tag=2\r\nCall-ID: c\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n";
    message m;
    ASSERT_EQ(parse(text, m), sbc::sip::error::none);
    via client;
    ASSERT_TRUE(second_via(m, client));
    EXPECT_EQ(client.host.in(m.raw), "198.18.0.2");
    via_splice sp;
    ASSERT_TRUE(oc_advertised(m.raw, client, sp));
    sp.text = ";oc=20;oc-algo=\"loss\";oc-validity=500;oc-seq=1.000";
    edits e;
    e.pop_via = true;
    e.via_params = &sp;
    std::array<char, 1024> out{};
    const write_result r = edit(m, e, out);
    ASSERT_TRUE(r.ok());
    const std::string got(out.data(), r.len);
    EXPECT_NE(got.find("\r\nVia: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-x;rport=5060;oc=20;oc-algo=\"loss\";"
                       "oc-validity=500;oc-seq=1.000\r\n"),
              std::string::npos)
        << got;
    EXPECT_EQ(got.find("z9hG4bKsT"), std::string::npos) << got;
}

namespace {

std::string invite(const std::string& call_id, const std::string& via_params)
{
    return "INVITE sip:+15550100@198.18.0.1 SIP/2.0\r\n"
           "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-" + call_id + via_params + "\r\n"
           "Max-Forwards: 70\r\n"
           "From: <sip:alice@198.18.0.2>;tag=a1\r\n"
           "To: <sip:+15550100@198.18.0.1>\r\n"
           "Call-ID: " + call_id + "\r\n"
           "CSeq: 1 INVITE\r\n"
           "Contact: <sip:alice@198.18.0.2:5060>\r\n"
           "Content-Length: 0\r\n\r\n";
}

struct sent {
    endpoint dst;
    std::string text;
};

struct harness {
    std::shared_ptr<proxy_tables> t = testutil::make_tables({{r1a, 0}, {r1b, 0}}, 1);
    std::unique_ptr<peer_health> h = std::make_unique<peer_health>();
    proxy px{0, 64, 64, 7};
    std::unique_ptr<outbox> out = std::make_unique<outbox>();
    std::vector<peer_event> events;
    uint64_t now = 5000;

    std::vector<sent> deliver(const std::string& text, endpoint from)
    {
        const sip_input in{text, from, sbc_ep, 0, now};
        px.on_input(*t, *h, in, *out);
        std::vector<sent> r;
        for (uint32_t i = 0; i < out->n; ++i) r.push_back({out->msgs[i].dst, std::string(out->msgs[i].data.data(), out->msgs[i].len)});
        for (uint32_t i = 0; i < out->n_events; ++i) events.push_back(out->events[i]);
        out->clear();
        return r;
    }
};

const sent* find(const std::vector<sent>& v, bool to_caller, std::string_view start)
{
    for (const auto& s : v)
        if ((s.dst == caller) == to_caller && s.text.rfind(start, 0) == 0) return &s;
    return nullptr;
}

/// The first Via line of a message.
std::string top_via(const std::string& text)
{
    const std::size_t at = text.find("\r\nVia: ");
    if (at == std::string::npos) return {};
    return text.substr(at + 2, text.find("\r\n", at + 2) - at - 2);
}

/// A peer's response to the INVITE we forwarded: its Via lines, with `ours_extra` appended to
/// the top one (ours), as a peer that stamps feedback would.
std::string peer_reply(const std::string& fwd, int code, const std::string& ours_extra = "")
{
    message m;
    parse(fwd, m);
    std::string r = "SIP/2.0 " + std::to_string(code) + " X\r\n";
    bool first = true;
    for (unsigned i = 0; i < m.header_count; ++i) {
        const header& hd = m.headers[i];
        if (hd.id == header_id::via) {
            r += "Via: " + std::string(m.text(hd.value)) + (first ? ours_extra : "") + "\r\n";
            first = false;
        }
        if (hd.id == header_id::from || hd.id == header_id::call_id || hd.id == header_id::cseq)
            r += std::string(m.text(hd.line));
        if (hd.id == header_id::to) r += "To: " + std::string(m.text(hd.value)) + ";tag=p\r\n";
    }
    return r + "Content-Length: 0\r\n\r\n";
}

}  // namespace

TEST(overload_control, an_overloaded_worker_stamps_its_reduction_only_for_clients_that_advertised_oc)
{
    harness hx;
    // A trusted trunk: at 30 % none of its new calls is shed (stage_guard.cc), so every
    // INVITE here is answered 100 Trying, stamped or not.
    hx.t->trunks[0].trusted = true;
    hx.px.set_overload(30);
    auto out = hx.deliver(invite("a1", ";oc;oc-algo=\"loss,rate\""), caller);
    const sent* trying = find(out, true, "SIP/2.0 100");
    ASSERT_NE(trying, nullptr);
    EXPECT_EQ(top_via(trying->text), "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-a1;oc=30;oc-algo=\"loss\";"
                                     "oc-validity=1000;oc-seq=5.000")
        << "its bare oc and its algorithm list replaced by our value and choice";

    auto plain = hx.deliver(invite("a2", ""), caller);
    const sent* trying2 = find(plain, true, "SIP/2.0 100");
    ASSERT_NE(trying2, nullptr);
    EXPECT_EQ(trying2->text.find("oc="), std::string::npos) << "a client that did not advertise oc hears nothing";
    auto other_algo = hx.deliver(invite("a3", ";oc;oc-algo=\"rate\""), caller);
    ASSERT_NE(find(other_algo, true, "SIP/2.0 100"), nullptr);
    EXPECT_EQ(find(other_algo, true, "SIP/2.0 100")->text.find("oc="), std::string::npos)
        << "a client that takes only another algorithm hears nothing";
    EXPECT_EQ(hx.px.stats().get(proxy_counter::oc_stamped), 1u);
}

TEST(overload_control, after_an_overload_ends_clients_hear_oc_0_for_one_validity_then_nothing)
{
    harness hx;
    hx.px.set_overload(50);
    hx.deliver(invite("b1", ";oc"), caller);
    hx.px.set_overload(0);
    hx.now += 10;
    auto ending = hx.deliver(invite("b2", ";oc"), caller);
    ASSERT_NE(find(ending, true, "SIP/2.0 100"), nullptr);
    EXPECT_NE(find(ending, true, "SIP/2.0 100")->text.find(";oc=0;oc-algo=\"loss\";oc-validity=0;oc-seq=5.010"),
              std::string::npos)
        << find(ending, true, "SIP/2.0 100")->text;
    hx.now += 1000;  // one validity (1000 ms) later
    auto later = hx.deliver(invite("b3", ";oc"), caller);
    ASSERT_NE(find(later, true, "SIP/2.0 100"), nullptr);
    EXPECT_EQ(find(later, true, "SIP/2.0 100")->text.find("oc="), std::string::npos);
    EXPECT_NE(find(later, true, "SIP/2.0 100")->text.find("branch=z9hG4bK-b3;oc\r\n"), std::string::npos)
        << "the client's Via as it sent it";
}

TEST(overload_control, a_relayed_response_carries_the_stamp_in_the_callers_via_and_ours_is_gone)
{
    harness hx;
    auto out = hx.deliver(invite("c1", ";oc"), caller);
    const sent* fwd = find(out, false, "INVITE ");
    ASSERT_NE(fwd, nullptr);
    EXPECT_NE(top_via(fwd->text).find(";oc;oc-algo=\"loss\""), std::string::npos)
        << "we advertise oc toward the peer: " << top_via(fwd->text);
    hx.px.set_overload(40);
    hx.now = 7250;
    auto ringing = hx.deliver(peer_reply(fwd->text, 180), fwd->dst);
    const sent* up = find(ringing, true, "SIP/2.0 180");
    ASSERT_NE(up, nullptr);
    EXPECT_EQ(top_via(up->text),
              "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-c1;oc=40;oc-algo=\"loss\";oc-validity=1000;oc-seq=7.250");
    EXPECT_EQ(up->text.find("z9hG4bKs"), std::string::npos) << "our Via is gone";
}

TEST(overload_control, nothing_is_advertised_when_the_config_says_no)
{
    harness hx;
    hx.t->oc.advertise = false;
    auto out = hx.deliver(invite("d1", ""), caller);
    const sent* fwd = find(out, false, "INVITE ");
    ASSERT_NE(fwd, nullptr);
    EXPECT_EQ(top_via(fwd->text).find(";oc"), std::string::npos) << top_via(fwd->text);
    // And a peer's feedback is not taken from a Via that did not ask for it.
    hx.deliver(peer_reply(fwd->text, 180, ";oc=50"), fwd->dst);
    for (const auto& e : hx.events) EXPECT_NE(e.kind, peer_event_kind::overload);
}

TEST(overload_control, a_peers_feedback_becomes_one_event_and_bad_feedback_is_counted)
{
    harness hx;
    auto out = hx.deliver(invite("e1", ""), caller);
    const sent* fwd = find(out, false, "INVITE ");
    ASSERT_NE(fwd, nullptr);
    hx.deliver(peer_reply(fwd->text, 100, ";oc=60;oc-algo=\"loss\";oc-validity=2000;oc-seq=12.5"), fwd->dst);
    const peer_event* ev = nullptr;
    for (const auto& e : hx.events)
        if (e.kind == peer_event_kind::overload) ev = &e;
    ASSERT_NE(ev, nullptr);
    EXPECT_EQ(ev->peer_id, fwd->dst == r1a ? 0u : 1u);
    EXPECT_EQ(ev->oc_reduction, 60);
    EXPECT_EQ(ev->oc_validity_ms, 2000u);
    EXPECT_TRUE(ev->has_oc_seq);
    EXPECT_EQ(ev->oc_seq, 1250000u);
    EXPECT_EQ(hx.px.stats().get(proxy_counter::oc_feedback), 1u);
    // The same again at once: counted, not posted again (the control core has it).
    hx.events.clear();
    hx.deliver(peer_reply(fwd->text, 180, ";oc=60;oc-algo=\"loss\";oc-validity=2000;oc-seq=12.6"), fwd->dst);
    for (const auto& e : hx.events) EXPECT_NE(e.kind, peer_event_kind::overload);
    EXPECT_EQ(hx.px.stats().get(proxy_counter::oc_feedback), 2u);
    hx.deliver(peer_reply(fwd->text, 183, ";oc=250"), fwd->dst);
    EXPECT_EQ(hx.px.stats().get(proxy_counter::oc_invalid), 1u);
}

TEST(overload_control, the_control_core_keeps_the_latest_oc_seq_and_clears_a_reduction_when_it_expires)
{
    auto h = std::make_unique<peer_health>();
    std::vector<std::string> log;
    sbc::control::oc_peers oc(*h, [&](const std::string& l) { log.push_back(l); });
    auto name = [](uint32_t id) { return "p" + std::to_string(id); };
    oc.on_feedback(3, 40, 1000, true, 200, 10'000, name);
    EXPECT_EQ(h->oc_reduction_of(3), 40);
    oc.on_feedback(3, 10, 1000, true, 100, 10'100, name);  // an older response overtaken
    EXPECT_EQ(h->oc_reduction_of(3), 40) << "an older oc-seq is ignored";
    EXPECT_EQ(oc.of(3).stale, 1u);
    oc.on_feedback(3, 20, 1000, true, 300, 10'200, name);
    EXPECT_EQ(h->oc_reduction_of(3), 20);
    EXPECT_EQ(oc.left_ms(3, 10'700), 500u);
    oc.tick(11'199, name);
    EXPECT_EQ(h->oc_reduction_of(3), 20);
    oc.tick(11'200, name);
    EXPECT_EQ(h->oc_reduction_of(3), 0) << "expired with its oc-validity";
    oc.on_feedback(3, 50, 1000, true, 400, 12'000, name);
    oc.on_feedback(3, 50, 0, true, 500, 12'100, name);
    EXPECT_EQ(h->oc_reduction_of(3), 0) << "oc-validity=0 ends it at once";
    oc.on_feedback(3, 30, 1000, true, 600, 12'200, name);
    oc.on_feedback(3, 0, 1000, true, 700, 12'300, name);
    EXPECT_EQ(h->oc_reduction_of(3), 0) << "oc=0 ends it at once";
    oc.on_feedback(3, 30, 1000, true, 800, 13'000, name);
    oc.reset(3);
    EXPECT_EQ(h->oc_reduction_of(3), 0) << "a freed peer id keeps nothing";
    EXPECT_FALSE(log.empty());
}

namespace {

/// Shares of `calls` selections that went to each of the two region1 peers.
std::array<int, 2> pick_shares(const proxy_tables& t, const peer_health& h, int calls, int& diverted)
{
    select_state st;
    std::array<int, 2> n{};
    diverted = 0;
    for (int i = 0; i < calls; ++i) {
        const uint32_t p = select_peer(t, h, {.region = 0, .sel = selector::srv}, st);
        if (p < 2) ++n[p];
        if (st.oc_diverted) ++diverted;
    }
    return n;
}

}  // namespace

TEST(overload_control, selection_passes_over_a_reduced_peer_for_its_share_of_calls)
{
    auto t = testutil::make_tables({{r1a, 0}, {r1b, 0}}, 1);
    auto h = std::make_unique<peer_health>();
    int diverted = 0;
    auto even = pick_shares(*t, *h, 10000, diverted);
    EXPECT_NEAR(even[0], 5000, 300) << "equal weights, no feedback: half each";
    EXPECT_EQ(diverted, 0);
    h->oc_reduction[0].store(50);
    auto half = pick_shares(*t, *h, 10000, diverted);
    // Passed over on half the calls; on the other half it still competes by weight: 25 %.
    EXPECT_NEAR(half[0], 2500, 300);
    EXPECT_NEAR(diverted, 5000, 300);
    h->oc_reduction[0].store(100);
    auto all = pick_shares(*t, *h, 2000, diverted);
    EXPECT_EQ(all[0], 0) << "100 %: no new call while the other peer takes them";
    EXPECT_EQ(all[1], 2000);
}

TEST(overload_control, a_reduced_peer_still_gets_the_call_when_no_other_peer_can_take_it)
{
    auto t = testutil::make_tables({{r1a, 0}, {r1b, 0}}, 1);
    auto h = std::make_unique<peer_health>();
    h->oc_reduction[0].store(100);
    h->word[1].store(peer_state::down);
    int diverted = 0;
    auto only = pick_shares(*t, *h, 1000, diverted);
    EXPECT_EQ(only[0], 1000) << "never refused for a reduction while it is the one peer left";
    EXPECT_EQ(diverted, 0);
    h->word[1].store(0);
    h->oc_reduction[1].store(100);
    auto both = pick_shares(*t, *h, 1000, diverted);
    EXPECT_EQ(both[0] + both[1], 1000) << "every peer reduced: the calls go as if none were";
    EXPECT_EQ(diverted, 0);
}

TEST(overload_control, a_diverted_call_is_counted_by_the_proxy)
{
    harness hx;
    hx.h->oc_reduction[0].store(100);
    for (int i = 0; i < 10; ++i) {
        auto out = hx.deliver(invite("f" + std::to_string(i), ""), caller);
        const sent* fwd = find(out, false, "INVITE ");
        ASSERT_NE(fwd, nullptr);
        EXPECT_TRUE(fwd->dst == r1b) << "the reduced peer gets no new call";
    }
    EXPECT_EQ(hx.px.stats().get(proxy_counter::oc_diverted), 10u);
}

namespace {

const std::string one_interface = "[[interface]]\nname = \"core\"\ndevice = \"net_null0\"\naddress = \"198.18.0.1/24\"\n";

}  // namespace

TEST(overload_control, the_config_section_has_rfc_defaults_and_takes_its_three_keys)
{
    auto absent = sbc::control::parse_config(one_interface, "oc.toml");
    ASSERT_TRUE(absent.cfg);
    EXPECT_TRUE(absent.cfg->overload_control.advertise);
    EXPECT_TRUE(absent.cfg->overload_control.stamp);
    EXPECT_EQ(absent.cfg->overload_control.validity_ms, 1000u);
    auto set = sbc::control::parse_config(
        one_interface + "[overload_control]\nadvertise = false\nstamp = false\nvalidity_ms = 250\n", "oc.toml");
    ASSERT_TRUE(set.cfg) << (set.errors.empty() ? "" : set.errors[0].to_string());
    EXPECT_FALSE(set.cfg->overload_control.advertise);
    EXPECT_FALSE(set.cfg->overload_control.stamp);
    EXPECT_EQ(set.cfg->overload_control.validity_ms, 250u);
}

TEST(overload_control, a_bad_key_or_value_is_refused_with_file_line_and_key)
{
    auto bad = sbc::control::parse_config(one_interface + "[overload_control]\nvalidity_ms = 50\n", "oc.toml");
    EXPECT_FALSE(bad.cfg);
    ASSERT_EQ(bad.errors.size(), 1u);
    EXPECT_EQ(bad.errors[0].to_string().rfind("oc.toml:6: overload_control.validity_ms:", 0), 0u)
        << bad.errors[0].to_string();
    auto typo = sbc::control::parse_config(one_interface + "[overload_control]\nadvertise_oc = true\n", "oc.toml");
    EXPECT_FALSE(typo.cfg);
    ASSERT_EQ(typo.errors.size(), 1u);
    EXPECT_EQ(typo.errors[0].key, "overload_control.advertise_oc") << typo.errors[0].to_string();
}
