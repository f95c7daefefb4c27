// Unit tests of topology hiding ([[trunk]] topology_hiding): the masked encoding, and whole
// round trips through the proxy (INVITE out, responses back, in-dialog requests both ways,
// and a caller that ignores Record-Route) asserting that neither side receives the other's
// Via hosts, Record-Route hosts or Contact host, and that each gets its own back. Pure:
// datagrams in, datagrams out, no EAL.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sip-fastpath/proxy.h"
#include "sip-fastpath/sip_message.h"
#include "sip-fastpath/topology_hiding.h"
#include "tests/unit/proxy_test_util.h"

using namespace sbc::sip;
using sbc::endpoint;
using sbc::sip::testutil::caller;
using sbc::sip::testutil::ip;
using sbc::sip::testutil::r1a;
using sbc::sip::testutil::r1b;
using sbc::sip::testutil::sbc_ep;

namespace {

constexpr uint64_t key = 0x1234567890abcdefull;

struct sent {
    endpoint src, dst;
    std::string text;
    std::unique_ptr<message> m = std::make_unique<message>();
};
using batch = std::vector<std::unique_ptr<sent>>;

struct harness {
    std::shared_ptr<proxy_tables> t;
    std::unique_ptr<peer_health> h = std::make_unique<peer_health>();
    proxy px{0, 64, 64, 7};
    std::unique_ptr<outbox> out = std::make_unique<outbox>();

    explicit harness(bool hide = true)
    {
        t = testutil::make_tables({{r1a, 0, 10}, {r1b, 0, 20}}, 1);  // every call goes to r1a
        t->trunks[0].topology_hiding = hide;
        t->hiding_key = key;
    }
    batch deliver(const std::string& text, endpoint from)
    {
        const sip_input in{text, from, sbc_ep, 0, 1000};
        px.on_input(*t, *h, in, *out);
        batch r;
        for (uint32_t i = 0; i < out->n; ++i) {
            auto s = std::make_unique<sent>();
            s->src = out->msgs[i].src;
            s->dst = out->msgs[i].dst;
            s->text.assign(out->msgs[i].data.data(), out->msgs[i].len);
            parse(s->text, *s->m);
            r.push_back(std::move(s));
        }
        out->clear();
        return r;
    }
    [[nodiscard]] uint64_t stat(proxy_counter c) const { return px.stats().get(c); }
};

const sent* find_to(const batch& v, endpoint dst, std::string_view start)
{
    for (const auto& s : v)
        if (s->dst == dst && s->text.rfind(start, 0) == 0) return s.get();
    return nullptr;
}

/// The lines of `m` with header `id`, joined.
std::string lines(const message& m, header_id id)
{
    std::string r;
    for (unsigned i = 0; i < m.header_count; ++i)
        if (m.headers[i].id == id) r += std::string(m.text(m.headers[i].line));
    return r;
}

/// Via, Record-Route, Route and Contact lines and the start line: where topology shows.
std::string topology(const sent& s)
{
    const message& m = *s.m;
    return std::string(m.text(m.start_line)) + "\n" + lines(m, header_id::via) + lines(m, header_id::record_route) +
           lines(m, header_id::route) + lines(m, header_id::contact);
}

// The caller's side: its own address, a proxy of its own behind it (Via 10.9.9.9), and a
// Record-Route of that proxy's (198.18.0.2:5070: a party, so that requests may go to it).
const std::string caller_vias = "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-c1\r\n"
                                "Via: SIP/2.0/UDP 10.9.9.9:5060;branch=z9hG4bK-inner;received=10.9.9.9\r\n";
const std::string caller_rr = "<sip:198.18.0.2:5070;lr>";
// The callee's side: a proxy of its own (r1b, a peer) record-routes, its Contact on r1a.
const std::string callee_rr = "<sip:198.18.1.12:5060;lr>";
const std::string callee_contact = "<sip:bob@198.18.1.11:5060>";

std::string invite(const std::string& call_id)
{
    return "INVITE sip:+15550100@198.18.0.1 SIP/2.0\r\n" + caller_vias +
           "Record-Route: " + caller_rr + "\r\n"
           "Max-Forwards: 70\r\n"
           "From: <sip:alice@example.com>;tag=a1\r\n"
           "To: <sip:+15550100@example.net>\r\n"
           "Call-ID: " + call_id + "\r\n"
           "CSeq: 1 INVITE\r\n"
           "Contact: <sip:alice@198.18.0.2:5060>\r\n"
           "Content-Length: 0\r\n\r\n";
}

/// The callee's answer to `req` as it received it: its Vias and Record-Routes echoed, its own
/// Record-Route on top, its Contact.
std::string answer(const sent& req, int code, const std::string& reason)
{
    const message& m = *req.m;
    std::string r = "SIP/2.0 " + std::to_string(code) + " " + reason + "\r\n" + lines(m, header_id::via);
    if (m.req_method == method::invite) r += "Record-Route: " + callee_rr + "\r\n" + lines(m, header_id::record_route);
    r += lines(m, header_id::from);
    r += "To: " + std::string(m.text(m.headers[m.h_to].value)) + (m.to.has_tag ? "" : ";tag=b1") + "\r\n";
    r += lines(m, header_id::call_id) + lines(m, header_id::cseq);
    if (m.req_method == method::invite) r += "Contact: " + callee_contact + "\r\n";
    return r + "Content-Length: 0\r\n\r\n";
}

/// The value of the first header `id` of `s`.
std::string value(const sent& s, header_id id)
{
    const header* hd = s.m->find(id);
    return hd == nullptr ? std::string{} : std::string(s.m->text(hd->value));
}

/// The URI of `s`'s Contact.
std::string contact_of(const sent& s)
{
    return std::string(contact_uri(*s.m));
}

void expect_absent(const std::string& text, std::initializer_list<const char*> hidden, const char* what)
{
    for (const char* h : hidden) EXPECT_EQ(text.find(h), std::string::npos) << what << " shows " << h << ":\n" << text;
}

/// An answered call: the INVITE as r1a got it and the 200 as the caller got it.
struct call_setup {
    batch inv, ok;
    const sent* at_callee = nullptr;
    const sent* at_caller = nullptr;
};
void answered(harness& hx, const std::string& call_id, call_setup& c)
{
    c.inv = hx.deliver(invite(call_id), caller);
    c.at_callee = find_to(c.inv, r1a, "INVITE ");
    ASSERT_NE(c.at_callee, nullptr);
    c.ok = hx.deliver(answer(*c.at_callee, 200, "OK"), r1a);
    c.at_caller = find_to(c.ok, caller, "SIP/2.0 200");
    ASSERT_NE(c.at_caller, nullptr);
}

}  // namespace

TEST(topology_hiding, an_encoded_value_decodes_to_what_was_encoded_and_a_changed_one_does_not)
{
    const std::string plain = "SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bK-x, SIP/2.0/TCP [2001:db8::1]:5070";
    char enc[th_max_encoded], dec[th_max_plain];
    const std::size_t n = th_encode(enc, plain, key);
    ASSERT_GT(n, plain.size());
    const std::string e(enc, n);
    EXPECT_EQ(e.find("10.0.0.1"), std::string::npos) << "masked, not in clear";
    EXPECT_EQ(e.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"), std::string::npos)
        << "a token and URI parameter value: " << e;
    ASSERT_EQ(th_decode(e, key, dec), static_cast<int>(plain.size()));
    EXPECT_EQ(std::string(dec, plain.size()), plain);
    std::string changed = e;
    changed[10] = changed[10] == 'A' ? 'B' : 'A';
    EXPECT_EQ(th_decode(changed, key, dec), -1) << "a changed byte is refused";
    EXPECT_EQ(th_decode(e.substr(0, e.size() - 3), key, dec), -1) << "a cut value is refused";
    EXPECT_EQ(th_decode(e, key + 1, dec), -1) << "another SBC's value is refused";
    char enc2[th_max_encoded];
    const std::size_t n2 = th_encode(enc2, "SIP/2.0/UDP 10.0.0.2:5060;branch=z9hG4bK-x", key);
    EXPECT_NE(std::string(enc2, 12), std::string(enc, 12)) << "texts that differ are masked differently";
    EXPECT_GT(n2, 0u);
}

TEST(topology_hiding, the_callee_gets_only_the_sbc_in_via_record_route_and_contact_and_the_caller_gets_its_own_back)
{
    harness hx;
    call_setup c;
    answered(hx, "th-setup", c);
    if (testing::Test::HasFatalFailure()) return;
    // What the callee got: one Via (ours), our Record-Route alone, our Contact.
    const sent& inv = *c.at_callee;
    expect_absent(topology(inv), {"198.18.0.2", "10.9.9.9"}, "the INVITE at the callee");
    EXPECT_EQ(lines(*inv.m, header_id::via).find("Via: SIP/2.0/UDP 198.18.0.1:5060;branch=z9hG4bKsT"), 0u)
        << lines(*inv.m, header_id::via);
    EXPECT_EQ(value(inv, header_id::via).find(','), std::string::npos);
    EXPECT_EQ(lines(*inv.m, header_id::via).find("\r\nVia"), std::string::npos) << "one Via line";
    EXPECT_EQ(value(inv, header_id::record_route).rfind("<sip:198.18.0.1:5060;lr;w=00;sbc-th=", 0), 0u)
        << lines(*inv.m, header_id::record_route);
    EXPECT_EQ(contact_of(inv).rfind("sip:198.18.0.1:5060;w=00;sbc-th=", 0), 0u) << contact_of(inv);
    // What the caller got back: its own two Vias exactly, its proxy's Record-Route below ours,
    // the callee's side hidden (its proxy, its Contact host).
    const sent& ok = *c.at_caller;
    EXPECT_EQ(lines(*ok.m, header_id::via), caller_vias) << ok.text;
    const std::string rr = lines(*ok.m, header_id::record_route);
    EXPECT_NE(rr.find(caller_rr), std::string::npos) << "the caller's route set restored:\n" << rr;
    EXPECT_LT(rr.find("198.18.0.1:5060;lr;w=00"), rr.find(caller_rr)) << rr;
    expect_absent(topology(ok), {"198.18.1.11", "198.18.1.12"}, "the 200 at the caller");
    EXPECT_EQ(contact_of(ok).rfind("sip:198.18.0.1:5060;w=00;sbc-th=", 0), 0u) << contact_of(ok);
    EXPECT_EQ(hx.stat(proxy_counter::th_undecodable), 0u);
}

TEST(topology_hiding, in_dialog_requests_both_ways_reach_the_original_contacts_and_routes_hidden_from_the_far_side)
{
    harness hx;
    call_setup c;
    answered(hx, "th-dialog", c);
    if (testing::Test::HasFatalFailure()) return;
    // The callee's re-INVITE toward the caller, by its route set: its proxy (r1b) has popped
    // its entry, ours is next; Request-URI = the Contact we gave it.
    const std::string our_rr_for_callee = value(*c.at_callee, header_id::record_route);
    const std::string reinvite = "INVITE " + contact_of(*c.at_callee) + " SIP/2.0\r\n"
                                 "Via: SIP/2.0/UDP 198.18.1.12:5060;branch=z9hG4bK-p\r\n"
                                 "Via: SIP/2.0/UDP 198.18.1.11:5060;branch=z9hG4bK-re\r\n"
                                 "Route: " + our_rr_for_callee + "\r\n"
                                 "Max-Forwards: 70\r\n"
                                 "From: <sip:+15550100@example.net>;tag=b1\r\n"
                                 "To: <sip:alice@example.com>;tag=a1\r\n"
                                 "Call-ID: th-dialog\r\nCSeq: 7 INVITE\r\n"
                                 "Contact: " + callee_contact + "\r\nContent-Length: 0\r\n\r\n";
    const batch r = hx.deliver(reinvite, r1b);
    // Toward the caller's side: through its proxy (restored), to its original Contact, with
    // nothing of the callee in it.
    const sent* at_caller = find_to(r, endpoint::udp4(ip(198, 18, 0, 2), 5070), "INVITE sip:alice@198.18.0.2:5060 ");
    ASSERT_NE(at_caller, nullptr) << (r.empty() ? std::string("nothing sent") : r[0]->text);
    EXPECT_EQ(lines(*at_caller->m, header_id::route), "Route: " + caller_rr + "\r\n");
    expect_absent(topology(*at_caller), {"198.18.1.11", "198.18.1.12"}, "the re-INVITE at the caller");
    // The caller's 200 goes back to the callee's proxy with both its Vias restored.
    const batch ok2 = hx.deliver(answer(*at_caller, 200, "OK"), caller);
    const sent* back2 = find_to(ok2, r1b, "SIP/2.0 200");
    ASSERT_NE(back2, nullptr);
    EXPECT_EQ(lines(*back2->m, header_id::via),
              "Via: SIP/2.0/UDP 198.18.1.12:5060;branch=z9hG4bK-p\r\nVia: SIP/2.0/UDP 198.18.1.11:5060;branch=z9hG4bK-re\r\n");
    expect_absent(topology(*back2), {"198.18.0.2", "10.9.9.9"}, "the 200 at the callee");
    // The caller's BYE, as its route set says: Route = reversed Record-Route (its own proxy has
    // already popped its entry), Request-URI = the Contact we gave it.
    const std::string our_rr_for_caller = [&] {
        const std::string rr = value(*c.at_caller, header_id::record_route);
        return rr.substr(0, rr.find('>') + 1);
    }();
    const std::string bye = "BYE " + contact_of(*c.at_caller) + " SIP/2.0\r\n" + caller_vias +
                            "Route: " + our_rr_for_caller + "\r\n"
                            "Max-Forwards: 70\r\n"
                            "From: <sip:alice@example.com>;tag=a1\r\n"
                            "To: <sip:+15550100@example.net>;tag=b1\r\n"
                            "Call-ID: th-dialog\r\nCSeq: 2 BYE\r\n"
                            "Contact: <sip:alice@198.18.0.2:5060>\r\nContent-Length: 0\r\n\r\n";
    const batch b = hx.deliver(bye, caller);
    // Toward the callee's side: through its proxy (r1b, the route set we hid from the caller),
    // to its Contact, with nothing of the caller in it.
    const sent* at_callee = find_to(b, r1b, "BYE sip:bob@198.18.1.11:5060 ");
    ASSERT_NE(at_callee, nullptr) << (b.empty() ? std::string("nothing sent") : b[0]->text);
    EXPECT_EQ(lines(*at_callee->m, header_id::route), "Route: " + callee_rr + "\r\n");
    expect_absent(topology(*at_callee), {"198.18.0.2", "10.9.9.9"}, "the BYE at the callee");
    EXPECT_EQ(hx.stat(proxy_counter::in_dialog), 2u);
    // Its 200 comes back with the caller's Vias restored, nothing of the callee's.
    const batch ok = hx.deliver(answer(*at_callee, 200, "OK"), r1a);
    const sent* back = find_to(ok, caller, "SIP/2.0 200");
    ASSERT_NE(back, nullptr);
    EXPECT_EQ(lines(*back->m, header_id::via), caller_vias);

}

TEST(topology_hiding, the_callers_requests_follow_the_callee_when_its_contact_moves)
{
    // No proxy on the callee's side: the caller's requests go to the Request-URI, the Contact
    // we wrote, which decodes to the callee's Contact of the moment.
    harness hx;
    const batch inv = hx.deliver(invite("th-move"), caller);
    const sent* at_callee = find_to(inv, r1a, "INVITE ");
    ASSERT_NE(at_callee, nullptr);
    const std::string dialog = "Call-ID: th-move\r\n";
    const std::string ok_text = "SIP/2.0 200 OK\r\n" + lines(*at_callee->m, header_id::via) +
                                lines(*at_callee->m, header_id::record_route) + lines(*at_callee->m, header_id::from) +
                                "To: <sip:+15550100@example.net>;tag=b1\r\n" + dialog + "CSeq: 1 INVITE\r\n"
                                "Contact: <sip:bob@198.18.1.11:5060>\r\nContent-Length: 0\r\n\r\n";
    const batch ok = hx.deliver(ok_text, r1a);
    const sent* at_caller = find_to(ok, caller, "SIP/2.0 200");
    ASSERT_NE(at_caller, nullptr);
    const std::string rr = value(*at_caller, header_id::record_route);
    const std::string our_rr_for_caller = rr.substr(0, rr.find('>') + 1);
    const auto from_caller = [&](const std::string& method, const std::string& ruri, int cseq) {
        return method + " " + ruri + " SIP/2.0\r\n" + caller_vias + "Route: " + our_rr_for_caller + "\r\n"
               "Max-Forwards: 70\r\nFrom: <sip:alice@example.com>;tag=a1\r\n"
               "To: <sip:+15550100@example.net>;tag=b1\r\n" + dialog + "CSeq: " + std::to_string(cseq) + " " +
               method + "\r\nContent-Length: 0\r\n\r\n";
    };
    // Before the move: to the Contact of the 200.
    const batch info = hx.deliver(from_caller("INFO", contact_of(*at_caller), 2), caller);
    ASSERT_NE(find_to(info, r1a, "INFO sip:bob@198.18.1.11:5060 "), nullptr)
        << (info.empty() ? std::string("nothing sent") : info[0]->text);
    // The callee's re-INVITE moves its Contact to port 5080; the caller gets a new Contact of ours.
    const std::string reinvite = "INVITE " + contact_of(*at_callee) + " SIP/2.0\r\n"
                                 "Via: SIP/2.0/UDP 198.18.1.11:5060;branch=z9hG4bK-move\r\n"
                                 "Route: " + value(*at_callee, header_id::record_route) + "\r\n"
                                 "Max-Forwards: 70\r\nFrom: <sip:+15550100@example.net>;tag=b1\r\n"
                                 "To: <sip:alice@example.com>;tag=a1\r\n" + dialog + "CSeq: 7 INVITE\r\n"
                                 "Contact: <sip:bob@198.18.1.11:5080>\r\nContent-Length: 0\r\n\r\n";
    const batch re = hx.deliver(reinvite, r1a);
    const sent* re_at_caller = find_to(re, endpoint::udp4(ip(198, 18, 0, 2), 5070), "INVITE ");
    ASSERT_NE(re_at_caller, nullptr) << (re.empty() ? std::string("nothing sent") : re[0]->text);
    expect_absent(contact_of(*re_at_caller), {"198.18.1.11", "5080"}, "the re-INVITE's Contact at the caller");
    // After it: the caller's BYE to that Contact reaches the callee where it moved.
    const batch bye = hx.deliver(from_caller("BYE", contact_of(*re_at_caller), 3), caller);
    const sent* at = find_to(bye, endpoint::udp4(ip(198, 18, 1, 11), 5080), "BYE sip:bob@198.18.1.11:5080 ");
    ASSERT_NE(at, nullptr) << (bye.empty() ? std::string("nothing sent") : std::to_string(bye[0]->dst.port) + " " + bye[0]->text);
    EXPECT_EQ(hx.stat(proxy_counter::th_undecodable), 0u);
}

TEST(topology_hiding, a_caller_that_ignores_record_route_completes_its_call_through_the_dialog)
{
    // SIPp's built-in uac: ACK and BYE to the address it called, no Route.
    harness hx;
    call_setup c;
    answered(hx, "th-uac", c);
    if (testing::Test::HasFatalFailure()) return;
    const auto plain = [](const std::string& m, int cseq) {
        return m + " sip:service@198.18.0.1:5060 SIP/2.0\r\n"
                   "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-" + m + "\r\n"
                   "From: sipp <sip:sipp@198.18.0.2:5060>;tag=a1\r\n"
                   "To: service <sip:service@198.18.0.1:5060>;tag=b1\r\n"
                   "Call-ID: th-uac\r\nCSeq: " + std::to_string(cseq) + " " + m + "\r\n"
                   "Contact: sip:sipp@198.18.0.2:5060\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n";
    };
    const batch a = hx.deliver(plain("ACK", 1), caller);
    const sent* ack = find_to(a, r1a, "ACK sip:bob@198.18.1.11:5060 ");
    ASSERT_NE(ack, nullptr) << (a.empty() ? std::string("nothing sent") : a[0]->text);
    EXPECT_EQ(lines(*ack->m, header_id::via).find("198.18.0.2"), std::string::npos) << ack->text;
    EXPECT_EQ(contact_of(*ack).find("198.18.0.2"), std::string::npos) << ack->text;
    // Nothing answers an ACK: its one Via is ours, with nothing encoded in it to restore.
    const std::string ack_via = lines(*ack->m, header_id::via);
    EXPECT_EQ(ack_via.rfind("Via: SIP/2.0/UDP 198.18.0.1:5060;branch=z9hG4bK", 0), 0u) << ack_via;
    EXPECT_EQ(ack_via.find("\r\n"), ack_via.size() - 2) << "one Via line";
    EXPECT_EQ(ack_via.find("sbc-th"), std::string::npos) << ack_via;
    EXPECT_EQ(ack_via.find("sbc-src"), std::string::npos) << ack_via;
    const batch b = hx.deliver(plain("BYE", 2), caller);
    const sent* bye = find_to(b, r1a, "BYE sip:bob@198.18.1.11:5060 ");
    ASSERT_NE(bye, nullptr) << (b.empty() ? std::string("nothing sent") : b[0]->text);
    const batch ok = hx.deliver(answer(*bye, 200, "OK"), r1a);
    const sent* back = find_to(ok, caller, "SIP/2.0 200");
    ASSERT_NE(back, nullptr);
    EXPECT_EQ(lines(*back->m, header_id::via), "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-BYE\r\n");
    EXPECT_EQ(hx.stat(proxy_counter::th_no_route), 2u);
    EXPECT_EQ(hx.px.stats().dialogs_active.get(), 0u) << "the BYE's 200 ended the dialog";
}

TEST(topology_hiding, a_request_without_route_from_someone_outside_the_dialog_goes_nowhere)
{
    harness hx;
    call_setup c;
    answered(hx, "th-stranger", c);
    if (testing::Test::HasFatalFailure()) return;
    const std::string bye = "BYE sip:service@198.18.0.1:5060 SIP/2.0\r\n"
                            "Via: SIP/2.0/UDP 198.18.0.9:5060;branch=z9hG4bK-x\r\n"
                            "From: <sip:x@198.18.0.9>;tag=a1\r\nTo: <sip:service@198.18.0.1>;tag=b1\r\n"
                            "Call-ID: th-stranger\r\nCSeq: 2 BYE\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n";
    const batch b = hx.deliver(bye, endpoint::udp4(ip(198, 18, 0, 9), 5060));
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(b[0]->text.rfind("SIP/2.0 403", 0), 0u) << b[0]->text;
    EXPECT_EQ(hx.stat(proxy_counter::in_dialog_refused), 1u);
    EXPECT_EQ(hx.px.stats().dialogs_active.get(), 1u);
}

TEST(topology_hiding, a_changed_sbc_th_is_refused_and_counted)
{
    harness hx;
    call_setup c;
    answered(hx, "th-tamper", c);
    if (testing::Test::HasFatalFailure()) return;
    std::string uri = contact_of(*c.at_caller);
    uri[uri.size() - 2] = uri[uri.size() - 2] == 'A' ? 'B' : 'A';
    const std::string bye = "BYE " + uri + " SIP/2.0\r\n"
                            "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-t\r\n"
                            "From: <sip:alice@example.com>;tag=a1\r\nTo: <sip:x@example.net>;tag=b1\r\n"
                            "Call-ID: th-tamper\r\nCSeq: 2 BYE\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n";
    const batch b = hx.deliver(bye, caller);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(b[0]->text.rfind("SIP/2.0 400", 0), 0u) << b[0]->text;
    EXPECT_EQ(hx.stat(proxy_counter::th_undecodable), 1u);
    // A response whose hidden Via was changed is not relayed (a 2xx retransmission: relayed
    // by our Via, the setup is over).
    std::string resp = answer(*c.at_callee, 200, "OK");
    const std::size_t at = resp.find("sbc-th=") + 12;
    resp[at] = resp[at] == 'A' ? 'B' : 'A';
    const batch r = hx.deliver(resp, r1a);
    EXPECT_EQ(find_to(r, caller, "SIP/2.0 200"), nullptr);
    EXPECT_EQ(hx.stat(proxy_counter::th_undecodable), 2u);
}

TEST(topology_hiding, off_by_default_the_callee_sees_the_callers_vias_as_before)
{
    harness hx(false);
    const batch inv = hx.deliver(invite("th-off"), caller);
    const sent* at = find_to(inv, r1a, "INVITE ");
    ASSERT_NE(at, nullptr);
    EXPECT_NE(lines(*at->m, header_id::via).find("10.9.9.9"), std::string::npos);
    EXPECT_EQ(at->text.find("sbc-th"), std::string::npos);
}

TEST(topology_hiding, sipps_builtin_uac_invite_with_a_bare_contact_and_sdp_is_hidden_and_sent)
{
    harness hx;
    const std::string sdp = "v=0\r\no=user1 53655765 2353687637 IN IP4 198.18.0.2\r\ns=-\r\nc=IN IP4 198.18.0.2\r\n"
                            "t=0 0\r\nm=audio 6000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n";
    const std::string inv = "INVITE sip:1000@198.18.0.1:5060 SIP/2.0\r\n"
                            "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-29444-1-0\r\n"
                            "From: sipp <sip:sipp@198.18.0.2:5060>;tag=29444SIPpTag001\r\n"
                            "To: 1000 <sip:1000@198.18.0.1:5060>\r\n"
                            "Call-ID: 1-29444@198.18.0.2\r\nCSeq: 1 INVITE\r\n"
                            "Contact: sip:sipp@198.18.0.2:5060\r\nMax-Forwards: 70\r\nSubject: Performance Test\r\n"
                            "Content-Type: application/sdp\r\nContent-Length: " + std::to_string(sdp.size()) + "\r\n\r\n" + sdp;
    const batch b = hx.deliver(inv, caller);
    const sent* at = find_to(b, r1a, "INVITE ");
    ASSERT_NE(at, nullptr) << b.size() << " sent; " << (b.empty() ? std::string() : b.back()->text);
    expect_absent(topology(*at), {"198.18.0.2"}, "the INVITE at the callee");
    EXPECT_TRUE(at->m->ok()) << at->text;
}

TEST(topology_hiding, a_request_to_the_contact_we_wrote_names_the_worker_that_holds_its_dialog)
{
    proxy_tables t;
    t.hiding_key = key;
    char c[512];
    const std::size_t n = write_hidden_contact(c, sbc_ep, {}, 3, "sip:bob@198.18.1.11:5060", key);
    ASSERT_GT(n, 0u);
    const std::string uri(c + 1, n - 2);  // without the brackets
    const std::string bye = "BYE " + uri + " SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.1.11:5060;branch=z9hG4bK-w\r\n"
                            "From: <sip:b@example.net>;tag=b1\r\nTo: <sip:a@example.com>;tag=a1\r\n"
                            "Call-ID: w\r\nCSeq: 2 BYE\r\nContent-Length: 0\r\n\r\n";
    message m;
    ASSERT_EQ(parse(bye, m), error::none);
    EXPECT_EQ(message_owner(m), 3);
    const std::string plain = "BYE sip:service@198.18.0.1:5060 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.1.11:5060;branch=z9hG4bK-w\r\n"
                              "From: <sip:b@example.net>;tag=b1\r\nTo: <sip:a@example.com>;tag=a1\r\n"
                              "Call-ID: w\r\nCSeq: 2 BYE\r\nContent-Length: 0\r\n\r\n";
    ASSERT_EQ(parse(plain, m), error::none);
    EXPECT_EQ(message_owner(m), -1) << "the SBC's bare address names no worker: handled where it arrives";
}

TEST(topology_hiding, a_cancel_and_the_ack_of_a_failure_toward_the_callee_name_no_caller_and_the_failure_reaches_it)
{
    harness hx;
    const batch inv = hx.deliver(invite("th-cancel"), caller);
    const sent* at = find_to(inv, r1a, "INVITE ");
    ASSERT_NE(at, nullptr);
    const batch ring = hx.deliver(answer(*at, 180, "Ringing"), r1a);
    ASSERT_NE(find_to(ring, caller, "SIP/2.0 180"), nullptr);
    EXPECT_EQ(lines(*find_to(ring, caller, "SIP/2.0 180")->m, header_id::via), caller_vias);
    const std::string cancel = "CANCEL sip:+15550100@198.18.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-c1\r\n"
                               "Max-Forwards: 70\r\nFrom: <sip:alice@example.com>;tag=a1\r\nTo: <sip:+15550100@example.net>\r\n"
                               "Call-ID: th-cancel\r\nCSeq: 1 CANCEL\r\nContent-Length: 0\r\n\r\n";
    const batch c = hx.deliver(cancel, caller);
    const sent* fwd = find_to(c, r1a, "CANCEL ");
    ASSERT_NE(fwd, nullptr);
    expect_absent(fwd->text, {"198.18.0.2", "10.9.9.9", "sbc-src"}, "the CANCEL at the callee");
    // The callee's 487: ACKed hop by hop without the caller in it, relayed with the caller's Vias.
    const batch f = hx.deliver(answer(*at, 487, "Request Terminated"), r1a);
    const sent* ack = find_to(f, r1a, "ACK ");
    ASSERT_NE(ack, nullptr);
    expect_absent(ack->text, {"198.18.0.2", "10.9.9.9", "sbc-src"}, "the ACK at the callee");
    const sent* up = find_to(f, caller, "SIP/2.0 487");
    ASSERT_NE(up, nullptr);
    EXPECT_EQ(lines(*up->m, header_id::via), caller_vias);
}
