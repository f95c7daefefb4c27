// Unit tests of SIP URI, parameter, Via and name-addr grammar on offsets.
#include <gtest/gtest.h>

#include <string>

#include "sip-fastpath/sip_uri.h"

namespace sbc::sip {
namespace {

span whole(std::string_view s) { return make_span(0, s.size()); }

struct uri_case {
  const char* text;
  bool ok;
  uri_scheme scheme;
  const char* user;
  const char* password;
  const char* host;
  host_kind kind;
  uint16_t port;
  const char* params;
  const char* headers;
};

TEST(sip_uri, parses_every_part_of_sip_and_sips_uris) {
  using enum uri_scheme;
  const uri_case cases[] = {
      {"sip:alice@h.example", true, sip, "alice", "", "h.example", host_kind::name, 0, "", ""},
      {"SIP:alice@H.Example", true, sip, "alice", "", "H.Example", host_kind::name, 0, "", ""},
      {"sips:bob:secret@198.18.0.1:5061", true, sips, "bob", "secret", "198.18.0.1", host_kind::ipv4, 5061, "", ""},
      {"sip:[2001:db8::1]:5060;transport=tcp", true, sip, "", "", "[2001:db8::1]", host_kind::ipv6, 5060, ";transport=tcp", ""},
      {"sip:h.example;lr;maddr=198.18.0.2;x-unknown", true, sip, "", "", "h.example", host_kind::name, 0, ";lr;maddr=198.18.0.2;x-unknown", ""},
      {"sip:+1555;npdi;rn=+1444@h.example;user=phone", true, sip, "+1555;npdi;rn=+1444", "", "h.example", host_kind::name, 0, ";user=phone", ""},
      {"sip:a%40b%3a@h.example", true, sip, "a%40b%3a", "", "h.example", host_kind::name, 0, "", ""},
      {"sip:a@h.example?subject=hi&priority=urgent", true, sip, "a", "", "h.example", host_kind::name, 0, "", "subject=hi&priority=urgent"},
      {"sip:a@h.example;method=REGISTER?to=b%40c", true, sip, "a", "", "h.example", host_kind::name, 0, ";method=REGISTER", "to=b%40c"},
      {"tel:+1-555-123-4567;phone-context=example.com", true, tel, "", "", "", host_kind::none, 0, "", ""},
      {"urn:service:sos", true, other, "", "", "", host_kind::none, 0, "", ""},
      {"sip:", false, sip, "", "", "", host_kind::none, 0, "", ""},
      {"sip:@h.example", false, sip, "", "", "", host_kind::none, 0, "", ""},
      {"sip:a@", false, sip, "", "", "", host_kind::none, 0, "", ""},
      {"sip:a@h.example:0", false, sip, "", "", "", host_kind::none, 0, "", ""},
      {"sip:a@h.example:65536", false, sip, "", "", "", host_kind::none, 0, "", ""},
      {"sip:a@h.example:12a", false, sip, "", "", "", host_kind::none, 0, "", ""},
      {"sip:a@256.1.1.1", false, sip, "", "", "", host_kind::none, 0, "", ""},
      {"sip:a@1.2.3", false, sip, "", "", "", host_kind::none, 0, "", ""},
      {"sip:a@[2001:db8::1", false, sip, "", "", "", host_kind::none, 0, "", ""},
      {"sip:a@h..example", false, sip, "", "", "", host_kind::none, 0, "", ""},
      {"sip:a b@h.example", false, sip, "", "", "", host_kind::none, 0, "", ""},
      {"sip:a%4@h.example", false, sip, "", "", "", host_kind::none, 0, "", ""},
      {"sip:a@h.example;;lr", false, sip, "", "", "", host_kind::none, 0, "", ""},
      {"sip:a@h.example;", false, sip, "", "", "", host_kind::none, 0, "", ""},
      {"sip:a@h.example?", false, sip, "", "", "", host_kind::none, 0, "", ""},
      {"1sip:a@h", false, other, "", "", "", host_kind::none, 0, "", ""},
      {"nocolon", false, other, "", "", "", host_kind::none, 0, "", ""},
      {"tel:", false, tel, "", "", "", host_kind::none, 0, "", ""},
  };
  for (const auto& c : cases) {
    std::string_view t = c.text;
    uri u;
    bool ok = parse_uri(t, whole(t), u);
    EXPECT_EQ(ok, c.ok) << c.text;
    if (!ok || !c.ok) continue;
    EXPECT_EQ(u.scheme, c.scheme) << c.text;
    if (c.scheme == uri_scheme::sip || c.scheme == uri_scheme::sips) {
      EXPECT_EQ(u.user.in(t), c.user) << c.text;
      EXPECT_EQ(u.password.in(t), c.password) << c.text;
      EXPECT_EQ(u.host.in(t), c.host) << c.text;
      EXPECT_EQ(u.host_type, c.kind) << c.text;
      EXPECT_EQ(u.port, c.port) << c.text;
      EXPECT_EQ(u.params.in(t), c.params) << c.text;
      EXPECT_EQ(u.headers.in(t), c.headers) << c.text;
    } else {
      EXPECT_EQ(u.opaque.in(t), t.substr(t.find(':') + 1)) << c.text;
    }
  }
}

TEST(sip_uri, finds_parameters_by_name_in_any_case) {
  std::string_view t = ";Transport=UDP;lr;x=\"a;b\";MADDR=198.18.0.1";
  param p;
  ASSERT_TRUE(find_param(t, whole(t), "transport", p));
  EXPECT_EQ(p.value.in(t), "UDP");
  ASSERT_TRUE(find_param(t, whole(t), "lr", p));
  EXPECT_FALSE(p.has_value);
  ASSERT_TRUE(find_param(t, whole(t), "x", p));
  EXPECT_EQ(p.value.in(t), "\"a;b\"");
  ASSERT_TRUE(find_param(t, whole(t), "maddr", p));
  EXPECT_EQ(p.value.in(t), "198.18.0.1");
  EXPECT_FALSE(find_param(t, whole(t), "ttl", p));
}

TEST(sip_uri, reports_broken_parameter_lists) {
  const char* bad[] = {";", ";=x", ";a=", ";a=\"open", ";a b", "a"};
  for (const char* b : bad) {
    std::string_view t = b;
    param_iter it(t, whole(t));
    param p;
    bool broken = false;
    while (it.next(p, broken)) {
    }
    EXPECT_TRUE(broken) << b;
  }
}

TEST(sip_uri, parses_via_parameters_it_needs_and_keeps_the_rest) {
  std::string_view t =
      "SIP / 2.0 / UDP 198.18.0.10:5062 ;branch=z9hG4bK77;received=198.18.0.99;rport=5063;"
      "maddr=224.0.0.1;ttl=1;x-custom=\"q\"";
  via v;
  ASSERT_TRUE(parse_via(t, whole(t), v));
  EXPECT_EQ(v.transport.in(t), "UDP");
  EXPECT_EQ(v.host.in(t), "198.18.0.10");
  EXPECT_EQ(v.port, 5062);
  EXPECT_EQ(v.branch.in(t), "z9hG4bK77");
  EXPECT_EQ(v.received.in(t), "198.18.0.99");
  EXPECT_EQ(v.rport.in(t), "5063");
  EXPECT_EQ(v.maddr.in(t), "224.0.0.1");
  param p;
  ASSERT_TRUE(find_param(t, v.params, "x-custom", p));
  EXPECT_EQ(p.value.in(t), "\"q\"");
}

TEST(sip_uri, reads_via_names_in_any_case_in_both_passes) {
  std::string_view t = "sip/2.0/udp h.example;BRANCH=z9hG4bKx;RPort;Received=198.18.0.1";
  for (bool strict : {true, false}) {
    via v;
    uint32_t next = 0;
    ASSERT_TRUE(parse_via_at(t, 0, static_cast<uint32_t>(t.size()), v, next, strict)) << strict;
    EXPECT_EQ(v.branch.in(t), "z9hG4bKx");
    EXPECT_TRUE(v.has_rport);
    EXPECT_EQ(v.received.in(t), "198.18.0.1");
  }
  // A control byte where a letter should be is not a case variant of it.
  std::string_view not_branch = "SIP/2.0/UDP h.example;brAnch2=x;bran\x02h=y";
  via v;
  uint32_t next = 0;
  ASSERT_TRUE(parse_via_at(not_branch, 0, static_cast<uint32_t>(not_branch.size()), v, next,
                           false));
  EXPECT_FALSE(v.has_branch);
}

TEST(sip_uri, rejects_malformed_via_values) {
  const char* bad[] = {
      "SIP/2.0/UDP",                         // no host
      "SIP/2.0 UDP h.example",               // missing '/'
      "SIP/2.1/UDP h.example",               // version
      "SIP/2.0/UDP h.example:0",             // port
      "SIP/2.0/UDP h.example;branch",        // branch without value
      "SIP/2.0/UDP h.example;received=h.x",  // received must be an address
      "SIP/2.0/UDP h.example;rport=99999",   // rport out of range
      "SIP/2.0/UDP h.example junk",          // stray text
      "SIP/2.0/UDP [2001:db8::1;branch=x",   // open IPv6 reference
  };
  for (const char* b : bad) {
    std::string_view t = b;
    via v;
    EXPECT_FALSE(parse_via(t, whole(t), v)) << b;
  }
}

TEST(sip_uri, splits_value_lists_only_at_top_level_commas) {
  std::string_view t = "\"A, B\" <sip:a@h;x=1,2>, <sip:b@h> ,sip:c@h";
  value_iter it(t, whole(t));
  span s;
  error err = error::none;
  ASSERT_TRUE(it.next(s, err));
  EXPECT_EQ(s.in(t), "\"A, B\" <sip:a@h;x=1,2>");
  ASSERT_TRUE(it.next(s, err));
  EXPECT_EQ(s.in(t), "<sip:b@h>");
  ASSERT_TRUE(it.next(s, err));
  EXPECT_EQ(s.in(t), "sip:c@h");
  EXPECT_FALSE(it.next(s, err));
  EXPECT_EQ(err, error::none);

  std::string_view open = "<sip:a@h, <sip:b@h>";
  value_iter bad(open, whole(open));
  EXPECT_FALSE(bad.next(s, err));
  EXPECT_EQ(err, error::unbalanced_angle);
}

TEST(sip_uri, reads_name_addr_forms) {
  struct na_case {
    const char* text;
    error expected;
    const char* display;
    const char* uri;
    const char* tag;
  };
  const na_case cases[] = {
      {"<sip:a@h>", error::none, "", "sip:a@h", ""},
      {"Alice Smith <sip:a@h>;tag=1", error::none, "Alice Smith", "sip:a@h", "1"},
      {"\"A \\\"q\\\" \\\\\" <sip:a@h;lr>;TAG=x;other", error::none, "\"A \\\"q\\\" \\\\\"", "sip:a@h;lr", "x"},
      {"sip:a@h;tag=9", error::none, "", "sip:a@h", "9"},
      {"  <tel:+1555>  ", error::none, "", "tel:+1555", ""},
      {"\"open <sip:a@h>", error::unbalanced_quotes, "", "", ""},
      {"<sip:a@h", error::unbalanced_angle, "", "", ""},
      {"sip:a@h>", error::unbalanced_angle, "", "", ""},
      {"<sip:a@h>;tag", error::bad_from, "", "", ""},
      {"<not a uri>", error::bad_from, "", "", ""},
      {"Alice", error::bad_from, "", "", ""},
      {"", error::bad_from, "", "", ""},
      {"\"x\" sip:a@h", error::bad_from, "", "", ""},
  };
  for (const auto& c : cases) {
    std::string_view t = c.text;
    name_addr na;
    error e = parse_name_addr(t, whole(t), na, error::bad_from);
    EXPECT_EQ(e, c.expected) << c.text;
    if (e != error::none) continue;
    EXPECT_EQ(na.display.in(t), c.display) << c.text;
    EXPECT_EQ(na.uri_text.in(t), c.uri) << c.text;
    EXPECT_EQ(na.tag.in(t), c.tag) << c.text;
    EXPECT_EQ(na.has_tag, *c.tag != '\0') << c.text;
  }
}

TEST(sip_uri, ends_a_quoted_string_at_its_quote_and_escapes_any_octet_but_cr_and_lf) {
  using namespace std::string_view_literals;
  struct q_case {
    std::string_view text;
    uint32_t end;  // past the closing quote; 0: not a quoted string
  };
  const q_case cases[] = {
      {"\"plain\" rest"sv, 7},
      {"\"a \\\" b\""sv, 8},
      {"\"nul \\\0\""sv, 8},
      {"\"tab \\\t\""sv, 8},
      {"\"bs \\\\\""sv, 7},
      {"\"cr \\\r\""sv, 0},
      {"\"lf \\\n\""sv, 0},
      {"\"fold \\\r\n \""sv, 0},
      {"\"open"sv, 0},
      {"\"ends in \\"sv, 0},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(skip_quoted(c.text, 0, static_cast<uint32_t>(c.text.size())), c.end) << c.text;
  }
}

}  // namespace
}  // namespace sbc::sip
