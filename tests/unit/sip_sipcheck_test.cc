// Unit tests of sbc-sipcheck's checks and renderings: what an operator sees for valid,
// malformed, truncated, binary and oversized captures.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "app/sipcheck_report.h"
#include "tests/unit/sip_test_messages.h"
#include "tests/unit/sip_test_util.h"

namespace sbc::sip {
namespace {

TEST(sip_sipcheck, reports_a_valid_invite_as_forwarded) {
  file_report r = check_message("a.sip", testdata::invite, testdata::invite.size());
  EXPECT_TRUE(r.valid);
  EXPECT_EQ(r.kind, "request");
  EXPECT_EQ(r.method, "INVITE");
  EXPECT_EQ(r.call_id, "3c26700b5f2e4a1d9b8c7d6e5f4a3b2c@198.18.0.10");
  EXPECT_EQ(r.branch, "z9hG4bK-524287-1---f1a6b2c3d4e5f607");
  EXPECT_EQ(r.action, "forward");
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(render_text(r),
            "a.sip: valid request INVITE\n"
            "  Call-ID: 3c26700b5f2e4a1d9b8c7d6e5f4a3b2c@198.18.0.10\n"
            "  top Via branch: z9hG4bK-524287-1---f1a6b2c3d4e5f607\n"
            "  problems: none\n"
            "  action: forward\n");
}

TEST(sip_sipcheck, lists_every_problem_and_the_response_the_proxy_sends) {
  auto d = testutil::request();
  d.set("CSeq", "1 BYE");
  d.add("Call-ID", "second");
  d.set("Contact", "<sip:a@h:0>");
  std::string text = d.text();
  file_report r = check_message("bad.sip", text, text.size());
  EXPECT_FALSE(r.valid);
  EXPECT_EQ(r.action, "respond");
  EXPECT_EQ(r.code, 400);
  ASSERT_EQ(r.errors.size(), 3U);
  EXPECT_EQ(r.errors[0], "cseq_method_mismatch");  // in the order of the error list
  EXPECT_EQ(r.errors[1], "bad_contact");
  EXPECT_EQ(r.errors[2], "duplicate_call_id");
  auto j = nlohmann::json::parse(render_json(r));
  EXPECT_EQ(j["file"], "bad.sip");
  EXPECT_EQ(j["valid"], false);
  EXPECT_EQ(j["kind"], "request");
  EXPECT_EQ(j["action"], "respond 400");
  EXPECT_EQ(j["errors"].size(), 3U);
}

TEST(sip_sipcheck, names_binary_oversized_empty_and_truncated_input) {
  std::string binary("\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03", 11);
  file_report b = check_message("tls.bin", binary, binary.size());
  EXPECT_FALSE(b.valid);
  EXPECT_EQ(b.errors.at(0), "binary");
  EXPECT_EQ(b.action, "drop");

  std::string big(sipcheck_max_input + 1, 'a');
  file_report o = check_message("big", big, 1000000);
  EXPECT_EQ(o.errors.at(0), "too_large");
  EXPECT_NE(o.details.at(0).find("1000000 bytes"), std::string::npos);

  file_report e = check_message("empty", "", 0);
  EXPECT_EQ(e.errors.at(0), "empty");

  std::string_view cut = testdata::invite.substr(0, 200);
  file_report t = check_message("cut", cut, cut.size());
  EXPECT_EQ(t.errors.at(0), "headers_truncated");
  EXPECT_EQ(t.action, "drop");

  file_report u = unreadable_report("/nope", "No such file or directory");
  EXPECT_EQ(u.errors.at(0), "unreadable");
  EXPECT_FALSE(u.valid);
}

TEST(sip_sipcheck, reads_an_escaped_nul_in_a_quoted_string_as_text_and_a_bare_one_as_binary) {
  auto d = testutil::request();
  std::string from = "\"Nul \\";
  from += '\0';
  from += " here\" <sip:alice@198.18.0.10>;tag=f1";
  d.set("From", from);
  std::string text = d.text();
  file_report r = check_message("nul.sip", text, text.size());
  EXPECT_TRUE(r.valid) << (r.errors.empty() ? "" : r.errors[0]);
  EXPECT_EQ(r.action, "forward");

  d.set("From", "\"Nul\" <sip:alice@198.18.0.10>;tag=f1");
  d.set("X-Raw", std::string("a\0b", 3));
  text = d.text();
  file_report b = check_message("raw.sip", text, text.size());
  EXPECT_FALSE(b.valid);
  EXPECT_EQ(b.errors.at(0), "binary");
}

TEST(sip_sipcheck, reports_the_400_a_request_with_a_broken_start_line_gets) {
  auto d = testutil::request();
  d.start = "INVITE sip:bob@198.18.0.20";
  std::string text = d.text();
  file_report r = check_message("start.sip", text, text.size());
  EXPECT_FALSE(r.valid);
  EXPECT_EQ(r.action, "respond");
  EXPECT_EQ(r.code, 400);
  EXPECT_EQ(r.reason, "malformed start line");
  EXPECT_EQ(r.call_id, "call-1@198.18.0.10");
  EXPECT_NE(render_text(r).find("  top Via branch: z9hG4bKabc\n"), std::string::npos) << render_text(r);
}

TEST(sip_sipcheck, writes_valid_json_for_any_bytes) {
  auto d = testutil::request();
  d.set("Call-ID", "caf\xc3\xa9\xff\xfe@h");  // invalid UTF-8 in a capture
  std::string text = d.text();
  file_report r = check_message("x", text, text.size());
  auto j = nlohmann::json::parse(render_json(r));
  EXPECT_EQ(j["valid"], false);
  EXPECT_EQ(j["errors"][0], "bad_call_id");
  ASSERT_TRUE(j["call_id"].is_string());
  EXPECT_EQ(j["call_id"].get<std::string>().substr(0, 3), "caf");
}

}  // namespace
}  // namespace sbc::sip
