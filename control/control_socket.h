// The daemon's local control socket (Unix stream, newline-delimited JSON) that sbcctl talks
// to, and the client side sbcctl and tests use.
// control_socket: control core only (polled from the control loop; never blocks it).
// control_request: sbcctl and tests (blocking, with a deadline).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sbc::control {

/// A request line longer than this without a newline gets the client dropped: nobody
/// legitimate sends that much, and the buffer must stay bounded.
constexpr std::size_t control_max_request = 64 * 1024;
/// Responses queued for a client that does not read them; past this the client is dropped.
constexpr std::size_t control_max_pending_output = 4 * 1024 * 1024;
/// Clients connected at once; more are closed at accept.
constexpr std::size_t control_max_clients = 64;

/// Protocol: each request is one JSON object on one line, e.g. {"cmd":"stats"}; each gets one
/// JSON object on one line in return, in order. A line that is not a JSON object is answered
/// with {"error":"..."}; the connection stays open for more requests.
class control_socket {
public:
    /// Binds `path` (absolute): creates its parent directory (0755) when missing, replaces a
    /// stale socket file, refuses when another process answers on it or the path is not a
    /// socket, and sets mode 0660. On failure returns nullopt and says why in `error`.
    static std::optional<control_socket> open(const std::string& path, std::string& error);

    control_socket(control_socket&& o) noexcept;
    control_socket& operator=(control_socket&& o) noexcept;
    control_socket(const control_socket&) = delete;
    control_socket& operator=(const control_socket&) = delete;
    /// Closes every connection and removes the socket file.
    ~control_socket();

    /// Waits up to `timeout_ms` (0: just look) for activity, accepts clients, answers every
    /// complete request line with `handler` and writes what it can without blocking. An
    /// exception from `handler` is answered as {"error": what()}.
    void poll(int timeout_ms, const std::function<nlohmann::json(const nlohmann::json& request)>& handler);

    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] std::size_t client_count() const { return clients_.size(); }

private:
    struct client {
        int fd = -1;
        std::string in;   ///< bytes received, not yet a complete line
        std::string out;  ///< response bytes not yet written
        bool peer_closed = false;
    };

    control_socket(int fd, std::string path) : listen_fd_(fd), path_(std::move(path)) {}
    void accept_clients();
    /// false when the client must be dropped.
    bool read_from(client& c, const std::function<nlohmann::json(const nlohmann::json&)>& handler);
    bool write_to(client& c);
    void close_all();

    int listen_fd_ = -1;
    std::string path_;
    std::vector<client> clients_;
};

/// Sends `req` to the daemon at `path` and waits up to `timeout_ms` for the response.
/// nullopt with a sentence for the operator in `error` when there is no socket ("is sbcd
/// running?"), no permission, no answer in time, or an answer that is not JSON.
std::optional<nlohmann::json> control_request(const std::string& path, const nlohmann::json& req, std::string& error,
                                              int timeout_ms);

}  // namespace sbc::control
