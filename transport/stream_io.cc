// Connection I/O of the stream thread (see stream_io.h). Stream thread only.
#include "transport/stream_io.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "common/limits.h"
#include "dataplane/events.h"
#include "dataplane/sip_path.h"
#include "dataplane/stream_ring.h"

namespace sbc::streams {

namespace {

constexpr std::size_t max_unsent = 1 << 20;  ///< unsent output that closes a connection

sockaddr_in to_sockaddr(const endpoint& e)
{
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(e.port);
    sa.sin_addr.s_addr = htonl(e.addr.v4_host());
    return sa;
}

/// Tells the control core about a peer's connection (failed: `why`; up: none).
void post(dataplane::dataplane_runtime& rt, dataplane::event_kind kind, uint32_t peer_id, conn_reason why)
{
    dataplane::event e{};
    e.kind = kind;
    e.peer_id = peer_id;
    e.code = static_cast<uint16_t>(why);
    rte_ring_mp_enqueue_elem(rt.events, &e, sizeof(e));
}

}  // namespace

stream_thread::impl::impl(const stream_thread_options& o, stream_stats& stats, std::atomic<bool>& stop,
                          std::atomic<std::shared_ptr<const tls_set>>& tls,
                          std::atomic<std::shared_ptr<const stream_report>>& report)
    : o_(o), stats_(stats), stop_(stop), tls_(tls), report_(report), buffers_(o.settings.max_message_bytes),
      conns_(o.settings.max_connections)
{
}

stream_thread::impl::~impl() = default;

// --- DSCP

void stream_thread::impl::mark_sip(int fd, const ip_address& local) const
{
    if (fd < 0) return;
    for (const auto& [addr, tos] : sip_tos_)
        if (addr == local) {
            const int v = tos;
            setsockopt(fd, IPPROTO_IP, IP_TOS, &v, sizeof(v));
            return;
        }
}

void stream_thread::impl::learn_sip_tos(const dataplane::snapshot& snap)
{
    std::vector<std::pair<ip_address, uint8_t>> now;
    for (const auto& i : snap.interfaces) now.emplace_back(i.address.addr, i.tos_sip);
    if (now == sip_tos_) return;
    sip_tos_ = std::move(now);
    for (const listener& l : listeners_) mark_sip(l.fd, l.local.addr);
    for (conn& c : conns_.all())
        if (c.state != conn_state::free) mark_sip(c.fd, c.local.addr);
}

// --- opening

void stream_thread::impl::open_listener(const endpoint& local, uint16_t trunk)
{
    const std::string where = std::string(transport_via_name(local.proto)) + " " + to_string(local);
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const int one = 1;
    const sockaddr_in sa = to_sockaddr(local);
    mark_sip(fd, local.addr);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)) != 0 || listen(fd, 1024) != 0) {
        problems_.push_back("cannot listen on " + where + ": " + std::strerror(errno));
        if (fd >= 0) close(fd);
        return;
    }
    listeners_.push_back(listener{fd, local, trunk});
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = listener_tag | (listeners_.size() - 1);
    epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev);
}

void stream_thread::impl::on_event(const dataplane::snapshot& snap, const epoll_event& ev)
{
    if (ev.data.u64 == exception_tag) return;  // the kernel sent frames: the loop pumps them
    if ((ev.data.u64 & listener_tag) != 0) {
        const std::size_t i = ev.data.u64 & ~listener_tag;
        if (i < listeners_.size()) accept_on(snap, listeners_[i]);
        return;
    }
    conn* c = conns_.find(static_cast<uint32_t>(ev.data.u64));
    if (c == nullptr) return;
    switch (c->state) {
        case conn_state::connecting: on_connected(*c); break;
        case conn_state::handshaking: handshake(*c); break;
        case conn_state::established:
            if ((ev.events & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0) read_from(*c);
            if (conns_.find(ev.data.u64) != nullptr && (ev.events & EPOLLOUT) != 0) flush(*c);
            break;
        case conn_state::free: break;
    }
}

void stream_thread::impl::accept_on(const dataplane::snapshot& snap, listener& l)
{
    for (int burst = 0; burst < 64; ++burst) {
        sockaddr_in sa{};
        socklen_t len = sizeof(sa);
        const int fd = accept4(l.fd, reinterpret_cast<sockaddr*>(&sa), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        const ip_address src = ip_address::v4(ntohl(sa.sin_addr.s_addr));
        const uint64_t key = src.hash();
        // The fast path let only allowed sources reach the kernel; limits are checked here.
        bool refuse = !snap.proxy || l.trunk >= snap.proxy->trunks.size() ||
                      !(snap.proxy->trunks[l.trunk].allows(src) || snap.proxy->is_peer_address(src));
        refuse = refuse || conns_by_source_[key] >= o_.settings.max_connections_per_source;
        if (l.local.proto == transport::tls)
            refuse = refuse || handshakes_by_source_[key] >= o_.settings.max_handshakes_per_s_per_source;
        std::shared_ptr<tls_context> ctx = l.local.proto == transport::tls ? server_context(l.trunk) : nullptr;
        if (l.local.proto == transport::tls && !ctx) refuse = true;
        conn* c = refuse ? nullptr : conns_.open();
        if (c == nullptr) {
            close(fd);
            stats_.refused.fetch_add(1, std::memory_order_relaxed);
            stats_.closed[static_cast<std::size_t>(conn_reason::limit)].fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        ++conns_by_source_[key];
        stats_.accepted.fetch_add(1, std::memory_order_relaxed);
        const int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        mark_sip(fd, l.local.addr);  // inherited from the listener; set again should it have changed since
        c->fd = fd;
        c->outbound = false;
        c->trunk = l.trunk;
        c->local = l.local;
        c->local.conn = c->id;
        c->remote = endpoint{src, ntohs(sa.sin_port), l.local.proto, c->id};
        c->opened_ms = c->last_rx_ms = now_ms_;
        c->framer = std::make_unique<stream_framer>(buffers_);
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = c->id;
        epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev);
        if (ctx) {
            ++handshakes_by_source_[key];
            c->tls = std::move(ctx);
            c->ssl = new_server_ssl(*c->tls, fd);
            c->state = conn_state::handshaking;
            c->deadline_ms = now_ms_ + o_.settings.handshake_timeout_ms;
            handshake(*c);
        } else {
            established(*c);
        }
    }
}

conn* stream_thread::impl::connect_to(const endpoint& remote, const endpoint& local, uint16_t trunk,
                                      const std::string& server_name, std::shared_ptr<tls_context> tls,
                                      uint32_t peer_id)
{
    if (remote.proto == transport::tls && !tls) return nullptr;
    if (!remote.addr.is_v4()) return nullptr;
    conn* c = conns_.open();
    if (c == nullptr) return nullptr;
    stats_.connects.fetch_add(1, std::memory_order_relaxed);
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    c->fd = fd;
    c->outbound = true;
    c->trunk = trunk;
    c->peer_id = peer_id;
    c->server_name = server_name;
    c->tls = std::move(tls);
    c->local = local;
    c->local.conn = c->id;
    c->remote = remote;
    c->remote.conn = c->id;
    c->opened_ms = c->last_rx_ms = c->ping_ms = now_ms_;
    c->framer = std::make_unique<stream_framer>(buffers_);
    c->invites.resize(invite_memory);
    c->state = conn_state::connecting;
    c->deadline_ms = now_ms_ + o_.settings.connect_timeout_ms;
    // From the trunk's address (the peer sees the address it knows), an ephemeral port.
    sockaddr_in from = to_sockaddr(endpoint{local.addr, 0, local.proto, 0});
    const sockaddr_in to = to_sockaddr(remote);
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    mark_sip(fd, local.addr);  // before connect: the SYN carries it too
    if (fd < 0 || bind(fd, reinterpret_cast<const sockaddr*>(&from), sizeof(from)) != 0 ||
        (connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof(to)) != 0 && errno != EINPROGRESS)) {
        const int err = errno;
        close_conn(*c, err == ECONNREFUSED ? conn_reason::refused : conn_reason::unreachable, std::strerror(err));
        return nullptr;
    }
    epoll_event ev{};
    ev.events = EPOLLOUT;
    ev.data.u64 = c->id;
    epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev);
    c->want_write = true;
    return c;
}

void stream_thread::impl::on_connected(conn& c)
{
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
        close_conn(c, err == ECONNREFUSED ? conn_reason::refused
                      : err == ETIMEDOUT  ? conn_reason::timeout
                                          : conn_reason::unreachable,
                   std::strerror(err));
        return;
    }
    if (c.remote.proto == transport::tls) {
        c.ssl = new_client_ssl(*c.tls, c.fd, c.server_name);
        c.state = conn_state::handshaking;
        c.deadline_ms = now_ms_ + o_.settings.handshake_timeout_ms;
        handshake(c);
        return;
    }
    established(c);
}

void stream_thread::impl::handshake(conn& c)
{
    ERR_clear_error();
    const int ret = SSL_do_handshake(c.ssl);
    if (ret == 1) {
        if (!c.outbound && !c.tls->client_name.empty() && !client_name_ok(c.ssl, c.tls->client_name)) {
            // A refused client name is a failed handshake to the operator, as a server name
            // that OpenSSL refuses is (relaxed: a statistic, read on its own).
            stats_.handshakes_failed[static_cast<std::size_t>(conn_reason::tls_name_mismatch)].fetch_add(
                1, std::memory_order_relaxed);
            close_conn(c, conn_reason::tls_name_mismatch, "client certificate lacks " + c.tls->client_name);
            return;
        }
        c.session = session_info(c.ssl);
        stats_.handshakes_ok.fetch_add(1, std::memory_order_relaxed);
        established(c);
        return;
    }
    const int e = SSL_get_error(c.ssl, ret);
    if (e == SSL_ERROR_WANT_READ) {
        watch(c, false);
        return;
    }
    if (e == SSL_ERROR_WANT_WRITE) {
        watch(c, true);
        return;
    }
    std::string detail;
    const conn_reason why = handshake_failure(c.ssl, ret, detail);
    stats_.handshakes_failed[static_cast<std::size_t>(why)].fetch_add(1, std::memory_order_relaxed);
    close_conn(c, why, detail);
}

void stream_thread::impl::established(conn& c)
{
    c.state = conn_state::established;
    c.last_rx_ms = c.ping_ms = now_ms_;
    watch(c, !c.out.empty());
    flush(c);
    if (c.ssl == nullptr || !c.outbound) {
        confirm(c);
        return;
    }
    // TLS 1.3: our side of the handshake ends before the server has checked our certificate;
    // a server that refuses it says so right after (an alert). The connection counts as up once
    // the server has sent something more (its session tickets, a pong, a message) or
    // confirm_after_ms went by without a refusal, so that a refused peer does not flap up.
    c.handshake_read = BIO_number_read(SSL_get_rbio(c.ssl));
    c.confirm_at_ms = now_ms_ + confirm_after_ms;
    read_from(c);
}

void stream_thread::impl::confirm(conn& c)
{
    c.confirmed = true;
    if (c.peer_id != no_owner_peer) {
        if (auto it = peers_.find(c.peer_id); it != peers_.end()) {
            peer_entry& e = it->second;
            e.backoff_ms = 0;
            e.last_error.clear();
            if (e.reported_down) post(*o_.rt, dataplane::event_kind::peer_connection_up, c.peer_id, conn_reason::none);
            e.reported_down = false;
        }
    }
}

void stream_thread::impl::watch(conn& c, bool want_write)
{
    epoll_event ev{};
    ev.events = EPOLLIN | (want_write ? EPOLLOUT : 0u);
    ev.data.u64 = c.id;
    epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &ev);
    c.want_write = want_write;
}

// --- reading

void stream_thread::impl::read_from(conn& c)
{
    for (int reads = 0; reads < 16; ++reads) {
        const std::span<char> room = c.framer->space();
        long n;
        if (c.ssl != nullptr) {
            ERR_clear_error();
            const int r = SSL_read(c.ssl, room.data(), static_cast<int>(room.size()));
            if (r <= 0) {
                const int e = SSL_get_error(c.ssl, r);
                c.framer->commit(0);
                if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) break;
                close_conn(c, e == SSL_ERROR_ZERO_RETURN ? conn_reason::closed : conn_reason::reset, "");
                return;
            }
            n = r;
        } else {
            n = recv(c.fd, room.data(), room.size(), 0);
            if (n <= 0) {
                c.framer->commit(0);
                if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
                close_conn(c, n == 0 ? conn_reason::closed : conn_reason::reset, n < 0 ? std::strerror(errno) : "");
                return;
            }
        }
        c.framer->commit(static_cast<std::size_t>(n));
        if (!c.confirmed) confirm(c);
        c.bytes_in += static_cast<uint64_t>(n);
        stats_.bytes_in.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
        c.last_rx_ms = now_ms_;
        for (;;) {
            const frame f = c.framer->next();
            if (f.kind == frame_kind::need_more) break;
            if (f.kind == frame_kind::message) {
                deliver(c, f.message);
            } else if (f.kind == frame_kind::ping) {
                send_bytes(c, "\r\n");
                stats_.pings_answered.fetch_add(1, std::memory_order_relaxed);
            } else if (f.kind == frame_kind::pong) {
                c.ping_outstanding = false;
            } else {
                close_conn(c, f.reason, "");
                return;
            }
            if (conns_.find(c.id) == nullptr) return;
        }
        if (static_cast<std::size_t>(n) < room.size() && (c.ssl == nullptr || SSL_pending(c.ssl) == 0)) break;
    }
    // Session tickets (or anything else) read after the handshake, and no alert: the server
    // took our certificate.
    if (!c.confirmed && c.ssl != nullptr && BIO_number_read(SSL_get_rbio(c.ssl)) > c.handshake_read) confirm(c);
}

void stream_thread::impl::deliver(conn& c, std::string_view msg)
{
    rte_mbuf* m = rte_pktmbuf_alloc(o_.rt->stream_pool);
    char* data = m != nullptr ? rte_pktmbuf_append(m, static_cast<uint16_t>(msg.size())) : nullptr;
    if (data == nullptr) {
        if (m != nullptr) rte_pktmbuf_free(m);
        stats_.no_buffer.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    std::memcpy(data, msg.data(), msg.size());
    auto* in = new (dataplane::handoff_of(m)) dataplane::sip_handoff{};
    in->src = c.remote;
    in->local = c.local;
    in->off = 0;
    in->len = static_cast<uint32_t>(msg.size());
    in->trunk = c.trunk;
    in->what = dataplane::sip_handoff::kind::message;
    // New requests spread over the workers by connection; the worker hands anything it does
    // not own (a response, an in-dialog request) to the owner named in our identifiers.
    auto& w = *o_.rt->workers[conns_.slot_of(c.id) % o_.rt->workers.size()];
    if (rte_ring_sp_enqueue(w.stream_in, m) != 0) {
        rte_pktmbuf_free(m);
        stats_.worker_ring_full.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    ++c.msgs_in;
    stats_.msgs_in.fetch_add(1, std::memory_order_relaxed);
}

// --- writing

void stream_thread::impl::send_bytes(conn& c, std::string_view bytes)
{
    if (c.out.size() + bytes.size() > max_unsent) {
        stats_.output_overflow.fetch_add(1, std::memory_order_relaxed);
        close_conn(c, conn_reason::limit, "unsent output over 1 MiB");
        return;
    }
    c.out.append(bytes);
    // Written once per loop iteration (flush_dirty): the messages of a burst for one
    // connection leave in one TLS record and one segment, not one each.
    if (c.state == conn_state::established && !c.dirty) {
        c.dirty = true;
        dirty_.push_back(c.id);
    }
}

void stream_thread::impl::flush_dirty()
{
    for (std::size_t i = 0; i < dirty_.size(); ++i) {
        conn* c = conns_.find(dirty_[i]);
        if (c == nullptr) continue;
        c->dirty = false;
        if (c->state == conn_state::established) flush(*c);
    }
    dirty_.clear();
}

void stream_thread::impl::flush(conn& c)
{
    std::size_t done = 0;
    while (done < c.out.size()) {
        long n;
        if (c.ssl != nullptr) {
            ERR_clear_error();
            const int r = SSL_write(c.ssl, c.out.data() + done, static_cast<int>(c.out.size() - done));
            if (r <= 0) {
                const int e = SSL_get_error(c.ssl, r);
                if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) break;
                close_conn(c, conn_reason::reset, "");
                return;
            }
            n = r;
        } else {
            n = send(c.fd, c.out.data() + done, c.out.size() - done, MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK) break;
                close_conn(c, conn_reason::reset, std::strerror(errno));
                return;
            }
        }
        done += static_cast<std::size_t>(n);
    }
    c.bytes_out += done;
    stats_.bytes_out.fetch_add(done, std::memory_order_relaxed);
    c.out.erase(0, done);
    if (c.out.empty() && c.out.capacity() > 4096) c.out.shrink_to_fit();  // idle connections stay small
    const bool want = !c.out.empty();
    if (want != c.want_write) watch(c, want);
}

unsigned stream_thread::impl::drain_sends(const dataplane::snapshot& snap)
{
    std::array<rte_mbuf*, burst_size> pkts;
    unsigned total = 0;
    auto drain = [&](rte_ring* r) {
        const unsigned n = rte_ring_sc_dequeue_burst(r, reinterpret_cast<void**>(pkts.data()), pkts.size(), nullptr);
        for (unsigned i = 0; i < n; ++i) send_message(snap, pkts[i]);
        total += n;
    };
    for (auto& w : o_.rt->workers) drain(w->stream_out);
    if (o_.rt->control_out != nullptr) drain(o_.rt->control_out);
    return total;
}

conn* stream_thread::impl::connection_for(const dataplane::stream_send& h)
{
    if (h.dst.conn != 0) {
        if (conn* c = conns_.find(h.dst.conn)) return c;
    }
    // A peer's persistent connections, round robin over the established ones.
    for (auto& [id, e] : peers_) {
        if (!e.remote.same_place(h.dst)) continue;
        conn* pending = nullptr;
        for (std::size_t k = 0; k < e.conns.size(); ++k) {
            conn* c = conns_.find(e.conns[(e.next_pick + k) % e.conns.size()]);
            if (c == nullptr) continue;
            if (c->state == conn_state::established) {
                e.next_pick = (e.next_pick + k + 1) % e.conns.size();
                return c;
            }
            pending = pending != nullptr ? pending : c;
        }
        return pending;  // queued until it is up; null while the peer backs off
    }
    // Anyone else: a connection already open to that place, else a new one.
    for (conn& c : conns_.all())
        if (c.state != conn_state::free && c.remote.same_place(h.dst)) return &c;
    if (h.dst.proto == transport::tls) return connect_to(h.dst, h.src, 0, "", client_context(0xffff), no_owner_peer);
    return connect_to(h.dst, h.src, 0, "", nullptr, no_owner_peer);
}

void stream_thread::impl::remember_invite(conn& c, std::string_view msg, uint8_t worker)
{
    if (c.invites.empty() || msg.substr(0, 7) != "INVITE ") return;
    const std::size_t b = msg.find("branch=");
    if (b == std::string_view::npos) return;
    std::size_t e = b + 7;
    while (e < msg.size() && e - b - 7 < branch_bytes && msg[e] != ';' && msg[e] != ',' && msg[e] != '\r' && msg[e] != ' ')
        ++e;
    conn::invite& inv = c.invites[c.next_invite++ % c.invites.size()];
    inv.worker = worker;
    inv.len = static_cast<uint8_t>(e - b - 7);
    std::memcpy(inv.branch.data(), msg.data() + b + 7, inv.len);
}

void stream_thread::impl::send_message(const dataplane::snapshot&, rte_mbuf* m)
{
    const dataplane::stream_send h = *dataplane::stream_send_of(m);
    const std::string_view msg{rte_pktmbuf_mtod(m, const char*), rte_pktmbuf_data_len(m)};
    conn* c = connection_for(h);
    if (c == nullptr) {
        stats_.no_connection.fetch_add(1, std::memory_order_relaxed);
        rte_pktmbuf_free(m);
        return;
    }
    if (c->outbound && h.from_control == 0) remember_invite(*c, msg, h.worker);
    ++c->msgs_out;
    stats_.msgs_out.fetch_add(1, std::memory_order_relaxed);
    send_bytes(*c, msg);
    rte_pktmbuf_free(m);
}

// --- closing

void stream_thread::impl::close_conn(conn& c, conn_reason why, const std::string& detail)
{
    stats_.closed[static_cast<std::size_t>(why)].fetch_add(1, std::memory_order_relaxed);
    if (!c.outbound && c.state != conn_state::free) {
        const uint64_t key = c.remote.addr.hash();
        if (auto it = conns_by_source_.find(key); it != conns_by_source_.end() && --it->second == 0)
            conns_by_source_.erase(it);
    }
    // A peer's connection: the control core fails the peer at once (with the reason), and the
    // INVITEs sent on it go to their workers as unreachable, to be tried on the next peer.
    if (c.peer_id != no_owner_peer && why != conn_reason::shutdown) {
        if (auto it = peers_.find(c.peer_id); it != peers_.end()) {
            peer_entry& e = it->second;
            e.last_error = detail.empty() ? reason_text(why) : std::string(reason_text(why)) + ": " + detail;
            e.next_try_ms = now_ms_ + backoff(e);
            // Once per failure streak, and again when the reason changes (refused while the
            // peer restarts, then its certificate is refused): its WHY shows the current one.
            if (!e.reported_down || e.reported_why != why)
                post(*o_.rt, dataplane::event_kind::peer_connection_failed, c.peer_id, why);
            e.reported_down = true;
            e.reported_why = why;
        }
    }
    if (why != conn_reason::shutdown) {
        for (const conn::invite& inv : c.invites) {
            if (inv.len == 0 || inv.worker >= o_.rt->workers.size()) continue;
            rte_mbuf* m = rte_pktmbuf_alloc(o_.rt->stream_pool);
            char* data = m != nullptr ? rte_pktmbuf_append(m, inv.len) : nullptr;
            if (data == nullptr) {
                if (m != nullptr) rte_pktmbuf_free(m);
                continue;
            }
            std::memcpy(data, inv.branch.data(), inv.len);
            auto* in = new (dataplane::handoff_of(m)) dataplane::sip_handoff{};
            in->src = c.remote;
            in->local = c.local;
            in->len = inv.len;
            in->trunk = c.trunk;
            in->what = dataplane::sip_handoff::kind::unreachable;
            if (rte_ring_sp_enqueue(o_.rt->workers[inv.worker]->stream_in, m) != 0) rte_pktmbuf_free(m);
        }
    }
    if (c.ssl != nullptr) SSL_free(c.ssl);
    if (c.fd >= 0) {
        epoll_ctl(ep_, EPOLL_CTL_DEL, c.fd, nullptr);
        close(c.fd);
    }
    conns_.release(c);
}

void stream_thread::impl::close_all()
{
    for (conn& c : conns_.all())
        if (c.state != conn_state::free) close_conn(c, conn_reason::shutdown, "");
    for (listener& l : listeners_) close(l.fd);
    listeners_.clear();
}

}  // namespace sbc::streams
