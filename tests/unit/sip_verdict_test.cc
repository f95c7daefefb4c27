// Unit tests of the proxy verdict: forward, respond with a code, or drop.
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "sip-fastpath/sip_verdict.h"
#include "tests/unit/sip_test_messages.h"
#include "tests/unit/sip_test_util.h"

namespace sbc::sip {
namespace {

using testutil::draft;

struct verdict_case {
  const char* what;
  std::string text;
  action act;
  uint16_t code;
  std::string reason;  // checked when not empty
};

std::vector<verdict_case> cases() {
  std::vector<verdict_case> v;
  auto req = [](auto f, std::string_view method = "INVITE", std::string_view ruri = "sip:bob@198.18.0.20") {
    auto d = testutil::request(method, ruri);
    f(d);
    return d.text();
  };
  auto rsp = [](auto f) {
    auto d = testutil::response();
    f(d);
    return d.text();
  };
  auto none = [](draft&) {};
  v.push_back({"valid INVITE", req(none), action::forward, 0, ""});
  v.push_back({"valid sips INVITE", req(none, "INVITE", "sips:bob@h.example"), action::forward, 0, ""});
  v.push_back({"valid response", rsp(none), action::forward, 0, ""});
  v.push_back({"unknown SIP version", req([](draft& d) { d.start = "INVITE sip:bob@198.18.0.20 SIP/2.1"; }), action::respond, 505, "Version Not Supported"});
  v.push_back({"CSeq method mismatch", req([](draft& d) { d.set("CSeq", "1 BYE"); }), action::respond, 400, "CSeq method does not match the request method"});
  v.push_back({"two Call-IDs", req([](draft& d) { d.add("i", "x"); }), action::respond, 400, "several Call-ID values"});
  v.push_back({"unbalanced quote in To", req([](draft& d) { d.set("To", "\"Bob <sip:bob@h>"); }), action::respond, 400, "unbalanced quotes"});
  v.push_back({"bad Contact", req([](draft& d) { d.set("Contact", "<sip:a@h:0>"); }), action::respond, 400, "malformed Contact"});
  v.push_back({"Content-Length past the datagram", req([](draft& d) { d.set("Content-Length", "100"); }), action::respond, 400, "Content-Length larger than the received body"});
  v.push_back({"tel Request-URI", req(none, "INVITE", "tel:+15551230002"), action::respond, 416, "Unsupported URI Scheme"});
  v.push_back({"http Request-URI", req(none, "INVITE", "http://h.example/"), action::respond, 416, ""});
  v.push_back({"Max-Forwards 0", req([](draft& d) { d.set("Max-Forwards", "0"); }), action::respond, 483, "Too Many Hops"});
  v.push_back({"Max-Forwards 1 still forwards", req([](draft& d) { d.set("Max-Forwards", "1"); }), action::forward, 0, ""});
  v.push_back({"unknown Proxy-Require", req([](draft& d) { d.add("Proxy-Require", "sec-agree"); }), action::respond, 420, "Bad Extension"});
  v.push_back({"Require is for the UAS, not the proxy", req([](draft& d) { d.add("Require", "100rel"); }), action::forward, 0, ""});
  v.push_back({"version checked before syntax", req([](draft& d) { d.start = "INVITE sip:bob@198.18.0.20 SIP/3.0"; d.set("CSeq", "1 BYE"); }), action::respond, 505, ""});
  v.push_back({"syntax checked before Max-Forwards", req([](draft& d) { d.set("Max-Forwards", "0"); d.set("CSeq", "x"); }), action::respond, 400, ""});
  v.push_back({"request without Via cannot be answered", req([](draft& d) { d.remove("Via"); }), action::drop, 0, ""});
  v.push_back({"request without From is answered", req([](draft& d) { d.remove("From"); }), action::respond, 400, "missing From"});
  v.push_back({"request without To is answered", req([](draft& d) { d.remove("To"); }), action::respond, 400, "missing To"});
  v.push_back({"request without Call-ID is answered", req([](draft& d) { d.remove("Call-ID"); }), action::respond, 400, "missing Call-ID"});
  v.push_back({"request without CSeq is answered", req([](draft& d) { d.remove("CSeq"); }), action::respond, 400, "missing CSeq"});
  v.push_back({"broken request line with a Via is answered", req([](draft& d) { d.start = "INVITE  sip:bob@198.18.0.20 SIP/2.0"; }), action::respond, 400, "malformed start line"});
  v.push_back({"garbage request line with a Via is answered", req([](draft& d) { d.start = "\x01\x02 hello"; }), action::respond, 400, "malformed start line"});
  v.push_back({"broken header line is answered", req([](draft& d) { d.add("Broken header", "x"); }), action::respond, 400, "malformed header line"});
  v.push_back({"HTTP version", req([](draft& d) { d.start = "INVITE sip:bob@198.18.0.20 HTTP/1.1"; }), action::respond, 505, "Version Not Supported"});
  v.push_back({"SIP/2 version", req([](draft& d) { d.start = "INVITE sip:bob@198.18.0.20 SIP/2"; }), action::respond, 505, "Version Not Supported"});
  v.push_back({"broken request line without CSeq has no method to answer", req([](draft& d) { d.start = "INVITE sip:bob@198.18.0.20"; d.remove("CSeq"); }), action::drop, 0, ""});
  v.push_back({"broken request line of an ACK is never answered", req([](draft& d) { d.start = "ACK sip:bob@198.18.0.20"; d.set("CSeq", "1 ACK"); }), action::drop, 0, ""});
  v.push_back({"broken request line without Via cannot be answered", req([](draft& d) { d.start = "INVITE sip:bob@198.18.0.20"; d.remove("Via"); }), action::drop, 0, ""});
  v.push_back({"ACK without Call-ID is never answered", req([](draft& d) { d.remove("Call-ID"); }, "ACK"), action::drop, 0, ""});
  v.push_back({"broken status line", rsp([](draft& d) { d.start = "SIP/2.0 2x0 OK"; }), action::drop, 0, ""});
  v.push_back({"too many headers", req([](draft& d) { for (int i = 0; i < 60; ++i) d.add("X-H" + std::to_string(i), "v"); }), action::drop, 0, ""});
  v.push_back({"broken top Via cannot be answered", req([](draft& d) { d.set("Via", "SIP/2.0/UDP"); }), action::drop, 0, ""});
  // RFC 4475 section 3.1.2: a top Via whose sent-by can be read gets its answer, even when
  // what follows the sent-by is broken or the version is not ours.
  v.push_back({"top Via with empty parameters is answered", req([](draft& d) { d.set("Via", "SIP/2.0/UDP 192.0.2.15;;,;,,"); }), action::respond, 400, "malformed Via"});
  v.push_back({"request and Via of SIP/7.0 get 505", req([](draft& d) { d.start = "OPTIONS sip:t.watson@192.0.2.5 SIP/7.0"; d.set("CSeq", "1 OPTIONS"); d.set("Via", "SIP/7.0/UDP c.example.com;branch=z9hG4bKkdjuw"); }), action::respond, 505, "Version Not Supported"});
  v.push_back({"a Via of SIP/7.0 under a SIP/2.0 request line is answered 400", req([](draft& d) { d.set("Via", "SIP/7.0/UDP c.example.com;branch=z9hG4bKkdjuw"); }), action::respond, 400, "malformed Via"});
  v.push_back({"an ACK with empty Via parameters is never answered", req([](draft& d) { d.set("CSeq", "1 ACK"); d.set("Via", "SIP/2.0/UDP 192.0.2.15;;,;,,"); }, "ACK"), action::drop, 0, ""});
  v.push_back({"empty Via parameters without a host cannot be answered", req([](draft& d) { d.set("Via", "SIP/2.0/UDP ;;,;,,"); }), action::drop, 0, ""});
  v.push_back({"another protocol in Via cannot be answered", req([](draft& d) { d.set("Via", "XMPP/2.0/UDP h.example;branch=z9hG4bK1"); }), action::drop, 0, ""});
  v.push_back({"broken ACK is never answered", req([](draft& d) { d.set("CSeq", "1 INVITE"); }, "ACK"), action::drop, 0, ""});
  v.push_back({"garbage", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", action::drop, 0, ""});
  v.push_back({"truncated headers", "INVITE sip:a@h SIP/2.0\r\nVia: SIP/2.0/UDP h\r\n", action::drop, 0, ""});
  v.push_back({"response status 700", rsp([](draft& d) { d.start = "SIP/2.0 700 Odd"; }), action::drop, 0, ""});
  v.push_back({"response status 099", rsp([](draft& d) { d.start = "SIP/2.0 099 Odd"; }), action::drop, 0, ""});
  v.push_back({"response without CSeq", rsp([](draft& d) { d.remove("CSeq"); }), action::drop, 0, ""});
  v.push_back({"response with bad Contact", rsp([](draft& d) { d.add("Contact", "<sip:a@h"); }), action::drop, 0, ""});
  return v;
}

TEST(sip_verdict, decides_like_a_proxy_per_rfc_3261_section_16_3) {
  auto m = std::make_unique<message>();
  for (const auto& c : cases()) {
    parse(c.text, *m);
    verdict v = proxy_verdict(*m);
    EXPECT_EQ(action_name(v.act), action_name(c.act)) << c.what;
    EXPECT_EQ(v.code, c.code) << c.what;
    if (!c.reason.empty()) {
      EXPECT_EQ(v.reason, c.reason) << c.what;
    }
    if (v.act != action::forward && v.code != 416 && v.code != 483 && v.code != 420) {
      EXPECT_NE(v.cause, error::none) << c.what;
    }
  }
}

TEST(sip_verdict, forwards_every_message_of_a_call) {
  auto m = std::make_unique<message>();
  for (const auto& t : testdata::call) {
    parse(t.text, *m);
    EXPECT_EQ(proxy_verdict(*m).act, action::forward) << t.name;
  }
}

TEST(sip_verdict, honours_supported_proxy_require_options_and_names_the_missing_one) {
  auto d = testutil::request();
  d.add("Proxy-Require", "foo, bar");
  std::string text = d.text();
  auto m = std::make_unique<message>();
  parse(text, *m);
  verdict v = proxy_verdict(*m);
  ASSERT_EQ(v.code, 420);
  EXPECT_EQ(v.unsupported.in(text), "foo");

  const std::array<std::string_view, 1> only_foo = {"FOO"};
  proxy_policy p;
  p.supported_options = only_foo;
  v = proxy_verdict(*m, p);
  ASSERT_EQ(v.code, 420);
  EXPECT_EQ(v.unsupported.in(text), "bar");

  const std::array<std::string_view, 2> both = {"foo", "bar"};
  p.supported_options = both;
  EXPECT_EQ(proxy_verdict(*m, p).act, action::forward);
}

TEST(sip_verdict, routes_tel_uris_when_the_policy_allows) {
  auto text = testutil::request("INVITE", "tel:+15551230002").text();
  auto m = std::make_unique<message>();
  parse(text, *m);
  proxy_policy p;
  p.route_tel = true;
  EXPECT_EQ(proxy_verdict(*m, p).act, action::forward);
}

}  // namespace
}  // namespace sbc::sip
