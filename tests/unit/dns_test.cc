// Unit tests of DNS SRV regions without a network: the raw response reader (TTLs that c-ares
// 1.18 does not give), the peer set of an answer and its diff, the TTL refresh schedule, and
// the resolver over a fake transport: first answer, refresh at 3/4 of the TTL, a changed
// record, serve stale on failure (logged once per streak, counted), per-target stale
// addresses, serve_stale = false, late answers of a forgotten name; the [dns] section.
#include "control/dns_resolver.h"

#include <gtest/gtest.h>

#include "control/config.h"

#include <deque>

namespace sbc::control::dns {
namespace {

// ---- wire format builder ----

struct wire {
    std::vector<uint8_t> b;
    void u16(uint16_t v) { b.push_back(static_cast<uint8_t>(v >> 8)), b.push_back(static_cast<uint8_t>(v)); }
    void u32(uint32_t v) { u16(static_cast<uint16_t>(v >> 16)), u16(static_cast<uint16_t>(v)); }
    void name(const std::string& n)
    {
        std::size_t start = 0;
        while (start < n.size()) {
            auto dot = n.find('.', start);
            if (dot == std::string::npos) dot = n.size();
            b.push_back(static_cast<uint8_t>(dot - start));
            for (std::size_t i = start; i < dot; ++i) b.push_back(static_cast<uint8_t>(n[i]));
            start = dot + 1;
        }
        b.push_back(0);
    }
    void pointer(uint16_t offset) { u16(static_cast<uint16_t>(0xc000 | offset)); }
};

// Header + question for `qname`; the question name starts at offset 12.
wire response(const std::string& qname, uint16_t qtype, uint16_t ancount, uint8_t rcode = 0)
{
    wire w;
    w.u16(0x1234);
    w.u16(static_cast<uint16_t>(0x8180 | rcode));  // QR, RD, RA
    w.u16(1);
    w.u16(ancount);
    w.u16(0);
    w.u16(0);
    w.name(qname);
    w.u16(qtype);
    w.u16(class_in);
    return w;
}

void srv_rr(wire& w, uint32_t ttl, uint16_t prio, uint16_t weight, uint16_t port, const std::string& target)
{
    w.pointer(12);  // owner: the question name
    w.u16(type_srv);
    w.u16(class_in);
    w.u32(ttl);
    wire rd;
    rd.u16(prio), rd.u16(weight), rd.u16(port);
    rd.name(target);
    w.u16(static_cast<uint16_t>(rd.b.size()));
    w.b.insert(w.b.end(), rd.b.begin(), rd.b.end());
}

void a_rr(wire& w, uint32_t ttl, sbc::ip_address addr)
{
    w.pointer(12);
    w.u16(type_a);
    w.u16(class_in);
    w.u32(ttl);
    w.u16(4);
    w.u32(addr.v4_host());
}

constexpr sbc::ip_address ip(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
    return sbc::ip_address::v4((uint32_t{a} << 24) | (uint32_t{b} << 16) | (uint32_t{c} << 8) | d);
}
sbc::ip_address ip6(const char* text) { return *sbc::parse_address(text); }

/// An SRV target with its addresses (the refresh's working fields empty).
target tgt(const char* host, uint16_t prio, uint16_t weight, uint16_t port, std::vector<sbc::ip_address> addrs)
{
    target t;
    t.host = host;
    t.priority = prio;
    t.weight = weight;
    t.port = port;
    t.addresses = std::move(addrs);
    return t;
}

TEST(dns_answer, reads_srv_records_with_their_ttls_which_c_ares_1_18_does_not_give)
{
    wire w = response("_sip._udp.region1.test", type_srv, 2);
    srv_rr(w, 30, 10, 60, 5060, "A.Region1.TEST");
    srv_rr(w, 7, 20, 0, 5062, "b.region1.test");
    std::string err;
    auto a = parse_answer(w.b, err);
    ASSERT_TRUE(a) << err;
    EXPECT_EQ(a->rcode, 0);
    ASSERT_EQ(a->srv.size(), 2u);
    EXPECT_EQ(a->srv[0].target, "a.region1.test");
    EXPECT_EQ(a->srv[0].priority, 10);
    EXPECT_EQ(a->srv[0].weight, 60);
    EXPECT_EQ(a->srv[0].port, 5060);
    EXPECT_EQ(a->srv[0].ttl, 30u);
    EXPECT_EQ(a->srv[1].ttl, 7u);
    EXPECT_EQ(a->srv[1].port, 5062);
}

TEST(dns_answer, reads_a_records_follows_compression_and_notes_cname_ttls)
{
    wire w = response("a.region1.test", type_a, 2);
    // CNAME a.region1.test -> (pointer to the question name) with TTL 3, then the A.
    w.pointer(12);
    w.u16(type_cname);
    w.u16(class_in);
    w.u32(3);
    w.u16(2);
    w.pointer(12);
    a_rr(w, 60, ip(198, 18, 1, 11));
    std::string err;
    auto a = parse_answer(w.b, err);
    ASSERT_TRUE(a) << err;
    ASSERT_EQ(a->a.size(), 1u);
    EXPECT_EQ(a->a[0].address, ip(198, 18, 1, 11));
    EXPECT_EQ(a->a[0].name, "a.region1.test");
    EXPECT_EQ(a->a[0].ttl, 60u);
    EXPECT_EQ(a->cname_ttl, 3u);
}

TEST(dns_answer, a_ttl_with_the_top_bit_set_reads_as_zero)
{
    wire w = response("a.test", type_a, 1);
    a_rr(w, 0x80000001u, ip(10, 0, 0, 1));
    std::string err;
    auto a = parse_answer(w.b, err);
    ASSERT_TRUE(a) << err;
    EXPECT_EQ(a->a[0].ttl, 0u);
}

TEST(dns_answer, reads_aaaa_records_as_ipv6_addresses_and_refuses_a_short_one)
{
    wire w = response("a.test", type_aaaa, 1);
    w.pointer(12);
    w.u16(type_aaaa), w.u16(class_in), w.u32(30), w.u16(16);
    for (uint8_t b : ip6("2001:db8::11").v6_bytes()) w.b.push_back(b);
    std::string err;
    auto a = parse_answer(w.b, err);
    ASSERT_TRUE(a) << err;
    ASSERT_EQ(a->a.size(), 1u);
    EXPECT_EQ(a->a[0].address, ip6("2001:db8::11"));
    EXPECT_EQ(a->a[0].ttl, 30u);

    wire bad = response("a.test", type_aaaa, 1);
    bad.pointer(12);
    bad.u16(type_aaaa), bad.u16(class_in), bad.u32(30), bad.u16(4), bad.u32(1);
    EXPECT_FALSE(parse_answer(bad.b, err));
    EXPECT_NE(err.find("AAAA record with 4 bytes of rdata, expected 16"), std::string::npos) << err;
}

TEST(dns_answer, nxdomain_is_an_answer_with_its_rcode)
{
    wire w = response("_sip._udp.gone.test", type_srv, 0, 3);
    std::string err;
    auto a = parse_answer(w.b, err);
    ASSERT_TRUE(a) << err;
    EXPECT_EQ(a->rcode, 3);
    EXPECT_TRUE(a->srv.empty());
}

TEST(dns_answer, malformed_responses_are_refused_with_the_reason)
{
    struct bad_case {
        const char* what;
        std::vector<uint8_t> bytes;
        const char* reason;
    };
    wire ok = response("_sip._udp.r.test", type_srv, 1);
    srv_rr(ok, 30, 10, 10, 5060, "a.r.test");

    wire cut = ok;
    cut.b.resize(cut.b.size() - 3);  // rdata runs off the end

    wire loop = response("x.test", type_a, 1);
    loop.b.push_back(0xc0);  // owner name points at itself
    loop.b.push_back(static_cast<uint8_t>(loop.b.size() - 1));

    wire short_a = response("x.test", type_a, 1);
    short_a.pointer(12);
    short_a.u16(type_a), short_a.u16(class_in), short_a.u32(5), short_a.u16(3);
    short_a.b.insert(short_a.b.end(), {1, 2, 3});

    wire query = ok;
    query.b[2] &= 0x7f;  // QR clear

    const std::vector<bad_case> cases{
        {"short header", {0x12, 0x34, 0x81}, "shorter than a DNS header"},
        {"rdata cut", cut.b, "runs off the end"},
        {"pointer loop", loop.b, "answer record 0"},
        {"A of 3 bytes", short_a.b, "expected 4"},
        {"a query, not a response", query.b, "not a response"},
    };
    for (const auto& c : cases) {
        std::string err;
        EXPECT_FALSE(parse_answer(c.bytes, err)) << c.what;
        EXPECT_NE(err.find(c.reason), std::string::npos) << c.what << ": " << err;
    }
}

// ---- peer sets ----

TEST(dns_peers, one_peer_per_address_and_port_weights_shared_by_a_targets_addresses)
{
    const std::vector<target> t{
        tgt("a.test", 10, 60, 5060, {ip(198, 18, 1, 12), ip(198, 18, 1, 11)}),
        tgt("b.test", 10, 0, 5060, {ip(198, 18, 1, 13)}),
        tgt("c.test", 20, 5, 5060, {ip(198, 18, 1, 11)}),  // same address:port as a.test: a.test wins
        tgt("d.test", 20, 5, 5070, {}),                    // no address: no peer
    };
    const auto p = peers_of(t);
    ASSERT_EQ(p.size(), 3u);
    EXPECT_EQ(p[0], (learned_peer{ip(198, 18, 1, 11), 5060, 10, 30, "a.test"}));
    EXPECT_EQ(p[1], (learned_peer{ip(198, 18, 1, 12), 5060, 10, 30, "a.test"}));
    EXPECT_EQ(p[2], (learned_peer{ip(198, 18, 1, 13), 5060, 10, 0, "b.test"}));
}

TEST(dns_peers, a_weight_shared_by_more_addresses_than_itself_never_becomes_zero)
{
    const auto p = peers_of({tgt("a.test", 1, 1, 5060, {ip(0, 0, 0, 1), ip(0, 0, 0, 2), ip(0, 0, 0, 3)})});
    ASSERT_EQ(p.size(), 3u);
    for (const auto& x : p) EXPECT_EQ(x.weight, 1);
}

TEST(dns_peers, diff_tells_added_removed_and_changed_peers)
{
    const std::vector<learned_peer> before{{ip(0, 0, 0, 1), 5060, 10, 50, "a"}, {ip(0, 0, 0, 2), 5060, 10, 50, "b"}, {ip(0, 0, 0, 3), 5060, 10, 50, "c"}};
    const std::vector<learned_peer> after{{ip(0, 0, 0, 1), 5060, 10, 50, "a"}, {ip(0, 0, 0, 3), 5060, 20, 50, "c"}, {ip(0, 0, 0, 4), 5060, 10, 50, "d"}};
    const auto d = diff(before, after);
    ASSERT_EQ(d.added.size(), 1u);
    EXPECT_EQ(d.added[0].address, ip(0, 0, 0, 4));
    ASSERT_EQ(d.removed.size(), 1u);
    EXPECT_EQ(d.removed[0].address, ip(0, 0, 0, 2));
    ASSERT_EQ(d.changed.size(), 1u);
    EXPECT_EQ(d.changed[0].priority, 20);
    EXPECT_TRUE(diff(after, after).empty());
}

TEST(dns_refresh, at_three_quarters_of_the_ttl_with_a_floor_and_a_ceiling)
{
    policy p;
    p.min_refresh_ms = 1000;
    p.max_refresh_ms = 3600000;
    EXPECT_EQ(refresh_at(5000, 60, p), 5000u + 45000u);
    EXPECT_EQ(refresh_at(5000, 4, p), 5000u + 3000u);
    EXPECT_EQ(refresh_at(5000, 1, p), 5000u + 1000u);   // 750 ms raised to the floor
    EXPECT_EQ(refresh_at(5000, 0, p), 5000u + 1000u);
    EXPECT_EQ(refresh_at(0, 86400, p), 3600000u);       // a day's TTL still checked hourly
}

// ---- the resolver over a fake transport ----

// Answers from `zone` at the next poll(); `down` answers every query with a timeout.
class fake_transport : public transport {
public:
    struct srv_entry {
        uint16_t prio, weight, port;
        std::string target;
        uint32_t ttl;
    };
    std::map<std::string, std::vector<srv_entry>> srv;
    std::map<std::string, std::vector<std::pair<sbc::ip_address, uint32_t>>> a;  // name -> (address, ttl), A and AAAA
    bool down = false;
    std::vector<std::string> down_names;  // these time out even when the rest answers
    std::vector<std::string> asked;

    void query(const std::string& name, uint16_t type, callback done) override
    {
        asked.push_back(name);
        pending_.push_back({name, type, std::move(done)});
    }
    void poll() override
    {
        auto now = std::move(pending_);
        pending_.clear();
        for (auto& q : now) {
            query_result r;
            if (down || std::find(down_names.begin(), down_names.end(), q.name) != down_names.end()) {
                r.error = "Timeout while contacting DNS servers";
            } else if (q.type == type_srv) {
                r.ok = true;
                auto it = srv.find(q.name);
                if (it == srv.end()) r.ans.rcode = 3;
                else
                    for (const auto& e : it->second) r.ans.srv.push_back({e.target, e.prio, e.weight, e.port, e.ttl});
            } else {
                // A known name answers NOERROR with the records of the family asked (maybe none).
                r.ok = true;
                auto it = a.find(q.name);
                if (it == a.end()) r.ans.rcode = 3;
                else
                    for (const auto& [addr, ttl] : it->second)
                        if (addr.is_v6() == (q.type == type_aaaa)) r.ans.a.push_back({q.name, addr, ttl});
            }
            q.done(std::move(r));
        }
    }
    [[nodiscard]] std::size_t pending() const { return pending_.size(); }

private:
    struct q {
        std::string name;
        uint16_t type;
        callback done;
    };
    std::vector<q> pending_;
};

constexpr const char* srv1 = "_sip._udp.region1.test";

struct srv_resolver_with_fake_dns : ::testing::Test {
    fake_transport t;
    std::vector<std::string> logs;
    policy pol{1000, 3600000, 500, true};
    std::unique_ptr<srv_resolver> r;

    void SetUp() override
    {
        t.srv[srv1] = {{10, 50, 5060, "a.region1.test", 4}, {20, 50, 5060, "b.region1.test", 4}};
        t.a["a.region1.test"] = {{ip(198, 18, 1, 11), 4}};
        t.a["b.region1.test"] = {{ip(198, 18, 1, 12), 4}};
        r = std::make_unique<srv_resolver>(t, pol, [this](const std::string& l) { logs.push_back(l); });
        r->add(srv1);
    }
    // Two ticks: the first sends the SRV query, the second its answer and the A queries,
    // the third the A answers.
    void settle(uint64_t now)
    {
        for (int i = 0; i < 3; ++i) r->tick(now);
    }
    std::size_t logs_with(const std::string& s) const
    {
        return static_cast<std::size_t>(
            std::count_if(logs.begin(), logs.end(), [&](const std::string& l) { return l.find(s) != std::string::npos; }));
    }
};

TEST_F(srv_resolver_with_fake_dns, an_srv_name_has_no_peers_until_its_first_answer_then_every_target_address)
{
    ASSERT_NE(r->peers(srv1), nullptr);
    EXPECT_TRUE(r->peers(srv1)->empty());
    EXPECT_EQ(r->status(srv1, 0).state, "waiting");
    settle(0);
    ASSERT_EQ(r->peers(srv1)->size(), 2u);
    EXPECT_EQ((*r->peers(srv1))[0], (learned_peer{ip(198, 18, 1, 11), 5060, 10, 50, "a.region1.test"}));
    EXPECT_TRUE(r->take_changed());
    EXPECT_FALSE(r->take_changed());
    const auto st = r->status(srv1, 0);
    EXPECT_EQ(st.state, "ok");
    EXPECT_EQ(st.queries, 3u);  // SRV + 2 A
    EXPECT_EQ(st.ttl_s, 4u);
    EXPECT_EQ(r->peers("_SIP._udp.Region1.test."), r->peers(srv1));  // names compare normalized
}

TEST_F(srv_resolver_with_fake_dns, an_ipv4_region_asks_a_only_an_ipv6_region_aaaa_only)
{
    t.a["a.region1.test"].push_back({ip6("2001:db8::11"), 4});
    settle(0);
    for (const auto& p : *r->peers(srv1)) EXPECT_TRUE(p.address.is_v4()) << "address_family ipv4 (the default)";
    EXPECT_EQ(r->status(srv1, 0).queries, 3u) << "SRV and one A per target";

    r->add(srv1, sbc::family_choice::ipv6);  // a reload: from the next refresh
    t.a["b.region1.test"].push_back({ip6("2001:db8::12"), 4});
    settle(5000);
    const auto* p = r->peers(srv1);
    ASSERT_EQ(p->size(), 2u);
    EXPECT_EQ((*p)[0].address, ip6("2001:db8::11"));
    EXPECT_EQ((*p)[1].address, ip6("2001:db8::12"));
    EXPECT_EQ(r->status(srv1, 5000).queries, 6u) << "SRV and one AAAA per target";
}

TEST_F(srv_resolver_with_fake_dns, a_preference_takes_the_preferred_family_per_target_and_the_other_where_it_lacks)
{
    r->add(srv1, sbc::family_choice::prefer_ipv6);
    t.a["a.region1.test"].push_back({ip6("2001:db8::11"), 4});  // a: both; b: IPv4 only
    settle(0);
    const auto* p = r->peers(srv1);
    ASSERT_EQ(p->size(), 2u);
    EXPECT_EQ((*p)[0].address, ip(198, 18, 1, 12)) << "b has no AAAA: its A";
    EXPECT_EQ((*p)[1].address, ip6("2001:db8::11")) << "a: its AAAA, not its A";
    EXPECT_EQ(r->status(srv1, 0).state, "ok") << "a family with no records is no failure";
    EXPECT_EQ(r->status(srv1, 0).queries, 5u) << "SRV, then A and AAAA per target";

    r->add(srv1, sbc::family_choice::prefer_ipv4);
    settle(5000);
    ASSERT_EQ(p->size(), 2u);
    EXPECT_EQ((*p)[0].address, ip(198, 18, 1, 11));
    EXPECT_EQ((*p)[1].address, ip(198, 18, 1, 12));
}

TEST_F(srv_resolver_with_fake_dns, an_ipv6_region_whose_targets_have_no_aaaa_fails_with_the_reason)
{
    r->add(srv1, sbc::family_choice::ipv6);
    settle(0);
    EXPECT_TRUE(r->peers(srv1)->empty());
    EXPECT_EQ(r->status(srv1, 0).state, "failed");
    EXPECT_NE(r->status(srv1, 0).last_error.find("AAAA a.region1.test: no AAAA record"), std::string::npos)
        << r->status(srv1, 0).last_error;
}

TEST_F(srv_resolver_with_fake_dns, the_answer_is_refreshed_at_three_quarters_of_its_smallest_ttl_not_before)
{
    t.a["b.region1.test"] = {{ip(198, 18, 1, 12), 2}};  // the A of b has the smallest TTL: 2 s
    settle(0);
    t.asked.clear();
    settle(1499);
    EXPECT_TRUE(t.asked.empty()) << t.asked.front();
    settle(1500);
    EXPECT_EQ(t.asked.size(), 3u);
    EXPECT_EQ(r->status(srv1, 1500).queries, 6u);
}

TEST_F(srv_resolver_with_fake_dns, a_changed_record_changes_the_peer_set_at_the_next_refresh)
{
    settle(0);
    ASSERT_TRUE(r->take_changed());
    t.a["b.region1.test"] = {{ip(198, 18, 1, 13), 4}};
    settle(2000);
    EXPECT_FALSE(r->take_changed());  // not due yet (3 s)
    settle(3000);
    EXPECT_TRUE(r->take_changed());
    const auto& p = *r->peers(srv1);
    ASSERT_EQ(p.size(), 2u);
    EXPECT_EQ(p[1].address, ip(198, 18, 1, 13));
    EXPECT_EQ(logs_with("gone 198.18.1.12:5060"), 1u);
    EXPECT_EQ(logs_with("added 198.18.1.13:5060"), 1u);
}

TEST_F(srv_resolver_with_fake_dns, a_failing_server_keeps_the_last_good_answer_logs_once_per_streak_and_counts_every_failure)
{
    settle(0);
    ASSERT_TRUE(r->take_changed());
    t.down = true;
    settle(3000);  // due at 3000: fails, retried every 500 ms
    settle(3500);
    settle(4000);
    settle(10000);  // long past the 4 s TTL: still served (serve_stale)
    EXPECT_FALSE(r->take_changed());
    EXPECT_EQ(r->peers(srv1)->size(), 2u);
    auto st = r->status(srv1, 10000);
    EXPECT_EQ(st.state, "stale");
    EXPECT_EQ(st.failures, 4u);
    EXPECT_EQ(st.stale_served, 4u);
    EXPECT_NE(st.last_error.find("Timeout"), std::string::npos);
    EXPECT_EQ(logs_with("keeping the last good answer"), 1u);

    t.down = false;
    settle(10500);
    EXPECT_EQ(r->status(srv1, 10500).state, "ok");
    EXPECT_EQ(logs_with("answers again after 4 failed"), 1u);
    t.down = true;
    settle(13500);
    EXPECT_EQ(logs_with("keeping the last good answer"), 2u);  // a new streak is logged again
}

TEST_F(srv_resolver_with_fake_dns, nxdomain_and_empty_answers_count_as_failures_not_as_an_empty_region)
{
    settle(0);
    ASSERT_TRUE(r->take_changed());
    t.srv.erase(srv1);
    settle(3000);
    EXPECT_EQ(r->peers(srv1)->size(), 2u);
    EXPECT_EQ(r->status(srv1, 3000).last_error, "NXDOMAIN");
    t.srv[srv1] = {{0, 0, 0, ".", 4}};
    t.srv[srv1][0].target = "";
    settle(3500);
    EXPECT_EQ(r->peers(srv1)->size(), 2u);
    EXPECT_EQ(r->status(srv1, 3500).failures, 2u);
}

TEST_F(srv_resolver_with_fake_dns, a_target_whose_a_lookup_fails_keeps_its_last_addresses_while_others_update)
{
    settle(0);
    ASSERT_TRUE(r->take_changed());
    t.down_names = {"b.region1.test"};
    t.a["a.region1.test"] = {{ip(198, 18, 1, 21), 4}};
    settle(3000);
    const auto& p = *r->peers(srv1);
    ASSERT_EQ(p.size(), 2u);
    EXPECT_EQ(p[0].address, ip(198, 18, 1, 12));  // b: kept
    EXPECT_EQ(p[1].address, ip(198, 18, 1, 21));  // a: updated
    const auto st = r->status(srv1, 3000);
    EXPECT_EQ(st.failures, 1u);
    EXPECT_EQ(st.stale_served, 1u);
    EXPECT_NE(st.last_error.find("A b.region1.test"), std::string::npos) << st.last_error;
}

TEST_F(srv_resolver_with_fake_dns, without_serve_stale_the_peers_go_when_a_failing_answers_ttl_ran_out)
{
    pol.serve_stale = false;
    r->set_policy(pol);
    settle(0);
    ASSERT_TRUE(r->take_changed());
    t.down = true;
    settle(3000);  // within the TTL: kept
    EXPECT_EQ(r->peers(srv1)->size(), 2u);
    EXPECT_FALSE(r->take_changed());
    settle(4000);  // TTL (4 s) ran out
    EXPECT_TRUE(r->peers(srv1)->empty());
    EXPECT_TRUE(r->take_changed());
    EXPECT_EQ(r->status(srv1, 4000).state, "failed");
}

TEST_F(srv_resolver_with_fake_dns, no_answer_at_start_is_logged_once_and_the_region_stays_empty)
{
    t.down = true;
    settle(0);
    settle(500);
    settle(1000);
    EXPECT_TRUE(r->peers(srv1)->empty());
    EXPECT_FALSE(r->take_changed());
    EXPECT_EQ(logs_with("no answer yet"), 1u);
    EXPECT_EQ(r->status(srv1, 1000).state, "failed");
    t.down = false;
    settle(1500);
    EXPECT_EQ(r->peers(srv1)->size(), 2u);
}

TEST_F(srv_resolver_with_fake_dns, answers_for_a_forgotten_name_are_ignored)
{
    r->tick(0);  // SRV query out
    r->retain({});
    r->tick(0);  // its answer arrives
    r->tick(0);
    EXPECT_EQ(r->peers(srv1), nullptr);
    EXPECT_FALSE(r->take_changed());
    EXPECT_EQ(t.pending(), 0u);  // no A query was started for it
}


// ---- [dns] ----

constexpr const char* one_interface = R"([[interface]]
name = "core"
device = "net_null0"
address = "198.18.0.1/24"
)";

TEST(dns_config, without_a_dns_section_servers_come_from_resolv_conf_with_the_defaults)
{
    const auto r = parse_config(one_interface, "sbc.toml");
    ASSERT_TRUE(r.cfg);
    EXPECT_TRUE(r.cfg->dns.servers.empty());
    EXPECT_EQ(r.cfg->dns.timeout_ms, 1000u);
    EXPECT_EQ(r.cfg->dns.tries, 2u);
    EXPECT_EQ(r.cfg->dns.min_refresh_ms, 1000u);
    EXPECT_EQ(r.cfg->dns.retry_ms, 1000u);
    EXPECT_TRUE(r.cfg->dns.serve_stale);
}

TEST(dns_config, servers_timeouts_and_serve_stale_are_read)
{
    const std::string text = std::string(one_interface) +
                             "[dns]\nservers = [\"127.0.0.1:5353\", \"10.0.0.53\"]\ntimeout_ms = 300\ntries = 3\n"
                             "min_refresh_ms = 500\nretry_ms = 2000\nserve_stale = false\n";
    const auto r = parse_config(text, "sbc.toml");
    ASSERT_TRUE(r.cfg) << r.errors[0].to_string();
    EXPECT_EQ(r.cfg->dns.servers, (std::vector<std::string>{"127.0.0.1:5353", "10.0.0.53"}));
    EXPECT_EQ(r.cfg->dns.timeout_ms, 300u);
    EXPECT_EQ(r.cfg->dns.tries, 3u);
    EXPECT_EQ(r.cfg->dns.min_refresh_ms, 500u);
    EXPECT_EQ(r.cfg->dns.retry_ms, 2000u);
    EXPECT_FALSE(r.cfg->dns.serve_stale);
}

TEST(dns_config, a_bad_server_an_out_of_range_value_or_a_typo_is_refused_with_line_and_key)
{
    struct bad_case {
        const char* what;
        const char* section;
        int line;
        const char* key;
        const char* message;
    };
    const std::vector<bad_case> cases{
        {"server not an address", "servers = [\"127.0.0.1:5353\", \"dns.example.net\"]", 6, "dns.servers[1]",
         "expected \"A.B.C.D\" (port 53) or \"A.B.C.D:PORT\""},
        {"server port 0", "servers = [\"127.0.0.1:0\"]", 6, "dns.servers[0]", "got \"127.0.0.1:0\""},
        {"timeout too short", "timeout_ms = 10", 6, "dns.timeout_ms", "100..30000"},
        {"no tries", "tries = 0", 6, "dns.tries", "1..10"},
        {"typo", "serve_stail = true", 6, "dns.serve_stail", "did you mean \"serve_stale\""},
    };
    for (const auto& c : cases) {
        const std::string text = std::string(one_interface) + "[dns]\n" + c.section + "\n";
        const auto r = parse_config(text, "sbc.toml");
        ASSERT_FALSE(r.cfg) << c.what;
        ASSERT_EQ(r.errors.size(), 1u) << c.what;
        EXPECT_EQ(r.errors[0].line, c.line) << c.what;
        EXPECT_EQ(r.errors[0].key, c.key) << c.what;
        EXPECT_NE(r.errors[0].message.find(c.message), std::string::npos) << c.what << ": " << r.errors[0].message;
    }
}

}  // namespace
}  // namespace sbc::control::dns
