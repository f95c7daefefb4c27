// Unit tests of the response builder (RFC 3261 section 8.2.6), output checked byte for byte.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sip-fastpath/sip_response.h"
#include "tests/unit/sip_test_util.h"

namespace sbc::sip {
namespace {

using parsed = testutil::parsed_text;

std::string build(const message& req, const response_spec& spec) {
  std::string out(2048, '\0');
  write_result r = build_response(req, spec, out);
  EXPECT_TRUE(r.ok()) << error_name(r.err);
  out.resize(r.ok() ? r.len : 0);
  return out;
}

parsed two_via_invite() {
  auto d = testutil::request();
  d.add("Via", "SIP/2.0/UDP 198.18.0.5:5070;branch=z9hG4bKlower;received=198.18.0.6");
  d.add("X-Ignored", "not copied");
  return parsed{d.text()};
}

TEST(sip_response, builds_100_trying_without_a_to_tag) {
  parsed req = two_via_invite();
  response_spec spec;
  spec.code = 100;
  spec.to_tag = "sbc1";
  EXPECT_EQ(build(*req.m, spec),
            "SIP/2.0 100 Trying\r\n"
            "Via: SIP/2.0/UDP 198.18.0.10:5060;branch=z9hG4bKabc\r\n"
            "Via: SIP/2.0/UDP 198.18.0.5:5070;branch=z9hG4bKlower;received=198.18.0.6\r\n"
            "From: \"Alice\" <sip:alice@198.18.0.10>;tag=f1\r\n"
            "To: <sip:bob@198.18.0.20>\r\n"
            "Call-ID: call-1@198.18.0.10\r\n"
            "CSeq: 1 INVITE\r\n"
            "Content-Length: 0\r\n"
            "\r\n");
}

TEST(sip_response, adds_a_to_tag_to_final_responses) {
  parsed req = two_via_invite();
  response_spec spec;
  spec.code = 486;
  spec.to_tag = "sbc1";
  EXPECT_EQ(build(*req.m, spec),
            "SIP/2.0 486 Busy Here\r\n"
            "Via: SIP/2.0/UDP 198.18.0.10:5060;branch=z9hG4bKabc\r\n"
            "Via: SIP/2.0/UDP 198.18.0.5:5070;branch=z9hG4bKlower;received=198.18.0.6\r\n"
            "From: \"Alice\" <sip:alice@198.18.0.10>;tag=f1\r\n"
            "To: <sip:bob@198.18.0.20>;tag=sbc1\r\n"
            "Call-ID: call-1@198.18.0.10\r\n"
            "CSeq: 1 INVITE\r\n"
            "Content-Length: 0\r\n"
            "\r\n");
}

TEST(sip_response, builds_503_with_reason_phrase_and_retry_after) {
  auto d = testutil::request("OPTIONS", "sip:198.18.0.1");
  d.set("To", "<sip:198.18.0.1>;tag=already");
  parsed req{d.text()};
  response_spec spec;
  spec.code = 503;
  spec.reason = "Draining";
  spec.to_tag = "ignored";
  spec.has_retry_after = true;
  spec.retry_after = 30;
  EXPECT_EQ(build(*req.m, spec),
            "SIP/2.0 503 Draining\r\n"
            "Via: SIP/2.0/UDP 198.18.0.10:5060;branch=z9hG4bKabc\r\n"
            "From: \"Alice\" <sip:alice@198.18.0.10>;tag=f1\r\n"
            "To: <sip:198.18.0.1>;tag=already\r\n"
            "Call-ID: call-1@198.18.0.10\r\n"
            "CSeq: 1 OPTIONS\r\n"
            "Retry-After: 30\r\n"
            "Content-Length: 0\r\n"
            "\r\n");
}

TEST(sip_response, builds_200_and_420_with_unsupported) {
  auto d = testutil::request("OPTIONS", "sip:198.18.0.1");
  parsed req{d.text()};
  response_spec ok;
  ok.code = 200;
  ok.to_tag = "t9";
  EXPECT_EQ(build(*req.m, ok),
            "SIP/2.0 200 OK\r\n"
            "Via: SIP/2.0/UDP 198.18.0.10:5060;branch=z9hG4bKabc\r\n"
            "From: \"Alice\" <sip:alice@198.18.0.10>;tag=f1\r\n"
            "To: <sip:bob@198.18.0.20>;tag=t9\r\n"
            "Call-ID: call-1@198.18.0.10\r\n"
            "CSeq: 1 OPTIONS\r\n"
            "Content-Length: 0\r\n"
            "\r\n");
  response_spec ext;
  ext.code = 420;
  ext.to_tag = "t9";
  ext.unsupported = "foo";
  std::string out = build(*req.m, ext);
  EXPECT_EQ(out.substr(0, out.find("\r\n")), "SIP/2.0 420 Bad Extension");
  EXPECT_NE(out.find("\r\nUnsupported: foo\r\nContent-Length: 0\r\n\r\n"), std::string::npos);
}

TEST(sip_response, output_parses_back_to_the_same_transaction) {
  parsed req = two_via_invite();
  for (uint16_t code : {100, 180, 200, 400, 404, 408, 416, 420, 483, 500, 503, 505, 600, 699}) {
    response_spec spec;
    spec.code = code;
    spec.to_tag = "x1";
    parsed rsp{build(*req.m, spec)};
    ASSERT_TRUE(rsp.m->ok()) << code << "\n" << rsp.text;
    EXPECT_EQ(rsp.m->status, code);
    EXPECT_EQ(rsp.m->call_id(), req.m->call_id());
    EXPECT_EQ(rsp.m->top_via.branch.in(rsp.text), "z9hG4bKabc");
    EXPECT_EQ(rsp.m->cseq, 1U);
    EXPECT_EQ(rsp.m->to.has_tag, code > 100);
    EXPECT_FALSE(default_reason(code).empty());
  }
}

TEST(sip_response, refuses_impossible_responses) {
  parsed req = two_via_invite();
  std::vector<char> out(2048);
  response_spec low;
  low.code = 99;
  EXPECT_EQ(build_response(*req.m, low, out).err, error::bad_status_code);
  response_spec high;
  high.code = 700;
  EXPECT_EQ(build_response(*req.m, high, out).err, error::bad_status_code);

  response_spec ok;
  for (std::size_t cap : {0, 10, 100, 200}) {
    std::vector<char> small(cap);
    EXPECT_EQ(build_response(*req.m, ok, small).err, error::no_space) << cap;
  }

  auto d = testutil::request();
  d.remove("Via");
  parsed no_via{d.text()};
  EXPECT_EQ(build_response(*no_via.m, ok, out).err, error::missing_via);
  parsed rsp{testutil::response().text()};
  EXPECT_NE(build_response(*rsp.m, ok, out).err, error::none);
  auto broken = testutil::request();
  broken.start = "INVITE sip:bob@198.18.0.20";
  broken.remove("CSeq");
  parsed no_method{broken.text()};
  EXPECT_EQ(build_response(*no_method.m, ok, out).err, error::bad_start_line);
}

// What a malformed request lacks is written as a stand-in that parses; the top Via branch
// and the CSeq method, which the client matches (RFC 3261 section 17.1.3), are its own.
TEST(sip_response, answers_a_request_that_lacks_a_mandatory_header) {
  struct lack {
    const char* header;
    const char* line;  // the stand-in written for it
  };
  for (const lack& l : {lack{"From", "From: <sip:anonymous@anonymous.invalid>\r\n"},
                        lack{"To", "To: <sip:anonymous@anonymous.invalid>;tag=sbc1\r\n"},
                        lack{"Call-ID", "Call-ID: absent@anonymous.invalid\r\n"},
                        lack{"CSeq", "CSeq: 0 INVITE\r\n"}}) {
    auto d = testutil::request();
    d.remove(l.header);
    parsed req{d.text()};
    response_spec spec;
    spec.code = 400;
    spec.reason = "missing it";
    spec.to_tag = "sbc1";
    const std::string text = build(*req.m, spec);
    EXPECT_NE(text.find(l.line), std::string::npos) << l.header << ":\n" << text;
    parsed rsp{text};
    EXPECT_TRUE(rsp.m->ok()) << l.header << ": " << error_name(rsp.m->first_error);
    EXPECT_EQ(rsp.m->status, 400);
    EXPECT_EQ(rsp.m->top_via.branch.in(rsp.text), "z9hG4bKabc");
    EXPECT_EQ(rsp.m->cseq_method, method::invite) << l.header;
  }
}

TEST(sip_response, answers_a_request_whose_start_line_is_broken_from_its_headers) {
  auto d = testutil::request();
  d.start = "INVITE sip:bob@198.18.0.20 SIP/2.0 trailing";
  parsed req{d.text()};
  ASSERT_EQ(req.m->first_error, error::bad_start_line);
  response_spec spec;
  spec.code = 400;
  spec.reason = "malformed start line";
  spec.to_tag = "sbc1";
  parsed rsp{build(*req.m, spec)};
  EXPECT_TRUE(rsp.m->ok()) << error_name(rsp.m->first_error);
  EXPECT_EQ(rsp.text.substr(0, 34), "SIP/2.0 400 malformed start line\r\n");
  EXPECT_EQ(rsp.m->top_via.branch.in(rsp.text), "z9hG4bKabc");
  EXPECT_EQ(rsp.m->call_id(), "call-1@198.18.0.10");
  EXPECT_EQ(rsp.m->cseq_method, method::invite);
  EXPECT_TRUE(rsp.m->to.has_tag);
}

TEST(sip_response, writes_extra_header_lines_before_content_length) {
  parsed req{testutil::request("OPTIONS", "sip:198.18.0.20").text()};
  response_spec spec;
  spec.to_tag = "sbc1";
  spec.extra = "Allow: INVITE, ACK\r\nAccept: application/sdp\r\n";
  const std::string text = build(*req.m, spec);
  EXPECT_NE(text.find("\r\nAllow: INVITE, ACK\r\nAccept: application/sdp\r\nContent-Length: 0\r\n\r\n"),
            std::string::npos)
      << text;
  parsed rsp{text};
  EXPECT_TRUE(rsp.m->ok()) << error_name(rsp.m->first_error);
}

}  // namespace
}  // namespace sbc::sip
