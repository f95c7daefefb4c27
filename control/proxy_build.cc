// Proxy tables from the config (see proxy_build.h). Control core only.
#include "control/proxy_build.h"

#include <algorithm>
#include <numeric>

#include "sip-fastpath/route_match.h"
#include "sip-fastpath/scanner_match.h"
#include "sip-fastpath/topology_hiding.h"

namespace sbc::control {

std::string peer_ids::key(std::string_view region, const ip_address& address, uint16_t port)
{
    return std::string(region) + "/" + to_string(endpoint{address, port});
}

bool peer_ids::assign(const std::vector<std::string>& keys, std::vector<uint32_t>& ids, std::string& error)
{
    std::map<std::string_view, std::size_t> wanted;  // key -> first position in keys
    for (std::size_t i = 0; i < keys.size(); ++i) wanted.emplace(keys[i], i);
    if (wanted.size() > sip::max_peers) {
        error = std::to_string(wanted.size()) + " peers are configured; at most " + std::to_string(sip::max_peers) +
                " are supported";
        return false;
    }
    if (!started_) {
        free_.resize(sip::max_peers);
        std::iota(free_.begin(), free_.end(), 0u);
        started_ = true;
    }
    added_.clear();
    freed_.clear();
    // Free the vanished first (to the back of the queue), then take ids for the new from the front.
    for (auto it = by_key_.begin(); it != by_key_.end();) {
        if (wanted.count(it->first) != 0) {
            ++it;
            continue;
        }
        freed_.push_back(it->second);
        free_.push_back(it->second);
        it = by_key_.erase(it);
    }
    ids.assign(keys.size(), 0);
    for (std::size_t i = 0; i < keys.size(); ++i) {
        auto it = by_key_.find(keys[i]);
        if (it == by_key_.end()) {
            const uint32_t id = free_.front();
            free_.pop_front();
            it = by_key_.emplace(keys[i], id).first;
            added_.push_back(id);
        }
        ids[i] = it->second;
    }
    return true;
}

std::optional<uint32_t> peer_ids::find(std::string_view key) const
{
    auto it = by_key_.find(key);
    if (it == by_key_.end()) return std::nullopt;
    return it->second;
}

sip::retry_policy make_retry_policy(const retry_config& rc)
{
    sip::retry_policy p;
    for (uint16_t c : rc.codes)
        if (c < p.codes.size()) p.codes.set(c);
    p.no_response_ms = rc.no_response_ms;
    p.min_no_response_ms = rc.min_no_response_ms;
    p.after_provisional = rc.after_provisional;
    p.max_attempts = static_cast<uint8_t>(rc.max_attempts);
    p.retry_after_s = rc.retry_after_s;
    return p;
}

namespace {

std::string where(const config& cfg, int line) { return cfg.path + ":" + std::to_string(line) + ": "; }

// The trunk calls to a peer leave from: the region's, else the first trunk whose interface is
// on-link with the peer, else the first trunk whose interface has a gateway of the peer's
// family, else the first of that family (an IPv6 peer: a trunk on an interface with address6),
// else the first.
uint16_t trunk_for(const sip::proxy_tables& t, const std::vector<dataplane::interface_info>& interfaces,
                   int region_trunk, const ip_address& address)
{
    if (region_trunk >= 0) return static_cast<uint16_t>(region_trunk);
    for (std::size_t i = 0; i < t.trunks.size(); ++i)
        if (interfaces[t.trunks[i].iface].on_link(address)) return static_cast<uint16_t>(i);
    for (std::size_t i = 0; i < t.trunks.size(); ++i)
        if (!interfaces[t.trunks[i].iface].next_hop(address).is_unspecified()) return static_cast<uint16_t>(i);
    for (std::size_t i = 0; i < t.trunks.size(); ++i)
        if (!t.trunks[i].address_for(address).is_unspecified()) return static_cast<uint16_t>(i);
    return 0;
}

template <class T>
int index_by_name(const std::vector<T>& v, const std::string& name)
{
    for (std::size_t i = 0; i < v.size(); ++i)
        if (v[i].name == name) return static_cast<int>(i);
    return -1;
}

// A route's fallback (sip-fastpath/route_fallback.h): its group's index, and its codes less
// those [retry] retries (a class such as 5xx leaves 503 to retry within the group).
void set_fallback(const config& cfg, const route_fallback_config& fc, sip::route_fallback& f)
{
    const int g = fc.group.empty() ? -1 : index_by_name(cfg.peer_groups, fc.group);
    if (g < 0) return;
    f.group = static_cast<uint16_t>(g);
    for (uint16_t c = 100; c < f.codes.size(); ++c)
        if (fc.covers(c) && std::find(cfg.retry.codes.begin(), cfg.retry.codes.end(), c) == cfg.retry.codes.end())
            f.codes.set(c);
}

// The trunks, in file order, each on its started interface; false (with the trunk's line) for
// an interface that is not started or an address and port another trunk has.
bool add_trunks(const config& cfg, const std::vector<dataplane::interface_info>& interfaces, sip::proxy_tables& t,
                std::string& error)
{
    for (const auto& tc : cfg.trunks) {
        const int iface = index_by_name(interfaces, tc.interface);
        if (iface < 0) {
            error = where(cfg, tc.line) + "trunk " + tc.name + ": interface " + tc.interface + " is not started";
            return false;
        }
        sip::trunk tr;
        tr.name = tc.name;
        tr.iface = static_cast<uint16_t>(iface);
        tr.address = interfaces[static_cast<std::size_t>(iface)].address.addr;
        tr.address6 = interfaces[static_cast<std::size_t>(iface)].address6.addr;
        // A port is 0 where the trunk does not take that transport (nothing listens).
        tr.port = tc.takes(transport::udp) ? tc.port : 0;
        tr.tcp_port = tc.takes(transport::tcp) ? tc.tcp_port : 0;
        tr.tls_port = tc.takes(transport::tls) ? tc.tls_port : 0;
        tr.fqdn = tc.fqdn;
        for (const auto& p : tc.allow) tr.allow.push_back(p.canonical());
        tr.max_calls = tc.admission.max_calls;
        tr.calls_per_second = tc.admission.max_calls_per_second;
        // The burst defaults to the rate: a second's worth of calls at once, at least one.
        tr.calls_burst = tc.admission.calls_burst != 0 ? tc.admission.calls_burst
                                                       : std::max(1u, tc.admission.max_calls_per_second);
        tr.trusted = tc.trusted;
        tr.untrusted_trunk_rate = tc.untrusted_trunk_rate.value_or(sip::trunk::from_flood);
        tr.untrusted_trunk_burst = tc.untrusted_trunk_burst.value_or(sip::trunk::from_flood);
        tr.topology_hiding = tc.topology_hiding;
        // Two interfaces may carry one address (VLANs); find_trunk must still be unambiguous.
        if (const int other = tr.port == 0 ? -1 : t.find_trunk(tr.address, tr.port); other >= 0) {
            error = where(cfg, tc.line) + "trunk " + tc.name + ": " + to_string(tr.address) + ":" +
                    std::to_string(tr.port) + " is already trunk " + t.trunks[static_cast<std::size_t>(other)].name +
                    "'s address and port; give it another port";
            return false;
        }
        t.trunks.push_back(std::move(tr));
    }
    return true;
}

// One configured (or learned) peer of region `ri` as the table holds it.
sip::peer make_peer(const config& cfg, std::size_t ri, const peer_config& pc, const sip::proxy_tables& t,
                    const std::vector<dataplane::interface_info>& interfaces, int region_trunk)
{
    const region_config& rc = cfg.regions[ri];
    sip::peer p;
    p.address = pc.address;
    p.port = pc.port;
    p.proto = pc.proto;
    p.server_name = pc.server_name;
    // A TLS peer named by nothing else is checked by its address (an IP SAN): never "" here,
    // which would check no name at all (streams::new_client_ssl).
    if (p.proto == transport::tls && p.server_name.empty()) p.server_name = to_string(pc.address);
    p.name = pc.name.empty() ? peer_ids::key(rc.name, pc.address, pc.port) : pc.name;
    p.priority = pc.priority;
    p.weight = pc.weight;
    p.region = static_cast<uint16_t>(ri);
    p.trunk = t.trunks.empty() ? 0 : trunk_for(t, interfaces, region_trunk, pc.address);
    p.max_calls = pc.max_calls != 0 ? pc.max_calls : rc.peer_max_calls;  // SRV peers: the region's
    p.uri_host = p.proto == transport::tls ? p.server_name + ":" + std::to_string(p.port) : to_string(p.remote());
    return p;
}

// The regions and their peers: region by region in file order, each region's sorted by priority
// (lower first), then weight (heavier first), then file order; an SRV region's peers are what
// DNS said last (none before its first answer), its retired peers after them (known addresses,
// never selected). `keys` gets each peer's registry key, in table order.
bool add_regions(const config& cfg, const std::vector<dataplane::interface_info>& interfaces,
                 const std::vector<learned_region>* learned, sip::proxy_tables& t, std::vector<std::string>& keys,
                 std::string& error)
{
    for (std::size_t ri = 0; ri < cfg.regions.size(); ++ri) {
        const region_config& rc = cfg.regions[ri];
        static const learned_region none;
        const learned_region& dns = learned && ri < learned->size() ? (*learned)[ri] : none;
        const std::vector<peer_config>& peers = rc.srv.empty() ? rc.peers : dns.current;
        std::vector<std::size_t> order(peers.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            const peer_config& pa = peers[a];
            const peer_config& pb = peers[b];
            if (pa.priority != pb.priority) return pa.priority < pb.priority;
            return pa.weight > pb.weight;
        });
        const int region_trunk = rc.trunk.empty() ? -1 : index_by_name(cfg.trunks, rc.trunk);
        // DNS may give an SRV region IPv6 peers: it needs a trunk with an IPv6 address to reach them.
        if (!rc.srv.empty() && rc.family != family_choice::ipv4) {
            const bool v6 = region_trunk >= 0
                                ? !t.trunks[static_cast<std::size_t>(region_trunk)].address6.is_unspecified()
                                : std::any_of(t.trunks.begin(), t.trunks.end(),
                                              [](const sip::trunk& tr) { return !tr.address6.is_unspecified(); });
            if (!v6) {
                error = where(cfg, rc.line) + "region " + rc.name + ": address_family takes IPv6 peers from " + rc.srv +
                        ", but " + (region_trunk >= 0 ? "trunk " + rc.trunk + "'s interface has" : std::string("no trunk's interface has")) +
                        " no address6 to reach them from; give the interface address6 = \"…/64\" or keep address_family = \"ipv4\"";
                return false;
            }
        }
        sip::region reg;
        reg.name = rc.name;
        reg.fqdn = rc.fqdn;
        const std::size_t selectable = order.size();
        for (std::size_t k = 0; !rc.srv.empty() && k < dns.retired.size(); ++k) order.push_back(peers.size() + k);
        for (std::size_t k : order) {
            const peer_config& pc = k < peers.size() ? peers[k] : dns.retired[k - peers.size()];
            keys.push_back(peer_ids::key(rc.name, pc.address, pc.port));
            if (reg.peers.size() < selectable) reg.peers.push_back(static_cast<uint32_t>(t.peers.size()));
            sip::peer p = make_peer(cfg, ri, pc, t, interfaces, region_trunk);
            // A static IPv6 peer needs a trunk with an IPv6 address to reach it from.
            if (pc.address.is_v6() && rc.srv.empty() &&
                (p.trunk >= t.trunks.size() || t.trunks[p.trunk].address6.is_unspecified())) {
                error = where(cfg, pc.line) + "region " + rc.name + ": peer " + to_string(pc.address) +
                        " is IPv6, but " +
                        (p.trunk < t.trunks.size() ? "trunk " + t.trunks[p.trunk].name + "'s interface has"
                                                   : std::string("no trunk's interface has")) +
                        " no address6 to reach it from; give the interface address6 = \"…/64\"";
                return false;
            }
            t.peers.push_back(std::move(p));
        }
        t.regions.push_back(std::move(reg));
    }
    if (t.peers.size() <= sip::max_peers) return true;
    error = cfg.path + ": " + std::to_string(t.peers.size()) + " peers are configured; at most " +
            std::to_string(sip::max_peers) + " are supported";
    return false;
}

// The peer groups and the routes, with the routes' matcher compiled (one scratch per worker);
// a pattern that does not compile is named by its line, like the loader does.
bool add_routes(const config& cfg, unsigned workers, sip::proxy_tables& t, std::string& error)
{
    for (const auto& gc : cfg.peer_groups) {
        sip::peer_group g;
        g.name = gc.name;
        for (const auto& rn : gc.regions) g.regions.push_back(static_cast<uint16_t>(index_by_name(cfg.regions, rn)));
        g.sel = gc.selector;
        t.groups.push_back(std::move(g));
    }
    for (const auto& rc : cfg.routes) {
        sip::route r;
        r.name = rc.name;
        r.field = rc.field;
        if (rc.has_match) r.pattern = rc.pattern;  // empty: the default route, never compiled
        r.peer_group = static_cast<uint16_t>(index_by_name(cfg.peer_groups, rc.peer_group));
        set_fallback(cfg, rc.fallback, r.fallback);
        t.routes.push_back(std::move(r));
    }
    t.default_route = cfg.default_route;
    if (std::none_of(cfg.routes.begin(), cfg.routes.end(), [](const route_config& r) { return r.has_match; }))
        return true;
    std::string why;
    auto m = sip::route_matcher::compile(t.routes, workers, why);
    if (m) {
        t.matcher = std::move(m);
        return true;
    }
    int line = 0;
    std::string key = "route";
    for (std::size_t i = 0; i < cfg.routes.size(); ++i)
        if (why.rfind("route " + std::to_string(i) + " ", 0) == 0) {
            line = cfg.routes[i].pattern_line;
            key = "route[" + std::to_string(i) + "].match.pattern";
        }
    error = (line > 0 ? where(cfg, line) : cfg.path + ": ") + key + ": " + why;
    return false;
}

// The node-wide policies: retry, self health codes, hiding key, RFC 7339, admission, overload,
// the scanner patterns (compiled here; the loader checked each alone) and the header and
// number rules (control/config_rules.cc; null when there are none).
bool add_policies(const config& cfg, unsigned workers, sip::proxy_tables& t, std::string& error)
{
    t.retry = make_retry_policy(cfg.retry);
    // [limits] size each worker's proxy at start (port_options); nothing reads them here.
    t.self.healthy_code = static_cast<uint16_t>(cfg.self.healthy_code);
    t.hiding_key = sip::process_hiding_key();  // sip-fastpath/topology_hiding.h
    t.self.unavailable_code = static_cast<uint16_t>(cfg.self.draining_code);
    t.oc = static_cast<const sip::oc_policy&>(cfg.overload_control);  // [overload_control], RFC 7339
    t.admission.max_calls = cfg.admission.max_calls;
    t.admission.refuse_code = static_cast<uint16_t>(cfg.admission.refuse_code);
    t.admission.retry_after_s = cfg.admission.retry_after_s;
    t.overload = static_cast<const sip::overload_policy&>(cfg.overload);
    if (const auto patterns = cfg.scanner.compiled(); !patterns.empty()) {
        std::string why;
        t.scanner = sip::scanner_matcher::compile(patterns, cfg.scanner.policy, workers, why);
        if (!t.scanner) {
            error = (cfg.scanner.line > 0 ? where(cfg, cfg.scanner.line) : cfg.path + ": ") + "scanner: " + why;
            return false;
        }
    }
    t.rules = build_rule_tables(cfg, error);
    return t.rules != nullptr || error.empty();
}

}  // namespace

std::shared_ptr<const sip::proxy_tables> build_proxy_tables(const config& cfg,
                                                            const std::vector<dataplane::interface_info>& interfaces,
                                                            unsigned workers, peer_ids& ids, std::string& error,
                                                            const std::vector<learned_region>* learned)
{
    auto t = std::make_shared<sip::proxy_tables>();
    std::vector<std::string> keys;  // each peer's registry key, in table order
    if (!add_trunks(cfg, interfaces, *t, error) || !add_regions(cfg, interfaces, learned, *t, keys, error) ||
        !add_routes(cfg, workers, *t, error) || !add_policies(cfg, workers, *t, error))
        return nullptr;
    // Last, so that a failed build leaves the registry as it was.
    std::vector<uint32_t> peer_id;
    if (!ids.assign(keys, peer_id, error)) {
        error = cfg.path + ": " + error;
        return nullptr;
    }
    for (std::size_t i = 0; i < t->peers.size(); ++i) t->peers[i].id = peer_id[i];
    t->index_peers();
    return t;
}

}  // namespace sbc::control
