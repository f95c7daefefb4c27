// Unit tests of canary peers: the Hyperscan canary matcher (which canaries a call matches), peer
// selection with canaries (a canary never gets a call that does not match, and gets every
// matching one it can), the proxy sending INVITEs by their From user, and the control core's
// registry (bad patterns refused with the reason, health bits set, canaries kept across
// snapshots and dropped with their peer).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "control/canary.h"
#include "sip-fastpath/canary_match.h"
#include "sip-fastpath/peer_select.h"
#include "sip-fastpath/proxy.h"

using namespace sbc::sip;
using sbc::endpoint;
using sbc::ip_address;
using sbc::ip_prefix;
using sbc::control::canary_registry;

namespace {

std::array<std::string_view, match_field_count> fields(std::string_view ruri, std::string_view from, std::string_view to)
{
    return {ruri, from, to, {}};
}

/// One region of three peers, p0 first by priority, p2 the would-be canary (last by priority).
std::shared_ptr<proxy_tables> region_of_three()
{
    auto t = std::make_shared<proxy_tables>();
    t->regions.resize(1);
    t->regions[0].name = "region1";
    for (uint32_t i = 0; i < 3; ++i) {
        peer p;
        p.id = i;
        p.name = "region1/198.18.1." + std::to_string(11 + i) + ":5060";
        p.address = ip_address::v4((198u << 24) | (18u << 16) | (1u << 8) | (11 + i));
        p.priority = static_cast<uint16_t>(10 * (i + 1));
        p.weight = 10;
        t->regions[0].peers.push_back(i);
        t->peers.push_back(p);
    }
    t->index_peers();
    return t;
}

}  // namespace

TEST(canary_match, a_call_matches_the_canaries_whose_field_matches)
{
    std::string error;
    auto m = canary_matcher::compile({{3, match_field::from_user, "^\\+15550100"}, {7, match_field::ruri_user, "^911$"}},
                                     1, error);
    ASSERT_TRUE(m) << error;
    EXPECT_EQ(m->match(0, fields("+4930123", "+15550100", "+4930123")), uint64_t{1} << 3);
    EXPECT_EQ(m->match(0, fields("911", "+15550100", "")), (uint64_t{1} << 3) | (uint64_t{1} << 7));
    EXPECT_EQ(m->match(0, fields("+15550100", "alice", "+15550100")), 0u) << "from: looks at From only";
    EXPECT_EQ(m->match(0, fields("", "", "")), 0u);
}

TEST(canary_match, a_pattern_that_does_not_compile_is_refused_with_the_reason)
{
    std::string error;
    EXPECT_FALSE(canary_matcher::compile({{0, match_field::to_user, "^(+1555"}}, 1, error));
    EXPECT_NE(error.find("^(+1555"), std::string::npos) << error;
    EXPECT_NE(error.find("on to"), std::string::npos) << error;
}

TEST(canary_select, a_canary_never_gets_a_call_that_does_not_match)
{
    auto t = region_of_three();
    t->peers[2].canary = 5;
    auto h = std::make_unique<peer_health>();
    h->word[2].store(peer_state::canary);
    select_state st;
    std::map<uint32_t, int> c;
    for (int i = 0; i < 2000; ++i) {
        h->word[0].store(i % 2 ? peer_state::down : 0);  // even with the best peer down half the time
        ++c[select_peer(*t, *h, {.region = 0, .sel = selector::srv, .canary_mask = uint64_t{1} << 4}, st)];
    }
    EXPECT_EQ(c[2], 0);
    EXPECT_EQ(c[0], 1000);
    EXPECT_EQ(c[1], 1000);
    h->word[0].store(peer_state::down);
    h->word[1].store(peer_state::down);
    EXPECT_EQ(select_peer(*t, *h, {.region = 0, .sel = selector::srv}, st), no_peer)
        << "not even when it is the last one up";
    EXPECT_EQ(select_peer(*t, *h, {.region = 0, .sel = selector::srv, .ignore_down = true}, st), 0u)
        << "the last resort skips it too";
}

TEST(canary_select, every_matching_call_goes_to_the_canary_while_it_is_up)
{
    auto t = region_of_three();
    t->peers[2].canary = 5;
    auto h = std::make_unique<peer_health>();
    h->word[2].store(peer_state::canary);
    select_state st;
    for (int i = 0; i < 100; ++i)
        EXPECT_EQ(select_peer(*t, *h, {.region = 0, .sel = selector::srv, .canary_mask = uint64_t{1} << 5}, st), 2u);
    const uint32_t tried[] = {2};
    EXPECT_EQ(
        select_peer(*t, *h, {.region = 0, .sel = selector::srv, .tried = tried, .canary_mask = uint64_t{1} << 5}, st),
        0u)
        << "once the canary failed, the retry goes to the normal rotation";
    h->word[2].store(peer_state::canary | peer_state::draining);
    EXPECT_EQ(select_peer(*t, *h, {.region = 0, .sel = selector::srv, .canary_mask = uint64_t{1} << 5}, st), 0u)
        << "a drained canary gets nothing";
    h->word[2].store(0);
    for (int i = 0; i < 100; ++i)
        EXPECT_EQ(select_peer(*t, *h, {.region = 0, .sel = selector::srv}, st), 0u)
            << "promoted (bit cleared): in rotation by its priority";
}

TEST(canary_proxy, invites_go_to_the_canary_by_their_from_user)
{
    auto t = region_of_three();
    trunk tr;
    tr.name = "carrier";
    tr.address = ip_address::v4((198u << 24) | (18u << 16) | 1);
    tr.port = 5060;
    tr.allow = {ip_prefix{ip_address::v4((198u << 24) | (18u << 16)), 16}};
    t->trunks.push_back(tr);
    t->groups.push_back({"cloud", {0}, selector::srv});
    t->routes.push_back({"default", match_field::ruri_user, "", 0});
    t->default_route = 0;
    for (uint16_t c : {408, 503, 504}) t->retry.codes.set(c);
    t->peers[2].canary = 0;
    std::string error;
    auto m = canary_matcher::compile({{0, match_field::from_user, "^\\+15550100"}}, 1, error);
    ASSERT_TRUE(m) << error;
    t->canaries = m;
    auto h = std::make_unique<peer_health>();
    h->word[2].store(peer_state::canary);
    proxy px{0, 64, 64, 7};
    auto out = std::make_unique<outbox>();
    const endpoint sbc = tr.local(), caller = endpoint::udp4((198u << 24) | (18u << 16) | 2, 5060);
    auto invite_from = [&](const std::string& user, int n) {
        const std::string msg = "INVITE sip:1000@198.18.0.1 SIP/2.0\r\n"
                                "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-c" + std::to_string(n) + "\r\n"
                                "Max-Forwards: 70\r\n"
                                "From: <sip:" + user + "@198.18.0.2>;tag=a" + std::to_string(n) + "\r\n"
                                "To: <sip:1000@198.18.0.1>\r\n"
                                "Call-ID: canary-" + std::to_string(n) + "\r\n"
                                "CSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n";
        out->clear();
        px.on_input(*t, *h, sip_input{msg, caller, sbc, 0, 1000}, *out);
        for (uint32_t i = 0; i < out->n; ++i) {
            const std::string_view text(out->msgs[i].data.data(), out->msgs[i].len);
            if (text.rfind("INVITE ", 0) == 0) return out->msgs[i].dst.addr;
        }
        return ip_address{};
    };
    const ip_address canary_ip = t->peers[2].address, first_ip = t->peers[0].address;
    for (int i = 0; i < 10; ++i) {
        EXPECT_EQ(invite_from("+15550100" + std::to_string(i), 2 * i), canary_ip) << "a matching From";
        EXPECT_EQ(invite_from("+4930" + std::to_string(i), 2 * i + 1), first_ip) << "any other From";
    }
}

TEST(canary_registry, a_bad_field_or_pattern_is_refused_and_nothing_changes)
{
    canary_registry r;
    std::string error;
    EXPECT_FALSE(r.set("p", "user:^1", 1, error));
    EXPECT_NE(error.find("unknown field 'user'"), std::string::npos) << error;
    error.clear();
    EXPECT_FALSE(r.set("p", "from:^(1", 1, error));
    EXPECT_NE(error.find("does not compile"), std::string::npos) << error;
    error.clear();
    EXPECT_FALSE(r.set("p", "from^1", 1, error));
    EXPECT_NE(error.find("FIELD:PATTERN"), std::string::npos) << error;
    EXPECT_TRUE(r.entries().empty());
}

TEST(canary_registry, apply_marks_canaries_and_keeps_them_until_promoted_or_gone)
{
    auto t = region_of_three();
    auto h = std::make_unique<peer_health>();
    h->word[1].store(peer_state::down);
    canary_registry r;
    std::string error;
    ASSERT_TRUE(r.set(t->peers[2].name, "from:^\\+1555", 1, error)) << error;
    EXPECT_EQ(r.find(t->peers[2].name)->describe(), "from:^\\+1555");
    std::vector<std::string> dropped;
    auto out = r.apply(t, 1, *h, dropped, error);
    ASSERT_TRUE(out) << error;
    EXPECT_NE(out.get(), t.get()) << "a new table for the new snapshot";
    EXPECT_EQ(out->peers[2].canary, r.find(t->peers[2].name)->slot);
    EXPECT_EQ(out->peers[0].canary, no_canary);
    ASSERT_TRUE(out->canaries);
    EXPECT_EQ(h->word[2].load(), peer_state::canary);
    EXPECT_EQ(h->word[1].load(), peer_state::down) << "other bits are left alone";

    // A reload with the same peers: still a canary. A reload without it: dropped and reported.
    ASSERT_TRUE(r.apply(t, 1, *h, dropped, error));
    EXPECT_EQ(h->word[2].load(), peer_state::canary);
    EXPECT_TRUE(dropped.empty());
    auto without = std::make_shared<proxy_tables>(*t);
    without->peers.pop_back();
    without->regions[0].peers.pop_back();
    auto out2 = r.apply(without, 1, *h, dropped, error);
    ASSERT_TRUE(out2);
    EXPECT_EQ(out2.get(), without.get()) << "no canary left: the tables as built";
    ASSERT_EQ(dropped.size(), 1u);
    EXPECT_EQ(dropped[0], t->peers[2].name);
    EXPECT_TRUE(r.entries().empty());

    // Promotion: the bit goes with the next apply.
    ASSERT_TRUE(r.set(t->peers[0].name, "ruri:^9", 1, error)) << error;
    ASSERT_TRUE(r.apply(t, 1, *h, dropped, error));
    EXPECT_EQ(h->word[0].load(), peer_state::canary);
    EXPECT_TRUE(r.remove(t->peers[0].name));
    EXPECT_FALSE(r.remove(t->peers[0].name));
    ASSERT_TRUE(r.apply(t, 1, *h, dropped, error));
    EXPECT_EQ(h->word[0].load(), 0u);
}
