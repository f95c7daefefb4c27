// SIP over TCP and TLS in the control core (see stream_service.h). Control core only.
#include "control/stream_service.h"

#include "dataplane/runtime.h"

namespace sbc::control {

namespace {

std::vector<certificate_info> certificates_of(const streams::tls_set& t, const config& c)
{
    std::vector<certificate_info> out;
    auto add = [&](const std::string& owner, const std::shared_ptr<streams::tls_context>& ctx) {
        if (ctx && !ctx->certificate.empty()) out.push_back({owner, ctx->certificate, ctx->subject, ctx->not_after});
    };
    for (std::size_t i = 0; i < t.trunk_server.size() && i < c.trunks.size(); ++i)
        add("trunk " + c.trunks[i].name, t.trunk_server[i]);
    for (std::size_t i = 0; i < t.region_client.size() && i < c.regions.size(); ++i)
        add("region " + c.regions[i].name, t.region_client[i]);
    add("tls", t.default_client);
    return out;
}

}  // namespace

bool stream_service::needed(const config& c)
{
    for (const auto& t : c.trunks)
        if (t.takes(transport::tcp) || t.takes(transport::tls)) return true;
    for (const auto& r : c.regions) {
        if (!r.srv.empty() && r.srv_proto != transport::udp) return true;
        for (const auto& p : r.peers)
            if (p.proto != transport::udp) return true;
    }
    return false;
}

std::shared_ptr<const streams::tls_set> stream_service::build_tls(const config& c, std::string& error)
{
    auto set = std::make_shared<streams::tls_set>();
    streams::tls_error err;
    for (std::size_t i = 0; i < c.trunks.size(); ++i) {
        std::shared_ptr<streams::tls_context> ctx;
        if (c.trunks[i].tls) {
            ctx = streams::make_tls_context(*c.trunks[i].tls, streams::tls_role::server, err);
            if (!ctx) {
                error = "trunk[" + std::to_string(i) + "].tls." + err.key + ": " + err.message;
                return nullptr;
            }
        }
        set->trunk_server.push_back(std::move(ctx));
    }
    for (std::size_t i = 0; i < c.regions.size(); ++i) {
        std::shared_ptr<streams::tls_context> ctx;
        if (c.regions[i].tls) {
            ctx = streams::make_tls_context(*c.regions[i].tls, streams::tls_role::client, err);
            if (!ctx) {
                error = "region[" + std::to_string(i) + "].tls." + err.key + ": " + err.message;
                return nullptr;
            }
        }
        set->region_client.push_back(std::move(ctx));
    }
    // Anyone else (a UA reached over TLS by its Contact): [tls] as a client, when it can verify.
    if (!c.tls.ca_file.empty() || !c.tls.ca_path.empty())
        set->default_client = streams::make_tls_context(c.tls, streams::tls_role::client, err);
    return set;
}

stream_service::~stream_service() { stop(); }

bool stream_service::start(const config& c, dataplane::dataplane_runtime& rt, const std::string& ns_name,
                           std::string& error)
{
    if (!needed(c)) return true;
    if (rt.stream_pool == nullptr || rt.ports.empty()) {
        error = "TCP/TLS: the dataplane was started without stream rings";
        return false;
    }
    auto tls = build_tls(c, error);
    if (!tls) return false;
    ns_name_ = ns_name;
    ns_ = streams::netns::create(ns_name, error);
    if (!ns_) {
        error = "TCP/TLS: network namespace " + ns_name + ": " + error;
        return false;
    }
    std::vector<ip_prefix> addresses;
    // Every interface's addresses, IPv4 and IPv6: TCP and TLS listen and connect from both.
    auto add = [&addresses](const ip_prefix& p) {
        bool seen = false;
        for (const auto& a : addresses) seen = seen || a.addr == p.addr;
        if (!seen) addresses.push_back(p);
    };
    for (const auto& ic : c.interfaces) {
        add(ic.address);
        if (ic.address6) add(*ic.address6);
    }
    // The kernel interface's name: at most 15 characters.
    const std::string ifname = "sbcx" + std::to_string(getpid() % 100000);
    if (!streams::open_exception_port(*ns_, ifname, rt.ports.front().mac, addresses, port_, error)) {
        error = "TCP/TLS: exception port: " + error;
        return false;
    }
    streams::stream_thread_options o;
    o.settings = c.streams;
    o.ns = ns_.get();
    o.port = &port_;
    o.rings = dataplane::stream_rings_of(rt);
    thread_ = std::make_unique<streams::stream_thread>();
    if (!thread_->start(o, tls, error)) {
        thread_.reset();
        return false;
    }
    certs_ = certificates_of(*tls, c);
    return true;
}

bool stream_service::reload(const config& c, std::string& error)
{
    if (!needed(c)) return true;  // connections and listeners follow the snapshot (closed)
    if (!thread_) {
        error = "TCP/TLS trunks or regions need a restart of sbcd (it started without them)";
        return false;
    }
    auto tls = build_tls(c, error);
    if (!tls) return false;
    thread_->set_tls(tls);
    certs_ = certificates_of(*tls, c);
    return true;
}

void stream_service::stop()
{
    if (thread_) {
        thread_->stop();
        thread_.reset();
    }
    streams::close_exception_port(port_);
    ns_.reset();
}

}  // namespace sbc::control
