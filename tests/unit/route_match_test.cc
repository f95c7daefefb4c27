// Unit tests of route matching with Hyperscan: the lowest matching route wins across fields,
// each route looks only at its own field, anchors mean what they say, a bad pattern names its
// route, empty values, and every worker's scratch works on its own.
#include "sip-fastpath/route_match.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace sbc::sip {
namespace {

route r(std::string name, match_field f, std::string pattern)
{
    route x;
    x.name = std::move(name);
    x.field = f;
    x.pattern = std::move(pattern);
    return x;
}

using values = std::array<std::string_view, match_field_count>;

values ruri(std::string_view user) { return values{user, "", "", ""}; }

std::shared_ptr<route_matcher> compiled(const std::vector<route>& routes, unsigned workers = 1)
{
    std::string error;
    auto m = route_matcher::compile(routes, workers, error);
    EXPECT_TRUE(m) << error;
    EXPECT_TRUE(error.empty()) << error;
    return m;
}

TEST(route_match, the_first_route_in_file_order_wins_when_several_match)
{
    auto m = compiled({r("uk-mobile", match_field::ruri_user, "^\\+447"), r("uk", match_field::ruri_user, "^\\+44"),
                       r("all", match_field::ruri_user, ".*")});
    ASSERT_TRUE(m);
    EXPECT_EQ(m->match(0, ruri("+447700900123")), 0);
    EXPECT_EQ(m->match(0, ruri("+442079460000")), 1);
    EXPECT_EQ(m->match(0, ruri("+15550100")), 2);
}

TEST(route_match, a_later_route_does_not_win_because_its_match_ends_earlier)
{
    // Hyperscan reports "^1" at offset 1, long before "5$" at the end: the index decides.
    auto m = compiled({r("ends-in-5", match_field::ruri_user, "5$"), r("starts-with-1", match_field::ruri_user, "^1")});
    ASSERT_TRUE(m);
    EXPECT_EQ(m->match(0, ruri("12345")), 0);
    EXPECT_EQ(m->match(0, ruri("12346")), 1);
}

TEST(route_match, the_lowest_index_wins_across_fields)
{
    auto m = compiled({r("from-ops", match_field::from_user, "^ops"), r("trunk-b", match_field::trunk, "^carrier-b$"),
                       r("to-9", match_field::to_user, "^9")});
    ASSERT_TRUE(m);
    EXPECT_EQ(m->match(0, values{"x", "ops1", "9", "carrier-b"}), 0);
    EXPECT_EQ(m->match(0, values{"x", "alice", "9", "carrier-b"}), 1);
    EXPECT_EQ(m->match(0, values{"x", "alice", "9", "carrier-a"}), 2);
    EXPECT_EQ(m->match(0, values{"x", "alice", "8", "carrier-a"}), -1);
}

TEST(route_match, each_route_looks_only_at_its_own_field)
{
    auto m = compiled({r("ruri", match_field::ruri_user, "^100$"), r("from", match_field::from_user, "^200$"),
                       r("to", match_field::to_user, "^300$"), r("trunk", match_field::trunk, "^t1$")});
    ASSERT_TRUE(m);
    EXPECT_EQ(m->patterns(match_field::ruri_user), 1u);
    EXPECT_EQ(m->patterns(match_field::trunk), 1u);
    EXPECT_EQ(m->match(0, values{"100", "", "", ""}), 0);
    EXPECT_EQ(m->match(0, values{"", "100", "100", "100"}), -1);
    EXPECT_EQ(m->match(0, values{"200", "200", "", ""}), 1);
    EXPECT_EQ(m->match(0, values{"300", "", "300", ""}), 2);
    EXPECT_EQ(m->match(0, values{"t1", "t1", "t1", "t1"}), 3);
    EXPECT_EQ(m->match(0, values{"", "", "", "t2"}), -1);
}

TEST(route_match, patterns_match_anywhere_unless_anchored)
{
    auto m = compiled({r("exact", match_field::ruri_user, "^5551$"), r("prefix", match_field::ruri_user, "^777"),
                       r("suffix", match_field::ruri_user, "999$"), r("inside", match_field::ruri_user, "42")});
    ASSERT_TRUE(m);
    EXPECT_EQ(m->match(0, ruri("5551")), 0);
    EXPECT_EQ(m->match(0, ruri("55512")), -1);
    EXPECT_EQ(m->match(0, ruri("15551")), -1);
    EXPECT_EQ(m->match(0, ruri("7771")), 1);
    EXPECT_EQ(m->match(0, ruri("1777")), -1);
    EXPECT_EQ(m->match(0, ruri("1999")), 2);
    EXPECT_EQ(m->match(0, ruri("9991")), -1);
    EXPECT_EQ(m->match(0, ruri("1421")), 3);
}

TEST(route_match, a_value_is_scanned_by_its_length_not_up_to_a_nul)
{
    auto m = compiled({r("exact", match_field::ruri_user, "^123$")});
    ASSERT_TRUE(m);
    const std::string buf = "12345";
    EXPECT_EQ(m->match(0, ruri(std::string_view(buf).substr(0, 3))), 0);
    EXPECT_EQ(m->match(0, ruri(std::string_view(buf).substr(1, 3))), -1);
}

TEST(route_match, a_bad_pattern_is_an_error_naming_the_route_and_hyperscans_reason)
{
    std::string error;
    auto m = route_matcher::compile({r("good", match_field::ruri_user, "^1"), r("broken", match_field::from_user, "^(12"),
                                     r("also-good", match_field::from_user, "^3")},
                                    2, error);
    EXPECT_FALSE(m);
    EXPECT_NE(error.find("route 1 \"broken\""), std::string::npos) << error;
    EXPECT_NE(error.find("\"^(12\""), std::string::npos) << error;
    EXPECT_NE(error.find("parenthes"), std::string::npos) << error;  // Hyperscan: "Missing close parenthesis ..."
}

TEST(route_match, a_backreference_hyperscan_does_not_support_is_an_error_too)
{
    std::string error;
    auto m = route_matcher::compile({r("backref", match_field::ruri_user, "(a)\\1")}, 1, error);
    EXPECT_FALSE(m);
    EXPECT_NE(error.find("\"backref\""), std::string::npos) << error;
}

TEST(route_match, empty_values_match_only_patterns_that_accept_the_empty_string)
{
    auto m = compiled({r("digits", match_field::ruri_user, "^[0-9]+$"), r("nothing", match_field::ruri_user, "^$"),
                       r("anything", match_field::ruri_user, ".*")});
    ASSERT_TRUE(m);
    EXPECT_EQ(m->match(0, ruri("")), 1);
    EXPECT_EQ(m->match(0, ruri("12")), 0);
    EXPECT_EQ(m->match(0, ruri("bob")), 2);

    auto any = compiled({r("anything", match_field::to_user, ".*")});
    ASSERT_TRUE(any);
    EXPECT_EQ(any->match(0, values{"", "", "", ""}), 0);
}

TEST(route_match, routes_with_an_empty_pattern_are_left_out_and_never_match)
{
    auto m = compiled({r("default", match_field::ruri_user, ""), r("ones", match_field::ruri_user, "^1")});
    ASSERT_TRUE(m);
    EXPECT_EQ(m->patterns(match_field::ruri_user), 1u);
    EXPECT_EQ(m->match(0, ruri("")), -1);
    EXPECT_EQ(m->match(0, ruri("2")), -1);
    EXPECT_EQ(m->match(0, ruri("1")), 1);
}

TEST(route_match, no_routes_compile_to_a_matcher_that_matches_nothing)
{
    auto m = compiled({}, 3);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->workers(), 3u);
    EXPECT_EQ(m->match(2, ruri("1")), -1);
}

TEST(route_match, a_worker_index_out_of_range_matches_nothing)
{
    auto m = compiled({r("all", match_field::ruri_user, ".*")}, 2);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->match(1, ruri("x")), 0);
    EXPECT_EQ(m->match(2, ruri("x")), -1);
}

TEST(route_match, many_workers_match_at_once_each_with_its_own_scratch)
{
    constexpr unsigned workers = 16;
    std::vector<route> routes;
    for (int i = 0; i < 50; ++i) routes.push_back(r("p" + std::to_string(i), match_field::ruri_user, "^" + std::to_string(i) + "-"));
    routes.push_back(r("from-x", match_field::from_user, "x"));
    auto m = compiled(routes, workers);
    ASSERT_TRUE(m);
    ASSERT_EQ(m->workers(), workers);
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (unsigned w = 0; w < workers; ++w)
        threads.emplace_back([&, w] {
            for (int n = 0; n < 2000; ++n) {
                const int want = static_cast<int>((w * 7 + static_cast<unsigned>(n)) % 50);
                const std::string user = std::to_string(want) + "-" + std::to_string(n);
                if (m->match(w, values{user, "alice", "", ""}) != want) ++wrong;
                if (m->match(w, values{"none", "xavier", "", ""}) != 50) ++wrong;
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace sbc::sip
