// Connection I/O of the stream thread (see stream_io.h): DSCP, opening, reading, closing; writing
// is in stream_write.cc. Stream thread only.
#include "transport/stream_io.h"

#include <arpa/inet.h>
#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "common/counter.h"
#include "common/limits.h"
#include "dataplane/events.h"
#include "dataplane/sip_path.h"
#include "dataplane/stream_ring.h"
#include "sip-fastpath/proxy_ids.h"

namespace sbc::streams {

namespace {


/// A socket address of either family, with the length bind and connect take.
struct socket_address {
    sockaddr_storage ss{};
    socklen_t len = 0;
    [[nodiscard]] const sockaddr* get() const noexcept { return reinterpret_cast<const sockaddr*>(&ss); }
};

socket_address to_sockaddr(const endpoint& e)
{
    socket_address a;
    if (e.addr.is_v6()) {
        auto* sa = reinterpret_cast<sockaddr_in6*>(&a.ss);
        sa->sin6_family = AF_INET6;
        sa->sin6_port = htons(e.port);
        const auto b = e.addr.v6_bytes();
        std::memcpy(sa->sin6_addr.s6_addr, b.data(), b.size());
        a.len = sizeof(sockaddr_in6);
    } else {
        auto* sa = reinterpret_cast<sockaddr_in*>(&a.ss);
        sa->sin_family = AF_INET;
        sa->sin_port = htons(e.port);
        sa->sin_addr.s_addr = htonl(e.addr.v4_host());
        a.len = sizeof(sockaddr_in);
    }
    return a;
}

/// The address and port an accepted connection came from.
endpoint from_sockaddr(const sockaddr_storage& ss, transport proto, uint32_t conn_id)
{
    if (ss.ss_family == AF_INET6) {
        const auto* sa = reinterpret_cast<const sockaddr_in6*>(&ss);
        // Every IPv6 listener is IPV6_V6ONLY: no v4-mapped source reaches one.
        return endpoint{ip_address::v6(std::span<const uint8_t, 16>(sa->sin6_addr.s6_addr, 16)), ntohs(sa->sin6_port),
                        proto, conn_id};
    }
    const auto* sa = reinterpret_cast<const sockaddr_in*>(&ss);
    return endpoint{ip_address::v4(ntohl(sa->sin_addr.s_addr)), ntohs(sa->sin_port), proto, conn_id};
}

int family_of(const ip_address& a) noexcept { return a.is_v6() ? AF_INET6 : AF_INET; }

/// Tells the control core about a peer's connection (failed: `why`; up: none).
void post(const dataplane::stream_rings& rings, dataplane::event_kind kind, uint32_t peer_id, conn_reason why)
{
    dataplane::event e{};
    e.kind = kind;
    e.peer_id = peer_id;
    e.code = static_cast<uint16_t>(why);
    rte_ring_mp_enqueue_elem(rings.events, &e, sizeof(e));
}

/// The write BIO of an established TLS connection: appends the records OpenSSL makes to the
/// connection's `out` (never blocks, so SSL_write never needs a retry).
int out_bio_write(BIO* b, const char* data, int len)
{
    auto* c = static_cast<conn*>(BIO_get_data(b));
    c->out.append(data, static_cast<std::size_t>(len));
    return len;
}

long out_bio_ctrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

int out_bio_create(BIO* b)
{
    BIO_set_init(b, 1);
    return 1;
}

/// Made once, on the stream thread's first TLS connection, never freed (one per process).
BIO_METHOD* out_bio_method()
{
    static BIO_METHOD* m = [] {
        BIO_METHOD* x = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "sbc stream out");
        BIO_meth_set_write(x, out_bio_write);
        BIO_meth_set_ctrl(x, out_bio_ctrl);
        BIO_meth_set_create(x, out_bio_create);
        return x;
    }();
    return m;
}


}  // namespace

stream_thread::impl::impl(const stream_thread_options& o, stream_stats& stats, std::atomic<bool>& stop,
                          std::atomic<std::shared_ptr<const tls_set>>& tls,
                          std::atomic<std::shared_ptr<const stream_report>>& report)
    : o_(o), stats_(stats), stop_(stop), tls_(tls), report_(report), buffers_(o.settings.max_message_bytes),
      conns_(o.settings.max_connections), scratch_(std::make_unique<sip::message>()), staged_(o.rings.workers.size())
{
}

stream_thread::impl::~impl() = default;

// --- DSCP

void stream_thread::impl::mark_sip(int fd, const ip_address& local) const
{
    if (fd < 0) return;
    for (const auto& [addr, tos] : sip_tos_)
        if (addr == local) {
            // IPv6 carries the DSCP in Traffic Class, set by its own option.
            const int v = tos;
            if (local.is_v6())
                setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &v, sizeof(v));
            else
                setsockopt(fd, IPPROTO_IP, IP_TOS, &v, sizeof(v));
            return;
        }
}

void stream_thread::impl::learn_sip_tos(const dataplane::snapshot& snap)
{
    std::vector<std::pair<ip_address, uint8_t>> now;
    for (const auto& i : snap.interfaces) {
        now.emplace_back(i.address.addr, i.tos_sip);
        if (i.has_v6()) now.emplace_back(i.address6.addr, i.tos_sip);
    }
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
    const int fd = socket(family_of(local.addr), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const int one = 1;
    const socket_address sa = to_sockaddr(local);
    mark_sip(fd, local.addr);
    // An IPv6 listener takes IPv6 only: the IPv4 address has its own.
    if (fd >= 0 && local.addr.is_v6()) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, sa.get(), sa.len) != 0 || listen(fd, 1024) != 0) {
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
        sockaddr_storage sa{};
        socklen_t len = sizeof(sa);
        const int fd = accept4(l.fd, reinterpret_cast<sockaddr*>(&sa), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        const endpoint from = from_sockaddr(sa, l.local.proto, 0);
        const ip_address src = from.addr;
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
            stats_.refused.bump();
            stats_.closed[static_cast<std::size_t>(conn_reason::limit)].bump();
            continue;
        }
        ++conns_by_source_[key];
        stats_.accepted.bump();
        const int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        mark_sip(fd, l.local.addr);  // inherited from the listener; set again should it have changed since
        c->fd = fd;
        c->outbound = false;
        c->trunk = l.trunk;
        c->local = l.local;
        c->local.conn = c->id;
        c->remote = endpoint{src, from.port, l.local.proto, c->id};
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
    // From the trunk's address of the peer's family: none (a trunk without IPv6 toward an
    // IPv6 peer, which config refuses) opens nothing.
    if (remote.addr.is_v6() != local.addr.is_v6() || local.addr.is_unspecified()) return nullptr;
    conn* c = conns_.open();
    if (c == nullptr) return nullptr;
    stats_.connects.bump();
    const int fd = socket(family_of(remote.addr), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
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
    const socket_address from = to_sockaddr(endpoint{local.addr, 0, local.proto, 0});
    const socket_address to = to_sockaddr(remote);
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    mark_sip(fd, local.addr);  // before connect: the SYN carries it too
    if (fd < 0 || bind(fd, from.get(), from.len) != 0 ||
        (connect(fd, to.get(), to.len) != 0 && errno != EINPROGRESS)) {
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
            stats_.handshakes_failed[static_cast<std::size_t>(conn_reason::tls_name_mismatch)].bump();
            close_conn(c, conn_reason::tls_name_mismatch, "client certificate lacks " + c.tls->client_name);
            return;
        }
        c.session = session_info(c.ssl);
        stats_.handshakes_ok.bump();
        const uint32_t id = c.id;
        established(c);
        // Read ahead: what the peer sent right behind its last handshake message may already
        // sit in OpenSSL's buffer, where epoll cannot see it.
        if (conns_.find(id) != nullptr && c.state == conn_state::established && SSL_has_pending(c.ssl) == 1)
            read_from(c);
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
    stats_.handshakes_failed[static_cast<std::size_t>(why)].bump();
    close_conn(c, why, detail);
}

void stream_thread::impl::established(conn& c)
{
    c.state = conn_state::established;
    c.last_rx_ms = c.ping_ms = now_ms_;
    if (c.ssl != nullptr) {
        // From now on the records go to `out` (out_bio_write), written by flush; the handshake
        // wrote to the socket itself. The socket BIO stays the read side.
        BIO* w = BIO_new(out_bio_method());
        if (w == nullptr) {
            close_conn(c, conn_reason::reset, "no memory for the TLS write side");
            return;
        }
        BIO_set_data(w, &c);
        SSL_set0_wbio(c.ssl, w);
    }
    if (!c.early.empty()) {
        std::string early;
        early.swap(c.early);
        send_bytes(c, early);
        if (conns_.find(c.id) == nullptr) return;
    }
    flush(c);
    if (conns_.find(c.id) == nullptr) return;
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
            if (e.reported_down) post(o_.rings, dataplane::event_kind::peer_connection_up, c.peer_id, conn_reason::none);
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
    for (int reads = 0; reads < max_reads; ++reads) {
        const std::span<char> room = c.framer->space();
        long n;
        if (c.ssl != nullptr) {
            ERR_clear_error();
            const int r = SSL_read(c.ssl, room.data(), static_cast<int>(room.size()));
            if (r <= 0) {
                const int e = SSL_get_error(c.ssl, r);
                c.framer->commit(0);
                if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return after_read(c);
                close_conn(c, e == SSL_ERROR_ZERO_RETURN ? conn_reason::closed : conn_reason::reset, "");
                return;
            }
            n = r;
        } else {
            n = recv(c.fd, room.data(), room.size(), 0);
            if (n <= 0) {
                c.framer->commit(0);
                if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return after_read(c);
                close_conn(c, n == 0 ? conn_reason::closed : conn_reason::reset, n < 0 ? std::strerror(errno) : "");
                return;
            }
        }
        c.framer->commit(static_cast<std::size_t>(n));
        if (!c.confirmed) confirm(c);
        c.bytes_in += static_cast<uint64_t>(n);
        stats_.bytes_in.add(static_cast<uint64_t>(n));
        c.last_rx_ms = now_ms_;
        for (;;) {
            const frame f = c.framer->next();
            if (f.kind == frame_kind::need_more) break;
            if (f.kind == frame_kind::message) {
                deliver(c, f.message);
            } else if (f.kind == frame_kind::ping) {
                send_bytes(c, "\r\n");
                stats_.pings_answered.bump();
            } else if (f.kind == frame_kind::pong) {
                c.ping_outstanding = false;
            } else {
                close_conn(c, f.reason, "");
                return;
            }
            if (conns_.find(c.id) == nullptr) return;
        }
        // TLS reads ahead (one recv takes every record the socket holds) and SSL_read returns one
        // record at a time: go on while OpenSSL holds more, whatever recv returned.
        const bool more = c.ssl != nullptr ? SSL_has_pending(c.ssl) == 1 : static_cast<std::size_t>(n) == room.size();
        if (!more) return after_read(c);
    }
    // Out of turns with records still in OpenSSL's buffer, which epoll cannot see: read again in
    // the next iteration.
    if (c.ssl != nullptr && SSL_has_pending(c.ssl) == 1) rereads_.push_back(c.id);
    after_read(c);
}

unsigned stream_thread::impl::read_again()
{
    if (rereads_.empty()) return 0;
    std::vector<uint32_t> ids;
    ids.swap(rereads_);
    for (const uint32_t id : ids)
        if (conn* c = conns_.find(id); c != nullptr && c->state == conn_state::established) read_from(*c);
    const auto n = static_cast<unsigned>(ids.size());
    ids.clear();
    if (rereads_.empty()) rereads_.swap(ids);  // keeps the capacity
    return n;
}

void stream_thread::impl::after_read(conn& c)
{
    // Session tickets (or anything else) read after the handshake, and no alert: the server
    // took our certificate.
    if (!c.confirmed && c.ssl != nullptr && BIO_number_read(SSL_get_rbio(c.ssl)) > c.handshake_read) confirm(c);
    // What OpenSSL wrote while reading (a key update's answer) waits in `out`: written this iteration.
    if (c.ssl != nullptr && !c.out.empty()) mark_dirty(c);
}

void stream_thread::impl::deliver(conn& c, std::string_view msg)
{
    rte_mbuf* m = rte_pktmbuf_alloc(o_.rings.pool);
    char* data = m != nullptr ? rte_pktmbuf_append(m, static_cast<uint16_t>(msg.size())) : nullptr;
    if (data == nullptr) {
        if (m != nullptr) rte_pktmbuf_free(m);
        stats_.no_buffer.bump();
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
    // A response, or a request inside a dialog, goes straight to the worker named in our
    // identifiers (its branch, its route), found exactly as that worker would find it
    // (message_owner), so that it does not hop again; anything else (a new request: nobody owns
    // it yet, or a message naming no worker of ours) spreads over the workers by connection.
    // With one worker there is nothing to choose.
    const std::size_t workers = o_.rings.workers.size();
    std::size_t to = conns_.slot_of(c.id) % workers;
    bool direct = false;
    if (workers > 1) {
        const int owner = sip::message_owner(msg, *scratch_);
        if (owner >= 0 && static_cast<std::size_t>(owner) < workers) {
            to = static_cast<std::size_t>(owner);
            direct = true;
        }
    }
    ++c.msgs_in;
    (direct ? stats_.to_owner : stats_.by_connection).bump();
    stage(to, m, true);
}

void stream_thread::impl::stage(std::size_t worker, rte_mbuf* m, bool message)
{
    staged& st = staged_[worker];
    if (message) st.messages |= 1u << st.n;
    st.pkts[st.n] = m;
    if (++st.n == st.pkts.size()) hand_staged(worker);
}

void stream_thread::impl::hand_staged(std::size_t worker)
{
    staged& st = staged_[worker];
    if (st.n == 0) return;
    // One enqueue per worker and iteration: the worker takes the iteration's messages in one
    // poll (one busy loop, not one each).
    const unsigned k = rte_ring_sp_enqueue_burst(o_.rings.workers[worker].stream_in,
                                                 reinterpret_cast<void* const*>(st.pkts.data()), st.n, nullptr);
    const uint32_t taken = k >= 32 ? ~0u : (1u << k) - 1;
    stats_.msgs_in.add(static_cast<uint64_t>(std::popcount(st.messages & taken)));
    if (k < st.n) {
        // A lost message is counted; a lost connection's notice only goes with it (as before).
        stats_.worker_ring_full.add(static_cast<uint64_t>(std::popcount(st.messages & ~taken)));
        rte_pktmbuf_free_bulk(st.pkts.data() + k, st.n - k);
    }
    st.n = 0;
    st.messages = 0;
}

void stream_thread::impl::hand_all_staged()
{
    for (std::size_t w = 0; w < staged_.size(); ++w) hand_staged(w);
}

// --- closing

void stream_thread::impl::close_conn(conn& c, conn_reason why, const std::string& detail)
{
    stats_.closed[static_cast<std::size_t>(why)].bump();
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
                post(o_.rings, dataplane::event_kind::peer_connection_failed, c.peer_id, why);
            e.reported_down = true;
            e.reported_why = why;
        }
    }
    if (why != conn_reason::shutdown) {
        for (const conn::invite& inv : c.invites) {
            if (inv.len == 0 || inv.worker >= o_.rings.workers.size()) continue;
            rte_mbuf* m = rte_pktmbuf_alloc(o_.rings.pool);
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
            stage(inv.worker, m, false);  // behind the messages of this iteration for that worker
        }
    }
    for (rte_mbuf* m : c.pending) rte_pktmbuf_free(m);
    c.pending.clear();
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
