// Unit tests of the SIP parser: start lines, header index, grammar corners, numbers,
// framing, and every error a proxy must notice.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sip-fastpath/sip_message.h"
#include "tests/unit/sip_test_messages.h"
#include "tests/unit/sip_test_util.h"

namespace sbc::sip {
namespace {

using testutil::request;
using testutil::response;

// Owns the text so that the message's offsets stay valid.
struct parsed {
  std::string text;
  std::unique_ptr<message> m = std::make_unique<message>();
  explicit parsed(std::string t) : text(std::move(t)) { parse(text, *m); }
  const message* operator->() const { return m.get(); }
  std::string_view operator()(span s) const { return s.in(text); }
  std::string errors() const {
    std::string s;
    m->errors.for_each([&](error e) { s += std::string(error_name(e)) + " "; });
    return s;
  }
};

TEST(sip_parser, accepts_every_message_of_a_call) {
  for (const auto& t : testdata::call) {
    parsed p{std::string(t.text)};
    EXPECT_TRUE(p->ok()) << t.name << ": " << p.errors();
    error first = error::none;
    EXPECT_TRUE(check_message(*p.m, first).empty()) << t.name << ": " << error_name(first);
  }
}

TEST(sip_parser, indexes_the_invite_of_a_call) {
  parsed p{std::string(testdata::invite)};
  ASSERT_TRUE(p->ok()) << p.errors();
  EXPECT_TRUE(p->is_request());
  EXPECT_EQ(p->req_method, method::invite);
  EXPECT_EQ(p(p->request_uri), "sip:+15551230002@198.18.0.20:5060;user=phone");
  EXPECT_EQ(p->ruri.scheme, uri_scheme::sip);
  EXPECT_EQ(p(p->ruri.user), "+15551230002");
  EXPECT_EQ(p(p->ruri.host), "198.18.0.20");
  EXPECT_EQ(p->ruri.port, 5060);
  EXPECT_EQ(p->call_id(), "3c26700b5f2e4a1d9b8c7d6e5f4a3b2c@198.18.0.10");
  EXPECT_EQ(p(p->top_via.branch), "z9hG4bK-524287-1---f1a6b2c3d4e5f607");
  EXPECT_TRUE(p->top_via.has_rport);
  EXPECT_EQ(p(p->top_via.host), "198.18.0.10");
  EXPECT_EQ(p->top_via.port, 5060);
  EXPECT_EQ(p(p->from.tag), "8a7b6c5d");
  EXPECT_EQ(p(p->from.display), "\"Alice \\\"A\\\" Smith\"");
  EXPECT_FALSE(p->to.has_tag);
  EXPECT_EQ(p->cseq, 1U);
  EXPECT_EQ(p->cseq_method, method::invite);
  EXPECT_EQ(p->max_forwards, 70);
  EXPECT_EQ(p->content_length, 335U);
  EXPECT_EQ(p->body.len, 335);
  EXPECT_EQ(p(p->body).substr(0, 5), "v=0\r\n");
  EXPECT_EQ(p->header_count, 13);
  const header* ua = p->find(header_id::user_agent);
  ASSERT_NE(ua, nullptr);
  EXPECT_EQ(p(ua->value), "sbc-test/1.0");
}

TEST(sip_parser, reads_a_status_line) {
  parsed p{std::string(testdata::ringing)};
  ASSERT_TRUE(p->ok()) << p.errors();
  EXPECT_TRUE(p->is_response());
  EXPECT_EQ(p->status, 180);
  EXPECT_EQ(p(p->reason), "Ringing");
  EXPECT_EQ(p(p->to.tag), "as5f2c1b9e");
}

struct name_case {
  const char* name;
  header_id id;
};

TEST(sip_parser, knows_compact_and_long_header_names_in_any_case) {
  const name_case cases[] = {
      {"i", header_id::call_id},       {"m", header_id::contact},
      {"e", header_id::content_encoding}, {"l", header_id::content_length},
      {"c", header_id::content_type},  {"f", header_id::from},
      {"s", header_id::subject},       {"k", header_id::supported},
      {"t", header_id::to},            {"v", header_id::via},
      {"o", header_id::event},         {"u", header_id::allow_events},
      {"r", header_id::refer_to},      {"x", header_id::session_expires},
      {"y", header_id::identity},      {"CALL-ID", header_id::call_id},
      {"call-id", header_id::call_id}, {"cSeQ", header_id::cseq},
      {"VIA", header_id::via},         {"Max-forwards", header_id::max_forwards},
      {"record-ROUTE", header_id::record_route}, {"Proxy-Require", header_id::proxy_require},
      {"X-Custom", header_id::other},  {"Viaa", header_id::other},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(header_from_name(c.name), c.id) << c.name;
    std::string line = std::string(c.name) + ": x";
    uint32_t len = 0;
    header_id fast = match_header_name(line.data(), static_cast<uint32_t>(line.size()), len);
    if (c.id != header_id::other) {
      EXPECT_EQ(fast, c.id) << c.name;
      EXPECT_EQ(len, std::string_view(c.name).size()) << c.name;
    } else {
      EXPECT_EQ(fast, header_id::other) << c.name;
    }
  }
}

TEST(sip_parser, parses_compact_forms_in_a_message) {
  auto d = request();
  d.headers = {{"v", "SIP/2.0/UDP h.example;branch=z9hG4bK1"},
               {"f", "<sip:a@h.example>;tag=1"},
               {"t", "<sip:b@h.example>"},
               {"i", "cid"},
               {"CSeq", "1 INVITE"},
               {"l", "0"}};
  parsed p{d.text()};
  EXPECT_TRUE(p->ok()) << p.errors();
  EXPECT_EQ(p->call_id(), "cid");
  EXPECT_EQ(p(p->top_via.branch), "z9hG4bK1");
  EXPECT_TRUE(p->has_content_length);
}

TEST(sip_parser, folds_continuation_lines_into_one_header) {
  std::string text = request().text();
  text.replace(text.find("Max-Forwards: 70"), 16, "Max-Forwards:\r\n   70");
  text.replace(text.find("Call-ID: call-1@198.18.0.10"), 27, "Subject: first\r\n\tsecond\r\nCall-ID: call-1@198.18.0.10");
  parsed p{text};
  ASSERT_TRUE(p->ok()) << p.errors();
  EXPECT_EQ(p->max_forwards, 70);
  const header* s = p->find(header_id::subject);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(p(s->value), "first\r\n\tsecond");
}

TEST(sip_parser, allows_white_space_around_the_colon) {
  auto d = request();
  std::string text = d.text();
  text.replace(text.find("To: "), 4, "To \t:   ");
  parsed p{text};
  EXPECT_TRUE(p->ok()) << p.errors();
  EXPECT_EQ(p(p->headers[p->h_to].value), "<sip:bob@198.18.0.20>");
}

TEST(sip_parser, takes_the_first_value_of_a_multi_value_via_as_top) {
  auto d = request();
  d.set("Via", "SIP/2.0/UDP a.example;branch=z9hG4bK1 , SIP/2.0/TCP [2001:db8::1]:5070;branch=z9hG4bK2");
  d.add("Via", "SIP/2.0/UDP c.example;branch=z9hG4bK3;received=198.18.0.9;rport=5062");
  parsed p{d.text()};
  ASSERT_TRUE(p->ok()) << p.errors();
  EXPECT_EQ(p(p->top_via.host), "a.example");
  EXPECT_EQ(p(p->top_via.branch), "z9hG4bK1");
  EXPECT_EQ(p(p->top_via.transport), "UDP");
  error first = error::none;
  EXPECT_TRUE(check_message(*p.m, first).empty()) << error_name(first);
}

TEST(sip_parser, reads_quoted_display_names_with_escapes_and_commas) {
  auto d = request();
  d.set("From", "\"Doe, \\\"J\\\" <x>\" <sip:j@h.example>;tag=abc");
  parsed p{d.text()};
  ASSERT_TRUE(p->ok()) << p.errors();
  EXPECT_EQ(p(p->from.display), "\"Doe, \\\"J\\\" <x>\"");
  EXPECT_EQ(p(p->from.uri_text), "sip:j@h.example");
  EXPECT_EQ(p(p->from.tag), "abc");
}

TEST(sip_parser, takes_any_escaped_octet_but_cr_and_lf_in_a_quoted_string) {
  auto d = request();
  std::string from = "\"Nul \\";
  from += '\0';  // escaped: a quoted-pair may carry any octet but CR and LF
  from += " here\" <sip:a@h.example>;tag=1";
  d.set("From", from);
  parsed nul{d.text()};
  EXPECT_TRUE(nul->ok()) << nul.errors();
  error first = error::none;
  EXPECT_TRUE(check_message(*nul.m, first).empty()) << error_name(first);

  // "\" CR LF SP would be a quoted-pair swallowing a fold: not one (RFC 3261 quoted-pair).
  d.set("From", "\"Split \\\r\n line\" <sip:a@h.example>;tag=1");
  parsed split{d.text()};
  EXPECT_TRUE(split->errors.has(error::unbalanced_quotes)) << split.errors();
}

TEST(sip_parser, indexes_the_headers_after_a_broken_request_line) {
  auto d = request();
  d.start = "INVITE sip:bob@198.18.0.20";
  parsed p{d.text()};
  EXPECT_EQ(p->first_error, error::bad_start_line);
  EXPECT_FALSE(p->is_request());  // never forwarded: no method, no Request-URI
  EXPECT_TRUE(p->method_text.empty());
  EXPECT_TRUE(p->request_uri.empty());
  EXPECT_TRUE(p->has_top_via);
  EXPECT_EQ(p(p->top_via.branch), "z9hG4bKabc");
  EXPECT_EQ(p->call_id(), "call-1@198.18.0.10");
  EXPECT_EQ(p->cseq_method, method::invite);
  EXPECT_NE(p->h_from, no_header);
  EXPECT_NE(p->h_to, no_header);
  EXPECT_FALSE(p->errors.has(error::missing_via));
}

TEST(sip_parser, stops_at_a_broken_status_line) {
  auto d = response();
  d.start = "SIP/2.0 20 OK";
  parsed p{d.text()};
  EXPECT_EQ(p->first_error, error::bad_start_line);
  EXPECT_EQ(p->header_count, 0);  // a response is never answered: nothing more to read
}

TEST(sip_parser, skips_a_broken_header_line_and_indexes_the_rest) {
  auto d = request();
  d.headers.insert(d.headers.begin() + 1, {"Broken header", "x"});
  std::string text = d.text();
  // A continuation of the broken line goes with it.
  text.insert(text.find("Broken header: x\r\n") + 18, " still broken\r\n");
  parsed p{text};
  EXPECT_EQ(p->first_error, error::bad_header_line);
  EXPECT_TRUE(p->is_request());
  EXPECT_EQ(p->header_count, 7);
  EXPECT_EQ(p->call_id(), "call-1@198.18.0.10");
  EXPECT_EQ(p->cseq, 1U);
  EXPECT_NE(p->h_from, no_header);
  EXPECT_FALSE(p->errors.has(error::missing_call_id));
}

TEST(sip_parser, reads_addr_spec_form_with_header_parameters) {
  auto d = request();
  d.set("From", "sip:alice@h.example;tag=xyz");
  d.set("To", "Bob Smith <sip:bob@h.example;transport=udp>");
  parsed p{d.text()};
  ASSERT_TRUE(p->ok()) << p.errors();
  EXPECT_FALSE(p->from.angle);
  EXPECT_EQ(p(p->from.uri_text), "sip:alice@h.example");
  EXPECT_EQ(p(p->from.tag), "xyz");
  EXPECT_EQ(p(p->to.display), "Bob Smith");
  EXPECT_EQ(p(p->to.uri_text), "sip:bob@h.example;transport=udp");
  EXPECT_FALSE(p->to.has_tag);
}

TEST(sip_parser, keeps_unknown_headers_and_the_body_byte_for_byte) {
  auto d = request();
  d.add("X-Weird", "  a;b=\"c,d\" <e> \x7f\xc3\xa9 ");
  d.set("Content-Length", "4");
  d.body = "\x01\x02\r\n";
  parsed p{d.text()};
  ASSERT_TRUE(p->ok()) << p.errors();
  const header& h = p->headers[p->header_count - 1];
  EXPECT_EQ(h.id, header_id::other);
  EXPECT_EQ(p(h.name), "X-Weird");
  EXPECT_EQ(p(h.value), "a;b=\"c,d\" <e> \x7f\xc3\xa9");
  EXPECT_EQ(p(p->body), "\x01\x02\r\n");
}

TEST(sip_parser, accepts_bare_lf_line_ends) {
  std::string text = request().text();
  std::string lf;
  for (char c : text)
    if (c != '\r') lf += c;
  parsed p{lf};
  EXPECT_TRUE(p->ok()) << p.errors();
  EXPECT_EQ(p->call_id(), "call-1@198.18.0.10");
}

TEST(sip_parser, ignores_bytes_after_the_declared_body) {
  auto d = request();
  d.set("Content-Length", "3");
  d.body = "abcTRAILING";
  parsed p{d.text()};
  ASSERT_TRUE(p->ok()) << p.errors();
  EXPECT_EQ(p(p->body), "abc");
}

TEST(sip_parser, takes_the_rest_of_the_datagram_as_body_without_content_length) {
  auto d = request();
  d.remove("Content-Length");
  d.body = "hello";
  parsed p{d.text()};
  ASSERT_TRUE(p->ok()) << p.errors();
  EXPECT_FALSE(p->has_content_length);
  EXPECT_EQ(p(p->body), "hello");
}

TEST(sip_parser, accepts_every_word_byte_in_a_call_id) {
  auto d = request();
  const std::string id = "aZ09-.!%*_+`'~()<>:\\\"/[]?{}@host-0123456789.example";
  d.set("Call-ID", id);
  parsed p{d.text()};
  EXPECT_TRUE(p->ok()) << p.errors();
  EXPECT_EQ(p->call_id(), id);
}

TEST(sip_parser, accepts_numbers_at_the_top_of_their_range) {
  auto d = request();
  d.set("CSeq", "4294967295 INVITE");
  d.set("Max-Forwards", "255");
  d.add("Expires", "4294967295");
  parsed p{d.text()};
  ASSERT_TRUE(p->ok()) << p.errors();
  EXPECT_EQ(p->cseq, 4294967295U);
  EXPECT_EQ(p->max_forwards, 255);
  EXPECT_EQ(p->expires, 4294967295LL);
}

TEST(sip_parser, reads_ipv6_references_in_the_request_uri) {
  parsed p{request("OPTIONS", "sip:[2001:db8::5]:5062;transport=udp").text()};
  ASSERT_TRUE(p->ok()) << p.errors();
  EXPECT_EQ(p->ruri.host_type, host_kind::ipv6);
  EXPECT_EQ(p(p->ruri.host), "[2001:db8::5]");
  EXPECT_EQ(p->ruri.port, 5062);
}

// One defect per case, in a message otherwise valid: the parser must name it.
struct error_case {
  const char* what;
  std::string text;
  error expected;
};

std::vector<error_case> error_cases() {
  std::vector<error_case> v;
  auto req = [](auto f) {
    auto d = request();
    f(d);
    return d.text();
  };
  using D = testutil::draft;
  v.push_back({"empty", "", error::empty});
  v.push_back({"no empty line", "INVITE sip:a@b SIP/2.0\r\nVia: x\r\n", error::headers_truncated});
  v.push_back({"no line end at all", "INVITE sip:a@b SIP/2.0", error::headers_truncated});
  v.push_back({"garbage start line", "HELLO\r\n\r\n", error::bad_start_line});
  v.push_back({"two spaces in request line", "INVITE  sip:a@b SIP/2.0\r\n\r\n", error::bad_start_line});
  v.push_back({"another protocol's version", "INVITE sip:a@b HTTP/1.1\r\n\r\n", error::bad_version});
  v.push_back({"a version without minor number", "INVITE sip:a@b SIP/2\r\n\r\n", error::bad_version});
  v.push_back({"a fourth part in the request line", "INVITE sip:a@b SIP/2.0 x\r\n\r\n", error::bad_start_line});
  v.push_back({"a request line of two parts", "INVITE sip:a@b\r\n\r\n", error::bad_start_line});
  v.push_back({"unknown SIP version", req([](D& d) { d.start = "INVITE sip:bob@198.18.0.20 SIP/3.0"; }), error::bad_version});
  v.push_back({"unknown SIP version in a response", [] { auto d = response(); d.start = "SIP/1.0 200 OK"; return d.text(); }(), error::bad_version});
  v.push_back({"status 099", [] { auto d = response(); d.start = "SIP/2.0 099 Low"; return d.text(); }(), error::bad_status_code});
  v.push_back({"status 700", response(700, "High").text(), error::bad_status_code});
  v.push_back({"two-digit status", [] { auto d = response(); d.start = "SIP/2.0 20 OK"; return d.text(); }(), error::bad_start_line});
  v.push_back({"Request-URI without host", request("INVITE", "sip:bob@").text(), error::bad_request_uri});
  v.push_back({"Request-URI port too big", request("INVITE", "sip:bob@h.example:65536").text(), error::bad_request_uri});
  v.push_back({"Request-URI bad escape", request("INVITE", "sip:b%zzob@h.example").text(), error::bad_request_uri});
  v.push_back({"Request-URI without scheme", request("INVITE", "bob@h.example").text(), error::bad_request_uri});
  v.push_back({"header without colon", req([](D& d) { d.add("Broken header", ""); }), error::bad_header_line});
  v.push_back({"header with empty name", req([](D& d) { d.add("", "x"); }), error::bad_header_line});
  v.push_back({"CR inside a header name", req([](D& d) { d.add("Call\rID", "x"); }), error::bad_header_line});
  v.push_back({"negative Content-Length", req([](D& d) { d.set("Content-Length", "-1"); }), error::bad_content_length});
  v.push_back({"Content-Length over 32 bits", req([](D& d) { d.set("Content-Length", "4294967296"); }), error::bad_content_length});
  v.push_back({"Content-Length with junk", req([](D& d) { d.set("Content-Length", "12abc"); }), error::bad_content_length});
  v.push_back({"Content-Length past the datagram", req([](D& d) { d.set("Content-Length", "10"); d.body = "short"; }), error::body_truncated});
  v.push_back({"CSeq over 32 bits", req([](D& d) { d.set("CSeq", "4294967296 INVITE"); }), error::bad_cseq});
  v.push_back({"negative CSeq", req([](D& d) { d.set("CSeq", "-1 INVITE"); }), error::bad_cseq});
  v.push_back({"CSeq without method", req([](D& d) { d.set("CSeq", "1"); }), error::bad_cseq});
  v.push_back({"CSeq with two values", req([](D& d) { d.set("CSeq", "1 INVITE, 2 INVITE"); }), error::bad_cseq});
  v.push_back({"CSeq method of another request", req([](D& d) { d.set("CSeq", "1 BYE"); }), error::cseq_method_mismatch});
  v.push_back({"CSeq method in another case", req([](D& d) { d.set("CSeq", "1 invite"); }), error::cseq_method_mismatch});
  v.push_back({"Max-Forwards 256", req([](D& d) { d.set("Max-Forwards", "256"); }), error::bad_max_forwards});
  v.push_back({"negative Max-Forwards", req([](D& d) { d.set("Max-Forwards", "-1"); }), error::bad_max_forwards});
  v.push_back({"Expires over 32 bits", req([](D& d) { d.add("Expires", "4294967296"); }), error::bad_expires});
  v.push_back({"two Call-ID headers", req([](D& d) { d.add("Call-ID", "other"); }), error::duplicate_call_id});
  v.push_back({"two From headers", req([](D& d) { d.add("From", "<sip:x@h.example>;tag=2"); }), error::duplicate_from});
  v.push_back({"two values in one From", req([](D& d) { d.set("From", "<sip:a@h.example>;tag=1, <sip:b@h.example>"); }), error::duplicate_from});
  v.push_back({"two To headers", req([](D& d) { d.add("t", "<sip:x@h.example>"); }), error::duplicate_to});
  v.push_back({"two CSeq headers", req([](D& d) { d.add("CSeq", "2 INVITE"); }), error::duplicate_cseq});
  v.push_back({"two Max-Forwards headers", req([](D& d) { d.add("Max-Forwards", "10"); }), error::duplicate_max_forwards});
  v.push_back({"two Content-Length headers", req([](D& d) { d.add("l", "0"); }), error::duplicate_content_length});
  v.push_back({"no Via", req([](D& d) { d.remove("Via"); }), error::missing_via});
  v.push_back({"no From", req([](D& d) { d.remove("From"); }), error::missing_from});
  v.push_back({"no To", req([](D& d) { d.remove("To"); }), error::missing_to});
  v.push_back({"no Call-ID", req([](D& d) { d.remove("Call-ID"); }), error::missing_call_id});
  v.push_back({"no CSeq", req([](D& d) { d.remove("CSeq"); }), error::missing_cseq});
  v.push_back({"unclosed quote in From", req([](D& d) { d.set("From", "\"Alice <sip:a@h.example>;tag=1"); }), error::unbalanced_quotes});
  v.push_back({"unclosed quote in a To parameter", req([](D& d) { d.set("To", "<sip:b@h.example>;x=\"open"); }), error::unbalanced_quotes});
  v.push_back({"unclosed angle in To", req([](D& d) { d.set("To", "<sip:b@h.example"); }), error::unbalanced_angle});
  v.push_back({"stray closing angle in From", req([](D& d) { d.set("From", "sip:a@h.example>;tag=1"); }), error::unbalanced_angle});
  v.push_back({"nested angles in To", req([](D& d) { d.set("To", "<sip:b@h<.example>"); }), error::unbalanced_angle});
  v.push_back({"Call-ID with a space", req([](D& d) { d.set("Call-ID", "a b"); }), error::bad_call_id});
  v.push_back({"empty Call-ID", req([](D& d) { d.set("Call-ID", ""); }), error::bad_call_id});
  v.push_back({"Call-ID with two @", req([](D& d) { d.set("Call-ID", "abcdefghijklmnopqrstuvwxyz@a@b"); }), error::bad_call_id});
  v.push_back({"long Call-ID with a late ';'", req([](D& d) { d.set("Call-ID", "0123456789abcdef0123456789;x"); }), error::bad_call_id});
  v.push_back({"Call-ID with a byte over 0x7f", req([](D& d) { d.set("Call-ID", "0123456789abcdef\xc3\xa9"); }), error::bad_call_id});
  v.push_back({"Via without host", req([](D& d) { d.set("Via", "SIP/2.0/UDP ;branch=z9hG4bK1"); }), error::bad_via});
  v.push_back({"Via of another protocol version", req([](D& d) { d.set("Via", "SIP/3.0/UDP h.example"); }), error::bad_via});
  v.push_back({"Via port out of range", req([](D& d) { d.set("Via", "SIP/2.0/UDP h.example:70000"); }), error::bad_via});
  v.push_back({"From with a bad tag", req([](D& d) { d.set("From", "<sip:a@h.example>;tag="); }), error::bad_from});
  v.push_back({"From with text after the URI", req([](D& d) { d.set("From", "<sip:a@h.example> junk"); }), error::bad_from});
  return v;
}

TEST(sip_parser, names_each_defect_a_proxy_must_notice) {
  for (const auto& c : error_cases()) {
    parsed p{c.text};
    EXPECT_TRUE(p->errors.has(c.expected))
        << c.what << ": expected " << error_name(c.expected) << ", got " << p.errors();
    EXPECT_FALSE(p->ok()) << c.what;
  }
}

TEST(sip_parser, rejects_negative_content_length) {
  auto d = request();
  d.set("Content-Length", "-5");
  parsed p{d.text()};
  EXPECT_EQ(p->first_error, error::bad_content_length);
  EXPECT_FALSE(p->has_content_length);
}

// Problems in headers the fast pass only locates are found by the full check.
TEST(sip_parser, full_check_finds_defects_in_contact_route_and_lower_vias) {
  struct deep_case {
    const char* what;
    const char* name;
    const char* value;
    error expected;
  };
  const deep_case cases[] = {
      {"Contact URI with bad host", "Contact", "<sip:a@bad host>", error::bad_contact},
      {"Contact without URI", "Contact", "<>", error::bad_contact},
      {"Route with unclosed angle", "Route", "<sip:p1.example;lr>, <sip:p2.example;lr", error::unbalanced_angle},
      {"Record-Route with unclosed quote", "Record-Route", "\"proxy <sip:p1.example;lr>", error::unbalanced_quotes},
      {"second Via broken", "Via", "SIP/2.0/UDP a.example;branch=z9hG4bK1, SIP/2.0/UDP", error::bad_via},
      {"From URI with a bad port", "From", "<sip:a@h.example:99999>;tag=1", error::bad_from},
  };
  for (const auto& c : cases) {
    auto d = request();
    d.set(c.name, c.value);
    parsed p{d.text()};
    error first = error::none;
    error_set deep = check_message(*p.m, first);
    deep.bits |= p->errors.bits;
    EXPECT_TRUE(deep.has(c.expected)) << c.what << ": got " << error_name(first);
  }
  auto d = request();
  d.set("Contact", "*");
  d.add("Contact", "<sip:a@h.example>;expires=60, \"B\" <sip:b@h.example;transport=tcp>;q=0.5");
  parsed p{d.text()};
  error first = error::none;
  EXPECT_TRUE(check_message(*p.m, first).empty()) << error_name(first);
}

// The full check keeps the Contact and the first Route it parsed: first_contact and
// first_route read what it read (the same URI as a parse of their own), and a header of
// several elements, or a bad one, is left to its reader.
TEST(sip_parser, full_check_keeps_the_contact_and_route_it_parsed) {
  auto d = request();
  d.set("Contact", "\"Alice\" <sip:alice@198.18.0.2:5062;transport=tcp>;expires=60");
  d.add("Route", "<sip:198.18.0.1:5060;lr;w=1>");
  d.add("Route", "<sip:198.18.0.7;lr>");
  parsed lazy{d.text()};
  const name_addr* lc = first_contact(*lazy.m);  // its own parse, no full check
  ASSERT_NE(lc, nullptr);
  EXPECT_EQ(first_route(*lazy.m), nullptr);  // only the full check keeps a Route

  parsed p{d.text()};
  error first = error::none;
  ASSERT_TRUE(check_message(*p.m, first).empty()) << error_name(first);
  EXPECT_EQ(p->contact_.state, message::element_memo::both);  // kept before any reader
  const uri* cu = first_contact_uri(*p.m);
  ASSERT_NE(cu, nullptr);
  EXPECT_EQ(p(first_contact(*p.m)->uri_text), lazy(lc->uri_text));
  EXPECT_EQ(p(cu->host), "198.18.0.2");
  EXPECT_EQ(cu->port, 5062);
  const message::element_memo* r = first_route(*p.m);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(p(r->na.uri_text), "sip:198.18.0.1:5060;lr;w=1");
  EXPECT_EQ(p(r->u.host), "198.18.0.1");
  EXPECT_EQ(r->u.port, 5060);

  // Two elements in the first Route header: the walk parses them itself.
  auto two = request();
  two.add("Route", "<sip:198.18.0.1;lr>, <sip:198.18.0.7;lr>");
  parsed q{two.text()};
  ASSERT_TRUE(check_message(*q.m, first).empty()) << error_name(first);
  EXPECT_EQ(first_route(*q.m), nullptr);
  // A bad Contact is not kept (the request is answered 400 for it).
  auto bad = request();
  bad.set("Contact", "<sip:alice@198.18.0.2");
  parsed b{bad.text()};
  EXPECT_FALSE(check_message(*b.m, first).empty() && b->ok());
  EXPECT_NE(b->contact_.state, message::element_memo::both);
  // A new parse into the same message forgets both.
  parse(d.text(), *q.m);
  EXPECT_EQ(q->route_.state, message::element_memo::unknown);
  EXPECT_EQ(q->contact_.state, message::element_memo::unknown);
}

TEST(sip_parser, stops_at_too_many_headers) {
  auto d = request();
  for (int i = 0; i < 60; ++i) d.add("X-H" + std::to_string(i), "v");
  parsed p{d.text()};
  EXPECT_EQ(p->first_error, error::too_many_headers);
  EXPECT_EQ(p->header_count, max_headers);

  auto ok = request();
  for (int i = 0; i < static_cast<int>(max_headers) - 7; ++i) ok.add("X-H" + std::to_string(i), "v");
  parsed q{ok.text()};
  EXPECT_TRUE(q->ok()) << q.errors();
  EXPECT_EQ(q->header_count, max_headers);
}

TEST(sip_parser, rejects_messages_over_65535_bytes) {
  auto d = request();
  d.body = std::string(70000, 'a');
  d.set("Content-Length", "70000");
  parsed p{d.text()};
  EXPECT_EQ(p->first_error, error::too_large);
}

// Every prefix of a valid message, in a buffer of exactly that size (so that ASan sees any
// read past it), is either truncated headers or a truncated body, never valid.
TEST(sip_parser, reports_every_truncation_without_reading_past_the_buffer) {
  const std::string_view full = testdata::invite;
  const std::size_t headers_end = full.find("\r\n\r\n") + 4;
  auto m = std::make_unique<message>();
  for (std::size_t n = 0; n < full.size(); ++n) {
    auto buf = std::make_unique<char[]>(n == 0 ? 1 : n);
    std::copy_n(full.data(), n, buf.get());
    parse(std::string_view(buf.get(), n), *m);
    ASSERT_FALSE(m->ok()) << "prefix of " << n << " bytes";
    if (n == 0) {
      EXPECT_EQ(m->first_error, error::empty);
    } else if (n < headers_end) {
      EXPECT_EQ(m->first_error, error::headers_truncated) << n;
    } else {
      EXPECT_EQ(m->first_error, error::body_truncated) << n;
    }
  }
}

TEST(sip_parser, gives_every_error_a_distinct_short_name) {
  std::vector<std::string_view> seen;
  for (unsigned i = 0; i < error_count; ++i) {
    std::string_view n = error_name(static_cast<error>(i));
    EXPECT_FALSE(n.empty());
    EXPECT_EQ(n.find(' '), std::string_view::npos) << n;
    EXPECT_EQ(std::count(seen.begin(), seen.end(), n), 0) << n;
    seen.push_back(n);
  }
  EXPECT_EQ(error_name(error::cseq_method_mismatch), "cseq_method_mismatch");
  EXPECT_EQ(error_name(error::too_many_headers), "too_many_headers");
}

}  // namespace
}  // namespace sbc::sip
