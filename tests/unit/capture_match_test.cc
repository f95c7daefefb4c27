// What a capture keeps (sip-fastpath/capture_match.h) and how `sbcctl capture` asks for it
// (control/capture_text.h): which field each pattern looks at, any-of semantics, the other
// side as text, patterns Hyperscan refuses, and the request sbcctl builds.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "control/capture_text.h"
#include "sip-fastpath/capture_match.h"
#include "sip-fastpath/sip_message.h"

namespace {

using namespace sbc::sip;

const std::string invite =
    "INVITE sip:+15550100@198.18.0.10:5060 SIP/2.0\r\n"
    "Via: SIP/2.0/UDP 198.18.0.1:5060;branch=z9hG4bK-1\r\n"
    "From: \"Alice\" <sip:alice@198.18.0.1>;tag=a1\r\n"
    "To: <sip:+15550100@198.18.0.10>\r\n"
    "Call-ID: 1-4242@198.18.0.1\r\n"
    "CSeq: 1 INVITE\r\n"
    "Max-Forwards: 70\r\n"
    "Content-Length: 0\r\n\r\n";

const std::string ok_200 =
    "SIP/2.0 200 OK\r\n"
    "Via: SIP/2.0/UDP 198.18.0.1:5060;branch=z9hG4bK-1\r\n"
    "From: \"Alice\" <sip:alice@198.18.0.1>;tag=a1\r\n"
    "To: <sip:+15550100@198.18.0.10>;tag=b2\r\n"
    "Call-ID: 1-4242@198.18.0.1\r\n"
    "CSeq: 1 INVITE\r\n"
    "Content-Length: 0\r\n\r\n";

std::shared_ptr<capture_matcher> compiled(const std::vector<std::string>& matches)
{
    std::vector<capture_pattern> ps;
    std::string error;
    for (const auto& m : matches) {
        auto p = parse_capture_match(m, error);
        EXPECT_TRUE(p) << error;
        if (p) ps.push_back(*p);
    }
    auto m = capture_matcher::compile(ps, 2, error);
    EXPECT_TRUE(m) << error;
    return m;
}

bool matches(const std::vector<std::string>& patterns, const std::string& text, const std::string& other_side,
             unsigned worker = 0)
{
    message msg;
    EXPECT_EQ(parse(text, msg), error::none);
    auto m = compiled(patterns);
    return m && m->match(worker, msg, other_side);
}

struct field_case {
    const char* what;
    std::vector<std::string> patterns;
    const std::string* text;
    const char* other_side;
    bool expect;
};

TEST(capture_match, each_field_looks_at_its_own_part_of_the_message)
{
    const field_case cases[] = {
        {"callid matches the Call-ID", {"callid:^1-4242@"}, &invite, "198.18.0.1:5060", true},
        {"callid does not look at From", {"callid:alice"}, &invite, "198.18.0.1:5060", false},
        {"from sees the display name and URI", {"from:\"Alice\" <sip:alice@"}, &invite, "198.18.0.1:5060", true},
        {"from does not look at To", {"from:15550100"}, &invite, "198.18.0.1:5060", false},
        {"to matches the To value", {"to:sip:\\+15550100@"}, &invite, "198.18.0.1:5060", true},
        {"ruri matches the Request-URI", {"ruri:^sip:\\+1555"}, &invite, "198.18.0.1:5060", true},
        {"a response has no Request-URI", {"ruri:sip"}, &ok_200, "198.18.0.10:5060", false},
        {"a response matches on its Call-ID", {"callid:4242"}, &ok_200, "198.18.0.10:5060", true},
        {"source is the other side as text", {"source:^198\\.18\\.0\\.1:5060$"}, &invite, "198.18.0.1:5060", true},
        {"source does not look at the headers", {"source:^198\\.18\\.0\\.1:"}, &ok_200, "198.18.0.10:5060", false},
        {"patterns are case-sensitive", {"from:ALICE"}, &invite, "198.18.0.1:5060", false},
        {"(?i) makes one caseless", {"from:(?i)ALICE"}, &invite, "198.18.0.1:5060", true},
    };
    for (const auto& c : cases) EXPECT_EQ(matches(c.patterns, *c.text, c.other_side), c.expect) << c.what;
}

TEST(capture_match, any_pattern_that_matches_selects_the_message)
{
    // Several patterns are alternatives, on one field or on several.
    EXPECT_TRUE(matches({"callid:nothing-like-it", "from:alice"}, invite, ""));
    EXPECT_TRUE(matches({"from:bob", "from:alice"}, invite, ""));
    EXPECT_TRUE(matches({"callid:nothing", "source:^198\\.18\\.0\\.1:"}, invite, "198.18.0.1:5060"));
    EXPECT_FALSE(matches({"callid:nothing", "from:bob", "to:carol", "ruri:dave", "source:^10\\."}, invite,
                         "198.18.0.1:5060"));
}

TEST(capture_match, every_worker_scans_with_its_own_scratch_and_others_find_nothing)
{
    EXPECT_TRUE(matches({"callid:4242"}, invite, "", 1));
    EXPECT_FALSE(matches({"callid:4242"}, invite, "", 2));  // compiled for workers 0 and 1
}

TEST(capture_match, a_pattern_hyperscan_refuses_is_named_with_its_field_and_hyperscan_s_reason)
{
    std::string error;
    auto p = parse_capture_match("from:(alice", error);
    ASSERT_TRUE(p);
    EXPECT_FALSE(capture_matcher::compile({*p}, 1, error));
    EXPECT_NE(error.find("\"(alice\" on from does not compile"), std::string::npos) << error;
    EXPECT_NE(error.find("parenthes"), std::string::npos) << error;  // Hyperscan's message
}

TEST(capture_match, a_pattern_that_matches_the_empty_string_is_refused_leave_match_out_for_everything)
{
    std::string error;
    EXPECT_FALSE(capture_matcher::compile({{capture_field::callid, ".*"}}, 1, error));
    EXPECT_NE(error.find("empty"), std::string::npos) << error;
}

TEST(capture_match, an_unknown_field_or_an_empty_pattern_is_a_usage_error)
{
    std::string error;
    EXPECT_FALSE(parse_capture_match("user:alice", error));
    EXPECT_NE(error.find("callid, from, to, ruri, source"), std::string::npos) << error;
    EXPECT_FALSE(parse_capture_match("callid:", error));
    EXPECT_FALSE(parse_capture_match("callid", error));
    auto p = parse_capture_match("source:198\\.18\\.0\\.1:5060", error);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->field, capture_field::source);
    EXPECT_EQ(p->expr, "198\\.18\\.0\\.1:5060");  // only the first colon separates
}

TEST(capture_request, sbcctl_sends_an_absolute_file_the_patterns_and_the_limits)
{
    std::string error;
    const std::vector<std::string> args{"start", "--match", "callid:^abc", "--match", "from:alice", "--max-mb", "5",
                                        "--seconds", "30", "calls.pcap"};
    auto j = sbc::control::capture_request_json(args, "/home/op", error);
    ASSERT_TRUE(j) << error;
    EXPECT_EQ((*j)["file"], "/home/op/calls.pcap");
    EXPECT_EQ((*j)["match"].size(), 2u);
    auto r = sbc::control::capture_request_of(*j, error);
    ASSERT_TRUE(r) << error;
    EXPECT_EQ(r->path, "/home/op/calls.pcap");
    ASSERT_EQ(r->patterns.size(), 2u);
    EXPECT_EQ(r->patterns[1].field, capture_field::from);
    EXPECT_EQ(r->max_mb, 5u);
    EXPECT_EQ(r->seconds, 30u);
}

TEST(capture_request, defaults_are_100_mib_until_stopped_and_every_message)
{
    std::string error;
    auto j = sbc::control::capture_request_json(std::vector<std::string>{"start", "/var/tmp/all.pcap"}, "/x", error);
    ASSERT_TRUE(j) << error;
    auto r = sbc::control::capture_request_of(*j, error);
    ASSERT_TRUE(r) << error;
    EXPECT_EQ(r->path, "/var/tmp/all.pcap");
    EXPECT_TRUE(r->patterns.empty());
    EXPECT_EQ(r->max_mb, 100u);
    EXPECT_EQ(r->seconds, 0u);
}

TEST(capture_request, wrong_arguments_are_usage_errors)
{
    std::string error;
    using v = std::vector<std::string>;
    EXPECT_FALSE(sbc::control::capture_request_json(v{"start"}, "/", error));
    EXPECT_NE(error.find("FILE"), std::string::npos);
    EXPECT_FALSE(sbc::control::capture_request_json(v{"start", "--match", "user:x", "a.pcap"}, "/", error));
    EXPECT_FALSE(sbc::control::capture_request_json(v{"start", "--max-mb", "0", "a.pcap"}, "/", error));
    EXPECT_FALSE(sbc::control::capture_request_json(v{"start", "a.pcap", "b.pcap"}, "/", error));
    EXPECT_FALSE(sbc::control::capture_request_json(v{"stop", "now"}, "/", error));
    EXPECT_FALSE(sbc::control::capture_request_json(v{"pause"}, "/", error));
    EXPECT_EQ((*sbc::control::capture_request_json(v{}, "/", error))["action"], "status");
    // sbcd refuses a relative path it would resolve against its own directory.
    EXPECT_FALSE(sbc::control::capture_request_of({{"cmd", "capture"}, {"action", "start"}, {"file", "rel.pcap"}}, error));
}

}  // namespace
