// Header and number rules (sip-fastpath/sip_rules.h): each rule kind on a real INVITE, number
// normalisation examples as a table (input, rule set, expected output), ;user=phone, rules
// seeing what the rules before them made, fields that are absent, failures counted per rule,
// and a message left alone when nothing matched. Unit tier.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <string>
#include <tuple>
#include <vector>

#include "sip-fastpath/sip_editor.h"
#include "sip-fastpath/sip_rules.h"

using namespace sbc::sip;

namespace {

const std::string body = "v=0\r\no=- 1 1 IN IP4 198.18.0.2\r\ns=-\r\nc=IN IP4 198.18.0.2\r\nt=0 0\r\n";

std::string invite(const std::string& ruri_user, const std::string& extra = "",
                   const std::string& from = "<sip:02071234567@198.18.0.2>;tag=a1",
                   const std::string& to = "<sip:+15550100@198.18.0.1>")
{
    return "INVITE sip:" + ruri_user + "@198.18.0.1 SIP/2.0\r\n"
           "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-c1\r\n"
           "Max-Forwards: 70\r\n"
           "From: " + from + "\r\n"
           "To: " + to + "\r\n"
           "Call-ID: c1\r\n"
           "CSeq: 1 INVITE\r\n" + extra +
           "Contact: <sip:alice@198.18.0.2:5060>\r\n"
           "Content-Type: application/sdp\r\n"
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

rule_spec number(rule_field f, std::string match, std::string replace, bool phone = false)
{
    rule_spec s;
    s.kind = rule_kind::number;
    s.field = f;
    s.match = std::move(match);
    s.replace = std::move(replace);
    s.user_phone = phone;
    return s;
}

rule_spec header(rule_kind k, std::string name, std::string value = {})
{
    rule_spec s;
    s.kind = k;
    s.header = std::move(name);
    s.value = std::move(value);
    return s;
}

std::string at(span s) { return std::to_string(s.off) + "+" + std::to_string(s.len); }

/// Every field of two parses, side by side: a rewritten message's parse (parse_rewritten,
/// which takes the original's copied lines instead of parsing them) against a full parse.
void expect_same_parse(const message& a, const message& b)
{
    EXPECT_EQ(a.raw, b.raw);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.req_method, b.req_method);
    EXPECT_EQ(a.status, b.status);
    for (auto [x, y, what] : {std::tuple{a.start_line, b.start_line, "start_line"},
                              {a.method_text, b.method_text, "method_text"},
                              {a.request_uri, b.request_uri, "request_uri"},
                              {a.version, b.version, "version"},
                              {a.ruri.scheme_text, b.ruri.scheme_text, "ruri.scheme_text"},
                              {a.ruri.user, b.ruri.user, "ruri.user"},
                              {a.ruri.password, b.ruri.password, "ruri.password"},
                              {a.ruri.host, b.ruri.host, "ruri.host"},
                              {a.ruri.params, b.ruri.params, "ruri.params"},
                              {a.ruri.headers, b.ruri.headers, "ruri.headers"},
                              {a.ruri.opaque, b.ruri.opaque, "ruri.opaque"},
                              {a.cseq_method_text, b.cseq_method_text, "cseq_method_text"},
                              {a.top_via.protocol, b.top_via.protocol, "via.protocol"},
                              {a.top_via.transport, b.top_via.transport, "via.transport"},
                              {a.top_via.host, b.top_via.host, "via.host"},
                              {a.top_via.params, b.top_via.params, "via.params"},
                              {a.top_via.branch, b.top_via.branch, "via.branch"},
                              {a.top_via.received, b.top_via.received, "via.received"},
                              {a.top_via.rport, b.top_via.rport, "via.rport"},
                              {a.top_via.maddr, b.top_via.maddr, "via.maddr"},
                              {a.from.display, b.from.display, "from.display"},
                              {a.from.uri_text, b.from.uri_text, "from.uri_text"},
                              {a.from.params, b.from.params, "from.params"},
                              {a.from.tag, b.from.tag, "from.tag"},
                              {a.to.display, b.to.display, "to.display"},
                              {a.to.uri_text, b.to.uri_text, "to.uri_text"},
                              {a.to.params, b.to.params, "to.params"},
                              {a.to.tag, b.to.tag, "to.tag"},
                              {a.body, b.body, "body"}})
        EXPECT_EQ(at(x), at(y)) << what;
    EXPECT_EQ(a.ruri.scheme, b.ruri.scheme);
    EXPECT_EQ(a.ruri.host_type, b.ruri.host_type);
    EXPECT_EQ(a.ruri.port, b.ruri.port);
    ASSERT_EQ(a.header_count, b.header_count);
    for (unsigned i = 0; i < a.header_count; ++i) {
        EXPECT_EQ(at(a.headers[i].name), at(b.headers[i].name)) << i;
        EXPECT_EQ(at(a.headers[i].value), at(b.headers[i].value)) << i;
        EXPECT_EQ(at(a.headers[i].line), at(b.headers[i].line)) << i;
        EXPECT_EQ(a.headers[i].id, b.headers[i].id) << i;
    }
    EXPECT_EQ(std::tuple(a.h_via, a.h_from, a.h_to, a.h_call_id, a.h_cseq, a.h_max_forwards, a.h_content_length,
                         a.h_content_type, a.h_proxy_require, a.h_record_route, a.h_route, a.h_contact, a.h_expires),
              std::tuple(b.h_via, b.h_from, b.h_to, b.h_call_id, b.h_cseq, b.h_max_forwards, b.h_content_length,
                         b.h_content_type, b.h_proxy_require, b.h_record_route, b.h_route, b.h_contact, b.h_expires));
    EXPECT_EQ(std::tuple(a.cseq, a.cseq_method, a.max_forwards, a.expires, a.content_length, a.has_content_length),
              std::tuple(b.cseq, b.cseq_method, b.max_forwards, b.expires, b.content_length, b.has_content_length));
    EXPECT_EQ(std::tuple(a.top_via.port, a.top_via.has_branch, a.top_via.has_rport, a.has_top_via),
              std::tuple(b.top_via.port, b.top_via.has_branch, b.top_via.has_rport, b.has_top_via));
    EXPECT_EQ(std::tuple(a.from.angle, a.from.has_tag, a.to.angle, a.to.has_tag),
              std::tuple(b.from.angle, b.from.has_tag, b.to.angle, b.to.has_tag));
    EXPECT_EQ(a.headers_end, b.headers_end);
    EXPECT_EQ(a.first_error, b.first_error);
}

/// One rule set of `specs`, applied to a message: what came out and what was counted. Every
/// rewritten message's parse is checked against a full parse of its text.
struct run {
    rule_tables rt;
    rule_work work;
    std::array<sbc::single_writer<uint64_t>, max_rules> hits{}, failures{};
    std::array<char, 4096> buf{};
    message in, out;
    rule_outcome outcome = rule_outcome::unchanged;
    std::string input;  ///< what `in` was parsed from (kept: `in` points into it)
    std::string text;

    explicit run(const std::vector<rule_spec>& specs)
    {
        for (const rule_spec& s : specs) {
            rule r;
            auto err = compile_rule(s, r);
            EXPECT_FALSE(err) << err->key << ": " << err->message;
            rt.rules.push_back(std::move(r));
        }
    }
    std::string apply(const std::string& msg, std::size_t room = 4096)
    {
        input = msg;
        EXPECT_EQ(parse(input, in), error::none);
        const rule_set set{0, static_cast<uint32_t>(rt.rules.size())};
        const rule_context ctx{"sbc.example.net", "carrier-1"};
        outcome = apply_rules(rt, {&set, 1}, in, ctx, work, {hits.data(), failures.data()}, {buf.data(), room}, out);
        text = outcome == rule_outcome::rewritten ? std::string(out.raw) : msg;
        if (outcome == rule_outcome::rewritten) {
            message full;
            parse(out.raw, full);
            expect_same_parse(out, full);
        }
        expect_same_as_edits(set, ctx, room);
        return text;
    }
    /// apply_rules_as_edits (the outbound path of an attempt) on the same input: the editor
    /// making its line edits writes what apply_rules wrote, byte for byte; where a number rule
    /// changed a field it rewrites as apply_rules does. Its own counters.
    void expect_same_as_edits(const rule_set& set, const rule_context& ctx, std::size_t room)
    {
        std::array<sbc::single_writer<uint64_t>, max_rules> h2{}, f2{};
        std::array<char, 4096> buf2{};
        message out2;
        rule_edits re;
        const rule_outcome o = apply_rules_as_edits(rt, {&set, 1}, in, ctx, work, {h2.data(), f2.data()},
                                                    {buf2.data(), room}, out2, re);
        for (std::size_t i = 0; i < rt.rules.size(); ++i) {
            EXPECT_EQ(h2[i].get(), hits[i].get()) << "rule " << i << " hits";
            EXPECT_EQ(f2[i].get(), failures[i].get()) << "rule " << i << " failures";
        }
        if (o != rule_outcome::as_edits) {
            EXPECT_EQ(o, outcome);
            if (o == rule_outcome::rewritten) {
                EXPECT_EQ(std::string(out2.raw), text);
            }
            return;
        }
        if (outcome == rule_outcome::too_long) return;  // `room` held the edits, not a whole copy
        EXPECT_EQ(outcome, rule_outcome::rewritten) << "line edits only where apply_rules rewrote";
        edits e;
        e.lines = re.view();
        std::array<char, 8192> edited{};
        const write_result w = edit(in, e, edited);
        ASSERT_TRUE(w.ok()) << error_name(w.err);
        EXPECT_EQ(std::string(edited.data(), w.len), text) << "the editor with the rules' line edits";
    }
    [[nodiscard]] std::string header_value(std::string_view name) const
    {
        const message& m = outcome == rule_outcome::rewritten ? out : in;
        for (unsigned i = 0; i < m.header_count; ++i)
            if (m.text(m.headers[i].name) == name) return std::string(m.text(m.headers[i].value));
        return "(absent)";
    }
    [[nodiscard]] std::string ruri_user() const
    {
        const message& m = outcome == rule_outcome::rewritten ? out : in;
        return std::string(m.ruri.user.in(m.raw));
    }
};

struct normalisation_case {
    const char* description;
    std::string input;  ///< the Request-URI's user part
    std::vector<std::pair<std::string, std::string>> rules;  ///< match, replace (in order)
    std::string expected;
};

class number_normalisation : public ::testing::TestWithParam<normalisation_case> {};

TEST_P(number_normalisation, rewrites_the_request_uri_user_as_the_rule_set_says)
{
    const normalisation_case& c = GetParam();
    std::vector<rule_spec> specs;
    for (const auto& [m, r] : c.rules) specs.push_back(number(rule_field::ruri, m, r));
    run r(specs);
    r.apply(invite(c.input));
    EXPECT_EQ(r.ruri_user(), c.expected);
    EXPECT_EQ(r.outcome, c.expected == c.input ? rule_outcome::unchanged : rule_outcome::rewritten);
    if (r.outcome == rule_outcome::rewritten) {
        EXPECT_EQ(r.out.first_error, error::none);
        EXPECT_EQ(r.out.text(r.out.body), body) << "the body goes on unchanged";
    }
}

const std::string national_uk = "^0([1-9][0-9]+)$";
const std::string international_prefix = "^00([1-9][0-9]+)$";

INSTANTIATE_TEST_SUITE_P(
    examples, number_normalisation,
    ::testing::Values(
        normalisation_case{"UK national number to E164", "02071234567", {{national_uk, "+44$1"}}, "+442071234567"},
        normalisation_case{"E164 number stays as it is", "+442071234567", {{national_uk, "+44$1"}}, "+442071234567"},
        normalisation_case{"international 00 prefix to plus", "0033142685300",
                           {{international_prefix, "+$1"}, {national_uk, "+44$1"}}, "+33142685300"},
        normalisation_case{"national rule after the international one does not see 00", "02071234567",
                           {{international_prefix, "+$1"}, {national_uk, "+44$1"}}, "+442071234567"},
        normalisation_case{"outside line prefix 9 stripped then normalised", "902071234567",
                           {{"^9(0[0-9]+)$", "$1"}, {national_uk, "+44$1"}}, "+442071234567"},
        normalisation_case{"prefix added to a 7 digit local number", "5550100",
                           {{"^([0-9]{7})$", "+1212$1"}}, "+12125550100"},
        normalisation_case{"carrier prefix added with braces", "442071234567",
                           {{"^(44[0-9]+)$", "1010${1}"}}, "1010442071234567"},
        normalisation_case{"unanchored pattern replaces only what matched", "ab123cd", {{"123", "456"}}, "ab456cd"},
        normalisation_case{"dollar written twice is a dollar", "77", {{"^77$", "$$77"}}, "$77"},
        normalisation_case{"whole match with $0", "123", {{"^[0-9]+$", "+$0"}}, "+123"},
        normalisation_case{"no match leaves the number", "alice", {{national_uk, "+44$1"}}, "alice"}),
    [](const ::testing::TestParamInfo<normalisation_case>& info) {
        std::string n = info.param.description;
        for (char& ch : n)
            if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
        return n;
    });

TEST(sip_rules, header_add_appends_the_header_with_its_variables_expanded)
{
    run r({header(rule_kind::header_add, "X-Origin", "${trunk_fqdn} via ${peer} for ${ruri}")});
    r.apply(invite("123"));
    ASSERT_EQ(r.outcome, rule_outcome::rewritten);
    EXPECT_EQ(r.header_value("X-Origin"), "sbc.example.net via carrier-1 for sip:123@198.18.0.1");
    EXPECT_EQ(r.out.headers[r.out.header_count - 1].name.in(r.out.raw), "X-Origin") << "added after the others";
    EXPECT_EQ(r.out.content_length, body.size());
    EXPECT_EQ(r.hits[0].get(), 1u);
}

TEST(sip_rules, a_rewritten_message_parses_as_its_text_does_whatever_moved)
{
    // Headers removed above and between the ones the proxy reads, several Vias on two lines,
    // compact and folded headers, the Request-URI and From rewritten (parsed anew) and the
    // rest copied (taken from the original's parse, moved): run::apply compares each field of
    // the result with a full parse of its text.
    const std::string msg =
        "INVITE sip:02071234567@198.18.0.1;user=phone SIP/2.0\r\n"
        "X-Drop: 1\r\n"
        "v: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-a;rport, SIP/2.0/TCP 198.18.0.3;branch=z9hG4bK-b\r\n"
        "Via: SIP/2.0/UDP 198.18.0.4:5062;received=198.18.0.9;branch=z9hG4bK-c\r\n"
        "X-Drop: 2\r\n"
        "f: \"Alice\" <sip:02079460000@198.18.0.2>;tag=a1\r\n"
        "t: <sip:bob@198.18.0.1>\r\n"
        "Subject: folded\r\n  over two lines\r\n"
        "i: c1\r\nCSeq: 7 INVITE\r\nMax-Forwards: 69\r\nExpires: 120\r\n"
        "Route: <sip:198.18.0.1;lr>\r\nRecord-Route: <sip:198.18.0.5;lr>\r\n"
        "m: <sip:alice@198.18.0.2:5060>\r\nc: application/sdp\r\n"
        "l: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    for (const std::vector<rule_spec>& specs :
         {std::vector<rule_spec>{header(rule_kind::header_remove, "X-Drop")},
          std::vector<rule_spec>{header(rule_kind::header_remove, "X-Drop"),
                                 number(rule_field::ruri, "^0(\\d+)$", "+44$1", true),
                                 number(rule_field::from, "^0(\\d+)$", "+44$1"),
                                 header(rule_kind::header_replace, "Subject", "one line"),
                                 header(rule_kind::header_add, "X-Sbc", "${trunk_fqdn}")},
          std::vector<rule_spec>{number(rule_field::to, "^bob$", "+15550100", true)}}) {
        run r(specs);
        r.apply(msg);
        ASSERT_EQ(r.outcome, rule_outcome::rewritten) << error_name(r.out.first_error) << "\n" << r.out.raw;
        EXPECT_EQ(r.out.h_via, specs.size() == 1 && specs[0].kind == rule_kind::number ? 1 : 0) << r.text;
    }
}

TEST(sip_rules, header_remove_takes_every_line_of_that_name_in_any_case)
{
    run r({header(rule_kind::header_remove, "user-agent")});
    r.apply(invite("123", "User-Agent: pbx 1\r\nX-Keep: yes\r\nUser-Agent: pbx 2\r\n"));
    ASSERT_EQ(r.outcome, rule_outcome::rewritten);
    EXPECT_EQ(r.text.find("User-Agent"), std::string::npos) << r.text;
    EXPECT_EQ(r.header_value("X-Keep"), "yes");
    EXPECT_EQ(r.hits[0].get(), 1u);
}

TEST(sip_rules, header_remove_of_a_known_header_takes_its_compact_form_too)
{
    run r({header(rule_kind::header_remove, "Subject")});
    r.apply(invite("123", "s: hello\r\n"));
    ASSERT_EQ(r.outcome, rule_outcome::rewritten);
    EXPECT_EQ(r.text.find("s: hello"), std::string::npos) << r.text;
}

TEST(sip_rules, header_replace_changes_the_value_and_adds_nothing_when_absent)
{
    run r({header(rule_kind::header_replace, "X-Tenant", "carrier")});
    r.apply(invite("123", "X-Tenant: secret-internal-name\r\n"));
    ASSERT_EQ(r.outcome, rule_outcome::rewritten);
    EXPECT_EQ(r.header_value("X-Tenant"), "carrier");
    EXPECT_EQ(r.text.find("secret-internal-name"), std::string::npos);

    run none({header(rule_kind::header_replace, "X-Tenant", "carrier")});
    none.apply(invite("123"));
    EXPECT_EQ(none.outcome, rule_outcome::unchanged);
    EXPECT_EQ(none.hits[0].get(), 0u) << "nothing to replace is not a hit";
}

TEST(sip_rules, header_rules_see_the_headers_added_before_them)
{
    run r({header(rule_kind::header_add, "X-A", "1"), header(rule_kind::header_replace, "X-A", "2"),
           header(rule_kind::header_add, "X-B", "3"), header(rule_kind::header_remove, "X-B")});
    r.apply(invite("123"));
    EXPECT_EQ(r.header_value("X-A"), "2");
    EXPECT_EQ(r.header_value("X-B"), "(absent)");
}

TEST(sip_rules, a_number_rule_on_from_sets_user_phone_inside_the_angle_brackets)
{
    run r({number(rule_field::from, national_uk, "+44$1", true)});
    r.apply(invite("123"));
    ASSERT_EQ(r.outcome, rule_outcome::rewritten);
    EXPECT_EQ(r.header_value("From"), "<sip:+442071234567@198.18.0.2;user=phone>;tag=a1");
    EXPECT_TRUE(r.out.from.has_tag);
}

TEST(sip_rules, user_phone_on_an_addr_spec_to_adds_angle_brackets_so_it_stays_a_uri_parameter)
{
    run r({number(rule_field::to, "^([0-9]+)$", "+1$1", true)});
    r.apply(invite("123", "", "<sip:a@198.18.0.2>;tag=a1", "sip:5550100@198.18.0.1"));
    EXPECT_EQ(r.header_value("To"), "<sip:+15550100@198.18.0.1;user=phone>");
}

TEST(sip_rules, user_phone_replaces_another_user_parameter_of_the_request_uri)
{
    run r({number(rule_field::ruri, national_uk, "+44$1", true)});
    const std::string m = invite("02071234567");
    std::string with_param = m;
    with_param.replace(with_param.find("@198.18.0.1 SIP"), 15, "@198.18.0.1;user=ip SIP");
    r.apply(with_param);
    EXPECT_EQ(r.text.substr(0, r.text.find("\r\n")), "INVITE sip:+442071234567@198.18.0.1;user=phone SIP/2.0");
}

TEST(sip_rules, a_number_rule_rewrites_p_asserted_identity_with_a_tel_uri)
{
    run r({number(rule_field::pai, national_uk, "+44$1")});
    r.apply(invite("123", "P-Asserted-Identity: <tel:02071234567;cpc=ordinary>\r\n"));
    EXPECT_EQ(r.header_value("P-Asserted-Identity"), "<tel:+442071234567;cpc=ordinary>");
    EXPECT_EQ(r.hits[0].get(), 1u);
}

TEST(sip_rules, a_rule_whose_field_is_absent_neither_runs_nor_counts)
{
    run r({number(rule_field::pai, ".*", "x")});
    r.apply(invite("123"));
    EXPECT_EQ(r.outcome, rule_outcome::unchanged);
    EXPECT_EQ(r.hits[0].get(), 0u);
    EXPECT_EQ(r.failures[0].get(), 0u);
}

TEST(sip_rules, a_result_longer_than_a_user_part_may_be_is_a_failure_of_that_rule_only)
{
    run r({number(rule_field::ruri, "^(.*)$", std::string(120, '9') + "$1"), number(rule_field::ruri, "^1", "+1")});
    r.apply(invite("123456789012"));
    EXPECT_EQ(r.failures[0].get(), 1u);
    EXPECT_EQ(r.hits[1].get(), 1u) << "the next rule still runs";
    EXPECT_EQ(r.ruri_user(), "+123456789012");
}

TEST(sip_rules, a_message_that_would_not_fit_is_left_unchanged)
{
    run r({header(rule_kind::header_add, "X-Long", std::string(200, 'x'))});
    const std::string m = invite("123");
    r.apply(m, m.size() + 50);
    EXPECT_EQ(r.outcome, rule_outcome::too_long);
    EXPECT_EQ(r.text, m);
    // As line edits the rules need only room for their own text (the editor checks the
    // whole message against its buffer); where even that is short, nothing changes either.
    run tight({header(rule_kind::header_add, "X-Long", std::string(200, 'x'))});
    tight.input = m;
    ASSERT_EQ(parse(tight.input, tight.in), error::none);
    const rule_set set{0, 1};
    rule_edits re;
    std::array<char, 100> small{};
    EXPECT_EQ(apply_rules_as_edits(tight.rt, {&set, 1}, tight.in, {"sbc.example.net", "carrier-1"}, tight.work,
                                   {tight.hits.data(), tight.failures.data()}, small, tight.out, re),
              rule_outcome::too_long);
    EXPECT_EQ(re.n, 0u);
}

TEST(sip_rules, a_message_no_rule_changed_is_not_copied)
{
    run r({number(rule_field::ruri, national_uk, "+44$1"), header(rule_kind::header_remove, "X-None")});
    r.apply(invite("+442071234567"));
    EXPECT_EQ(r.outcome, rule_outcome::unchanged);
    EXPECT_EQ(r.out.header_count, 0) << "the output message was never parsed";
}

struct refused_case {
    rule_spec spec;
    const char* key;
    const char* message_contains;
};

TEST(sip_rules, compile_refuses_bad_rules_naming_the_key)
{
    const std::vector<refused_case> cases{
        {number(rule_field::ruri, "^0([1-9]", "+44$1"), "match", "PCRE2"},
        {number(rule_field::ruri, "^0([1-9])$", "+44$2"), "replace", "names group $2"},
        {number(rule_field::ruri, "^0$", "+44$"), "replace", "$$"},
        {number(rule_field::ruri, "(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)(l)(m)(n)(o)(p)", "$1"), "match", "capture groups"},
        {header(rule_kind::header_add, "X Bad", "v"), "header", "header name"},
        {header(rule_kind::header_remove, "Via"), "header", "managed by the proxy"},
        {header(rule_kind::header_remove, "f"), "header", "managed by the proxy"},
        {header(rule_kind::header_add, "X-A", "${nope}"), "value", "unknown variable"},
        {header(rule_kind::header_add, "X-A", "a\r\nVia: x"), "value", "one line"},
        {header(rule_kind::header_add, "X-A", std::string(300, 'v')), "value", "at most 256"},
    };
    for (const refused_case& c : cases) {
        rule r;
        auto err = compile_rule(c.spec, r);
        ASSERT_TRUE(err) << c.message_contains;
        EXPECT_EQ(err->key, c.key) << err->message;
        EXPECT_NE(err->message.find(c.message_contains), std::string::npos) << err->message;
    }
}

}  // namespace
