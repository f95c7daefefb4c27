// sbc-sipcheck --config --trunk [--peer] (see sipcheck_rules.h). Tool only (main thread).
#include "app/sipcheck_rules.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <numeric>
#include <sstream>

#include <nlohmann/json.hpp>

#include "control/config.h"
#include "control/config_rules.h"
#include "sip-fastpath/route_match.h"
#include "sip-fastpath/sip_message.h"
#include "sip-fastpath/sip_rules.h"

namespace sbc::app {

namespace {

using control::config;
using json = nlohmann::json;

/// The peer a request goes to: its name, region and trunk (indices into the config).
struct peer_choice {
    std::string name;
    std::size_t region = 0;
    std::size_t trunk = 0;
};

std::string peer_name(const control::region_config& rc, const control::peer_config& pc)
{
    return pc.name.empty() ? rc.name + "/" + to_string(endpoint{pc.address, pc.port}) : pc.name;
}

// The trunk calls to `pc` leave from, as control/proxy_build.cc chooses it: the region's, else
// the first trunk on-link with the peer, else the first with a gateway, else the first.
std::size_t trunk_of(const config& cfg, const control::region_config& rc, const control::peer_config& pc)
{
    auto index = [&](const std::string& name) {
        for (std::size_t i = 0; i < cfg.trunks.size(); ++i)
            if (cfg.trunks[i].name == name) return static_cast<int>(i);
        return -1;
    };
    if (!rc.trunk.empty() && index(rc.trunk) >= 0) return static_cast<std::size_t>(index(rc.trunk));
    auto iface = [&](const control::trunk_config& tc) -> const control::interface_config* {
        for (const auto& i : cfg.interfaces)
            if (i.name == tc.interface) return &i;
        return nullptr;
    };
    for (std::size_t i = 0; i < cfg.trunks.size(); ++i)
        if (const auto* ic = iface(cfg.trunks[i]); ic && ic->address.canonical().contains(pc.address)) return i;
    for (std::size_t i = 0; i < cfg.trunks.size(); ++i)
        if (const auto* ic = iface(cfg.trunks[i]); ic && ic->gateway) return i;
    return 0;
}

// ${trunk_fqdn} as sbcd expands it: the trunk's fqdn, else its interface's address.
std::string trunk_host(const config& cfg, std::size_t trunk)
{
    const auto& tc = cfg.trunks[trunk];
    if (!tc.fqdn.empty()) return tc.fqdn;
    for (const auto& i : cfg.interfaces)
        if (i.name == tc.interface) return to_string(i.address.addr);
    return {};
}

std::optional<peer_choice> find_peer(const config& cfg, const std::string& name)
{
    for (std::size_t r = 0; r < cfg.regions.size(); ++r)
        for (const auto& pc : cfg.regions[r].peers)
            if (peer_name(cfg.regions[r], pc) == name) return peer_choice{name, r, trunk_of(cfg, cfg.regions[r], pc)};
    return std::nullopt;
}

std::string user_of(const sip::message& m, sip::span text)
{
    sip::uri u;
    return sip::parse_uri(m.raw, text, u) ? std::string(u.user.in(m.raw)) : std::string{};
}

// The first static peer (by priority, then weight) of the first region of the route `m` takes.
std::optional<peer_choice> route_peer(const config& cfg, const std::string& trunk, const sip::message& m,
                                      std::string& why)
{
    std::vector<sip::route> routes;
    for (const auto& rc : cfg.routes) {
        sip::route r{};
        r.name = rc.name;
        r.field = rc.field;
        if (rc.has_match) r.pattern = rc.pattern;
        routes.push_back(std::move(r));
    }
    int route = -1;
    if (std::any_of(cfg.routes.begin(), cfg.routes.end(), [](const auto& r) { return r.has_match; })) {
        auto matcher = sip::route_matcher::compile(routes, 1, why);
        if (!matcher) return std::nullopt;
        const std::string ruri(m.ruri.user.in(m.raw)), from = user_of(m, m.from.uri_text), to = user_of(m, m.to.uri_text);
        route = matcher->match(0, {ruri, from, to, trunk});
    }
    if (route < 0) route = cfg.default_route;
    if (route < 0) {
        why = "no route matches it (the proxy answers 404); name a peer with --peer";
        return std::nullopt;
    }
    const auto& rc = cfg.routes[static_cast<std::size_t>(route)];
    for (const auto& g : cfg.peer_groups) {
        if (g.name != rc.peer_group) continue;
        for (const auto& region_name : g.regions)
            for (std::size_t r = 0; r < cfg.regions.size(); ++r) {
                const auto& reg = cfg.regions[r];
                if (reg.name != region_name || reg.peers.empty()) continue;
                std::vector<std::size_t> order(reg.peers.size());
                std::iota(order.begin(), order.end(), std::size_t{0});
                std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
                    if (reg.peers[a].priority != reg.peers[b].priority) return reg.peers[a].priority < reg.peers[b].priority;
                    return reg.peers[a].weight > reg.peers[b].weight;
                });
                const auto& pc = reg.peers[order[0]];
                return peer_choice{peer_name(reg, pc), r, trunk_of(cfg, reg, pc)};
            }
    }
    why = "route " + rc.name + " has no static peer (an srv region's peers come from DNS); name one with --peer";
    return std::nullopt;
}

/// One stage (inbound or outbound): its rules with their outcome, and the message after it.
struct stage {
    json rules = json::array();
    std::string outcome;
    std::string text;
};

stage run_stage(const sip::rule_tables* rt, const std::vector<sip::rule_set>& sets, const sip::message& m,
                const sip::rule_context& ctx, sip::message& out_msg, std::vector<char>& buf)
{
    stage st;
    st.text = std::string(m.raw);
    st.outcome = "unchanged";
    if (rt == nullptr) return st;
    static std::array<single_writer<uint64_t>, sip::max_rules> hits, failures;
    for (auto& h : hits) h.set(0);
    for (auto& f : failures) f.set(0);
    sip::rule_work work;
    const auto o = sip::apply_rules(*rt, sets, m, ctx, work, {hits.data(), failures.data()}, buf, out_msg);
    for (const auto& set : sets)
        for (uint32_t i = set.first; i < set.first + set.count; ++i) {
            const sip::rule& r = rt->rules[i];
            std::string what = std::string(sip::rule_kind_name(r.kind)) + " " +
                               (r.kind == sip::rule_kind::number ? std::string(sip::rule_field_name(r.field)) : r.header);
            st.rules.push_back({{"rule", control::rule_label(r)},
                                {"what", what},
                                {"result", failures[i].get() != 0 ? "failed" : hits[i].get() != 0 ? "hit" : "-"}});
        }
    if (o == sip::rule_outcome::rewritten) {
        st.outcome = "rewritten";
        st.text = std::string(out_msg.raw);
    } else if (o == sip::rule_outcome::too_long) {
        st.outcome = "too long: sent unchanged";
    }
    return st;
}

void print_stage(const char* title, const stage& st)
{
    std::printf("%s: %s\n", title, st.outcome.c_str());
    if (st.rules.empty()) std::printf("  (no rules)\n");
    for (const auto& r : st.rules)
        std::printf("  %-7s %s (%s)\n", r["result"].get<std::string>().c_str(), r["rule"].get<std::string>().c_str(),
                    r["what"].get<std::string>().c_str());
    std::printf("\n%s", st.text.c_str());
    if (st.text.empty() || st.text.back() != '\n') std::printf("\n");
}

bool read_file(const std::string& path, std::string& out)
{
    if (path == "-") {
        out.assign(std::istreambuf_iterator<char>(std::cin), {});
        return true;
    }
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    out.assign(std::istreambuf_iterator<char>(f), {});
    return true;
}

}  // namespace

int check_rules(const rules_check_options& o, const std::vector<std::string>& files)
{
    const control::load_result lr = control::load_config(o.config);
    if (!lr.cfg) {
        for (const auto& e : lr.errors) std::fprintf(stderr, "%s\n", e.to_string().c_str());
        return 2;
    }
    const config& cfg = *lr.cfg;
    std::size_t trunk = cfg.trunks.size();
    std::string known;
    for (std::size_t i = 0; i < cfg.trunks.size(); ++i) {
        if (cfg.trunks[i].name == o.trunk) trunk = i;
        known += (i == 0 ? "" : ", ") + cfg.trunks[i].name;
    }
    if (trunk == cfg.trunks.size()) {
        std::fprintf(stderr, "sbc-sipcheck: %s has no trunk named \"%s\" (known: %s)\n", o.config.c_str(),
                     o.trunk.c_str(), known.empty() ? "none" : known.c_str());
        return 2;
    }
    std::optional<peer_choice> forced;
    if (!o.peer.empty() && !(forced = find_peer(cfg, o.peer))) {
        std::fprintf(stderr, "sbc-sipcheck: %s has no static peer named \"%s\" (a peer's name, or REGION/A.B.C.D:PORT)\n",
                     o.config.c_str(), o.peer.c_str());
        return 2;
    }
    std::string error;
    const auto rt = control::build_rule_tables(cfg, error);
    if (!error.empty()) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return 2;
    }
    int status = 0;
    for (const std::string& f : files) {
        std::string text;
        auto in = std::make_unique<sip::message>();
        auto mid = std::make_unique<sip::message>();
        auto out = std::make_unique<sip::message>();
        if (!read_file(f, text) || text.size() > sip::max_message_size) {
            std::fprintf(stderr, "sbc-sipcheck: %s: unreadable or larger than %zu bytes\n", f.c_str(), sip::max_message_size);
            status = 1;
            continue;
        }
        sip::parse(text, *in);
        if (!in->is_request()) {
            std::fprintf(stderr, "sbc-sipcheck: %s: not a SIP request (rules apply to requests)\n", f.c_str());
            status = 1;
            continue;
        }
        const auto& tc = cfg.trunks[trunk];
        std::vector<char> buf1(sip::max_message_size), buf2(sip::max_message_size);
        std::vector<sip::rule_set> in_sets;
        if (rt) in_sets.push_back(rt->trunk_in[trunk]);
        const std::string fqdn = trunk_host(cfg, trunk);
        const stage inbound = run_stage(rt.get(), in_sets, *in, {fqdn, {}}, *mid, buf1);
        const sip::message& after_in = inbound.outcome == "rewritten" ? *mid : *in;
        std::string why;
        const std::optional<peer_choice> peer = forced ? forced : route_peer(cfg, tc.name, after_in, why);
        stage outbound;
        if (peer) {
            std::vector<sip::rule_set> out_sets;
            if (rt) out_sets = {rt->region_out[peer->region], rt->trunk_out[peer->trunk]};
            const std::string peer_host = trunk_host(cfg, peer->trunk);
            outbound = run_stage(rt.get(), out_sets, after_in, {peer_host, peer->name}, *out, buf2);
        }
        if (o.json) {
            json j{{"file", f}, {"trunk", tc.name}, {"inbound", {{"outcome", inbound.outcome}, {"rules", inbound.rules}, {"message", inbound.text}}}};
            if (peer)
                j["outbound"] = {{"peer", peer->name}, {"region", cfg.regions[peer->region].name},
                                 {"trunk", cfg.trunks[peer->trunk].name}, {"outcome", outbound.outcome},
                                 {"rules", outbound.rules}, {"message", outbound.text}};
            else
                j["outbound"] = {{"skipped", why}};
            std::printf("%s\n", j.dump().c_str());
            continue;
        }
        std::printf("== %s\n", f.c_str());
        print_stage(("inbound on trunk " + tc.name).c_str(), inbound);
        if (peer)
            print_stage(("\noutbound to peer " + peer->name + " (region " + cfg.regions[peer->region].name + ", trunk " +
                         cfg.trunks[peer->trunk].name + ")").c_str(),
                        outbound);
        else
            std::printf("\noutbound: not shown: %s\n", why.c_str());
    }
    return status;
}

}  // namespace sbc::app
