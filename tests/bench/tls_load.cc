// tls_load: the TLS load client of scripts/bench/tls.sh. One thread, epoll over non-blocking
// sockets, OpenSSL 3 as a TLS client; no DPDK. Modes (exactly one):
//
//   --handshakes SECONDS   full handshakes as fast as possible over --conns K (default 16)
//                          parallel connections: connect, handshake, wait until the server's
//                          first TLS 1.3 NewSessionTicket arrives (the server sends it once it
//                          has checked our Finished, so the count is of handshakes the SERVER
//                          completed), send close_notify, close, start over. No session is ever
//                          resumed (tickets are dropped as they arrive).
//   --messages SECONDS     --conns K (default 100) persistent connections, opened first (not
//                          timed); then each keeps --window W (default 8) SIP OPTIONS
//                          outstanding: every response read is checked (a status line
//                          "SIP/2.0 NNN", headers ending in CRLFCRLF, a Content-Length and
//                          that many body bytes, never more responses than requests on the
//                          connection) and answered by one new request. Counts 200 responses.
//   --idle N               opens N connections (at most --conns K handshakes at once, default
//                          50), prints one line when they are all up, and keeps them open and
//                          silent until SIGTERM/SIGINT or --hold SECONDS (default 60).
//
// Common: --connect IP:PORT (required), --bind IP (source address), --uri-host HOST (the
// OPTIONS Request-URI host; default the connect address), --groups LIST (key exchange groups
// offered, default "P-256", so that the server's ECDHE matches the P-256 ceiling), --ca FILE
// (verify the server's chain; default: no chain check; the CertificateVerify signature is
// always checked), --setup-seconds S (bound on opening the connections, default 30).
//
// Output: one line on stdout, `tls_load: mode=... key=value ...`, at the end (idle: also the
// line "tls_load: mode=idle opened=N failed=F setup_s=S" once the connections are up).
// Exit status 0, or 1 on a usage error, 2 when nothing succeeded, 3 on a badly framed response.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

enum class mode_kind { none, handshakes, messages, idle };

struct options {
    sockaddr_in dst{};
    sockaddr_in src{};
    bool bind_src = false;
    std::string uri_host;
    std::string groups = "P-256";
    std::string ca;
    mode_kind mode = mode_kind::none;
    double seconds = 0;
    unsigned conns = 0;
    unsigned window = 8;
    unsigned idle_n = 0;
    double hold = 60;
    double setup_s = 30;
};

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

double now_s()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

enum class cstate { free, connecting, handshaking, waiting_ticket, ready };

struct conn {
    int fd = -1;
    SSL* ssl = nullptr;
    cstate state = cstate::free;
    uint32_t gen = 0;
    bool ticket = false;
    bool want_write = false;
    std::string in;   // received plaintext not yet framed
    std::string out;  // plaintext not yet written
    uint64_t sent = 0, answered = 0, seq = 0;
    unsigned port = 0;  // our local port (for Via)
};

struct counters {
    uint64_t done = 0;        // handshakes (handshakes/idle mode)
    uint64_t failed = 0;      // connections that failed before they were done/ready
    uint64_t ok200 = 0;       // 200 responses (messages mode, in the window)
    uint64_t other = 0;       // other well-framed responses
    uint64_t bad = 0;         // badly framed responses
    uint64_t requests = 0;    // requests written (messages mode, in the window)
    std::string first_error;
};

class loop {
public:
    loop(const options& o, SSL_CTX* ctx, unsigned slots) : o_(o), ctx_(ctx), conns_(slots)
    {
        ep_ = epoll_create1(EPOLL_CLOEXEC);
    }
    ~loop()
    {
        for (conn& c : conns_) drop(c, false);
        if (ep_ >= 0) close(ep_);
    }

    counters n;
    bool measuring = false;  // messages: count only inside the window

    bool open(std::size_t i)
    {
        conn& c = conns_[i];
        const uint32_t gen = c.gen + 1;
        c = conn{};
        c.gen = gen;
        c.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c.fd < 0) return fail(c, "socket");
        const int one = 1;
        setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (o_.bind_src && bind(c.fd, reinterpret_cast<const sockaddr*>(&o_.src), sizeof o_.src) != 0)
            return fail(c, "bind");
        if (connect(c.fd, reinterpret_cast<const sockaddr*>(&o_.dst), sizeof o_.dst) != 0 && errno != EINPROGRESS)
            return fail(c, "connect");
        c.state = cstate::connecting;
        epoll_event ev{};
        ev.events = EPOLLOUT;
        ev.data.u64 = (static_cast<uint64_t>(c.gen) << 32) | i;
        epoll_ctl(ep_, EPOLL_CTL_ADD, c.fd, &ev);
        c.want_write = true;
        return true;
    }

    /// Waits up to `timeout_ms` and runs what is ready; calls `after(i)` for each connection
    /// whose state changed to done (handshakes), free (failed) or ready.
    template <class F>
    void poll(int timeout_ms, F&& after)
    {
        std::vector<epoll_event> ev(256);
        const int k = epoll_wait(ep_, ev.data(), static_cast<int>(ev.size()), timeout_ms);
        for (int j = 0; j < k; ++j) {
            const std::size_t i = ev[static_cast<std::size_t>(j)].data.u64 & 0xffffffffu;
            const uint32_t gen = static_cast<uint32_t>(ev[static_cast<std::size_t>(j)].data.u64 >> 32);
            if (i >= conns_.size() || conns_[i].gen != gen || conns_[i].state == cstate::free) continue;
            const cstate before = conns_[i].state;
            step(i);
            if (conns_[i].state != before || conns_[i].state == cstate::free) after(i);
        }
    }

    conn& at(std::size_t i) { return conns_[i]; }
    std::size_t size() const { return conns_.size(); }

    /// messages mode: queue one OPTIONS on a ready connection.
    void queue_request(conn& c, std::size_t i)
    {
        char buf[768];
        const int len = std::snprintf(
            buf, sizeof buf,
            "OPTIONS sip:%s SIP/2.0\r\n"
            "Via: SIP/2.0/TLS %s:%u;branch=z9hG4bK-tl%zu-%u-%llu\r\n"
            "Max-Forwards: 70\r\n"
            "From: <sip:load@%s>;tag=tl%zu\r\n"
            "To: <sip:%s>\r\n"
            "Call-ID: tls-load-%zu-%u@%s\r\n"
            "CSeq: %llu OPTIONS\r\n"
            "Content-Length: 0\r\n\r\n",
            o_.uri_host.c_str(), src_host_.c_str(), c.port, i, c.gen, static_cast<unsigned long long>(c.seq),
            src_host_.c_str(), i, o_.uri_host.c_str(), i, c.gen, src_host_.c_str(),
            static_cast<unsigned long long>(c.seq + 1));
        ++c.seq;
        ++c.sent;
        if (measuring) ++n.requests;
        c.out.append(buf, static_cast<std::size_t>(len));
    }

    void flush(conn& c, std::size_t i)
    {
        while (!c.out.empty()) {
            ERR_clear_error();
            const int r = SSL_write(c.ssl, c.out.data(), static_cast<int>(c.out.size()));
            if (r <= 0) {
                const int e = SSL_get_error(c.ssl, r);
                if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) {
                    arm(c, i, true);
                    return;
                }
                fail(c, "SSL_write");
                return;
            }
            c.out.erase(0, static_cast<std::size_t>(r));
        }
        if (c.want_write) arm(c, i, false);
    }

    /// Closes `c` (close_notify first when `polite`); its slot becomes free.
    void drop(conn& c, bool polite)
    {
        if (c.ssl != nullptr) {
            if (polite) SSL_shutdown(c.ssl);
            SSL_free(c.ssl);
        }
        if (c.fd >= 0) close(c.fd);  // also leaves the epoll set
        c.ssl = nullptr;
        c.fd = -1;
        c.state = cstate::free;
    }

    std::string src_host_;

private:
    bool fail(conn& c, const char* what)
    {
        if (n.first_error.empty()) {
            char detail[256] = "";
            const unsigned long e = ERR_peek_error();
            if (e != 0) ERR_error_string_n(e, detail, sizeof detail);
            n.first_error = std::string(what) + ": " + (detail[0] != 0 ? detail : std::strerror(errno));
        }
        ++n.failed;
        drop(c, false);
        return false;
    }

    void arm(conn& c, std::size_t i, bool want_write)
    {
        epoll_event ev{};
        ev.events = EPOLLIN | (want_write ? EPOLLOUT : 0u);
        ev.data.u64 = (static_cast<uint64_t>(c.gen) << 32) | i;
        epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &ev);
        c.want_write = want_write;
    }

    void step(std::size_t i)
    {
        conn& c = conns_[i];
        if (c.state == cstate::connecting) {
            int err = 0;
            socklen_t len = sizeof err;
            getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
            if (err != 0) {
                errno = err;
                fail(c, "connect");
                return;
            }
            sockaddr_in me{};
            socklen_t ml = sizeof me;
            getsockname(c.fd, reinterpret_cast<sockaddr*>(&me), &ml);
            c.port = ntohs(me.sin_port);
            c.ssl = SSL_new(ctx_);
            if (c.ssl == nullptr || SSL_set_fd(c.ssl, c.fd) != 1) {
                fail(c, "SSL_new");
                return;
            }
            SSL_set_app_data(c.ssl, &c);
            SSL_set_connect_state(c.ssl);
            c.state = cstate::handshaking;
        }
        if (c.state == cstate::handshaking) {
            ERR_clear_error();
            const int r = SSL_do_handshake(c.ssl);
            if (r != 1) {
                const int e = SSL_get_error(c.ssl, r);
                if (e == SSL_ERROR_WANT_READ) arm(c, i, false);
                else if (e == SSL_ERROR_WANT_WRITE) arm(c, i, true);
                else fail(c, "handshake");
                return;
            }
            if (c.want_write) arm(c, i, false);
            if (o_.mode == mode_kind::handshakes && SSL_version(c.ssl) >= TLS1_3_VERSION) {
                c.state = cstate::waiting_ticket;
            } else {
                c.state = cstate::ready;
                return;
            }
        }
        if (c.state == cstate::waiting_ticket) {
            char buf[4096];
            ERR_clear_error();
            const int r = SSL_read(c.ssl, buf, sizeof buf);
            if (c.ticket) {
                c.state = cstate::ready;
                return;
            }
            if (r <= 0) {
                const int e = SSL_get_error(c.ssl, r);
                if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) fail(c, "waiting for the session ticket");
            }
            return;
        }
        if (c.state == cstate::ready) read_responses(c, i);
    }

    void read_responses(conn& c, std::size_t i)
    {
        char buf[16384];
        for (;;) {
            ERR_clear_error();
            const int r = SSL_read(c.ssl, buf, sizeof buf);
            if (r <= 0) {
                const int e = SSL_get_error(c.ssl, r);
                if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) break;
                fail(c, e == SSL_ERROR_ZERO_RETURN ? "closed by the server" : "SSL_read");
                return;
            }
            if (o_.mode != mode_kind::messages) continue;  // idle: whatever comes is dropped
            c.in.append(buf, static_cast<std::size_t>(r));
        }
        if (o_.mode != mode_kind::messages) return;
        std::size_t pos = 0;
        unsigned answered_now = 0;
        while (pos < c.in.size()) {
            const std::string_view rest(c.in.data() + pos, c.in.size() - pos);
            const std::size_t end = rest.find("\r\n\r\n");
            if (end == std::string_view::npos) break;
            const std::string_view head = rest.substr(0, end + 2);
            long code = -1, clen = -1;
            if (head.size() >= 12 && head.substr(0, 8) == "SIP/2.0 " && head[11] == ' ') {
                code = std::strtol(std::string(head.substr(8, 3)).c_str(), nullptr, 10);
            }
            for (std::size_t l = head.find("\r\n") + 2; l < head.size();) {
                const std::size_t e = head.find("\r\n", l);
                const std::string_view line = head.substr(l, e - l);
                const std::size_t colon = line.find(':');
                if (colon != std::string_view::npos) {
                    std::string name(line.substr(0, colon));
                    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
                    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
                    if (name == "content-length" || name == "l")
                        clen = std::strtol(std::string(line.substr(colon + 1)).c_str(), nullptr, 10);
                }
                l = e + 2;
            }
            if (code < 100 || code > 699 || clen < 0 || c.answered >= c.sent) {
                ++n.bad;
                if (n.first_error.empty())
                    n.first_error = "badly framed response: " + std::string(rest.substr(0, std::min<std::size_t>(end, 200)));
                drop(c, false);
                return;
            }
            const std::size_t total = end + 4 + static_cast<std::size_t>(clen);
            if (rest.size() < total) break;
            pos += total;
            ++c.answered;
            ++answered_now;
            if (measuring) {
                if (code == 200) ++n.ok200;
                else ++n.other;
            }
        }
        c.in.erase(0, pos);
        if (measuring)
            for (unsigned k = 0; k < answered_now; ++k) queue_request(c, i);
        if (!c.out.empty()) flush(c, i);
    }

    const options& o_;
    SSL_CTX* ctx_;
    std::vector<conn> conns_;
    int ep_ = -1;
};

int new_session_cb(SSL* ssl, SSL_SESSION*)
{
    if (auto* c = static_cast<conn*>(SSL_get_app_data(ssl))) c->ticket = true;
    return 0;  // not kept: every handshake is a full one
}

bool parse_addr(const char* s, sockaddr_in& a, bool want_port)
{
    std::string str(s);
    a = sockaddr_in{};
    a.sin_family = AF_INET;
    if (want_port) {
        const std::size_t c = str.rfind(':');
        if (c == std::string::npos) return false;
        a.sin_port = htons(static_cast<uint16_t>(std::atoi(str.c_str() + c + 1)));
        str.resize(c);
    }
    return inet_pton(AF_INET, str.c_str(), &a.sin_addr) == 1;
}

int usage()
{
    std::fprintf(stderr,
                 "usage: tls_load --connect IP:PORT (--handshakes S | --messages S | --idle N) [--conns K]\n"
                 "                [--window W] [--hold S] [--bind IP] [--uri-host H] [--groups G] [--ca FILE]\n"
                 "                [--setup-seconds S]   (see the top of tests/bench/tls_load.cc)\n");
    return 1;
}

}  // namespace

int main(int argc, char** argv)
{
    options o;
    bool have_dst = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
        auto need = [&] { return v != nullptr ? (++i, true) : false; };
        if (a == "--connect" && need()) have_dst = parse_addr(v, o.dst, true);
        else if (a == "--bind" && need()) o.bind_src = parse_addr(v, o.src, false);
        else if (a == "--uri-host" && need()) o.uri_host = v;
        else if (a == "--groups" && need()) o.groups = v;
        else if (a == "--ca" && need()) o.ca = v;
        else if (a == "--handshakes" && need()) o.mode = mode_kind::handshakes, o.seconds = std::atof(v);
        else if (a == "--messages" && need()) o.mode = mode_kind::messages, o.seconds = std::atof(v);
        else if (a == "--idle" && need()) o.mode = mode_kind::idle, o.idle_n = static_cast<unsigned>(std::atoi(v));
        else if (a == "--conns" && need()) o.conns = static_cast<unsigned>(std::atoi(v));
        else if (a == "--window" && need()) o.window = static_cast<unsigned>(std::atoi(v));
        else if (a == "--hold" && need()) o.hold = std::atof(v);
        else if (a == "--setup-seconds" && need()) o.setup_s = std::atof(v);
        else return usage();
    }
    if (!have_dst || o.mode == mode_kind::none) return usage();
    if (o.mode != mode_kind::idle && !(o.seconds > 0 && o.seconds <= 600)) return usage();
    if (o.mode == mode_kind::idle && (o.idle_n == 0 || o.idle_n > 100000 || !(o.hold > 0 && o.hold <= 3600))) return usage();
    if (o.conns == 0) o.conns = o.mode == mode_kind::handshakes ? 16 : o.mode == mode_kind::messages ? 100 : 50;
    if (o.conns > 10000 || o.window == 0 || o.window > 1000) return usage();
    char host[INET_ADDRSTRLEN] = "";
    inet_ntop(AF_INET, &o.dst.sin_addr, host, sizeof host);
    if (o.uri_host.empty()) o.uri_host = host;

    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    rlimit rl{};
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }

    SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == nullptr || SSL_CTX_set1_groups_list(ctx, o.groups.c_str()) != 1) {
        std::fprintf(stderr, "tls_load: cannot set up TLS (groups '%s')\n", o.groups.c_str());
        return 1;
    }
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx, new_session_cb);
    if (!o.ca.empty()) {
        if (SSL_CTX_load_verify_locations(ctx, o.ca.c_str(), nullptr) != 1) {
            std::fprintf(stderr, "tls_load: cannot read CA %s\n", o.ca.c_str());
            return 1;
        }
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    } else {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    }

    const unsigned slots = o.mode == mode_kind::idle ? o.idle_n : o.conns;
    loop lp(o, ctx, slots);
    if (o.bind_src) {
        char s[INET_ADDRSTRLEN] = "";
        inet_ntop(AF_INET, &o.src.sin_addr, s, sizeof s);
        lp.src_host_ = s;
    } else {
        lp.src_host_ = "0.0.0.0";
    }
    int rc = 0;

    if (o.mode == mode_kind::handshakes) {
        const double t0 = now_s(), end = t0 + o.seconds;
        for (std::size_t i = 0; i < lp.size(); ++i) lp.open(i);
        bool open_more = true;
        while (!g_stop) {
            const double t = now_s();
            if (t >= end) break;
            lp.poll(5, [&](std::size_t i) {
                conn& c = lp.at(i);
                if (c.state == cstate::ready) {
                    ++lp.n.done;
                    lp.drop(c, true);
                }
                if (c.state == cstate::free && open_more) lp.open(i);
            });
            // Failed opens leave free slots: refill them (bounded by the loop's deadline).
            for (std::size_t i = 0; i < lp.size(); ++i)
                if (lp.at(i).state == cstate::free && open_more) lp.open(i);
            if (lp.n.failed > 100000) open_more = false;
        }
        const double secs = now_s() - t0;
        std::printf("tls_load: mode=handshakes seconds=%.2f conns=%u handshakes=%llu per_s=%.0f failed=%llu%s%s\n", secs,
                    o.conns, static_cast<unsigned long long>(lp.n.done), static_cast<double>(lp.n.done) / secs,
                    static_cast<unsigned long long>(lp.n.failed), lp.n.first_error.empty() ? "" : " first_error=",
                    lp.n.first_error.c_str());
        rc = lp.n.done > 0 ? 0 : 2;
    } else if (o.mode == mode_kind::messages || o.mode == mode_kind::idle) {
        // Open every connection, at most `conns` handshakes at once for idle.
        const std::size_t total = lp.size();
        const std::size_t parallel = o.mode == mode_kind::idle ? o.conns : total;
        const double t0 = now_s(), setup_end = t0 + o.setup_s;
        std::size_t next = 0, in_flight = 0, ready = 0;
        auto start_more = [&] {
            while (next < total && in_flight < parallel) {
                if (lp.open(next)) ++in_flight;
                ++next;
            }
        };
        start_more();
        while (!g_stop && ready + lp.n.failed < total && now_s() < setup_end) {
            lp.poll(10, [&](std::size_t i) {
                conn& c = lp.at(i);
                if (c.state == cstate::ready) {
                    ++ready;
                    --in_flight;
                } else if (c.state == cstate::free) {
                    --in_flight;
                }
            });
            start_more();
        }
        const double setup = now_s() - t0;
        if (o.mode == mode_kind::idle) {
            std::printf("tls_load: mode=idle opened=%zu failed=%llu setup_s=%.2f%s%s\n", ready,
                        static_cast<unsigned long long>(lp.n.failed), setup,
                        lp.n.first_error.empty() ? "" : " first_error=", lp.n.first_error.c_str());
            std::fflush(stdout);
            const double end = now_s() + o.hold;
            while (!g_stop && now_s() < end) lp.poll(200, [](std::size_t) {});
            std::size_t still = 0;
            for (std::size_t i = 0; i < total; ++i) still += lp.at(i).state == cstate::ready ? 1 : 0;
            std::printf("tls_load: mode=idle done still_open=%zu\n", still);
            rc = ready > 0 ? 0 : 2;
        } else {
            if (ready < total) {
                std::printf("tls_load: mode=messages opened=%zu of %zu failed=%llu first_error=%s\n", ready, total,
                            static_cast<unsigned long long>(lp.n.failed), lp.n.first_error.c_str());
                return 2;
            }
            lp.measuring = true;
            const double m0 = now_s(), end = m0 + o.seconds;
            for (std::size_t i = 0; i < total; ++i) {
                conn& c = lp.at(i);
                for (unsigned k = 0; k < o.window; ++k) lp.queue_request(c, i);
                lp.flush(c, i);
            }
            while (!g_stop && now_s() < end) lp.poll(5, [](std::size_t) {});
            const double secs = now_s() - m0;
            lp.measuring = false;
            std::size_t alive = 0;
            for (std::size_t i = 0; i < total; ++i) alive += lp.at(i).state == cstate::ready ? 1 : 0;
            std::printf("tls_load: mode=messages seconds=%.2f conns=%zu window=%u responses_200=%llu per_s=%.0f "
                        "other=%llu bad=%llu requests=%llu conns_alive=%zu setup_s=%.2f%s%s\n",
                        secs, total, o.window, static_cast<unsigned long long>(lp.n.ok200),
                        static_cast<double>(lp.n.ok200) / secs, static_cast<unsigned long long>(lp.n.other),
                        static_cast<unsigned long long>(lp.n.bad), static_cast<unsigned long long>(lp.n.requests),
                        alive, setup, lp.n.first_error.empty() ? "" : " first_error=", lp.n.first_error.c_str());
            rc = lp.n.bad != 0 ? 3 : lp.n.ok200 > 0 ? 0 : 2;
        }
    }
    SSL_CTX_free(ctx);
    return rc;
}
