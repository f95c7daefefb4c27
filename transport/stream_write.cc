// Connection I/O of the stream thread, its writing half (see stream_io.h): messages the workers
// queued leave from their mbufs, gathered per connection and loop iteration; what the socket does
// not take is kept in order. Opening, reading and closing are in stream_io.cc. Stream thread only.
#include "transport/stream_io.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
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

constexpr std::size_t max_unsent = 1 << 20;  ///< unsent output that closes a connection

std::string_view bytes_of(rte_mbuf* m) { return {rte_pktmbuf_mtod(m, const char*), rte_pktmbuf_data_len(m)}; }

}  // namespace

// --- writing
//
// A message leaves from the mbuf the worker wrote it into, once per loop iteration
// (flush_dirty), so that the messages of a burst for one connection leave in one segment (and
// on TLS in one record), not one each. TCP: sendmsg over the iteration's mbufs (no copy here).
// TLS: SSL_write reads the one mbuf, or the iteration's messages gathered into `plain_` (the
// only copy), and the connection's write BIO keeps the records it makes in `out`, which one
// send writes. Only what the socket does not take is kept, in `out`: a partial write loses
// nothing and keeps the order.

void stream_thread::impl::mark_dirty(conn& c)
{
    if (c.state == conn_state::established && !c.dirty) {
        c.dirty = true;
        dirty_.push_back(c.id);
    }
}

bool stream_thread::impl::over_limit(conn& c, std::size_t more)
{
    if (c.out.size() + c.early.size() + more <= max_unsent) return false;
    stats_.output_overflow.bump();
    close_conn(c, conn_reason::limit, "unsent output over 1 MiB");
    return true;
}

void stream_thread::impl::spill_pending(conn& c)
{
    for (rte_mbuf* m : c.pending) {
        c.out.append(bytes_of(m));
        rte_pktmbuf_free(m);
    }
    c.pending.clear();
}

bool stream_thread::impl::tls_write(conn& c, std::string_view bytes)
{
    ERR_clear_error();
    if (SSL_write(c.ssl, bytes.data(), static_cast<int>(bytes.size())) <= 0) {
        close_conn(c, conn_reason::reset, "TLS write failed");
        return false;
    }
    c.bytes_out += bytes.size();
    stats_.bytes_out.add(static_cast<uint64_t>(bytes.size()));
    return true;
}

bool stream_thread::impl::tls_write_pending(conn& c)
{
    if (c.pending.empty()) return true;
    std::string_view plain;
    if (c.pending.size() == 1) {
        plain = bytes_of(c.pending.front());
    } else {
        plain_.clear();
        for (rte_mbuf* m : c.pending) plain_.append(bytes_of(m));
        plain = plain_;
    }
    const bool ok = tls_write(c, plain);  // closed when not ok, which frees the mbufs
    if (!ok) return false;
    rte_pktmbuf_free_bulk(c.pending.data(), static_cast<unsigned>(c.pending.size()));
    c.pending.clear();
    return true;
}

void stream_thread::impl::send_bytes(conn& c, std::string_view bytes)
{
    if (over_limit(c, bytes.size())) return;
    if (c.state != conn_state::established) {
        c.early.append(bytes);  // written once the connection is up (established)
        return;
    }
    if (c.ssl != nullptr) {
        // The messages queued before these bytes go first, in their own record.
        if (!tls_write_pending(c) || !tls_write(c, bytes)) return;
    } else {
        spill_pending(c);  // the messages queued before these bytes stay before them
        c.out.append(bytes);
    }
    mark_dirty(c);
}

void stream_thread::impl::send_mbuf(conn& c, rte_mbuf* m)
{
    const std::string_view msg = bytes_of(m);
    if (c.state != conn_state::established || (c.ssl == nullptr && !c.out.empty())) {
        send_bytes(c, msg);  // not up yet, or a backlog: behind what waits, copied
        rte_pktmbuf_free(m);
        return;
    }
    if (over_limit(c, msg.size())) {
        rte_pktmbuf_free(m);
        return;
    }
    c.pending.push_back(m);  // written from the mbuf by flush (TLS: encrypted there)
    mark_dirty(c);
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

bool stream_thread::impl::flush_pending(conn& c)
{
    constexpr std::size_t max_iov = 64;
    while (!c.pending.empty()) {
        std::array<iovec, max_iov> iov;
        const std::size_t k = std::min(c.pending.size(), max_iov);
        for (std::size_t i = 0; i < k; ++i) {
            iov[i].iov_base = rte_pktmbuf_mtod(c.pending[i], void*);
            iov[i].iov_len = rte_pktmbuf_data_len(c.pending[i]);
        }
        msghdr mh{};
        mh.msg_iov = iov.data();
        mh.msg_iovlen = k;
        const long n = sendmsg(c.fd, &mh, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            close_conn(c, conn_reason::reset, std::strerror(errno));
            return false;
        }
        std::size_t sent = n > 0 ? static_cast<std::size_t>(n) : 0;
        c.bytes_out += sent;
        stats_.bytes_out.add(static_cast<uint64_t>(sent));
        // The whole mbufs written go; the rest, from the first byte not written, waits in `out`.
        std::size_t i = 0;
        for (; i < k && sent >= iov[i].iov_len; ++i) {
            sent -= iov[i].iov_len;
            rte_pktmbuf_free(c.pending[i]);
        }
        if (i < k) {
            c.out.append(bytes_of(c.pending[i]).substr(sent));
            rte_pktmbuf_free(c.pending[i]);
            for (std::size_t j = i + 1; j < c.pending.size(); ++j) {
                c.out.append(bytes_of(c.pending[j]));
                rte_pktmbuf_free(c.pending[j]);
            }
            c.pending.clear();
            return true;
        }
        c.pending.erase(c.pending.begin(), c.pending.begin() + static_cast<std::ptrdiff_t>(k));
    }
    return true;
}

void stream_thread::impl::flush(conn& c)
{
    if (c.ssl != nullptr) {
        if (!tls_write_pending(c)) return;
    } else {
        if (c.out.empty() && !flush_pending(c)) return;
        spill_pending(c);  // behind a backlog: copied after it
    }
    // `out` holds bytes for the socket: TLS records (ciphertext) or TCP message bytes.
    std::size_t done = 0;
    while (done < c.out.size()) {
        const long n = send(c.fd, c.out.data() + done, c.out.size() - done, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            close_conn(c, conn_reason::reset, std::strerror(errno));
            return;
        }
        done += static_cast<std::size_t>(n);
    }
    if (c.ssl == nullptr) {
        c.bytes_out += done;
        stats_.bytes_out.add(static_cast<uint64_t>(done));
    }
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
    for (const auto& w : o_.rings.workers) drain(w.stream_out);
    if (o_.rings.control_out != nullptr) drain(o_.rings.control_out);
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
    for (std::size_t i = 0; i < conns_.used(); ++i)
        if (conn& c = conns_.open_at(i); c.remote.same_place(h.dst)) return &c;
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
        stats_.no_connection.bump();
        rte_pktmbuf_free(m);
        return;
    }
    if (c->outbound && h.from_control == 0) remember_invite(*c, msg, h.worker);
    ++c->msgs_out;
    stats_.msgs_out.bump();
    send_mbuf(*c, m);
}

}  // namespace sbc::streams
