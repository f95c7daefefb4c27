// The Unix stream control socket: a non-blocking server polled from the control loop, and a
// blocking client with a deadline for sbcctl.
// control_socket: control core only. control_request: sbcctl and tests.
#include "control/control_socket.h"

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace sbc::control {

using nlohmann::json;

namespace {

std::string errno_text(int err) { return std::strerror(err); }

bool fill_address(const std::string& path, sockaddr_un& addr, std::string& error)
{
    addr = {};
    addr.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof addr.sun_path) {
        error = "socket path " + path + " is empty or longer than " + std::to_string(sizeof addr.sun_path - 1) + " bytes";
        return false;
    }
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    return true;
}

// mkdir -p with 0755 for the directories it creates; existing ones are left as they are.
bool make_parents(const std::string& path, std::string& error)
{
    for (std::size_t pos = path.find('/', 1); pos != std::string::npos; pos = path.find('/', pos + 1)) {
        const std::string dir = path.substr(0, pos);
        if (::mkdir(dir.c_str(), 0755) == 0) {
            ::chmod(dir.c_str(), 0755);  // mkdir's mode is filtered by the umask
        } else if (errno != EEXIST) {
            error = "cannot create directory " + dir + ": " + errno_text(errno);
            return false;
        }
    }
    return true;
}

// Connects with a deadline; returns the fd or -1 with errno set.
int connect_unix(const sockaddr_un& addr, int timeout_ms)
{
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) return fd;
    if (errno != EAGAIN && errno != EINPROGRESS) {
        const int err = errno;
        ::close(fd);
        errno = err;
        return -1;
    }
    // A Unix socket whose backlog is full makes a non-blocking connect fail with EAGAIN on
    // Linux rather than wait; retry until the deadline.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
        ::usleep(10000);
        if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0 || errno == EISCONN) return fd;
        if (errno != EAGAIN && errno != EINPROGRESS && errno != EALREADY) break;
    }
    const int err = errno == EAGAIN || errno == EINPROGRESS || errno == EALREADY ? ETIMEDOUT : errno;
    ::close(fd);
    errno = err;
    return -1;
}

std::string line_of(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; }

}  // namespace

std::optional<control_socket> control_socket::open(const std::string& path, std::string& error)
{
    sockaddr_un addr;
    if (!fill_address(path, addr, error)) return std::nullopt;
    if (path[0] != '/') {
        error = "socket path " + path + " is not absolute";
        return std::nullopt;
    }
    if (!make_parents(path, error)) return std::nullopt;

    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            error = path + " exists and is not a socket; remove it or choose another node.control_socket";
            return std::nullopt;
        }
        int probe = connect_unix(addr, 200);
        if (probe >= 0) {
            ::close(probe);
            error = "another sbcd answers on " + path + "; stop it or give this one another node.control_socket";
            return std::nullopt;
        }
        // Nobody listens: a previous sbcd died without cleaning up.
        if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
            error = "cannot remove stale socket " + path + ": " + errno_text(errno);
            return std::nullopt;
        }
    }

    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        error = "socket(): " + errno_text(errno);
        return std::nullopt;
    }
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        error = "cannot bind " + path + ": " + errno_text(errno);
        ::close(fd);
        return std::nullopt;
    }
    // 0660: root and the socket's group (operators) may talk to sbcd; nobody else.
    if (::chmod(path.c_str(), 0660) != 0 || ::listen(fd, 16) != 0) {
        error = "cannot listen on " + path + ": " + errno_text(errno);
        ::close(fd);
        ::unlink(path.c_str());
        return std::nullopt;
    }
    return control_socket(fd, path);
}

control_socket::control_socket(control_socket&& o) noexcept
    : listen_fd_(o.listen_fd_), path_(std::move(o.path_)), clients_(std::move(o.clients_))
{
    o.listen_fd_ = -1;
    o.path_.clear();
    o.clients_.clear();
}

control_socket& control_socket::operator=(control_socket&& o) noexcept
{
    if (this != &o) {
        close_all();
        listen_fd_ = o.listen_fd_;
        path_ = std::move(o.path_);
        clients_ = std::move(o.clients_);
        o.listen_fd_ = -1;
        o.path_.clear();
        o.clients_.clear();
    }
    return *this;
}

control_socket::~control_socket() { close_all(); }

void control_socket::close_all()
{
    for (auto& c : clients_) ::close(c.fd);
    clients_.clear();
    if (listen_fd_ >= 0) {
        ::close(listen_fd_);
        ::unlink(path_.c_str());
    }
    listen_fd_ = -1;
}

void control_socket::accept_clients()
{
    for (;;) {
        int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;  // EAGAIN: no more; anything else: try again next poll
        if (clients_.size() >= control_max_clients) {
            ::close(fd);
            continue;
        }
        clients_.push_back(client{fd, {}, {}, false});
    }
}

bool control_socket::read_from(client& c, const std::function<json(const json&)>& handler)
{
    char buf[16384];
    for (;;) {
        ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
        if (n > 0) {
            c.in.append(buf, static_cast<std::size_t>(n));
            // Answer complete lines as they come so that the buffer only ever holds one.
            std::size_t start = 0;
            for (std::size_t nl; (nl = c.in.find('\n', start)) != std::string::npos; start = nl + 1) {
                std::string_view line(c.in.data() + start, nl - start);
                if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
                if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
                json response;
                json request = json::parse(line, nullptr, false);
                if (request.is_discarded())
                    response = {{"error", "request is not valid JSON; expected one object per line like {\"cmd\":\"status\"}"}};
                else if (!request.is_object())
                    response = {{"error", "request is not a JSON object; expected one like {\"cmd\":\"status\"}"}};
                else {
                    try {
                        response = handler(request);
                    } catch (const std::exception& e) {
                        response = {{"error", e.what()}};
                    }
                }
                c.out += line_of(response);
            }
            c.in.erase(0, start);
            if (c.in.size() > control_max_request) return false;
            if (c.out.size() > control_max_pending_output) return false;
            continue;
        }
        if (n == 0) {
            c.peer_closed = true;
            return true;
        }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    }
}

bool control_socket::write_to(client& c)
{
    while (!c.out.empty()) {
        ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            c.out.erase(0, static_cast<std::size_t>(n));
            continue;
        }
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
    }
    return true;
}

void control_socket::poll(int timeout_ms, const std::function<json(const json&)>& handler)
{
    if (listen_fd_ < 0) return;
    std::vector<pollfd> fds;
    fds.reserve(clients_.size() + 1);
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const auto& c : clients_)
        fds.push_back({c.fd, static_cast<short>((c.peer_closed ? 0 : POLLIN) | (c.out.empty() ? 0 : POLLOUT)), 0});
    if (::poll(fds.data(), fds.size(), timeout_ms) <= 0) return;

    // Clients first (indices in fds match clients_ before accept appends new ones).
    std::vector<client> kept;
    kept.reserve(clients_.size());
    for (std::size_t i = 0; i < clients_.size(); ++i) {
        client& c = clients_[i];
        const short ev = fds[i + 1].revents;
        bool alive = true;
        if (ev & (POLLIN | POLLHUP | POLLERR)) alive = read_from(c, handler);
        if (alive) alive = write_to(c);
        // A client that hung up is kept only until its answers are out.
        if (alive && c.peer_closed && c.out.empty()) alive = false;
        if (alive && (ev & (POLLERR | POLLNVAL))) alive = false;
        if (alive)
            kept.push_back(std::move(c));
        else
            ::close(c.fd);
    }
    clients_ = std::move(kept);
    if (fds[0].revents & POLLIN) accept_clients();
}

std::optional<json> control_request(const std::string& path, const json& req, std::string& error, int timeout_ms)
{
    sockaddr_un addr;
    if (!fill_address(path, addr, error)) return std::nullopt;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    int fd = connect_unix(addr, timeout_ms);
    if (fd < 0) {
        switch (errno) {
        case ENOENT: error = "is sbcd running? no socket at " + path; break;
        case EACCES:
        case EPERM:
            error = "permission denied on " + path + " (run as root or as a member of the socket's group)";
            break;
        case ECONNREFUSED: error = "is sbcd running? nobody answers on " + path + " (stale socket)"; break;
        case ETIMEDOUT: error = "timed out connecting to sbcd at " + path; break;
        default: error = "cannot connect to " + path + ": " + errno_text(errno);
        }
        return std::nullopt;
    }
    auto remaining = [&] {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        return static_cast<int>(std::max<long long>(0, left.count()));
    };
    auto fail = [&](std::string why) {
        error = std::move(why);
        ::close(fd);
        return std::nullopt;
    };

    const std::string out = line_of(req);
    std::size_t sent = 0;
    while (sent < out.size()) {
        ssize_t n = ::send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
        if (n > 0) {
            sent += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            pollfd p{fd, POLLOUT, 0};
            if (::poll(&p, 1, remaining()) <= 0) return fail("timed out sending to sbcd at " + path);
            continue;
        }
        return fail("cannot send to sbcd at " + path + ": " + errno_text(errno));
    }

    std::string in;
    char buf[16384];
    for (;;) {
        if (auto nl = in.find('\n'); nl != std::string::npos) {
            json response = json::parse(std::string_view(in).substr(0, nl), nullptr, false);
            if (response.is_discarded()) return fail("sbcd at " + path + " answered something that is not JSON");
            ::close(fd);
            return response;
        }
        if (in.size() > 64u * 1024 * 1024) return fail("sbcd at " + path + " sent an answer without end");
        pollfd p{fd, POLLIN, 0};
        const int left = remaining();
        if (left <= 0 || ::poll(&p, 1, left) <= 0)
            return fail("timed out after " + std::to_string(timeout_ms) + " ms waiting for sbcd at " + path);
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n > 0)
            in.append(buf, static_cast<std::size_t>(n));
        else if (n == 0)
            return fail("sbcd at " + path + " closed the connection without answering");
        else if (errno != EAGAIN && errno != EINTR)
            return fail("cannot read from sbcd at " + path + ": " + errno_text(errno));
    }
}

}  // namespace sbc::control
