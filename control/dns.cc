// DNS SRV regions on c-ares (see dns.h). Control core only.
#include "control/dns.h"

#include <arpa/inet.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <mutex>

namespace sbc::control {

namespace {

struct pending_query {
    dns::transport::callback done;
    std::size_t* in_flight;
};

std::string with_port(const std::string& s) { return s.find(':') == std::string::npos ? s + ":53" : s; }

std::string join_servers(const std::vector<std::string>& servers)
{
    std::string csv;
    for (const auto& s : servers) csv += (csv.empty() ? "" : ",") + with_port(s);
    return csv;
}

}  // namespace

std::unique_ptr<cares_transport> cares_transport::create(const dns_config& c, std::string& error)
{
    static std::once_flag init_once;
    static int init_status = ARES_SUCCESS;
    std::call_once(init_once, [] { init_status = ares_library_init(ARES_LIB_INIT_ALL); });
    if (init_status != ARES_SUCCESS) {
        error = std::string("c-ares: ") + ares_strerror(init_status);
        return nullptr;
    }
    std::unique_ptr<cares_transport> t(new cares_transport());
    ares_options opts{};
    opts.timeout = static_cast<int>(c.timeout_ms);
    opts.tries = static_cast<int>(c.tries);
    // ares_query never searches domains; NOSEARCH keeps a later ares_search from doing so too.
    opts.flags = ARES_FLAG_NOSEARCH;
    const int mask = ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_FLAGS;
    const int st = ares_init_options(&t->channel_, &opts, mask);
    if (st != ARES_SUCCESS) {
        error = std::string("c-ares: ") + ares_strerror(st);
        return nullptr;
    }
    if (c.servers.empty()) {
        t->from_resolv_conf_ = true;
    } else if (!t->set_servers(c.servers, error)) {
        return nullptr;
    }
    return t;
}

cares_transport::~cares_transport()
{
    // Runs the callbacks of the queries in flight with ARES_EDESTRUCTION (they free their context).
    if (channel_ != nullptr) ares_destroy(channel_);
}

bool cares_transport::set_servers(const std::vector<std::string>& servers, std::string& error)
{
    const std::string csv = join_servers(servers);
    const int st = ares_set_servers_ports_csv(channel_, csv.c_str());
    if (st != ARES_SUCCESS) {
        error = "dns.servers " + csv + ": " + ares_strerror(st);
        return false;
    }
    from_resolv_conf_ = false;
    return true;
}

std::string cares_transport::servers_text() const
{
    std::string csv;
    ares_addr_port_node* list = nullptr;
    if (ares_get_servers_ports(channel_, &list) == ARES_SUCCESS) {
        for (const ares_addr_port_node* n = list; n != nullptr; n = n->next) {
            char buf[INET6_ADDRSTRLEN] = {};
            inet_ntop(n->family, &n->addr, buf, sizeof buf);
            csv += (csv.empty() ? "" : ",") + std::string(buf) + ":" + std::to_string(n->udp_port == 0 ? 53 : n->udp_port);
        }
        ares_free_data(list);
    }
    return from_resolv_conf_ ? "/etc/resolv.conf (" + csv + ")" : csv;
}

void cares_transport::on_answer(void* arg, int status, int /*timeouts*/, unsigned char* abuf, int alen)
{
    std::unique_ptr<pending_query> q(static_cast<pending_query*>(arg));
    --*q->in_flight;
    if (status == ARES_EDESTRUCTION) return;  // the channel is going away; nobody waits any more
    dns::query_result r;
    if ((status == ARES_SUCCESS || status == ARES_ENODATA || status == ARES_ENOTFOUND) && abuf != nullptr && alen > 0) {
        std::string why;
        if (auto a = dns::parse_answer({abuf, static_cast<std::size_t>(alen)}, why)) {
            r.ok = true;
            r.ans = std::move(*a);
        } else {
            r.error = "malformed response: " + why;
        }
    } else if (status == ARES_ENOTFOUND) {
        r.ok = true;
        r.ans.rcode = 3;
    } else {
        r.error = ares_strerror(status);
    }
    q->done(std::move(r));
}

void cares_transport::query(const std::string& name, uint16_t type, callback done)
{
    ++in_flight_;
    ares_query(channel_, name.c_str(), dns::class_in, type, &cares_transport::on_answer,
               new pending_query{std::move(done), &in_flight_});
}

void cares_transport::poll()
{
    if (in_flight_ == 0) return;
    std::array<ares_socket_t, ARES_GETSOCK_MAXNUM> socks{};
    const int bits = ares_getsock(channel_, socks.data(), static_cast<int>(socks.size()));
    std::array<pollfd, ARES_GETSOCK_MAXNUM> fds{};
    nfds_t n = 0;
    for (int i = 0; i < ARES_GETSOCK_MAXNUM; ++i) {
        const bool r = ARES_GETSOCK_READABLE(bits, i), w = ARES_GETSOCK_WRITABLE(bits, i);
        if (!r && !w) continue;
        fds[n].fd = socks[static_cast<std::size_t>(i)];
        fds[n].events = static_cast<short>((r ? POLLIN : 0) | (w ? POLLOUT : 0));
        ++n;
    }
    if (n > 0 && ::poll(fds.data(), n, 0) > 0) {
        for (nfds_t i = 0; i < n; ++i) {
            if (fds[i].revents == 0) continue;
            const bool r = (fds[i].revents & (POLLIN | POLLERR | POLLHUP)) != 0;
            const bool w = (fds[i].revents & POLLOUT) != 0;
            ares_process_fd(channel_, r ? fds[i].fd : ARES_SOCKET_BAD, w ? fds[i].fd : ARES_SOCKET_BAD);
        }
    }
    // Timeouts and retries to the next server.
    ares_process_fd(channel_, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
}

dns_regions::dns_regions(log_fn log, calls_fn has_calls) : log_(std::move(log)), has_calls_(std::move(has_calls)) {}

dns_regions::~dns_regions()
{
    resolver_.reset();
    transport_.reset();
}

namespace {

dns::policy policy_of(const dns_config& d)
{
    dns::policy p;
    p.min_refresh_ms = d.min_refresh_ms;
    p.retry_ms = d.retry_ms;
    p.serve_stale = d.serve_stale;
    return p;
}

bool has_srv(const config& c)
{
    return std::any_of(c.regions.begin(), c.regions.end(), [](const region_config& r) { return !r.srv.empty(); });
}

bool same_peer(const peer_config& a, const peer_config& b) { return a.address == b.address && a.port == b.port; }

}  // namespace

bool dns_regions::prepare(const config& c, std::string& error)
{
    if (!has_srv(c)) return true;
    if (!transport_) {
        transport_ = cares_transport::create(c.dns, error);
        if (!transport_) return false;
        servers_ = c.dns.servers;
        resolver_ = std::make_unique<dns::srv_resolver>(*transport_, policy_of(c.dns), log_);
        log_("dns: resolving SRV regions through " + transport_->servers_text());
    } else if (c.dns.servers != servers_) {
        if (c.dns.servers.empty()) {
            error = c.path + ": dns.servers: going back to /etc/resolv.conf needs a restart";
            return false;
        }
        if (!transport_->set_servers(c.dns.servers, error)) return false;
        servers_ = c.dns.servers;
        log_("dns: servers now " + transport_->servers_text());
    }
    resolver_->set_policy(policy_of(c.dns));
    for (const auto& r : c.regions) {
        if (r.srv.empty()) continue;
        const bool known = resolver_->peers(r.srv) != nullptr;
        resolver_->add(r.srv, r.family);  // a reload may change the family (from the next refresh)
        if (known) continue;
        log_("dns: region " + r.name + ": peers from " + r.srv +
             "; none until it answers (its calls go to the next region of their group, or get 503)");
    }
    return true;
}

std::vector<learned_region> dns_regions::peers_for(const config& c) const
{
    std::vector<learned_region> out(c.regions.size());
    if (!resolver_) return out;
    for (std::size_t ri = 0; ri < c.regions.size(); ++ri) {
        const region_config& rc = c.regions[ri];
        if (rc.srv.empty()) continue;
        learned_region& lr = out[ri];
        if (const auto* peers = resolver_->peers(rc.srv))
            for (const auto& p : *peers)
                lr.current.push_back(srv_peer(rc, p.address, p.port, p.priority, p.weight, p.target));
        // What was published before and is gone from DNS now stays while it has calls.
        auto it = published_.find(rc.name);
        if (it == published_.end()) continue;
        auto keep = [&](const peer_config& old) {
            const bool still = std::any_of(lr.current.begin(), lr.current.end(),
                                           [&](const peer_config& p) { return same_peer(p, old); });
            const bool listed = std::any_of(lr.retired.begin(), lr.retired.end(),
                                            [&](const peer_config& p) { return same_peer(p, old); });
            if (!still && !listed && has_calls_(peer_ids::key(rc.name, old.address, old.port))) lr.retired.push_back(old);
        };
        for (const auto& old : it->second.current) keep(old);
        for (const auto& old : it->second.retired) keep(old);
    }
    return out;
}

void dns_regions::commit(const config& c, const std::vector<learned_region>& learned)
{
    published_.clear();
    std::vector<std::string> names;
    for (std::size_t ri = 0; ri < c.regions.size() && ri < learned.size(); ++ri) {
        if (c.regions[ri].srv.empty()) continue;
        published_[c.regions[ri].name] = learned[ri];
        names.push_back(dns::normalize_name(c.regions[ri].srv));
    }
    if (resolver_) resolver_->retain(names);
}

bool dns_regions::poll(uint64_t now_ms)
{
    if (!resolver_) return false;
    resolver_->tick(now_ms);
    bool rebuild = resolver_->take_changed();
    // A retired peer whose last call ended leaves the table (checked twice a second).
    if (now_ms - last_retired_check_ms_ >= 500) {
        last_retired_check_ms_ = now_ms;
        for (const auto& [region, lr] : published_)
            for (const auto& p : lr.retired)
                if (!has_calls_(peer_ids::key(region, p.address, p.port))) rebuild = true;
    }
    return rebuild;
}

dns_report dns_regions::report(const config& c, uint64_t now_ms) const
{
    dns_report r;
    r.enabled = has_srv(c);
    if (!r.enabled) return r;
    r.servers = transport_ ? transport_->servers_text() : "(not started)";
    for (const auto& rc : c.regions) {
        if (rc.srv.empty()) continue;
        dns_name_report n = resolver_ ? resolver_->status(rc.srv, now_ms) : dns_name_report{};
        if (!resolver_) n.srv = rc.srv, n.state = "waiting";
        n.region = rc.name;
        r.names.push_back(std::move(n));
    }
    return r;
}

std::string dns_regions::source_of(const config& c, uint16_t region, const ip_address& address, uint16_t port) const
{
    if (region >= c.regions.size() || c.regions[region].srv.empty()) return {};
    const region_config& rc = c.regions[region];
    if (resolver_)
        if (const auto* peers = resolver_->peers(rc.srv))
            for (const auto& p : *peers)
                if (p.address == address && p.port == port) return rc.srv + " " + p.target;
    return rc.srv + " (gone from DNS)";
}

}  // namespace sbc::control
