// Unit tests of scanner signatures and of the overload arithmetic: the shipped list catches
// what SIPVicious really sends (svmap's OPTIONS, svwar's REGISTER and INVITE, captured from
// Debian's sipvicious 0.3) and none of the User-Agents of ordinary SIP equipment; the
// operator's patterns match their field only; a pattern Hyperscan refuses is refused with its
// message; the reduction a worker asks for grows from its thresholds to 100 %, the shed credit
// refuses that share of requests evenly, and the busy window measures the recent share only.
#include <gtest/gtest.h>

#include <string>

#include "dataplane/overload.h"
#include "sip-fastpath/overload_shed.h"
#include "sip-fastpath/scanner_match.h"
#include "sip-fastpath/sip_message.h"

using namespace sbc::sip;

namespace {

// What `svmap 127.0.0.1 -p 15063` sent (one datagram).
const std::string svmap_options =
    "OPTIONS sip:100@127.0.0.1 SIP/2.0\r\n"
    "Via: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bK-1130910960;rport\r\n"
    "Max-Forwards: 70\r\n"
    "To: \"sipvicious\"<sip:100@1.1.1.1>\r\n"
    "From: \"sipvicious\"<sip:100@1.1.1.1>;tag=3766303030303031336164370133333738303935373238\r\n"
    "User-Agent: friendly-scanner\r\n"
    "Call-ID: 231359503165934606036116\r\n"
    "Contact: sip:100@127.0.0.1:5060\r\n"
    "CSeq: 1 OPTIONS\r\n"
    "Accept: application/sdp\r\n"
    "Content-Length: 0\r\n\r\n";

// What `svwar -e100-101 127.0.0.1 -p 15061` sent first (its default method).
const std::string svwar_register =
    "REGISTER sip:127.0.0.1 SIP/2.0\r\n"
    "Via: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bK-406876045;rport\r\n"
    "Max-Forwards: 70\r\n"
    "To: \"3272114619\"<sip:3272114619@127.0.0.1>\r\n"
    "From: \"3272114619\"<sip:3272114619@127.0.0.1>;tag=333237323131343631390132333632353235313732\r\n"
    "User-Agent: friendly-scanner\r\n"
    "Call-ID: 56164816\r\n"
    "Contact: sip:3272114619@127.0.0.1\r\n"
    "CSeq: 1 REGISTER\r\n"
    "Accept: application/sdp\r\n"
    "Content-Length: 0\r\n\r\n";

// What `svwar -e100-101 -m INVITE 127.0.0.1 -p 15062` sent first.
const std::string svwar_invite =
    "INVITE sip:3153748033@127.0.0.1 SIP/2.0\r\n"
    "Via: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bK-4089565996;rport\r\n"
    "Max-Forwards: 70\r\n"
    "To: \"3153748033\"<sip:3153748033@127.0.0.1>\r\n"
    "From: \"3153748033\"<sip:3153748033@127.0.0.1>;tag=333135333734383033330132383536333532303634\r\n"
    "User-Agent: friendly-scanner\r\n"
    "Call-ID: 2324463493\r\n"
    "Contact: sip:3153748033@127.0.0.1\r\n"
    "CSeq: 1 INVITE\r\n"
    "Accept: application/sdp\r\n"
    "Content-Length: 0\r\n\r\n";

std::shared_ptr<scanner_matcher> shipped(std::vector<scanner_pattern> extra = {}, bool defaults = true)
{
    std::string error;
    auto m = scanner_matcher::compile(scanner_matcher::with_defaults(defaults, std::move(extra)), {}, 2, error);
    EXPECT_TRUE(m) << error;
    return m;
}

scanner_hit match_text(const scanner_matcher& m, const std::string& text, unsigned worker = 0)
{
    auto msg = std::make_unique<message>();
    EXPECT_EQ(parse(text, *msg), error::none) << text;
    return m.match(worker, *msg);
}

}  // namespace

TEST(scanner_match, the_shipped_list_catches_svmap_options_and_svwar_register_and_invite)
{
    auto m = shipped();
    ASSERT_TRUE(m);
    for (const std::string* text : {&svmap_options, &svwar_register, &svwar_invite}) {
        const scanner_hit hit = match_text(*m, *text);
        EXPECT_TRUE(hit.matched) << *text;
        EXPECT_EQ(hit.field, scanner_field::user_agent) << "User-Agent is scanned first";
        EXPECT_TRUE(hit.builtin);
    }
    EXPECT_TRUE(match_text(*m, svmap_options, 1).matched) << "every worker has its scratch";
}

TEST(scanner_match, svmap_is_caught_by_its_from_name_when_it_changes_its_user_agent)
{
    auto m = shipped();
    std::string other_ua = svmap_options;
    other_ua.replace(other_ua.find("friendly-scanner"), 16, "Linphone/5.2.0  ");
    const scanner_hit hit = match_text(*m, other_ua);
    EXPECT_TRUE(hit.matched);
    EXPECT_EQ(hit.field, scanner_field::from);
}

TEST(scanner_match, every_shipped_signature_matches_its_tool_in_any_case)
{
    auto m = shipped();
    for (const char* ua : {"friendly-scanner", "FRIENDLY-SCANNER", "sipvicious 0.3.4", "sipcli/v1.8", "VaxSIPUserAgent/3.1",
                           "VaxIPUserAgent/3.0", "sundayddr", "iWar", "SIVuS 1.09", "smap 0.6.0", "SIPScan", "sip-scan",
                           "Gulp", "siparmyknife", "pplsip", "Nmap NSE", "friendly-request"})
        EXPECT_TRUE(m->match(0, ua, {}, {}).matched) << ua;
}

TEST(scanner_match, ordinary_user_agents_are_never_matched)
{
    auto m = shipped();
    for (const char* ua :
         {"SIPp", "sipp/3.6.1", "Kamailio (5.6.3 (x86_64/linux))", "Asterisk PBX 18.10.0", "Cisco-SIPGateway/IOS-15.x",
          "FreeSWITCH-mod_sofia/1.10.9", "Linphone/5.2.0 (belle-sip/5.2.0)", "Zoiper rv2.10.19", "X-Lite release 5.8",
          "MicroSIP/3.21.3", "Bria 6 release 6.5", "Yealink SIP-T46S 66.86.0.15", "PolycomVVX-VVX_411-UA/6.4.3",
          "Grandstream GXP2170 1.0.11", "Oracle ESBC", "Ribbon SBC", "OpenSIPS (3.4.0 (x86_64/linux))", "sbc-sipcheck",
          "Sipwise NGCP Proxy", "Audiocodes-Sip-Gateway-Mediant 800/v.7.20A"})
        EXPECT_FALSE(m->match(0, ua, "<sip:+15550100@198.18.0.2>;tag=a", "<sip:+4420@198.18.0.1>").matched) << ua;
}

TEST(scanner_match, the_operators_patterns_match_their_own_field_only)
{
    auto m = shipped({{scanner_field::user_agent, "^badtool/", false},
                      {scanner_field::from, "<sip:evil@", false},
                      {scanner_field::to, "^\"?honeypot", false}});
    ASSERT_TRUE(m);
    EXPECT_EQ(m->patterns(scanner_field::user_agent), 16u);  // 15 shipped + 1
    scanner_hit hit = m->match(0, "BadTool/1.0", {}, {});
    EXPECT_TRUE(hit.matched);
    EXPECT_FALSE(hit.builtin);
    hit = m->match(0, "SIPp", "<sip:evil@198.18.9.9>;tag=x", {});
    EXPECT_TRUE(hit.matched);
    EXPECT_EQ(hit.field, scanner_field::from);
    EXPECT_FALSE(hit.builtin);
    hit = m->match(0, "SIPp", {}, "\"honeypot\" <sip:1@198.18.0.1>");
    EXPECT_EQ(hit.field, scanner_field::to);
    EXPECT_FALSE(m->match(0, "<sip:evil@198.18.9.9>", "honeypot", "badtool/").matched)
        << "a pattern looks at its field, never at the others";
}

TEST(scanner_match, without_the_shipped_list_only_the_operators_patterns_apply)
{
    auto m = shipped({{scanner_field::user_agent, "^badtool", false}}, false);
    EXPECT_FALSE(m->match(0, "friendly-scanner", "\"sipvicious\"<sip:100@1.1.1.1>", {}).matched);
    EXPECT_TRUE(m->match(0, "badtool", {}, {}).matched);
}

TEST(scanner_match, a_pattern_hyperscan_refuses_is_refused_with_its_message)
{
    std::string error;
    EXPECT_FALSE(scanner_matcher::check("friendly-(scanner", error));
    EXPECT_NE(error.find("parenthes"), std::string::npos) << error;  // Hyperscan: "Missing close parenthesis ..."
    error.clear();
    EXPECT_TRUE(scanner_matcher::check("^badtool/[0-9]+", error)) << error;
    auto m = scanner_matcher::compile({{scanner_field::to, "a(b", false}}, {}, 1, error);
    EXPECT_FALSE(m);
    EXPECT_NE(error.find("pattern \"a(b\" on to does not compile"), std::string::npos) << error;
}

TEST(shed_shares, untrusted_sources_are_shed_first_and_trusted_ones_only_past_half)
{
    struct row { uint8_t reduction, untrusted, trusted; };
    for (const row r : {row{0, 0, 0}, row{1, 2, 0}, row{25, 50, 0}, row{50, 100, 0}, row{51, 100, 2}, row{75, 100, 50},
                        row{100, 100, 100}, row{200, 100, 100}}) {
        const shed_share s = shed_shares(r.reduction);
        EXPECT_EQ(s.untrusted, r.untrusted) << int{r.reduction};
        EXPECT_EQ(s.trusted, r.trusted) << int{r.reduction};
    }
}

TEST(overload_reduction, grows_from_each_threshold_to_all_at_a_full_worker_or_ring)
{
    overload_policy p;  // busy 90 %, rings 75 %
    EXPECT_EQ(overload_reduction(p, 899, 10), 0);
    EXPECT_EQ(overload_reduction(p, 900, 75), 0) << "at a threshold: not yet";
    EXPECT_EQ(overload_reduction(p, 901, 0), 1) << "just past it: some";
    EXPECT_EQ(overload_reduction(p, 950, 0), 50);
    EXPECT_EQ(overload_reduction(p, 1000, 0), 100);
    EXPECT_EQ(overload_reduction(p, 0, 80), 20);
    EXPECT_EQ(overload_reduction(p, 950, 90), 60) << "the larger of the two";
    EXPECT_EQ(overload_reduction(p, 0, 100), 100);
    p.busy_percent = 100;
    EXPECT_EQ(overload_reduction(p, 1000, 0), 0) << "busy_percent 100: never by busy time";
    p.enabled = false;
    EXPECT_EQ(overload_reduction(p, 1000, 100), 0);
}

TEST(shed_credit, refuses_the_share_it_is_given_evenly)
{
    shed_credit c;
    int refused = 0;
    for (int i = 0; i < 100; ++i) refused += c.refuse(30) ? 1 : 0;
    EXPECT_EQ(refused, 30);
    for (int i = 0; i < 10; ++i) EXPECT_TRUE(c.refuse(100));
    EXPECT_FALSE(c.refuse(0));
    EXPECT_FALSE(c.refuse(50)) << "back from 0, half: every second one";
    EXPECT_TRUE(c.refuse(50));
}

TEST(busy_window, measures_the_share_of_the_last_samples_only)
{
    sbc::dataplane::busy_window w;
    uint64_t busy = 0, total = 0;
    EXPECT_EQ(w.push(busy, total), 0u);
    for (std::size_t i = 0; i < sbc::dataplane::busy_window::slots; ++i) {  // a full window 95 % busy
        busy += 95;
        total += 100;
        w.push(busy, total);
    }
    EXPECT_EQ(w.push(busy += 95, total += 100), 950u);
    for (std::size_t i = 0; i < sbc::dataplane::busy_window::slots; ++i) w.push(busy += 10, total += 100);
    EXPECT_EQ(w.push(busy += 10, total += 100), 100u) << "the busy past has left the window";
    // The loop folds its counters every 64 iterations: none folded for a whole window (a loop
    // stuck in long iterations) leaves the last share standing, never a division by zero.
    for (std::size_t i = 0; i <= sbc::dataplane::busy_window::slots; ++i) w.push(busy, total);
    EXPECT_EQ(w.push(busy, total), 100u);
    EXPECT_EQ(w.push(0, 0), 0u) << "counts that went back (a new runtime) start a new window";
    EXPECT_EQ(w.push(50, 100), 500u);
}
