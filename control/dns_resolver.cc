// SRV name -> peer set, refreshed by TTL, serving stale on failure (see dns_resolver.h).
// Control core only.
#include "control/dns_resolver.h"

#include <algorithm>
#include <set>
#include <utility>

#include "control/config.h"

namespace sbc::control::dns {

std::vector<learned_peer> peers_of(const std::vector<target>& targets)
{
    std::vector<learned_peer> out;
    std::set<std::pair<ip_address, uint16_t>> seen;
    for (const auto& t : targets) {
        const auto n = static_cast<uint32_t>(t.addresses.size());
        if (n == 0) continue;
        const auto share = static_cast<uint16_t>(t.weight == 0 ? 0 : (t.weight + n - 1) / n);
        for (const ip_address& a : t.addresses) {
            if (!seen.emplace(a, t.port).second) continue;
            out.push_back({a, t.port, t.priority, share, t.host});
        }
    }
    std::sort(out.begin(), out.end(), [](const learned_peer& x, const learned_peer& y) {
        return std::pair{x.address, x.port} < std::pair{y.address, y.port};
    });
    return out;
}

peer_diff diff(const std::vector<learned_peer>& before, const std::vector<learned_peer>& after)
{
    peer_diff d;
    auto key = [](const learned_peer& p) { return std::pair{p.address, p.port}; };
    std::size_t i = 0, j = 0;
    while (i < before.size() || j < after.size()) {
        if (j == after.size() || (i < before.size() && key(before[i]) < key(after[j]))) {
            d.removed.push_back(before[i++]);
        } else if (i == before.size() || key(after[j]) < key(before[i])) {
            d.added.push_back(after[j++]);
        } else {
            if (!(before[i] == after[j])) d.changed.push_back(after[j]);
            ++i;
            ++j;
        }
    }
    return d;
}

std::string describe(const std::vector<learned_peer>& peers)
{
    if (peers.empty()) return "none";
    std::string s;
    for (const auto& p : peers) s += (s.empty() ? "" : " ") + to_string(sbc::endpoint{p.address, p.port});
    return s;
}

uint64_t refresh_at(uint64_t now_ms, uint32_t ttl_s, const policy& p)
{
    uint64_t in = uint64_t{ttl_s} * 750;  // 3/4 of the TTL, in ms
    in = std::clamp<uint64_t>(in, p.min_refresh_ms, std::max(p.min_refresh_ms, p.max_refresh_ms));
    return now_ms + in;
}

namespace {

std::string rcode_text(uint8_t rcode)
{
    switch (rcode) {
    case 1: return "FORMERR";
    case 2: return "SERVFAIL";
    case 3: return "NXDOMAIN";
    case 4: return "NOTIMP";
    case 5: return "REFUSED";
    default: return "rcode " + std::to_string(rcode);
    }
}

}  // namespace

srv_resolver::srv_resolver(transport& t, policy p, log_fn log) : transport_(t), policy_(p), log_(std::move(log)) {}

srv_resolver::~srv_resolver() = default;

void srv_resolver::add(std::string_view srv, family_choice family)
{
    const std::string key = normalize_name(srv);
    if (auto it = names_.find(key); it != names_.end()) {
        it->second.family = family;
        return;
    }
    name_state n;
    n.srv = key;
    n.family = family;
    names_.emplace(key, std::move(n));
}

void srv_resolver::retain(const std::vector<std::string>& keep)
{
    for (auto it = names_.begin(); it != names_.end();) {
        if (std::find(keep.begin(), keep.end(), it->first) == keep.end())
            it = names_.erase(it);
        else
            ++it;
    }
}

void srv_resolver::tick(uint64_t now_ms)
{
    now_ms_ = now_ms;
    transport_.poll();
    for (auto& [_, n] : names_)
        if (!n.in_flight && now_ms >= n.next_ms) start(n);
}

bool srv_resolver::take_changed() { return std::exchange(changed_, false); }

const std::vector<learned_peer>* srv_resolver::peers(std::string_view srv) const
{
    auto it = names_.find(normalize_name(srv));
    return it == names_.end() ? nullptr : &it->second.peers;
}

dns_name_report srv_resolver::status(std::string_view srv, uint64_t now_ms) const
{
    dns_name_report r;
    r.srv = normalize_name(srv);
    auto it = names_.find(r.srv);
    if (it == names_.end()) {
        r.state = "waiting";
        return r;
    }
    const name_state& n = it->second;
    r.state = !n.have_answer ? (n.failing ? "failed" : "waiting") : n.failing ? "stale" : "ok";
    r.peers = n.peers.size();
    r.ttl_s = n.ttl_s;
    r.age_s = n.have_answer ? static_cast<double>(now_ms - n.answered_ms) / 1000.0 : -1;
    r.next_refresh_s = n.in_flight || n.next_ms <= now_ms ? 0 : static_cast<double>(n.next_ms - now_ms) / 1000.0;
    r.queries = n.queries;
    r.failures = n.failures;
    r.stale_served = n.stale_served;
    r.last_error = n.last_error;
    return r;
}

srv_resolver::name_state* srv_resolver::find(const std::string& srv, uint64_t serial)
{
    auto it = names_.find(srv);
    if (it == names_.end() || !it->second.in_flight || it->second.serial != serial) return nullptr;
    return &it->second;
}

void srv_resolver::start(name_state& n)
{
    ++n.serial;
    n.in_flight = true;
    n.pending.clear();
    n.a_outstanding = 0;
    n.pending_ttl = max_ttl;
    n.pending_error.clear();
    ++n.queries;
    std::weak_ptr<int> alive = alive_;
    transport_.query(n.srv, type_srv, [this, alive, srv = n.srv, serial = n.serial](query_result r) {
        if (!alive.expired()) on_srv(srv, serial, r);
    });
}

void srv_resolver::on_srv(const std::string& srv, uint64_t serial, const query_result& r)
{
    name_state* n = find(srv, serial);
    if (n == nullptr) return;
    if (!r.ok) return fail(*n, r.error.empty() ? "no answer" : r.error);
    if (r.ans.rcode != 0) return fail(*n, rcode_text(r.ans.rcode));
    std::vector<target> targets;
    for (const auto& s : r.ans.srv) {
        if (s.target.empty()) continue;  // "." : the service is decidedly not offered there
        n->pending_ttl = std::min(n->pending_ttl, s.ttl);
        targets.push_back({s.target, s.priority, s.weight, s.port, {}, {}, {}, {}});
    }
    if (targets.empty()) return fail(*n, r.ans.srv.empty() ? "no SRV records" : "SRV target \".\" only");
    n->pending_ttl = std::min(n->pending_ttl, r.ans.cname_ttl);
    // Lowest priority first, heavier first within one (peers_of keeps the first of duplicates).
    std::stable_sort(targets.begin(), targets.end(), [](const target& a, const target& b) {
        if (a.priority != b.priority) return a.priority < b.priority;
        return a.weight > b.weight;
    });
    n->pending = std::move(targets);
    // One query per target and family: A, AAAA, or both (family_choice).
    const bool want4 = n->family != family_choice::ipv6, want6 = n->family != family_choice::ipv4;
    n->a_outstanding = n->pending.size() * ((want4 ? 1 : 0) + (want6 ? 1 : 0));
    const uint64_t my_serial = n->serial;
    std::weak_ptr<int> alive = alive_;
    // Copy the hosts first: a transport may answer from inside query().
    std::vector<std::string> hosts;
    for (const auto& t : n->pending) hosts.push_back(t.host);
    for (std::size_t i = 0; i < hosts.size(); ++i) {
        for (const uint16_t type : {type_a, type_aaaa}) {
            if ((type == type_a && !want4) || (type == type_aaaa && !want6)) continue;
            ++n->queries;
            transport_.query(hosts[i], type, [this, alive, srv, my_serial, i, type](query_result ar) {
                if (!alive.expired()) on_a(srv, my_serial, i, type, ar);
            });
            n = find(srv, my_serial);
            if (n == nullptr) return;  // finished (every answer came at once)
        }
    }
}

namespace {

/// The addresses a target takes once its lookups are in: the family chosen, or for a
/// preference the preferred family's when it has any, else the other's.
std::vector<ip_address> chosen(const target& t, family_choice f)
{
    switch (f) {
    case family_choice::ipv4: return t.v4;
    case family_choice::ipv6: return t.v6;
    case family_choice::prefer_ipv6: return t.v6.empty() ? t.v4 : t.v6;
    case family_choice::prefer_ipv4: return t.v4.empty() ? t.v6 : t.v4;
    }
    return {};
}

}  // namespace

void srv_resolver::on_a(const std::string& srv, uint64_t serial, std::size_t index, uint16_t type,
                        const query_result& r)
{
    name_state* n = find(srv, serial);
    if (n == nullptr || index >= n->pending.size()) return;
    target& t = n->pending[index];
    const char* rr = type == type_a ? "A" : "AAAA";
    std::string why;
    if (!r.ok) why = r.error.empty() ? "no answer" : r.error;
    else if (r.ans.rcode != 0) why = rcode_text(r.ans.rcode);
    std::vector<ip_address>& got = type == type_a ? t.v4 : t.v6;
    if (why.empty()) {
        for (const auto& a : r.ans.a) {
            if (a.address.is_v6() != (type == type_aaaa)) continue;  // only what was asked
            got.push_back(a.address);
            n->pending_ttl = std::min(n->pending_ttl, a.ttl);
        }
        if (!got.empty()) n->pending_ttl = std::min(n->pending_ttl, r.ans.cname_ttl);
        else why = std::string("no ") + rr + " record";
    }
    if (!why.empty() && t.error.empty()) t.error = std::string(rr) + " " + t.host + ": " + why;
    if (--n->a_outstanding != 0) return;
    // Every lookup is in: each target takes its addresses, or on failure keeps what the last
    // good answer said about it (serve stale, per target).
    for (target& p : n->pending) {
        p.addresses = chosen(p, n->family);
        std::sort(p.addresses.begin(), p.addresses.end());
        p.addresses.erase(std::unique(p.addresses.begin(), p.addresses.end()), p.addresses.end());
        if (!p.addresses.empty()) continue;
        if (n->pending_error.empty()) n->pending_error = p.error;
        for (const auto& old : n->targets)
            if (old.host == p.host && !old.addresses.empty()) {
                p.addresses = old.addresses;
                break;
            }
    }
    finish(*n);
}

void srv_resolver::finish(name_state& n)
{
    auto peers = peers_of(n.pending);
    if (peers.empty()) return fail(n, n.pending_error.empty() ? "no address for any SRV target" : n.pending_error);
    n.in_flight = false;
    const bool partial = !n.pending_error.empty();
    const bool had = n.have_answer;
    n.targets = std::move(n.pending);
    n.pending.clear();
    n.have_answer = true;
    n.ttl_s = n.pending_ttl == max_ttl ? 0 : n.pending_ttl;
    n.answered_ms = now_ms_;
    n.expires_ms = now_ms_ + uint64_t{n.ttl_s} * 1000;
    if (partial) {
        // Some targets kept their old addresses: a failed refresh all the same.
        ++n.failures;
        if (had) ++n.stale_served;
        n.last_error = n.pending_error;
        ++n.streak;
        if (!n.failing)
            log_("dns: " + n.srv + ": refresh failed (" + n.pending_error +
                 "); keeping that target's last good addresses, retrying every " + std::to_string(policy_.retry_ms) +
                 " ms");
        n.failing = true;
        n.next_ms = now_ms_ + policy_.retry_ms;
    } else {
        if (n.failing)
            log_("dns: " + n.srv + ": answers again after " + std::to_string(n.streak) + " failed refresh(es)");
        n.failing = false;
        n.streak = 0;
        n.next_ms = refresh_at(now_ms_, n.ttl_s, policy_);
    }
    set_peers(n, std::move(peers));
}

void srv_resolver::fail(name_state& n, const std::string& why)
{
    n.in_flight = false;
    n.pending.clear();
    ++n.failures;
    ++n.streak;
    n.last_error = why;
    n.next_ms = now_ms_ + policy_.retry_ms;
    const std::string retry = "retrying every " + std::to_string(policy_.retry_ms) + " ms";
    if (n.have_answer && (policy_.serve_stale || now_ms_ < n.expires_ms)) {
        ++n.stale_served;
        if (!n.failing)
            log_("dns: " + n.srv + ": refresh failed (" + why + "); keeping the last good answer (" +
                 describe(n.peers) + "), " + retry);
    } else if (n.have_answer) {
        log_("dns: " + n.srv + ": refresh failed (" + why + ") and the last answer's TTL ran out (serve_stale = false): "
             "no peers until DNS answers, " + retry);
        n.have_answer = false;
        set_peers(n, {});
    } else if (!n.failing) {
        log_("dns: " + n.srv + ": no answer yet (" + why + "): the region has no peers until DNS answers, " + retry);
    }
    n.failing = true;
}

void srv_resolver::set_peers(name_state& n, std::vector<learned_peer> peers)
{
    const peer_diff d = diff(n.peers, peers);
    if (d.empty()) return;
    std::string what = "dns: " + n.srv + ": peers now " + describe(peers);
    if (!d.added.empty()) what += "; added " + describe(d.added);
    if (!d.removed.empty()) what += "; gone " + describe(d.removed) + " (no new calls, calls up go on)";
    if (!d.changed.empty()) what += "; priority/weight changed " + describe(d.changed);
    log_(what);
    n.peers = std::move(peers);
    changed_ = true;
}

}  // namespace sbc::control::dns
