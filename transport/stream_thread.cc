// The stream thread's loop (see stream_thread.h): exception-port pump, rings to and from the
// workers, listeners and peer connections reconciled with each new snapshot, timers, and the
// report the control core reads. Connection I/O is in stream_io.cc. Stream thread only, except
// the stream_thread members that say otherwise.
#include "transport/stream_thread.h"

#include <pthread.h>
#include <cerrno>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <rte_lcore.h>

#include "dataplane/rcu.h"
#include "dataplane/snapshot.h"
#include "transport/stream_io.h"

namespace sbc::streams {

namespace {

uint64_t monotonic_ms()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

}  // namespace

stream_thread::stream_thread() = default;

stream_thread::~stream_thread() { stop(); }

bool stream_thread::start(const stream_thread_options& o, std::shared_ptr<const tls_set> tls, std::string& error)
{
    if (o.rings.workers.empty() || o.rings.pool == nullptr || o.rings.snap == nullptr || o.rings.neighbours == nullptr ||
        o.rings.events == nullptr || o.ns == nullptr || o.port == nullptr) {
        error = "stream thread: the dataplane has no stream rings or exception port";
        return false;
    }
    tls_.store(std::move(tls));
    impl_ = std::make_unique<impl>(o, stats_, stop_, tls_, report_);
    stop_.store(false);
    thread_ = std::thread([this] { impl_->run(); });
    return true;
}

void stream_thread::stop()
{
    if (!thread_.joinable()) return;
    stop_.store(true);
    thread_.join();
    impl_.reset();
}

void stream_thread::set_tls(std::shared_ptr<const tls_set> tls) { tls_.store(std::move(tls)); }

std::shared_ptr<const stream_report> stream_thread::report() const { return report_.load(); }

// --- the loop

void stream_thread::impl::run()
{
    pthread_setname_np(pthread_self(), "sbc-streams");
    if (o_.settings.cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(o_.settings.cpu, &set);
        pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    }
    // Mempool caches and an lcore id for DPDK calls; a timer slack of 10 µs for the idle wait.
    rte_thread_register();
    prctl(PR_SET_TIMERSLACK, 10000UL, 0, 0, 0);
    std::string error;
    if (!o_.ns->enter(error)) problems_.push_back("cannot enter sbcd's namespace: " + error);
    ep_ = epoll_create1(EPOLL_CLOEXEC);
    if (o_.port->rx_fd >= 0) {
        // Level-triggered on the tap queue: readable while the kernel has frames for the wire.
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = exception_tag;
        epoll_ctl(ep_, EPOLL_CTL_ADD, o_.port->rx_fd, &ev);
    }
    const timespec idle_wait{static_cast<time_t>(o_.settings.idle_wait_us / 1000000),
                             static_cast<long>(o_.settings.idle_wait_us % 1000000) * 1000};
    dataplane::rcu::register_thread();
    uint64_t last_timers = 0, last_report = 0;
    uint32_t idle_loops = 0;
    while (!stop_.load(std::memory_order_relaxed)) {
        now_ms_ = monotonic_ms();
        const dataplane::snapshot* snap = dataplane::rcu::dereference(o_.rings.snap->current);
        if (snap->generation != generation_) {
            generation_ = snap->generation;
            reconcile(*snap);
        }
        unsigned work = pump_to_kernel(*o_.port, o_.rings, stats_.pump);
        work += pump_from_kernel(*o_.port, o_.rings, *snap, stats_.pump);
        work += read_again();
        work += drain_sends(*snap);
        flush_dirty();
        if (now_ms_ - last_timers >= 10) {
            last_timers = now_ms_;
            run_timers(*snap);
        }
        hand_all_staged();  // before the wait: what this iteration framed goes to the workers now
        if (now_ms_ - last_report >= 500) {
            last_report = now_ms_;
            publish_report(*snap);
        }
        dataplane::rcu::quiescent_state();
        // Busy: poll the sockets without waiting. After one iteration with nothing to do, wait
        // in epoll for at most [streams] idle_wait_us: sockets and the exception port (its RX
        // interrupt fd) wake us at once; the workers' rings have no file descriptor, so what
        // they hand us waits at most that long. Spinning longer only burns the CPU it shares.
        idle_loops = work != 0 ? 0 : idle_loops + 1;
        const bool wait = idle_loops >= 2;
        std::array<epoll_event, 64> ev;
        int n;
        if (wait) {
            dataplane::rcu::thread_offline();
            n = epoll_pwait2(ep_, ev.data(), static_cast<int>(ev.size()), &idle_wait, nullptr);
            if (n < 0 && errno == ENOSYS) n = epoll_wait(ep_, ev.data(), static_cast<int>(ev.size()), 1);  // kernel < 5.11
            dataplane::rcu::thread_online();
        } else {
            n = epoll_wait(ep_, ev.data(), static_cast<int>(ev.size()), 0);
        }
        if (n > 0) {
            idle_loops = 0;
            now_ms_ = monotonic_ms();
            const dataplane::snapshot* s2 = dataplane::rcu::dereference(o_.rings.snap->current);
            for (int i = 0; i < n; ++i) on_event(*s2, ev[static_cast<std::size_t>(i)]);
            flush_dirty();
            hand_all_staged();
        }
    }
    close_all();
    hand_all_staged();  // the lost connections' notices of the close (a worker may still take them)
    dataplane::rcu::thread_offline();
    dataplane::rcu::unregister_thread();
    if (ep_ >= 0) close(ep_);
    rte_thread_unregister();
}

// --- listeners and peers follow the snapshot

void stream_thread::impl::reconcile(const dataplane::snapshot& snap)
{
    learn_sip_tos(snap);
    struct want {
        endpoint local;
        uint16_t trunk;
    };
    std::vector<want> wanted;
    if (snap.proxy) {
        for (std::size_t i = 0; i < snap.proxy->trunks.size(); ++i) {
            const sip::trunk& t = snap.proxy->trunks[i];
            // On the trunk's IPv4 address, and on its IPv6 one when its interface has one.
            for (const transport proto : {transport::tcp, transport::tls}) {
                if ((proto == transport::tcp ? t.tcp_port : t.tls_port) == 0) continue;
                wanted.push_back({t.local(proto), static_cast<uint16_t>(i)});
                if (t.address6.is_v6()) wanted.push_back({t.local(proto, t.address6), static_cast<uint16_t>(i)});
            }
            trunk_names_[static_cast<uint16_t>(i)] = t.name;
        }
    }
    // Close listeners no trunk wants; renumber the others.
    for (std::size_t i = 0; i < listeners_.size();) {
        bool keep = false;
        for (const want& w : wanted)
            if (w.local.same_place(listeners_[i].local)) {
                listeners_[i].trunk = w.trunk;
                keep = true;
            }
        if (keep) {
            ++i;
            continue;
        }
        epoll_ctl(ep_, EPOLL_CTL_DEL, listeners_[i].fd, nullptr);
        close(listeners_[i].fd);
        listeners_.erase(listeners_.begin() + static_cast<std::ptrdiff_t>(i));
    }
    problems_.clear();
    for (const want& w : wanted) {
        bool have = false;
        for (const listener& l : listeners_) have = have || l.local.same_place(w.local);
        if (!have) open_listener(w.local, w.trunk);
    }
    // Peers: one entry per TCP/TLS peer id, connections_per_peer connections each.
    std::vector<uint32_t> seen;
    if (snap.proxy) {
        for (const sip::peer& p : snap.proxy->peers) {
            if (p.proto == transport::udp) continue;
            seen.push_back(p.id);
            peer_entry& e = peers_[p.id];
            const sip::trunk& t = snap.proxy->trunks[p.trunk];
            const endpoint remote = p.remote();
            if (!e.remote.same_place(remote) || e.server_name != p.server_name) {
                // A new peer, or one that moved: its old connections go.
                for (uint32_t id : e.conns)
                    if (conn* c = conns_.find(id)) close_conn(*c, conn_reason::shutdown, "peer changed");
                e = peer_entry{};
            }
            e.remote = remote;
            e.local = t.leg_local(p.proto, remote.addr);
            e.trunk = p.trunk;
            e.region = p.region;
            e.name = p.name;
            e.server_name = p.server_name;
        }
    }
    for (auto it = peers_.begin(); it != peers_.end();) {
        bool keep = false;
        for (uint32_t id : seen) keep = keep || id == it->first;
        if (keep) {
            ++it;
            continue;
        }
        for (uint32_t id : it->second.conns)
            if (conn* c = conns_.find(id)) close_conn(*c, conn_reason::shutdown, "peer removed");
        it = peers_.erase(it);
    }
    keep_peers_connected();
}

void stream_thread::impl::keep_peers_connected()
{
    for (auto& [id, e] : peers_) {
        // Forget connections that are gone.
        std::erase_if(e.conns, [&](uint32_t cid) { return conns_.find(cid) == nullptr; });
        while (e.conns.size() < o_.settings.connections_per_peer && now_ms_ >= e.next_try_ms) {
            conn* c = connect_to(e.remote, e.local, e.trunk, e.server_name, client_context(e.region), id);
            if (c == nullptr) {
                e.next_try_ms = now_ms_ + backoff(e);
                break;
            }
            e.conns.push_back(c->id);
        }
    }
}

uint64_t stream_thread::impl::backoff(peer_entry& e)
{
    e.backoff_ms = e.backoff_ms == 0 ? o_.settings.reconnect_min_ms
                                     : std::min<uint64_t>(e.backoff_ms * 2, o_.settings.reconnect_max_ms);
    return e.backoff_ms;
}

std::shared_ptr<tls_context> stream_thread::impl::client_context(uint16_t region) const
{
    const std::shared_ptr<const tls_set> t = tls_.load();
    if (!t) return nullptr;
    if (region < t->region_client.size() && t->region_client[region]) return t->region_client[region];
    return t->default_client;
}

std::shared_ptr<tls_context> stream_thread::impl::server_context(uint16_t trunk) const
{
    const std::shared_ptr<const tls_set> t = tls_.load();
    if (!t || trunk >= t->trunk_server.size()) return nullptr;
    return t->trunk_server[trunk];
}

// --- timers

void stream_thread::impl::run_timers(const dataplane::snapshot&)
{
    const stream_settings& s = o_.settings;
    for (std::size_t i = conns_.used(); i-- > 0;) {  // from the last: a close moves the last here (stream_conn.h)
        conn& c = conns_.open_at(i);
        if ((c.state == conn_state::connecting || c.state == conn_state::handshaking) && now_ms_ >= c.deadline_ms) {
            close_conn(c, conn_reason::timeout, c.state == conn_state::connecting ? "connect" : "TLS handshake");
            continue;
        }
        if (c.state != conn_state::established) continue;
        if (!c.confirmed && now_ms_ >= c.confirm_at_ms) confirm(c);
        if (c.framer && c.framer->partial()) {
            if (c.partial_since_ms == 0) c.partial_since_ms = now_ms_;
            if (now_ms_ - c.partial_since_ms >= s.partial_timeout_ms) {
                close_conn(c, conn_reason::partial_message, "");
                continue;
            }
        } else {
            c.partial_since_ms = 0;
        }
        if (!c.outbound && now_ms_ - c.last_rx_ms >= s.idle_timeout_ms) {
            close_conn(c, conn_reason::idle, "");
            continue;
        }
        if (c.outbound && s.keepalive_interval_ms != 0 && now_ms_ - c.ping_ms >= s.keepalive_interval_ms) {
            if (c.ping_outstanding) {
                close_conn(c, conn_reason::timeout, "keep-alive ping unanswered");
                continue;
            }
            c.ping_outstanding = true;
            c.ping_ms = now_ms_;
            send_bytes(c, "\r\n\r\n");
        }
    }
    keep_peers_connected();
    flush_dirty();
    // The per-source handshake windows start over every second.
    if (now_ms_ - handshake_window_ms_ >= 1000) {
        handshake_window_ms_ = now_ms_;
        handshakes_by_source_.clear();
    }
}

// --- report

void stream_thread::impl::publish_report(const dataplane::snapshot&)
{
    auto r = std::make_shared<stream_report>();
    std::array<uint64_t, 3> by_state{};  // connecting, handshaking, established, as shown
    static constexpr std::array<const char*, 3> state_names{"connecting", "handshaking", "established"};
    for (std::size_t i = 0; i < conns_.used(); ++i) {
        const conn& c = conns_.open_at(i);
        // An outbound TLS connection the server may still refuse (see impl::confirm) shows as
        // "handshaking" until it is confirmed.
        const std::size_t shown = c.state == conn_state::connecting ? 0 : c.state == conn_state::handshaking || !c.confirmed ? 1 : 2;
        ++by_state[shown];
        conn_report cr;
        cr.id = c.id;
        cr.outbound = c.outbound;
        cr.state = state_names[shown];
        cr.local = c.local;
        cr.remote = c.remote;
        if (c.peer_id != no_owner_peer) {
            const auto it = peers_.find(c.peer_id);
            cr.owner = "peer " + (it != peers_.end() ? it->second.name : std::to_string(c.peer_id));
        } else {
            cr.owner = "trunk " + std::to_string(c.trunk);
            if (const auto t = trunk_names_.find(c.trunk); t != trunk_names_.end()) cr.owner = "trunk " + t->second;
        }
        cr.tls_version = c.session.version;
        cr.cipher = c.session.cipher;
        cr.peer_subject = c.session.peer_subject;
        cr.age_ms = now_ms_ - c.opened_ms;
        cr.msgs_in = c.msgs_in;
        cr.msgs_out = c.msgs_out;
        cr.bytes_in = c.bytes_in;
        cr.bytes_out = c.bytes_out;
        r->conns.push_back(std::move(cr));
    }
    for (std::size_t i = 0; i < by_state.size(); ++i) stats_.open_by_state[i].set(by_state[i]);
    for (const auto& [id, e] : peers_) {
        peer_conn_report p;
        p.peer_id = id;
        p.name = e.name;
        for (uint32_t cid : e.conns)
            if (const conn* c = conns_.find(cid); c && c->state == conn_state::established && c->confirmed) ++p.established;
        p.last_error = e.last_error;
        r->peers.push_back(std::move(p));
    }
    r->problems = problems_;
    report_.store(std::move(r));
}

}  // namespace sbc::streams
