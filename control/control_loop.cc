// The control core's loop (see control_loop.h). Control core only.
#include "control/control_loop.h"

#include <cstdio>
#include <mutex>
#include <cstring>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "control/media_collect.h"
#include "control/snapshot_build.h"
#include "dataplane/events.h"
#include "dataplane/overload.h"
#include "sip-fastpath/sip_rules.h"

namespace sbc::control {

std::atomic<bool> stop_requested{false};
std::atomic<bool> reload_requested{false};

namespace {

constexpr const char* version_string = "0.1.0";

std::string format_mac(const std::array<uint8_t, 6>& m)
{
    char buf[18];
    std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
    return buf;
}

neighbour_policy policy_of(const config& c)
{
    neighbour_policy p;
    p.timeout_ms = uint64_t{c.arp.timeout_s} * 1000;
    p.retry_ms = c.arp.retry_ms;
    p.retries = c.arp.retries;
    return p;
}

// The stream thread's counters (relaxed loads: each counter stands alone, as it is written)
// and the configured certificates, copied as plain data for /metrics.
stream_metrics stream_metrics_of(const stream_service& svc)
{
    stream_metrics m;
    if (!svc.running()) return m;
    m.running = true;
    const streams::stream_stats& st = svc.thread()->stats();
    auto load = [](const single_writer<uint64_t>& a) { return a.get(); };
    for (std::size_t i = 0; i < m.open_by_state.size(); ++i) m.open_by_state[i] = load(st.open_by_state[i]);
#define SBC_X(name, help) m.counters.push_back({#name, help, load(st.name)});
    SBC_STREAM_COUNTERS(SBC_X)
#undef SBC_X
    for (std::size_t i = 1; i < streams::conn_reason_count; ++i) {  // from 1: `none` ends nothing
        const auto r = static_cast<streams::conn_reason>(i);
        m.closed.push_back({streams::reason_label(r), streams::reason_text(r), load(st.closed[i])});
        m.handshakes_failed.push_back({streams::reason_label(r), streams::reason_text(r), load(st.handshakes_failed[i])});
    }
    const streams::pump_counters& p = st.pump;
    m.pump = {{"to_kernel", "frames written to the kernel", load(p.to_kernel)},
              {"from_kernel", "frames the kernel sent, passed to a worker", load(p.from_kernel)},
              {"no_route", "kernel frames for no interface's reach", load(p.no_route)},
              {"no_neighbour", "kernel frames for a next hop without MAC (ARP asked)", load(p.no_neighbour)},
              {"other", "kernel frames neither IPv4 nor TCP over IPv6, dropped (its MLD reports: the fast path speaks for it)", load(p.other)},
              {"ring_full", "kernel frames lost on a full worker ring", load(p.ring_full)},
              {"tx_failed", "frames the exception port did not take", load(p.tx_failed)}};
    for (const auto& c : svc.certificates()) m.certificates.push_back({c.owner, c.file, c.not_after});
    return m;
}

}  // namespace

control_loop::control_loop(config cfg, dataplane::dataplane_runtime& rt)
    : cfg_(std::move(cfg)),
      rt_(rt),
      neighbours_(rt.shared->neighbours, policy_of(cfg_),
                  [this](uint16_t iface, const dataplane::arp_fields& f) { send_arp(iface, f); },
                  [this](uint16_t iface, const dataplane::nd_fields& f) { send_nd(iface, f); }),
      started_(std::chrono::steady_clock::now()),
      passive_(rt.shared->peer_health, passive_policy{cfg_.health.passive_down_after, cfg_.health.retest_interval_ms},
               [](const std::string& line) { std::fprintf(stderr, "sbcd: %s\n", line.c_str()); }),
      prober_(rt, neighbours_, [](const std::string& line) { std::fprintf(stderr, "sbcd: %s\n", line.c_str()); }),
      timers_(rt.shared->peer_health, timer_bounds{cfg_.retry.min_no_response_ms, cfg_.retry.no_response_ms},
              [](const std::string& line) { std::fprintf(stderr, "sbcd: %s\n", line.c_str()); })
{
    // Suspect peers (passive_health.h): one silence or ICMP unreachable -> probed at once;
    // any reply to any probe -> no longer suspect.
    passive_.on_suspect([this](uint32_t id) { prober_.probe_now(id); });
    prober_.on_heard([this](uint32_t id, const std::string& what) {
        if (passive_.of(id).suspect) passive_.heard_from(id, what, peer_name(id));
    });
}

bool control_loop::publish_config(const config& c, std::string& error)
{
    const uint64_t gen = published_.generation.load(std::memory_order_relaxed) + 1;
    if (!dns_.prepare(c, error)) return false;
    const std::vector<learned_region> learned = dns_.peers_for(c);
    auto snap = build_snapshot(c, rt_.ports, gen, error);
    if (!snap) return false;
    if (!c.trunks.empty()) {
        snap->proxy = build_proxy_tables(c, snap->interfaces, c.node.workers, ids_, error, &learned);
        if (!snap->proxy) return false;
        // New and freed ids start with a clean health word and history.
        for (uint32_t id : ids_.added()) {
            rt_.shared->peer_health.word[id].store(0, std::memory_order_relaxed);
            passive_.reset(id);
            timers_.reset(id);
            oc_.reset(id);
        }
        for (uint32_t id : ids_.freed()) {
            rt_.shared->peer_health.word[id].store(0, std::memory_order_relaxed);
            passive_.reset(id);
            timers_.reset(id);
            oc_.reset(id);
        }
        // Canaries last: their health bits are set just before this snapshot goes out.
        std::vector<std::string> dropped;
        snap->proxy = canaries_.apply(std::move(snap->proxy), c.node.workers, rt_.shared->peer_health, dropped, error);
        if (!snap->proxy) return false;
        for (const auto& n : dropped) std::fprintf(stderr, "sbcd: peer %s: canary dropped, the peer is gone\n", n.c_str());
        published_.peer_names.assign(sip::max_peers, {});
        for (const auto& p : snap->proxy->peers) published_.peer_names[p.id] = p.name;
    }
    published_.tables = snap->proxy;
    if (cdr_ && snap->proxy) cdr_->set_names(cdr_names_of(*snap->proxy));  // names for the records to come
    passive_.set_policy(passive_policy{c.health.passive_down_after, c.health.retest_interval_ms});
    timers_.set_bounds(timer_bounds{c.retry.min_no_response_ms, c.retry.no_response_ms},
                       [this](uint32_t id) { return peer_name(id); });
    published_.interfaces = snap->interfaces;
    {
        std::vector<uint32_t> fresh;
        if (snap->proxy) {
            fresh.assign(ids_.added().begin(), ids_.added().end());
            fresh.insert(fresh.end(), ids_.freed().begin(), ids_.freed().end());
        }
        prober_.configure(c, snap->proxy, published_.interfaces, fresh);
        if (snap->proxy)
            for (const auto& p : snap->proxy->peers) passive_.set_probed(p.id, prober_.probed(p.id));
    }
    publish_snapshot(rt_.shared->snap, std::move(snap));
    publish_flood(c);  // new [flood] limits, and the deny list checked against the new trust
    published_.generation.store(gen, std::memory_order_relaxed);
    dns_.commit(c, learned);
    // At start run() does it.
    if (shared_.state.load(std::memory_order_relaxed) != node_state::starting) resolve_peer_hops();
    return true;
}

bool control_loop::reload(std::string& error)
{
    auto loaded = load_config(cfg_.path);
    if (!loaded.cfg) {
        for (const auto& e : loaded.errors) error += (error.empty() ? "" : "\n") + e.to_string();
        return false;
    }
    const config& c = *loaded.cfg;
    // What the ports and lcores were started with cannot change under a running dataplane.
    std::string restart;
    if (c.node.workers != cfg_.node.workers) restart += " node.workers";
    if (c.node.control_socket != cfg_.node.control_socket) restart += " node.control_socket";
    if (c.node.management_http != cfg_.node.management_http) restart += " node.management_http";
    if (c.interfaces.size() != cfg_.interfaces.size()) {
        restart += " interface (added or removed)";
    } else {
        for (std::size_t i = 0; i < c.interfaces.size(); ++i) {
            const auto& a = c.interfaces[i];
            const auto& b = cfg_.interfaces[i];
            if (a.name != b.name || a.device != b.device || a.address.addr != b.address.addr ||
                a.address.len != b.address.len || a.gateway != b.gateway || a.vlan != b.vlan)
                restart += " interface[" + std::to_string(i) + "]";
            // dscp_sip and dscp_rtp ride the snapshot (interface_info, media_egress): a reload applies them.
        }
    }
    // The flow table's addresses and ports and each worker's sessions are set up once.
    if (static_cast<const rtp::media_config&>(c.media) != cfg_.media) restart += " media";
    if (!c.cdr.same_as(cfg_.cdr)) restart += " cdr";  // the rings and the file are set at start
    if (!restart.empty()) {
        error = c.path + ": these changes need a restart:" + restart;
        return false;
    }
    if (stream_service::needed(c) && !streams_.running()) {
        error = c.path + ": TCP/TLS trunks or regions need a restart of sbcd (it started without them)";
        return false;
    }
    // New TLS contexts first (a bad certificate refuses the reload before anything changes);
    // established connections keep the ones they were made with.
    if (!streams_.reload(c, error)) {
        error = c.path + ": " + error;
        return false;
    }
    if (!publish_config(c, error)) return false;
    cfg_ = c;
    return true;
}

void control_loop::sample_loop_gaps()
{
    // The worker publishes its window's maximum every 64 iterations; bumping the epoch starts
    // the next window. Relaxed: a window that starts or ends a few iterations late is fine.
    for (const auto& w : rt_.workers) {
        if (w->id >= loop_gap_cycles_.size()) continue;
        loop_gap_cycles_[w->id] = w->max_loop_gap.get();
        w->max_loop_gap_epoch.bump();
    }
}

std::string control_loop::peer_name(uint32_t id) const
{
    const auto& names = published_.peer_names;
    return id < names.size() && !names[id].empty() ? names[id] : "#" + std::to_string(id);
}

control_loop::~control_loop()
{
    // Stop the HTTP thread before anything it reads goes; the member order (shared_ before
    // http_) already ensures it, this says so where the destruction happens.
    http_.reset();
}

uint64_t control_loop::now_ms() const
{
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_).count());
}

void control_loop::send_arp(uint16_t iface, const dataplane::arp_fields& f)
{
    send_frame(iface, [&f](std::span<uint8_t> out) { return dataplane::build_arp(out, f); });
}

void control_loop::send_nd(uint16_t iface, const dataplane::nd_fields& f)
{
    send_frame(iface, [&f](std::span<uint8_t> out) { return dataplane::build_nd(out, f); });
}

template <class Build>
void control_loop::send_frame(uint16_t iface, Build&& build)
{
    if (iface >= published_.interfaces.size()) return;
    rte_mbuf* m = rte_pktmbuf_alloc(rt_.control_pool);
    if (m == nullptr) return;
    auto* data = rte_pktmbuf_mtod(m, uint8_t*);
    // Pad to the Ethernet minimum (60 bytes without FCS); some peers drop runts.
    std::memset(data, 0, 60);
    const std::size_t len = build(std::span<uint8_t>{data, rte_pktmbuf_tailroom(m)});
    if (len == 0) {
        rte_pktmbuf_free(m);
        return;
    }
    const auto frame = static_cast<uint16_t>(len < 60 ? 60 : len);
    m->data_len = frame;
    m->pkt_len = frame;
    m->port = published_.interfaces[iface].port_id;
    dataplane::inject_frame(rt_, m);
}

bool control_loop::start(std::string& error)
{
    if (!publish_config(cfg_, error)) {
        config_refused_ = true;
        return false;
    }

    std::string err;
    socket_ = control_socket::open(cfg_.node.control_socket, err);
    if (!socket_) {
        error = "control socket " + cfg_.node.control_socket + ": " + err;
        return false;
    }
    if (!cfg_.node.management_http.empty()) {
        http_ = metrics_http::start(
            cfg_.node.management_http,
            // HTTP thread: both read only shared_ (see http_shared in control_loop.h): a copy of
            // the text taken under the mutex, and one atomic byte. Neither can see a reload half
            // done, as neither reads the config or the published tables.
            [this] {
                std::lock_guard<std::mutex> lock(shared_.mu);
                return shared_.metrics_text;
            },
            [this]() -> std::pair<int, std::string> {
                const node_state st = shared_.state.load(std::memory_order_relaxed);
                if (st == node_state::running) return {200, "ok\n"};
                return {503, std::string(node_state_name(st)) + "\n"};
            },
            err);
        if (!http_) {
            error = "management HTTP " + cfg_.node.management_http + ": " + err;
            return false;
        }
    }
    if (!start_cdr(error)) return false;  // control_cdr.cc
    const std::string prefix = cfg_.dpdk.file_prefix.empty() ? "sbc-" + cfg_.node.name : cfg_.dpdk.file_prefix;
    if (!streams_.start(cfg_, rt_, "sbcd-" + prefix, error)) return false;
    if (streams_.running())
        std::fprintf(stderr, "sbcd: TCP/TLS: stream thread running; kernel side in network namespace %s\n",
                     streams_.namespace_name().c_str());
    return true;
}

void control_loop::drain_events(uint64_t now)
{
    std::array<dataplane::event, 64> evs;
    for (;;) {
        const unsigned n = rte_ring_sc_dequeue_burst_elem(rt_.events, evs.data(), sizeof(dataplane::event),
                                                           static_cast<unsigned>(evs.size()), nullptr);
        for (unsigned i = 0; i < n; ++i) {
            const auto& e = evs[i];
            switch (e.kind) {
            case dataplane::event_kind::neighbour_seen: neighbours_.seen(e.iface, e.ip, e.mac, now); break;
            case dataplane::event_kind::neighbour_needed: neighbours_.needed(e.iface, e.ip, now); break;
            case dataplane::event_kind::icmp_unreachable:
                // The owner worker's proxy has already moved the call on; this is for operators.
                ++icmp_unreachable_;
                break;
            case dataplane::event_kind::packet_too_big:
                // What the workers send next toward it fits (dataplane/ipv6_fragment.h).
                ++packet_too_big_;
                rt_.shared->path_mtu.record(e.orig_dst, e.code, now);
                break;
            case dataplane::event_kind::peer_failed:
            case dataplane::event_kind::peer_answered: {
                sip::peer_event pe;
                pe.kind = e.kind == dataplane::event_kind::peer_failed ? sip::peer_event_kind::failed
                                                                       : sip::peer_event_kind::answered;
                pe.cause = static_cast<sip::failure_cause>(e.cause);
                pe.code = e.code;
                pe.peer_id = e.peer_id;
                // Suspect (or down) first, then the timer: a worker that sees the backed-off
                // timer sees the peer suspect too (x86 keeps one writer's stores in order), so
                // no new call waits the longer timer on a peer that just went silent.
                if (passive_.on_event(pe, peer_name(e.peer_id), now))
                    prober_.on_passive_down(e.peer_id, passive_.of(e.peer_id).why,
                                            [this](uint32_t id) { return peer_name(id); });
                // Silent past its timer: the timer backs off (a final failure, a 503, is no silence).
                if (pe.cause == sip::failure_cause::timeout)
                    timers_.on_silence(e.peer_id, [this](uint32_t id) { return peer_name(id); });
                break;
            }
            case dataplane::event_kind::peer_responded:
                timers_.on_sample(e.peer_id, e.rtt_us, [this](uint32_t id) { return peer_name(id); });
                if (passive_.of(e.peer_id).suspect)  // it answered: no longer suspect
                    passive_.heard_from(e.peer_id, "answered " + std::to_string(e.code), peer_name(e.peer_id));
                break;
            case dataplane::event_kind::probe_reply: {
                // A SIP reply to a probed peer's probe (on time or after its timeout, not counted
                // stale): the RTT the prober measured is a response time of the peer too. A reply
                // to a one-off probe of a peer not probed leaves no RTT to read.
                const uint64_t stale = prober_.late_replies();
                prober_.on_reply(e, [this](uint32_t id) { return peer_name(id); });
                const int64_t rtt_us = prober_.of(e.peer_id).last_rtt_us;
                if (e.code != 0 && prober_.late_replies() == stale && prober_.probed(e.peer_id) && rtt_us >= 0)
                    timers_.on_sample(e.peer_id, static_cast<uint64_t>(rtt_us),
                                      [this](uint32_t id) { return peer_name(id); });
                break;
            }
            case dataplane::event_kind::peer_connection_failed: {
                // A TCP/TLS peer's connection failed or was lost: the peer is down at once, with
                // the reason (its calls in flight were already moved on by their workers).
                const auto why = static_cast<streams::conn_reason>(e.code);
                const std::string text = std::string("connection: ") + streams::reason_text(why);
                if (passive_.on_connection_failed(e.peer_id, text, peer_name(e.peer_id), now))
                    prober_.on_passive_down(e.peer_id, text, [this](uint32_t id) { return peer_name(id); });
                break;
            }
            case dataplane::event_kind::peer_connection_up:
                passive_.on_connection_up(e.peer_id, peer_name(e.peer_id));
                break;
            case dataplane::event_kind::peer_overload:  // RFC 7339 feedback (control/oc_peers.h)
                oc_.on_feedback(e.peer_id, static_cast<uint8_t>(e.code), e.oc_validity_ms, e.has_oc_seq,
                                (uint64_t{e.oc_seq_hi} << 32) | e.oc_seq_lo, now,
                                [this](uint32_t id) { return peer_name(id); });
                break;
            case dataplane::event_kind::source_report: on_source_report(e, now); break;  // control_deny.cc
            }
        }
        if (n < evs.size()) break;
    }
}

stats_report control_loop::report() const
{
    stats_report r;
    r.node_name = cfg_.node.name;
    const node_state st = shared_.state.load(std::memory_order_relaxed);
    r.state = st == node_state::running && rt_.shared->peer_health.overloaded() ? "overloaded"
                                                                                : std::string(node_state_name(st));
    r.version = version_string;
    r.uptime_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    r.snapshot_generation = published_.generation.load(std::memory_order_relaxed);
    r.tsc_hz = rte_get_tsc_hz();
    for (std::size_t i = 0; i < published_.interfaces.size(); ++i) {
        const auto& ii = published_.interfaces[i];
        interface_status s;
        s.name = ii.name;
        s.device = cfg_.interfaces[i].device;
        s.address = to_string(ii.address);
        s.mac = format_mac(ii.mac);
        s.port_id = ii.port_id;
        s.vlan = ii.vlan;
        rte_eth_link link{};
        s.link_up = rte_eth_link_get_nowait(ii.port_id, &link) == 0 && link.link_status == RTE_ETH_LINK_UP;
        if (!ii.gateway.is_unspecified()) {
            s.gateway = to_string(ii.gateway);
            if (auto mac = rt_.shared->neighbours.lookup(ii.gateway)) s.gateway_mac = format_mac(*mac);
        }
        if (ii.has_v6()) {
            s.address6 = to_string(ii.address6);
            s.link_local6 = to_string(ii.link_local6);
        }
        if (!ii.gateway6.is_unspecified()) {
            s.gateway6 = to_string(ii.gateway6);
            if (auto mac = rt_.shared->neighbours.lookup(ii.gateway6)) s.gateway6_mac = format_mac(*mac);
        }
        r.interfaces.push_back(std::move(s));
    }
    for (const auto& w : rt_.workers) {
        worker_status ws;
        ws.id = w->id;
        ws.lcore = w->lcore;
        ws.counters = dataplane::snapshot_of(w->counters);
        const dataplane::overload_view ov = dataplane::overload_of(w->id);  // dataplane/overload.h
        ws.overload_reduction = ov.reduction;
        ws.recent_busy_percent = ov.busy_permille / 10.0;
        ws.ring_percent = ov.ring_percent;
        if (w->proxy) {
            ws.setups_active = w->proxy->stats().setups_active.get();
            ws.dialogs_active = w->proxy->stats().dialogs_active.get();
        }
        if (w->id < loop_gap_cycles_.size())
            ws.max_loop_gap_us = static_cast<double>(loop_gap_cycles_[w->id]) * 1e6 / static_cast<double>(rte_get_tsc_hz());
        dataplane::accumulate(r.total, ws.counters);
        r.workers.push_back(ws);
    }
    r.neighbours = rt_.shared->neighbours.entries().size();
    r.icmp_unreachable = icmp_unreachable_;
    r.packet_too_big = packet_too_big_;
    r.path_mtu_entries = rt_.shared->path_mtu.size();
    r.dns = dns_.report(cfg_, now_ms());
    fill_sip(r);
    fill_flood(r);
    r.media = collect_media(rt_, false);
    r.streams = stream_metrics_of(streams_);
    if (cdr_) r.cdr = cdr_->report();
    return r;
}

void control_loop::fill_sip(stats_report& r) const
{
    if (!published_.tables) return;
    sip_report& s = r.sip;
    s.enabled = true;
    for (std::size_t k = 0; k < sip::proxy_counter_count; ++k) {
        const auto c = static_cast<sip::proxy_counter>(k);
        uint64_t v = 0;
        for (const auto& w : rt_.workers)
            if (w->proxy) v += w->proxy->stats().get(c);
        s.counters.emplace_back(std::string(sip::proxy_counter_name(c)), v);
        s.help.emplace_back(std::string(sip::proxy_counter_name(c)), std::string(sip::proxy_counter_help(c)));
    }
    for (const auto& w : rt_.workers) {
        if (!w->proxy) continue;
        s.setups_active += w->proxy->stats().setups_active.get();
        s.dialogs_active += w->proxy->stats().dialogs_active.get();
    }
    auto sum_by = [&](auto field, std::size_t i) {
        uint64_t v = 0;
        for (const auto& w : rt_.workers)
            if (w->proxy) v += (w->proxy->stats().*field)[i].get();
        return v;
    };
    for (std::size_t i = 0; i < published_.tables->trunks.size() && i < sip::proxy_stats::max_counted; ++i)
        s.invites_by_trunk.push_back(
            {published_.tables->trunks[i].name, sum_by(&sip::proxy_stats::invites_by_trunk, i)});
    for (std::size_t i = 0; i < published_.tables->routes.size() && i < sip::proxy_stats::max_counted; ++i)
        s.invites_by_route.push_back(
            {published_.tables->routes[i].name, sum_by(&sip::proxy_stats::invites_by_route, i)});
    s.invites_by_route.push_back({"(none)", sum_by(&sip::proxy_stats::invites_by_route, sip::proxy_stats::max_counted)});
    // Routes with a fallback_group: the calls that moved to it (sip-fastpath/route_fallback.h).
    for (std::size_t i = 0; i < published_.tables->routes.size() && i < sip::proxy_stats::max_counted; ++i)
        if (published_.tables->routes[i].fallback.group != sip::no_fallback)
            s.fallbacks_by_route.push_back(
                {published_.tables->routes[i].name, sum_by(&sip::proxy_stats::fallbacks_by_route, i)});
    for (std::size_t i = 0; i < s.scanner_matches.size(); ++i) s.scanner_matches[i] = sum_by(&sip::proxy_stats::scanner_matches, i);
    // Call admission: the node-wide counts (sip-fastpath/admission.h) and each trunk's refusals.
    const sip::admission& adm = rt_.shared->admission;
    s.admission.node_calls = adm.calls();
    s.admission.node_max_calls = published_.tables->admission.max_calls;
    for (std::size_t i = 0; i < published_.tables->trunks.size() && i < sip::proxy_stats::max_counted; ++i) {
        const sip::trunk& tr = published_.tables->trunks[i];
        s.admission.trunks.push_back({tr.name, adm.trunk_calls(i), tr.max_calls, tr.calls_per_second,
                                      tr.calls_per_second != 0 ? tr.calls_burst : 0,
                                      sum_by(&sip::proxy_stats::refused_by_trunk, i)});
    }
    // Header and number rules (control/rule_report.h): by rule index of the published tables.
    for (std::size_t i = 0; published_.tables->rules && i < published_.tables->rules->rules.size() && i < sip::max_rules; ++i) {
        const sip::rule& ru = published_.tables->rules->rules[i];
        s.rules.push_back({ru.owner, ru.outbound ? "out" : "in", ru.name, std::string(sip::rule_kind_name(ru.kind)),
                           sum_by(&sip::proxy_stats::rule_hits, i), sum_by(&sip::proxy_stats::rule_failures, i)});
    }
    s.probe_send_failures = prober_.send_failures();
    s.probe_late_replies = prober_.late_replies();
    // TCP/TLS peers: the stream thread's word on their connections (null when none runs).
    const auto conns = streams_.running() ? streams_.thread()->report() : nullptr;
    for (const auto& p : published_.tables->peers) {
        peer_report pr;
        pr.name = p.name;
        pr.region = p.region < published_.tables->regions.size() ? published_.tables->regions[p.region].name : "";
        pr.address = to_string(p.remote());
        pr.id = p.id;
        const uint32_t word = rt_.shared->peer_health.word[p.id].load(std::memory_order_relaxed);
        const auto& v = passive_.of(p.id);
        pr.state = (word & sip::peer_state::disabled) ? "disabled"
                   : (word & sip::peer_state::draining) ? "draining"
                   : (word & sip::peer_state::down)     ? "down"
                   : v.trial                            ? "trial"
                                                        : "up";
        pr.why = v.why;
        pr.state_changes = v.changes;
        if (prober_.probed(p.id)) {
            // Probed: the probes' verdict (or the passive failures that took it down) is the why.
            const auto& pv = prober_.of(p.id);
            pr.probe = "options";
            pr.why = pv.down || pv.failures_in_row == 0 ? pv.why : pv.last_failure;
            pr.last_probe_rtt_ms = pv.last_rtt_us < 0 ? -1.0 : static_cast<double>(pv.last_rtt_us) / 1000.0;
            pr.probes_sent = prober_.sent(p.id);
            pr.probes_failed = pv.probes_failed;
            pr.probes_late = pv.probes_late;
            pr.state_changes = pv.changes;
        }
        if (conns && pr.why.empty()) {
            // A peer that is not probed is not taken down by a failed connection (only the
            // probes' verdict is): say at least why it has none.
            for (const auto& pc : conns->peers)
                if (pc.peer_id == p.id && pc.established == 0 && !pc.last_error.empty())
                    pr.why = "connection: " + pc.last_error;
        }
        if (word & (sip::peer_state::disabled | sip::peer_state::draining)) pr.why = "operator";
        if (const canary_entry* ce = canaries_.find(p.name)) {
            pr.canary = ce->describe();
            if (pr.state == "up") pr.state = "canary";
        }
        pr.consecutive_failures = v.consecutive;
        pr.suspect = (word & sip::peer_state::suspect) != 0;
        pr.suspect_marks = v.suspect_marks;
        pr.no_response_ms = timers_.in_force(p.id);
        pr.no_response_learned = timers_.of(p.id).learned;
        pr.response_samples = timers_.of(p.id).samples;
        pr.oc_reduction = oc_.of(p.id).reduction;
        pr.oc_left_ms = oc_.left_ms(p.id, now_ms());
        pr.source = dns_.source_of(cfg_, p.region, p.address, p.port);
        pr.max_calls = p.max_calls;
        for (const auto& w : rt_.workers) {
            if (!w->proxy) continue;
            const auto& st = w->proxy->stats();
            pr.attempts += st.attempts_by_peer[p.id].get();
            pr.active_calls += st.active_by_peer[p.id].get();
            pr.full_skips += st.full_skips_by_peer[p.id].get();
            for (std::size_t k = 0; k < 5; ++k) pr.failures[k] += st.failures_by_peer[p.id][k].get();
        }
        s.peers.push_back(std::move(pr));
    }
}

uint64_t control_loop::active_calls() const
{
    uint64_t active = 0;
    for (const auto& w : rt_.workers)
        if (w->proxy)
            active += w->proxy->stats().dialogs_active.get() +
                      w->proxy->stats().setups_active.get();
    return active;
}

void control_loop::update_overload(uint64_t active)
{
    const uint64_t limit = cfg_.self.overload_calls;
    auto& node = rt_.shared->peer_health.node;
    const bool was = (node.load(std::memory_order_relaxed) & sip::peer_health::node_overloaded) != 0;
    // Hysteresis: overloaded at the limit, back to normal below 90 % of it, so that the answer
    // to the balancers' OPTIONS does not flap around one call more or less.
    const bool now = limit != 0 && (was ? active * 10 >= limit * 9 : active >= limit);
    if (now == was) return;
    if (now)
        node.fetch_or(sip::peer_health::node_overloaded, std::memory_order_relaxed);
    else
        node.fetch_and(~sip::peer_health::node_overloaded, std::memory_order_relaxed);
    ++drain_.overload_changes;
    std::fprintf(stderr, "sbcd: %s: %llu active calls (overload_calls = %llu)\n",
                 now ? "overloaded, OPTIONS to the SBC answered as unavailable" : "no longer overloaded",
                 static_cast<unsigned long long>(active), static_cast<unsigned long long>(limit));
}

int control_loop::run()
{
    for (const std::string& line : dataplane::accept_ipv6_multicast(rt_, published_.interfaces))
        std::fprintf(stderr, "sbcd: %s\n", line.c_str());
    neighbours_.set_interfaces(published_.interfaces, now_ms());
    // Resolve every peer's next hop now, so that the first INVITE to a peer is not lost to
    // an unresolved MAC (workers drop, they do not queue).
    resolve_peer_hops();
    shared_.state.store(node_state::running, std::memory_order_relaxed);
    std::fprintf(stderr, "sbcd: %s running: %zu interface(s), %zu worker(s), control socket %s%s%s\n",
                 cfg_.node.name.c_str(), published_.interfaces.size(), rt_.workers.size(),
                 cfg_.node.control_socket.c_str(), cfg_.node.management_http.empty() ? "" : ", http ",
                 cfg_.node.management_http.c_str());
    uint64_t last_tick = 0, last_metrics = 0;
    uint64_t last_gap_sample = now_ms();
    bool first = true;
    while (!stop_requested.load(std::memory_order_relaxed)) {
        const uint64_t now = now_ms();
        drain_events(now);
        poll_cdr(false);  // control_cdr.cc
        deny_tick(now);
        prober_.tick(now, [this](uint32_t id) { return peer_name(id); });
        on_dns(now);
        if (now - last_tick >= 100) {
            neighbours_.tick(now);
            rt_.shared->path_mtu.expire(now);
            passive_.tick(now, [this](uint32_t id) { return peer_name(id); });
            oc_.tick(now, [this](uint32_t id) { return peer_name(id); });
            last_tick = now;
        }
        if (now - last_gap_sample >= 1000) {
            sample_loop_gaps();
            last_gap_sample = now;
        }
        if (first || now - last_metrics >= 200) {
            std::string text = to_prometheus(report());
            std::lock_guard<std::mutex> lock(shared_.mu);
            shared_.metrics_text = std::move(text);
            last_metrics = now;
            first = false;
        }
        if (reload_requested.exchange(false)) {  // SIGHUP, as `sbcctl reload`; also reopens the CDR file (logrotate)
            if (cdr_) cdr_->reopen(std::chrono::duration_cast<std::chrono::milliseconds>(
                                       std::chrono::system_clock::now().time_since_epoch()).count());
            cmd_reload(nlohmann::json::object());
        }
        const uint64_t active = active_calls();
        update_overload(active);
        if (shared_.state.load(std::memory_order_relaxed) == node_state::draining) {
            if (active == 0) {
                std::fprintf(stderr, "sbcd: drained: no call left\n");
                break;
            }
            if (now >= drain_.drain_deadline_ms) {
                std::fprintf(stderr, "sbcd: drain timeout: %llu call(s) still up, stopping anyway\n",
                             static_cast<unsigned long long>(active));
                break;
            }
        }
        // Waiting in poll bounds the event latency to 1 ms while leaving the CPU to others.
        socket_->poll(1, [this](const nlohmann::json& req) { return handle(req); });
    }
    std::fprintf(stderr, "sbcd: stopping\n");
    return 0;
}

}  // namespace sbc::control
