// /metrics and /healthz over HTTP with cpp-httplib, served from a thread of its own.
// start() and the destructor: control core. Handlers: HTTP thread pool (two threads, which
// inherit the control core's CPU affinity, so they never run on a worker's core).
#include "control/metrics_http.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <httplib.h>

#include "control/config.h"

namespace sbc::control {

struct metrics_http::impl {
    httplib::Server server;
    std::thread thread;
};

namespace {

// httplib reports a failed bind as false without a reason; redo the bind by hand to tell
// the operator whether the address is wrong, taken, or needs privileges.
std::string why_bind_fails(const std::string& host, uint16_t port)
{
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* res = nullptr;
    const std::string service = std::to_string(port);
    if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0)
        return "bad address " + host + ": " + ::gai_strerror(rc);
    std::string why = "cannot bind";
    for (addrinfo* ai = res; ai; ai = ai->ai_next) {
        int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) continue;
        int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // as httplib does
        if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            const int err = errno;
            why = err == EADDRINUSE      ? "address in use"
                  : err == EADDRNOTAVAIL ? "address not available on this machine"
                  : err == EACCES        ? "permission denied (ports below 1024 need privileges)"
                                         : std::strerror(err);
        }
        ::close(fd);
    }
    ::freeaddrinfo(res);
    return why;
}

}  // namespace

metrics_http::metrics_http(std::unique_ptr<impl> p, uint16_t port) : impl_(std::move(p)), port_(port) {}

std::unique_ptr<metrics_http> metrics_http::start(const std::string& address, std::function<std::string()> metrics,
                                                  std::function<std::pair<int, std::string>()> health,
                                                  std::string& error)
{
    // Port 0 (any free port) is for tests; the config itself requires 1..65535.
    std::optional<host_port> hp;
    if (address.size() > 2 && address.compare(address.size() - 2, 2, ":0") == 0) {
        hp = parse_host_port(address.substr(0, address.size() - 1) + "1");
        if (hp) hp->port = 0;
    } else {
        hp = parse_host_port(address);
    }
    if (!hp) {
        error = "bad management address \"" + address + "\": expected host:port";
        return nullptr;
    }

    auto p = std::make_unique<impl>();
    auto& svr = p->server;
    // Two threads are plenty for a scraper and an operator; the default pool would start one
    // per CPU, all sharing the control core.
    svr.new_task_queue = [] { return new httplib::ThreadPool(2); };
    // httplib's default is SO_REUSEPORT, which lets a second sbcd bind the same port and
    // silently take half the scrapes; SO_REUSEADDR only allows a restart over TIME_WAIT.
    svr.set_socket_options([](int sock) {
        int one = 1;
        ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    });
    svr.set_read_timeout(5, 0);
    svr.set_write_timeout(5, 0);
    svr.set_keep_alive_max_count(100);
    svr.Get("/metrics", [metrics = std::move(metrics)](const httplib::Request&, httplib::Response& res) {
        res.set_content(metrics(), "text/plain; version=0.0.4; charset=utf-8");
    });
    svr.Get("/healthz", [health = std::move(health)](const httplib::Request&, httplib::Response& res) {
        auto [code, body] = health();
        res.status = code;
        if (body.empty() || body.back() != '\n') body += '\n';  // curl output ends on its own line
        res.set_content(body, "text/plain; charset=utf-8");
    });
    svr.set_error_handler([](const httplib::Request&, httplib::Response& res) {
        if (res.status == 404) res.set_content("not found; try /metrics or /healthz\n", "text/plain");
    });

    int port = hp->port;
    if (port == 0) {
        port = svr.bind_to_any_port(hp->host);
        if (port < 0) {
            error = "cannot serve HTTP on " + address + ": " + why_bind_fails(hp->host, 0);
            return nullptr;
        }
    } else if (!svr.bind_to_port(hp->host, port)) {
        error = "cannot serve HTTP on " + address + ": " + why_bind_fails(hp->host, hp->port);
        return nullptr;
    }

    p->thread = std::thread([&svr] { svr.listen_after_bind(); });
    // stop() is a no-op until the listen loop runs; wait for it so the destructor can stop it.
    for (int i = 0; i < 2000 && !svr.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return std::unique_ptr<metrics_http>(new metrics_http(std::move(p), static_cast<uint16_t>(port)));
}

metrics_http::~metrics_http()
{
    if (!impl_) return;
    impl_->server.stop();
    if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace sbc::control
