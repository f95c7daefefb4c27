// Unit tests of the SIP editor: proxy edits, checked by parsing the output again and
// comparing it with the input (round trips), plus exact bytes where the format matters.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sip-fastpath/sip_editor.h"
#include "tests/unit/sip_test_messages.h"
#include "tests/unit/sip_test_util.h"

namespace sbc::sip {
namespace {

struct parsed : testutil::parsed_text {
  using parsed_text::parsed_text;
  // Header lines (name: value) other than the ones named, in order.
  std::vector<std::string> lines_except(std::initializer_list<header_id> skip) const {
    std::vector<std::string> out;
    for (unsigned i = 0; i < m->header_count; ++i) {
      const header& h = m->headers[i];
      bool skipped = false;
      for (header_id s : skip) skipped = skipped || h.id == s;
      if (!skipped) out.push_back(std::string((*this)(h.name)) + ":" + std::string((*this)(h.value)));
    }
    return out;
  }
};

std::string apply(const message& m, const edits& e, std::size_t cap = 4096) {
  std::string out(cap, '\0');
  write_result r = edit(m, e, out);
  EXPECT_TRUE(r.ok()) << error_name(r.err);
  out.resize(r.ok() ? r.len : 0);
  return out;
}

TEST(sip_editor, forwards_an_invite_with_every_proxy_edit_and_keeps_the_rest) {
  parsed in{std::string(testdata::invite)};
  ASSERT_TRUE(in.m->ok());
  edits e;
  e.push_via = "SIP/2.0/UDP 198.18.0.1:5060;branch=z9hG4bK-sbc-1";
  e.record_route = "<sip:198.18.0.1;lr>";
  e.request_uri = "sip:+15551230002@198.18.0.30:5060";
  e.decrement_max_forwards = true;
  parsed out{apply(*in.m, e)};
  ASSERT_TRUE(out.m->ok()) << error_name(out.m->first_error) << "\n" << out.text;
  EXPECT_EQ(out(out.m->request_uri), "sip:+15551230002@198.18.0.30:5060");
  EXPECT_EQ(out(out.m->top_via.branch), "z9hG4bK-sbc-1");
  EXPECT_EQ(out.m->max_forwards, 69);
  const header* rr = out.m->find(header_id::record_route);
  ASSERT_NE(rr, nullptr);
  EXPECT_EQ(out(rr->value), "<sip:198.18.0.1;lr>");
  // The old top Via is now second, unchanged.
  std::vector<std::string> vias;
  for (unsigned i = 0; i < out.m->header_count; ++i)
    if (out.m->headers[i].id == header_id::via) vias.emplace_back(out(out.m->headers[i].value));
  ASSERT_EQ(vias.size(), 2U);
  EXPECT_EQ(vias[1], in(in.m->headers[in.m->h_via].value));
  // Everything else is byte for byte what came in.
  auto skip = {header_id::via, header_id::record_route, header_id::max_forwards};
  EXPECT_EQ(out.lines_except(skip), in.lines_except(skip));
  EXPECT_EQ(out(out.m->body), in(in.m->body));
  EXPECT_EQ(out.m->content_length, in.m->content_length);
}

TEST(sip_editor, pops_the_top_via_of_a_response) {
  auto d = testutil::response(180, "Ringing");
  d.set("Via", "SIP/2.0/UDP 198.18.0.1:5060;branch=z9hG4bK-sbc-1");
  d.add("Via", "SIP/2.0/UDP 198.18.0.10:5060;branch=z9hG4bKabc");
  parsed in{d.text()};
  edits e;
  e.pop_via = true;
  parsed out{apply(*in.m, e)};
  ASSERT_TRUE(out.m->ok()) << out.text;
  EXPECT_EQ(out(out.m->top_via.branch), "z9hG4bKabc");
  EXPECT_EQ(out.text, [&] {
    auto x = testutil::response(180, "Ringing");
    x.set("Via", "SIP/2.0/UDP 198.18.0.10:5060;branch=z9hG4bKabc");
    // The one Via line left sits where the second one was: after Content-Length.
    x.remove("Via");
    x.add("Via", "SIP/2.0/UDP 198.18.0.10:5060;branch=z9hG4bKabc");
    return x.text();
  }());
}

TEST(sip_editor, pops_the_first_value_of_a_combined_via_line) {
  auto d = testutil::response();
  d.set("Via", "SIP/2.0/UDP 198.18.0.1;branch=z9hG4bK1, SIP/2.0/UDP 198.18.0.10;branch=z9hG4bK2");
  parsed in{d.text()};
  edits e;
  e.pop_via = true;
  std::string out = apply(*in.m, e);
  auto expect = testutil::response();
  expect.set("Via", "SIP/2.0/UDP 198.18.0.10;branch=z9hG4bK2");
  EXPECT_EQ(out, expect.text());
}

TEST(sip_editor, replaces_the_body_and_fixes_content_length_and_type) {
  parsed in{std::string(testdata::invite)};
  edits e;
  e.replace_body = true;
  e.body = "v=0\r\nc=IN IP4 198.18.0.1\r\n";
  e.content_type = "application/sdp;x=1";
  parsed out{apply(*in.m, e)};
  ASSERT_TRUE(out.m->ok()) << out.text;
  EXPECT_EQ(out(out.m->body), e.body);
  EXPECT_EQ(out.m->content_length, e.body.size());
  EXPECT_EQ(out(out.m->headers[out.m->h_content_type].value), "application/sdp;x=1");
  auto skip = {header_id::content_length, header_id::content_type};
  EXPECT_EQ(out.lines_except(skip), in.lines_except(skip));
}

TEST(sip_editor, adds_max_forwards_and_content_length_when_absent) {
  auto d = testutil::request();
  d.remove("Max-Forwards");
  d.remove("Content-Length");
  d.body = "xyz";
  parsed in{d.text()};
  edits e;
  e.decrement_max_forwards = true;
  std::string out = apply(*in.m, e);
  auto expect = testutil::request();
  expect.remove("Max-Forwards");
  expect.remove("Content-Length");
  expect.add("Max-Forwards", "70");
  expect.add("Content-Length", "3");
  expect.body = "xyz";
  EXPECT_EQ(out, expect.text());
}

TEST(sip_editor, drops_bytes_after_the_declared_body) {
  auto d = testutil::request();
  d.set("Content-Length", "2");
  d.body = "okGARBAGE";
  parsed in{d.text()};
  std::string out = apply(*in.m, edits{});
  d.body = "ok";
  EXPECT_EQ(out, d.text());
}

TEST(sip_editor, leaves_a_message_unchanged_without_edits) {
  for (const auto& t : testdata::call) {
    parsed in{std::string(t.text)};
    EXPECT_EQ(apply(*in.m, edits{}), t.text) << t.name;
  }
}

TEST(sip_editor, refuses_to_decrement_max_forwards_of_zero) {
  auto d = testutil::request();
  d.set("Max-Forwards", "0");
  parsed in{d.text()};
  edits e;
  e.decrement_max_forwards = true;
  std::string out(4096, '\0');
  EXPECT_EQ(edit(*in.m, e, out).err, error::bad_max_forwards);
}

TEST(sip_editor, reports_no_space_for_every_buffer_too_small) {
  parsed in{std::string(testdata::invite)};
  edits e;
  e.push_via = "SIP/2.0/UDP 198.18.0.1:5060;branch=z9hG4bK-sbc-1";
  e.decrement_max_forwards = true;
  const std::string full = apply(*in.m, e);
  for (std::size_t cap = 0; cap < full.size(); cap += 7) {
    std::vector<char> out(cap);
    EXPECT_EQ(edit(*in.m, e, out).err, error::no_space) << cap;
  }
  std::vector<char> exact(full.size());
  write_result r = edit(*in.m, e, exact);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(std::string(exact.data(), r.len), full);
}

TEST(sip_editor, edits_in_place_with_headroom_as_into_a_fresh_buffer) {
  edits e;
  e.push_via = "SIP/2.0/UDP 198.18.0.1:5060;branch=z9hG4bK-sbc-1";
  e.record_route = "<sip:198.18.0.1;lr>";
  e.request_uri = "sip:+15551230002@198.18.0.30:5060";
  e.decrement_max_forwards = true;
  parsed fresh{std::string(testdata::invite)};
  const std::string expected = apply(*fresh.m, e);

  constexpr std::size_t headroom = 128;
  std::vector<char> buf(headroom + testdata::invite.size() + 64);
  std::copy(testdata::invite.begin(), testdata::invite.end(), buf.begin() + headroom);
  auto m = std::make_unique<message>();
  ASSERT_EQ(parse(std::string_view(buf.data() + headroom, testdata::invite.size()), *m),
            error::none);
  write_result r = edit(*m, e, buf);
  ASSERT_TRUE(r.ok()) << error_name(r.err);
  EXPECT_EQ(std::string(buf.data(), r.len), expected);

  // Without enough headroom the edit is refused rather than corrupting the input.
  std::vector<char> tight(8 + testdata::invite.size() + 200);
  std::copy(testdata::invite.begin(), testdata::invite.end(), tight.begin() + 8);
  ASSERT_EQ(parse(std::string_view(tight.data() + 8, testdata::invite.size()), *m), error::none);
  EXPECT_EQ(edit(*m, e, tight).err, error::no_space);
}

TEST(sip_editor, round_trips_through_parse_for_every_message_of_a_call) {
  for (const auto& t : testdata::call) {
    parsed in{std::string(t.text)};
    edits e;
    if (in.m->is_request()) {
      e.push_via = "SIP/2.0/UDP [2001:db8::1]:5060;branch=z9hG4bK-rt";
      e.record_route = "<sip:[2001:db8::1];lr>";
      e.decrement_max_forwards = true;
    } else {
      e.push_via = "SIP/2.0/UDP 198.18.0.1;branch=z9hG4bK-tmp";
    }
    parsed once{apply(*in.m, e)};
    ASSERT_TRUE(once.m->ok()) << t.name;
    if (in.m->is_response()) {
      // push then pop gives back the original bytes
      edits pop;
      pop.pop_via = true;
      EXPECT_EQ(apply(*once.m, pop), t.text) << t.name;
    } else {
      EXPECT_EQ(once.m->max_forwards, in.m->max_forwards - 1) << t.name;
      EXPECT_EQ(once(once.m->top_via.branch), "z9hG4bK-rt") << t.name;
    }
  }
}

}  // namespace
}  // namespace sbc::sip
