// The node's deny list (control/deny_list.h) and `sbcctl deny` (control/deny_text.h): expiry,
// trusted sources never denied, operator updates, the request sbcctl sends. Unit tier.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "control/deny_list.h"
#include "control/deny_text.h"

namespace sbc::control {
namespace {

using dataplane::deny_reason;

const ip_address a = ip_address::v4(0xc6120005u);  // 198.18.0.5
const ip_address b = ip_address::v4(0xc6120006u);

TEST(deny_list, an_entry_lasts_its_time_and_then_expires)
{
    deny_list l;
    EXPECT_EQ(l.add(a, deny_reason::rate, "worker 0", 300, false, 1000, 1'700'000'000), deny_outcome::added);
    const deny_entry& e = l.entries().at(a);
    EXPECT_EQ(e.until_ms, 301'000u);
    EXPECT_EQ(e.until_unix, 1'700'000'300);
    EXPECT_TRUE(l.expire(300'999).empty());
    const auto gone = l.expire(301'000);
    ASSERT_EQ(gone.size(), 1u);
    EXPECT_EQ(gone[0].addr, a);
    EXPECT_TRUE(l.entries().empty());
    EXPECT_EQ(l.expired(), 1u);
    EXPECT_EQ(l.denials()[static_cast<std::size_t>(deny_reason::rate)], 1u);
}

TEST(deny_list, is_bounded_and_counts_the_denials_it_refuses_when_full)
{
    deny_list l;
    for (uint32_t i = 0; i < deny_list::max_entries; ++i)
        ASSERT_EQ(l.add(ip_address::v4(0xc6130000u + i), deny_reason::scanner, "", 300, false, 0, 0), deny_outcome::added);
    const ip_address more = ip_address::v4(0xc6140001u);
    EXPECT_EQ(l.add(more, deny_reason::rate, "", 300, false, 0, 0), deny_outcome::refused_full);
    EXPECT_EQ(l.add(more, deny_reason::by_operator, "", 300, false, 0, 0), deny_outcome::refused_full);
    EXPECT_EQ(l.refused_full(), 2u);
    EXPECT_EQ(l.entries().size(), deny_list::max_entries);
    EXPECT_EQ(l.add(ip_address::v4(0xc6130000u), deny_reason::by_operator, "x", 60, false, 0, 0), deny_outcome::updated)
        << "a source already denied is still updated";
    ASSERT_TRUE(l.remove(ip_address::v4(0xc6130000u)));
    EXPECT_EQ(l.add(more, deny_reason::rate, "", 300, false, 0, 0), deny_outcome::added) << "room again";
}

TEST(deny_list, a_trusted_source_is_never_denied_and_reports_about_it_are_counted)
{
    deny_list l;
    EXPECT_EQ(l.add(a, deny_reason::rate, "", 300, true, 0, 0), deny_outcome::refused_trusted);
    EXPECT_EQ(l.add(a, deny_reason::malformed, "", 300, true, 0, 0), deny_outcome::refused_trusted);
    EXPECT_EQ(l.add(a, deny_reason::by_operator, "", 300, true, 0, 0), deny_outcome::refused_trusted);
    EXPECT_TRUE(l.entries().empty());
    EXPECT_EQ(l.ignored_trusted(), 2u);  // the operator's refusal is an answer, not a report
}

TEST(deny_list, a_second_report_keeps_the_first_denial_the_operator_replaces_it)
{
    deny_list l;
    l.add(a, deny_reason::rate, "worker 0", 300, false, 0, 100);
    EXPECT_EQ(l.add(a, deny_reason::malformed, "worker 1", 300, false, 5000, 105), deny_outcome::updated);
    EXPECT_EQ(l.entries().at(a).reason, deny_reason::rate);
    EXPECT_EQ(l.entries().at(a).until_ms, 300'000u);
    EXPECT_EQ(l.add(a, deny_reason::by_operator, "abuse ticket 7", 60, false, 5000, 105), deny_outcome::updated);
    EXPECT_EQ(l.entries().at(a).reason, deny_reason::by_operator);
    EXPECT_EQ(l.entries().at(a).note, "abuse ticket 7");
    EXPECT_EQ(l.entries().at(a).until_ms, 65'000u);
    EXPECT_EQ(l.denials()[static_cast<std::size_t>(deny_reason::rate)], 1u);
}

TEST(deny_list, remove_ends_a_denial_and_sources_trusted_after_a_reload_leave)
{
    deny_list l;
    l.add(a, deny_reason::rate, "", 300, false, 0, 0);
    l.add(b, deny_reason::scanner, "", 300, false, 0, 0);
    EXPECT_TRUE(l.remove(a));
    EXPECT_FALSE(l.remove(a));
    l.add(a, deny_reason::rate, "", 300, false, 0, 0);
    const auto gone = l.drop_trusted([](const ip_address& x) { return x == b; });
    ASSERT_EQ(gone.size(), 1u);
    EXPECT_EQ(gone[0].addr, b);
    EXPECT_EQ(l.addresses(), std::vector<ip_address>{a});
}

TEST(deny_list, lists_each_entry_with_why_since_until_and_seconds_left)
{
    deny_list l;
    l.add(a, deny_reason::by_operator, "ticket 7", 60, false, 1000, 1'700'000'000);
    const auto j = deny_json(l, 31'000);
    ASSERT_EQ(j["denied"].size(), 1u);
    EXPECT_EQ(j["denied"][0]["address"], "198.18.0.5");
    EXPECT_EQ(j["denied"][0]["reason"], "operator");
    EXPECT_EQ(j["denied"][0]["since"], 1'700'000'000);
    EXPECT_EQ(j["denied"][0]["until"], 1'700'000'060);
    EXPECT_EQ(j["denied"][0]["seconds_left"], 30);
    const std::string text = render_deny_text(j);
    EXPECT_NE(text.find("198.18.0.5"), std::string::npos);
    EXPECT_NE(text.find("operator"), std::string::npos);
    EXPECT_NE(text.find("2023-11-14T22:14:20Z"), std::string::npos);  // until
    EXPECT_NE(text.find("30s"), std::string::npos);
    EXPECT_NE(text.find("ticket 7"), std::string::npos);
    EXPECT_EQ(render_deny_text(deny_json(deny_list{}, 0)), "no source denied\n");
}

TEST(deny_command, builds_the_request_sbcctl_sends_and_refuses_bad_arguments)
{
    std::string err;
    auto r = deny_request(std::vector<std::string>{"add", "198.18.0.9", "--seconds", "60", "--reason", "scan"}, err);
    ASSERT_TRUE(r) << err;
    EXPECT_EQ((*r)["cmd"], "deny");
    EXPECT_EQ((*r)["action"], "add");
    EXPECT_EQ((*r)["address"], "198.18.0.9");
    EXPECT_EQ((*r)["seconds"], 60);
    EXPECT_EQ((*r)["reason"], "scan");
    r = deny_request(std::vector<std::string>{}, err);
    ASSERT_TRUE(r);
    EXPECT_EQ((*r)["action"], "list");
    r = deny_request(std::vector<std::string>{"remove", "198.18.0.9"}, err);
    ASSERT_TRUE(r);
    EXPECT_EQ((*r)["address"], "198.18.0.9");
    EXPECT_FALSE(deny_request(std::vector<std::string>{"add"}, err));
    EXPECT_NE(err.find("takes an address"), std::string::npos);
    EXPECT_FALSE(deny_request(std::vector<std::string>{"add", "198.18.0.9", "--seconds", "0"}, err));
    EXPECT_FALSE(deny_request(std::vector<std::string>{"add", "198.18.0.9", "--seconds"}, err));
    EXPECT_FALSE(deny_request(std::vector<std::string>{"block", "198.18.0.9"}, err));
    EXPECT_FALSE(deny_request(std::vector<std::string>{"remove", "198.18.0.9", "--seconds", "5"}, err));
}

}  // namespace
}  // namespace sbc::control
