// One parse per message: a call with an inbound rule that edits the INVITE, anchored media,
// and one failover (the first peer answers 503) costs each message the proxy receives one
// SIP parse, the rule's rewrite one partial parse (parse_rewritten) for the whole call, and the
// offer and the answer one SDP parse each, whatever the retries (sip_message.h parse_count,
// rtp/sdp.h sdp_parse_count). Pure: no EAL.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "rtp/media.h"
#include "rtp/sdp.h"
#include "sip-fastpath/proxy.h"
#include "sip-fastpath/route_match.h"
#include "sip-fastpath/sip_message.h"
#include "sip-fastpath/sip_rules.h"
#include "tests/unit/proxy_test_util.h"

namespace sbc {
namespace {

using sip::testutil::caller;
using sip::testutil::ip;
using sip::testutil::r1a;
using sip::testutil::r1b;
using sip::testutil::sbc_ep;
using sip::testutil::sdp_of;
using sip::testutil::with_body;


/// A peer's answer to `fwd` (an INVITE as the SBC sent it), its To tagged.
std::string answer(const std::string& fwd, int code, const std::string& body)
{
    auto m = std::make_unique<sip::message>();
    EXPECT_EQ(sip::parse(fwd, *m), sip::error::none);
    std::string r = "SIP/2.0 " + std::to_string(code) + " X\r\n";
    for (unsigned i = 0; i < m->header_count; ++i) {
        const auto& h = m->headers[i];
        if (h.id == sip::header_id::via || h.id == sip::header_id::from || h.id == sip::header_id::call_id ||
            h.id == sip::header_id::cseq || h.id == sip::header_id::record_route)
            r += std::string(m->text(h.line));
        if (h.id == sip::header_id::to) r += "To: " + std::string(m->text(h.value)) + ";tag=b1\r\n";
    }
    return with_body(r + "Contact: <sip:bob@198.18.1.12:5060>\r\n", code == 200 ? body : std::string());
}

struct sent_msg {
    endpoint dst;
    std::string text;
};

struct call_fixture {
    std::shared_ptr<sip::proxy_tables> t = sip::testutil::make_tables({{r1a, 0, 10}, {r1b, 0, 20}}, 1);
    std::unique_ptr<sip::peer_health> h = std::make_unique<sip::peer_health>();
    rtp::flow_table flows{rtp::flow_table_config{{sbc_ep.addr.v4_host()}, 20000, 20007, 1}};
    rtp::media_config cfg = [] {
        rtp::media_config c;
        c.enabled = true;
        c.addresses = {ip_address::v4(ip(198, 18, 0, 1))};
        c.sessions_per_worker = 16;
        return c;
    }();
    rtp::media_sessions media{flows, 0, cfg};
    sip::proxy px{0, 64, 64, 7};
    std::unique_ptr<sip::outbox> out = std::make_unique<sip::outbox>();
    uint64_t now = 1000;

    static void add_rule(sip::rule_tables& rt, const sip::rule_spec& spec, const char* owner, bool outbound)
    {
        sip::rule r;
        EXPECT_FALSE(sip::compile_rule(spec, r));
        r.owner = owner;
        r.outbound = outbound;
        rt.rules.push_back(std::move(r));
    }

    /// `outbound`: the region also adds a header to every INVITE sent toward its peers.
    explicit call_fixture(bool outbound = false)
    {
        // One inbound rule of the trunk: a national number to E.164, in the Request-URI.
        auto rt = std::make_shared<sip::rule_tables>();
        sip::rule_spec national;
        national.kind = sip::rule_kind::number;
        national.field = sip::rule_field::ruri;
        national.match = "^0([1-9][0-9]+)$";
        national.replace = "+44$1";
        add_rule(*rt, national, "trunk:core", false);
        rt->trunk_in = {{0, 1}};
        rt->trunk_out = {{0, 0}};
        rt->region_in = {{0, 0}};
        rt->region_out = {{0, 0}};
        if (outbound) {
            sip::rule_spec tag;
            tag.kind = sip::rule_kind::header_add;
            tag.header = "X-Leg";
            tag.value = "toward ${peer}";
            add_rule(*rt, tag, "region:r1", true);
            rt->region_out = {{1, 1}};
        }
        t->rules = rt;
        px.set_media(&media);
        px.on_tick(*t, *h, now, *out);
    }

    /// Delivers `text` from `from`; what the proxy sent, and how many whole parses it took.
    std::vector<sent_msg> deliver(const std::string& text, endpoint from, uint64_t& parses)
    {
        const uint64_t before = sip::parse_count();
        px.on_input(*t, *h, sip::sip_input{text, from, sbc_ep, 0, now}, *out);
        parses = sip::parse_count() - before;
        std::vector<sent_msg> r;
        for (uint32_t i = 0; i < out->n; ++i) r.push_back({out->msgs[i].dst, std::string(out->msgs[i].data.data(), out->msgs[i].len)});
        out->clear();
        return r;
    }
};

/// `text` with its top Via's branch, the X-Leg value and the Request-URI's host (the peer it
/// was retargeted to) blanked: they differ per attempt.
std::string per_attempt_blanked(std::string text)
{
    const std::size_t line_end = text.find("\r\n");
    const std::size_t at = text.find('@');
    const std::size_t sp = text.rfind(' ', line_end);
    if (at < sp && sp < line_end) text.replace(at + 1, sp - at - 1, "*");
    for (std::string_view k : {"branch=", "X-Leg: "}) {
        const std::size_t at = text.find(k);
        if (at == std::string::npos) continue;
        const std::size_t end = text.find_first_of(";\r", at + k.size());
        text.replace(at + k.size(), end - at - k.size(), "*");
    }
    return text;
}

/// The caller's INVITE of call `id` to a national number, with an offer.
std::string national_invite(const std::string& id)
{
    return with_body("INVITE sip:02071234567@198.18.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-" + id +
                         "\r\nMax-Forwards: 70\r\nFrom: <sip:alice@198.18.0.2>;tag=a1\r\n"
                         "To: <sip:02071234567@198.18.0.1>\r\nCall-ID: " + id +
                         "\r\nCSeq: 1 INVITE\r\nContact: <sip:alice@198.18.0.2:5060>\r\n",
                     sdp_of("198.18.0.2", 4000));
}

/// The message of `o` sent to `to` that starts with `start`.
const std::string* sent_to(const std::vector<sent_msg>& o, endpoint to, std::string_view start)
{
    for (const sent_msg& m : o)
        if (m.dst == to && m.text.rfind(start, 0) == 0) return &m.text;
    return nullptr;
}

TEST(proxy_parse_once, a_failed_over_call_with_an_editing_rule_parses_each_message_once)
{
    call_fixture f;
    const uint64_t rewrites0 = sip::rewrite_parse_count();
    const uint64_t sdp0 = rtp::sdp_parse_count();
    uint64_t parses = 0;

    const std::string invite = national_invite("po1");
    auto o = f.deliver(invite, caller, parses);
    EXPECT_EQ(parses, 1u) << "the INVITE";
    const std::string* first = sent_to(o, r1a, "INVITE sip:+442071234567@");
    ASSERT_NE(first, nullptr) << "the rule's number, to the first peer";
    EXPECT_NE(first->find("c=IN IP4 198.18.0.1"), std::string::npos) << "the offer anchored";
    const std::string first_copy = *first;

    f.now += 50;
    o = f.deliver(answer(first_copy, 503, {}), r1a, parses);
    EXPECT_EQ(parses, 1u) << "the 503, and the retry it starts";
    EXPECT_NE(sent_to(o, r1a, "ACK "), nullptr) << "the 503 acknowledged";
    const std::string* second = sent_to(o, r1b, "INVITE sip:+442071234567@");
    ASSERT_NE(second, nullptr) << "the retry carries the rule's number";
    EXPECT_NE(second->find("c=IN IP4 198.18.0.1"), std::string::npos) << "and the anchored offer";
    const std::string second_copy = *second;

    f.now += 50;
    o = f.deliver(answer(second_copy, 180, {}), r1b, parses);
    EXPECT_EQ(parses, 1u) << "the 180";
    EXPECT_NE(sent_to(o, caller, "SIP/2.0 180"), nullptr);

    f.now += 50;
    o = f.deliver(answer(second_copy, 200, sdp_of("198.18.1.12", 6000)), r1b, parses);
    EXPECT_EQ(parses, 1u) << "the 200 OK";
    const std::string* ok = sent_to(o, caller, "SIP/2.0 200");
    ASSERT_NE(ok, nullptr);
    EXPECT_NE(ok->find("c=IN IP4 198.18.0.1"), std::string::npos) << "the answer anchored";

    EXPECT_EQ(sip::rewrite_parse_count() - rewrites0, 1u) << "the rule's edit, once for both attempts";
    EXPECT_EQ(rtp::sdp_parse_count() - sdp0, 2u) << "the offer once for both attempts, the answer once";
}

TEST(proxy_parse_once, an_outbound_rule_edits_the_first_attempt_from_the_invite_as_received)
{
    // The first attempt is edited from the INVITE's own parse (no parse of the kept copy); a
    // retry parses the kept copy once. The outbound rule's header is one of the attempt's
    // edits (rule_edits), not a copy parsed again. Both carry the same INVITE: Max-Forwards down, the
    // offer anchored, the inbound rule's number, the outbound rule's header.
    call_fixture f(true);
    const uint64_t rewrites0 = sip::rewrite_parse_count();
    uint64_t parses = 0;
    const std::string invite = national_invite("po2");
    auto o = f.deliver(invite, caller, parses);
    EXPECT_EQ(parses, 1u) << "the INVITE alone: its first attempt is edited from that parse";
    const std::string* first = sent_to(o, r1a, "INVITE sip:+442071234567@");
    ASSERT_NE(first, nullptr);
    EXPECT_NE(first->find("\r\nX-Leg: toward "), std::string::npos) << "the outbound rule's header";
    EXPECT_NE(first->find("\r\nMax-Forwards: 69\r\n"), std::string::npos);
    EXPECT_NE(first->find("c=IN IP4 198.18.0.1"), std::string::npos) << "the offer anchored";
    const std::string first_copy = *first;

    f.now += 50;
    o = f.deliver(answer(first_copy, 503, {}), r1a, parses);
    EXPECT_EQ(parses, 2u) << "the 503, and the kept copy for the retry";
    const std::string* second = sent_to(o, r1b, "INVITE sip:+442071234567@");
    ASSERT_NE(second, nullptr);
    EXPECT_EQ(per_attempt_blanked(*second), per_attempt_blanked(first_copy))
        << "the retry sends what the first attempt sent, but for its branch and its peer";
    EXPECT_EQ(sip::rewrite_parse_count() - rewrites0, 1u)
        << "the inbound rule's rewrite alone: the outbound header is one of the attempt's own edits";
}

}  // namespace
}  // namespace sbc
