// Unit tests of the proxy table builder: a config parsed with parse_config becomes trunks,
// sorted peers, regions, groups, routes with a working matcher and the retry bitset;
// peer ids survive reloads; every refusal says where and why.
#include "control/proxy_build.h"

#include <gtest/gtest.h>

#include <set>

#include "sip-fastpath/route_match.h"

namespace sbc::control {
namespace {

const char* base_config = R"(
[[interface]]
name = "access"
device = "net_null0"
address = "10.1.0.1/24"

[[interface]]
name = "core"
device = "net_null1"
address = "198.18.0.1/24"
gateway = "198.18.0.254"

[[trunk]]
name = "carrier"
interface = "core"
port = 5070
allow = ["198.18.0.2", "198.18.2.0/28"]

[[trunk]]
name = "pbx"
interface = "access"
allow = ["10.1.0.0/24"]

[[region]]
name = "region1"
peers = [ { address = "198.18.1.11:5060", priority = 20, weight = 10 },
          { address = "198.18.1.12:5060", priority = 10, weight = 40 },
          { address = "198.18.1.13:5062", priority = 10, weight = 60, name = "r1-big" },
          { address = "198.18.1.14:5060", priority = 10, weight = 40 } ]

[[region]]
name = "region2"
peers = [ { address = "10.1.0.50" } ]
trunk = "carrier"

[[peer_group]]
name = "cloud"
regions = ["region2", "region1"]
selector = "hash_call_id"

[[peer_group]]
name = "local"
regions = ["region1"]

[[route]]
name = "uk"
match = { field = "ruri_user", pattern = "^\\+44" }
peer_group = "local"

[[route]]
name = "default"
peer_group = "cloud"

[[route]]
name = "from-pbx"
match = { field = "trunk", pattern = "^pbx$" }
peer_group = "local"

[retry]
codes = [408, 480, 503]
no_response_ms = 700
after_provisional = true
max_attempts = 5
retry_after_s = 12
min_no_response_ms = 150

[limits]
transactions_per_worker = 2048
dialogs_per_worker = 1024
)";

config parsed(const std::string& text)
{
    auto r = parse_config(text, "proxy.toml");
    EXPECT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    return r.cfg ? *r.cfg : config{};
}

// The snapshot's interfaces for `cfg`, as snapshot_build makes them (without ports).
std::vector<dataplane::interface_info> interfaces_of(const config& cfg)
{
    std::vector<dataplane::interface_info> out;
    for (const auto& ic : cfg.interfaces) {
        dataplane::interface_info ii;
        ii.name = ic.name;
        ii.address = ic.address;
        ii.gateway = ic.gateway.value_or(ip_address{});
        out.push_back(ii);
    }
    return out;
}

std::shared_ptr<const sip::proxy_tables> built(const config& cfg, peer_ids& ids, unsigned workers = 2)
{
    std::string error;
    auto t = build_proxy_tables(cfg, interfaces_of(cfg), workers, ids, error);
    EXPECT_TRUE(t) << error;
    return t;
}

sbc::ip_address ip(const char* s) { return *sbc::parse_ipv4(s); }

TEST(proxy_build, trunks_take_their_interface_index_address_port_and_masked_prefixes)
{
    peer_ids ids;
    auto t = built(parsed(base_config), ids);
    ASSERT_TRUE(t);
    ASSERT_EQ(t->trunks.size(), 2u);
    const sip::trunk& carrier = t->trunks[0];
    EXPECT_EQ(carrier.name, "carrier");
    EXPECT_EQ(carrier.iface, 1);
    EXPECT_EQ(carrier.address, ip("198.18.0.1"));
    EXPECT_EQ(carrier.port, 5070);
    EXPECT_TRUE(carrier.allows(ip("198.18.0.2")));
    EXPECT_FALSE(carrier.allows(ip("198.18.0.3")));
    EXPECT_TRUE(carrier.allows(ip("198.18.2.15")));
    EXPECT_FALSE(carrier.allows(ip("198.18.2.16")));
    EXPECT_EQ(t->trunks[1].iface, 0);
    EXPECT_EQ(t->trunks[1].port, 5060);
    EXPECT_EQ(t->find_trunk(ip("10.1.0.1"), 5060), 1);
    EXPECT_EQ(t->find_trunk(ip("198.18.0.1"), 5060), -1);
}

TEST(proxy_build, peers_of_a_region_are_sorted_by_priority_then_heavier_weight_then_file_order)
{
    peer_ids ids;
    auto t = built(parsed(base_config), ids);
    ASSERT_TRUE(t);
    ASSERT_EQ(t->regions.size(), 2u);
    EXPECT_EQ(t->regions[0].name, "region1");
    std::vector<std::string> names;
    for (uint32_t p : t->regions[0].peers) names.push_back(t->peers[p].name);
    EXPECT_EQ(names, (std::vector<std::string>{"r1-big", "region1/198.18.1.12:5060", "region1/198.18.1.14:5060",
                                               "region1/198.18.1.11:5060"}));
    const sip::peer& big = t->peers[t->regions[0].peers[0]];
    EXPECT_EQ(big.address, ip("198.18.1.13"));
    EXPECT_EQ(big.port, 5062);
    EXPECT_EQ(big.priority, 10);
    EXPECT_EQ(big.weight, 60);
    EXPECT_EQ(big.region, 0);
    EXPECT_EQ(big.uri_host, "198.18.1.13:5062") << "what a retargeted Request-URI names it by";
    ASSERT_EQ(t->regions[1].peers.size(), 1u);
    const sip::peer& r2 = t->peers[t->regions[1].peers[0]];
    EXPECT_EQ(r2.region, 1);
    EXPECT_EQ(r2.port, 5060);
    EXPECT_EQ(t->find_peer(ip("198.18.1.13"), 5062), t->regions[0].peers[0]);
}

TEST(proxy_build, calls_to_a_peer_leave_from_its_regions_trunk_else_an_on_link_one_else_one_with_a_gateway)
{
    peer_ids ids;
    auto t = built(parsed(base_config), ids);
    ASSERT_TRUE(t);
    // region2 names "carrier" although its peer is on the access subnet.
    EXPECT_EQ(t->peers[t->regions[1].peers[0]].trunk, 0);
    // region1's peers are on no subnet: the trunk whose interface has a gateway (carrier, on core).
    for (uint32_t p : t->regions[0].peers) EXPECT_EQ(t->peers[p].trunk, 0);

    auto cfg = parsed(std::string(base_config) + "[[region]]\nname = \"lan\"\npeers = [ { address = \"10.1.0.77\" } ]\n");
    auto t2 = built(cfg, ids);
    ASSERT_TRUE(t2);
    EXPECT_EQ(t2->peers[t2->regions[2].peers[0]].trunk, 1);  // pbx, on access, is on-link
}

TEST(proxy_build, groups_and_routes_refer_by_index_and_the_route_without_match_is_the_default)
{
    peer_ids ids;
    auto t = built(parsed(base_config), ids);
    ASSERT_TRUE(t);
    ASSERT_EQ(t->groups.size(), 2u);
    EXPECT_EQ(t->groups[0].regions, (std::vector<uint16_t>{1, 0}));
    EXPECT_EQ(t->groups[0].sel, sip::selector::hash_call_id);
    EXPECT_EQ(t->groups[1].sel, sip::selector::srv);
    ASSERT_EQ(t->routes.size(), 3u);
    EXPECT_EQ(t->routes[0].peer_group, 1);
    EXPECT_EQ(t->routes[0].pattern, "^\\+44");
    EXPECT_EQ(t->routes[1].name, "default");
    EXPECT_EQ(t->routes[1].pattern, "");
    EXPECT_EQ(t->routes[1].peer_group, 0);
    EXPECT_EQ(t->routes[2].field, sip::match_field::trunk);
    EXPECT_EQ(t->default_route, 1);
}

TEST(proxy_build, the_matcher_finds_routes_in_order_and_leaves_the_default_to_the_caller)
{
    peer_ids ids;
    auto t = built(parsed(base_config), ids, 3);
    ASSERT_TRUE(t);
    ASSERT_TRUE(t->matcher);
    EXPECT_EQ(t->matcher->workers(), 3u);
    using v = std::array<std::string_view, sip::match_field_count>;
    EXPECT_EQ(t->matcher->match(2, v{"+442079460000", "", "", "pbx"}), 0);
    EXPECT_EQ(t->matcher->match(2, v{"+15550100", "", "", "pbx"}), 2);
    EXPECT_EQ(t->matcher->match(0, v{"+15550100", "", "", "carrier"}), -1);
}

TEST(proxy_build, without_patterns_there_is_no_matcher)
{
    std::string text = base_config;
    text = text.substr(0, text.find("[[route]]")) + "[[route]]\nname = \"all\"\npeer_group = \"cloud\"\n";
    peer_ids ids;
    auto t = built(parsed(text), ids);
    ASSERT_TRUE(t);
    EXPECT_FALSE(t->matcher);
    EXPECT_EQ(t->default_route, 0);
}

TEST(proxy_build, retry_codes_become_a_bitset_and_timers_are_copied)
{
    peer_ids ids;
    auto t = built(parsed(base_config), ids);
    ASSERT_TRUE(t);
    for (uint16_t c : {408, 480, 503}) EXPECT_TRUE(t->retry.retry_on(c)) << c;
    for (uint16_t c : {0, 100, 180, 200, 404, 486, 504, 699, 700, 65535}) EXPECT_FALSE(t->retry.retry_on(c)) << c;
    EXPECT_EQ(t->retry.codes.count(), 3u);
    EXPECT_EQ(t->retry.no_response_ms, 700u);
    EXPECT_EQ(t->retry.min_no_response_ms, 150u);
    EXPECT_TRUE(t->retry.after_provisional);
    EXPECT_EQ(t->retry.max_attempts, 5);
    EXPECT_EQ(t->retry.retry_after_s, 12u);

    auto defaults = make_retry_policy(retry_config{});
    EXPECT_EQ(defaults.codes.count(), 3u);
    EXPECT_TRUE(defaults.retry_on(408) && defaults.retry_on(503) && defaults.retry_on(504));
    EXPECT_EQ(defaults.max_attempts, 4);
}

TEST(proxy_build, every_peer_gets_a_distinct_id_below_max_peers)
{
    peer_ids ids;
    auto t = built(parsed(base_config), ids);
    ASSERT_TRUE(t);
    std::set<uint32_t> seen;
    for (const auto& p : t->peers) {
        EXPECT_LT(p.id, sip::max_peers);
        EXPECT_TRUE(seen.insert(p.id).second) << p.name;
        EXPECT_EQ(ids.find(peer_ids::key(t->regions[p.region].name, p.address, p.port)), p.id);
    }
    EXPECT_EQ(ids.size(), 5u);
    EXPECT_EQ(ids.added().size(), 5u);
}

TEST(proxy_build, peer_ids_survive_a_reload_and_ids_of_vanished_peers_are_freed_and_reused_last)
{
    peer_ids ids;
    auto before = built(parsed(base_config), ids);
    ASSERT_TRUE(before);
    auto id_of = [](const sip::proxy_tables& t, const char* addr, uint16_t port) {
        return t.peers[t.find_peer(ip(addr), port)].id;
    };
    const uint32_t kept = id_of(*before, "198.18.1.13", 5062);
    const uint32_t gone = id_of(*before, "198.18.1.11", 5060);

    // Reload: .11 removed, .15 added first in the list, weights changed (order changes).
    std::string text = base_config;
    text.replace(text.find("{ address = \"198.18.1.11:5060\", priority = 20, weight = 10 }"),
                 std::string("{ address = \"198.18.1.11:5060\", priority = 20, weight = 10 }").size(),
                 "{ address = \"198.18.1.15:5060\", priority = 5 }");
    auto after = built(parsed(text), ids);
    ASSERT_TRUE(after);
    EXPECT_EQ(id_of(*after, "198.18.1.13", 5062), kept);
    EXPECT_EQ(id_of(*after, "198.18.1.12", 5060), id_of(*before, "198.18.1.12", 5060));
    EXPECT_EQ(id_of(*after, "10.1.0.50", 5060), id_of(*before, "10.1.0.50", 5060));
    const uint32_t fresh = id_of(*after, "198.18.1.15", 5060);
    EXPECT_NE(fresh, gone);  // plenty of never-used ids come first
    EXPECT_EQ(ids.freed(), (std::vector<uint32_t>{gone}));
    EXPECT_EQ(ids.added(), (std::vector<uint32_t>{fresh}));
    EXPECT_FALSE(ids.find("region1/198.18.1.11:5060"));
    EXPECT_EQ(ids.size(), 5u);

    // The same peer under another region is another peer: it gets a new id.
    auto again = built(parsed(base_config), ids);
    ASSERT_TRUE(again);
    EXPECT_EQ(id_of(*again, "198.18.1.13", 5062), kept);
    EXPECT_NE(id_of(*again, "198.18.1.11", 5060), fresh);
}

TEST(proxy_build, peer_ids_hand_out_freed_ids_only_after_every_unused_one)
{
    peer_ids ids;
    std::vector<uint32_t> got;
    std::string error;
    ASSERT_TRUE(ids.assign({"r/a", "r/b"}, got, error));
    EXPECT_EQ(got, (std::vector<uint32_t>{0, 1}));
    ASSERT_TRUE(ids.assign({"r/b"}, got, error));
    EXPECT_EQ(got, (std::vector<uint32_t>{1}));
    EXPECT_EQ(ids.freed(), (std::vector<uint32_t>{0}));
    // Cycle through every never-used id; 0 comes back only after them.
    for (uint32_t n = 2; n < sip::max_peers; ++n) {
        ASSERT_TRUE(ids.assign({"r/b", "r/x" + std::to_string(n)}, got, error));
        EXPECT_EQ(got[1], n);
    }
    ASSERT_TRUE(ids.assign({"r/b", "r/last"}, got, error));
    EXPECT_EQ(got[1], 0u);
}

TEST(proxy_build, peer_ids_refuse_more_than_max_peers_and_change_nothing)
{
    peer_ids ids;
    std::vector<uint32_t> got;
    std::string error;
    ASSERT_TRUE(ids.assign({"r/a"}, got, error));
    std::vector<std::string> many;
    for (std::size_t i = 0; i <= sip::max_peers; ++i) many.push_back("r/" + std::to_string(i));
    EXPECT_FALSE(ids.assign(many, got, error));
    EXPECT_NE(error.find("at most 4096"), std::string::npos) << error;
    EXPECT_EQ(ids.size(), 1u);
    EXPECT_EQ(ids.find("r/a"), 0u);
}

TEST(proxy_build, an_srv_region_has_no_peers_until_dns_answers_then_the_learned_ones_in_rfc2782_order)
{
    const std::string text = std::string(base_config) + "[[region]]\nname = \"region3\"\nsrv = \"_sip._udp.r3.example.net\"\n";
    peer_ids ids;
    std::string error;
    auto cfg = parsed(text);
    auto before = build_proxy_tables(cfg, interfaces_of(cfg), 1, ids, error);
    ASSERT_TRUE(before) << error;
    ASSERT_EQ(before->regions.size(), 3u);
    EXPECT_TRUE(before->regions[2].peers.empty());

    std::vector<learned_region> learned(3);
    learned[2].current = {peer_config{"", ip_address::v4(0xC6120315), 5060, 20, 100, 0},   // 198.18.3.21
                          peer_config{"", ip_address::v4(0xC6120316), 5062, 10, 5, 0}};    // 198.18.3.22:5062
    auto after = build_proxy_tables(cfg, interfaces_of(cfg), 1, ids, error, &learned);
    ASSERT_TRUE(after) << error;
    const auto& r3 = after->regions[2];
    ASSERT_EQ(r3.peers.size(), 2u);
    EXPECT_EQ(after->peers[r3.peers[0]].name, "region3/198.18.3.22:5062");  // priority 10 first
    EXPECT_EQ(after->peers[r3.peers[0]].weight, 5);
    EXPECT_EQ(after->peers[r3.peers[1]].name, "region3/198.18.3.21:5060");
    EXPECT_EQ(after->peers[r3.peers[1]].region, 2);
    EXPECT_TRUE(ids.find("region3/198.18.3.21:5060"));
}

TEST(proxy_build, a_peer_gone_from_dns_with_calls_up_stays_known_out_of_rotation_with_its_id)
{
    const std::string text = std::string(base_config) + "[[region]]\nname = \"region3\"\nsrv = \"_sip._udp.r3.example.net\"\n";
    peer_ids ids;
    std::string error;
    auto cfg = parsed(text);
    std::vector<learned_region> learned(3);
    learned[2].current = {peer_config{"", ip_address::v4(0xC6120315), 5060, 10, 100, 0},
                          peer_config{"", ip_address::v4(0xC6120316), 5060, 10, 100, 0}};
    ASSERT_TRUE(build_proxy_tables(cfg, interfaces_of(cfg), 1, ids, error, &learned)) << error;
    const uint32_t gone_id = *ids.find("region3/198.18.3.22:5060");

    learned[2].retired = {learned[2].current[1]};
    learned[2].current.pop_back();
    auto t = build_proxy_tables(cfg, interfaces_of(cfg), 1, ids, error, &learned);
    ASSERT_TRUE(t) << error;
    ASSERT_EQ(t->regions[2].peers.size(), 1u);
    EXPECT_EQ(t->peers[t->regions[2].peers[0]].address, ip_address::v4(0xC6120315));
    // Not selectable, but its address still belongs to a peer (its BYE and responses are let in).
    EXPECT_TRUE(t->is_peer_address(ip_address::v4(0xC6120316)));
    EXPECT_NE(t->find_peer(ip_address::v4(0xC6120316), 5060), sip::no_peer);
    EXPECT_EQ(ids.find("region3/198.18.3.22:5060"), gone_id);

    learned[2].retired.clear();  // its last call ended
    t = build_proxy_tables(cfg, interfaces_of(cfg), 1, ids, error, &learned);
    ASSERT_TRUE(t) << error;
    EXPECT_FALSE(t->is_peer_address(ip_address::v4(0xC6120316)));
    EXPECT_FALSE(ids.find("region3/198.18.3.22:5060"));
}

TEST(proxy_build, a_pattern_hyperscan_rejects_is_reported_at_its_line_with_the_route_and_ids_stay_as_they_were)
{
    peer_ids ids;
    ASSERT_TRUE(built(parsed(base_config), ids));
    const uint32_t before = *ids.find("region1/198.18.1.13:5062");

    std::string text = base_config;
    text.replace(text.find("^pbx$"), 5, "(pbx");
    text.replace(text.find("198.18.1.13:5062"), 16, "198.18.1.99:5062");  // would change ids
    auto cfg = parsed(text);
    std::string error;
    EXPECT_FALSE(build_proxy_tables(cfg, interfaces_of(cfg), 1, ids, error));
    EXPECT_NE(error.find("proxy.toml:56: route[2].match.pattern: "), std::string::npos) << error;
    EXPECT_NE(error.find("\"from-pbx\""), std::string::npos) << error;
    EXPECT_EQ(ids.find("region1/198.18.1.13:5062"), before);
    EXPECT_FALSE(ids.find("region1/198.18.1.99:5062"));
}

TEST(proxy_build, a_trunk_whose_interface_was_not_started_is_refused)
{
    auto cfg = parsed(base_config);
    auto ifs = interfaces_of(cfg);
    ifs.erase(ifs.begin());  // no "access"
    peer_ids ids;
    std::string error;
    EXPECT_FALSE(build_proxy_tables(cfg, ifs, 1, ids, error));
    EXPECT_NE(error.find("proxy.toml:"), std::string::npos) << error;
    EXPECT_NE(error.find("trunk pbx: interface access is not started"), std::string::npos) << error;
}

TEST(proxy_build, two_trunks_on_one_address_and_port_through_different_interfaces_are_refused)
{
    std::string text = base_config;
    text.replace(text.find("address = \"10.1.0.1/24\""), 23, "address = \"198.18.0.1/24\"");
    text.replace(text.find("port = 5070"), 11, "port = 5060");
    peer_ids ids;
    std::string error;
    auto cfg = parsed(text);
    EXPECT_FALSE(build_proxy_tables(cfg, interfaces_of(cfg), 1, ids, error));
    EXPECT_NE(error.find("trunk pbx: 198.18.0.1:5060 is already trunk carrier's"), std::string::npos) << error;
}

TEST(proxy_build, a_config_without_proxy_sections_builds_empty_tables)
{
    peer_ids ids;
    auto t = built(parsed("[[interface]]\nname = \"a\"\ndevice = \"d\"\naddress = \"10.0.0.1/8\"\n"), ids);
    ASSERT_TRUE(t);
    EXPECT_TRUE(t->trunks.empty());
    EXPECT_TRUE(t->peers.empty());
    EXPECT_TRUE(t->routes.empty());
    EXPECT_FALSE(t->matcher);
    EXPECT_EQ(t->default_route, -1);
    EXPECT_EQ(t->retry.codes.count(), 3u);
}

}  // namespace
}  // namespace sbc::control
