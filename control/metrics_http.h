// The management HTTP endpoint: GET /metrics (Prometheus text) and GET /healthz.
// start() and the destructor: control core. The callbacks run on the HTTP thread(s), so they
// must only read state that is safe to read from there (counters, an atomically published
// report), never the control core's private structures.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace sbc::control {

class metrics_http {
public:
    /// Binds `host_port` ("127.0.0.1:9090"; port 0 picks a free port, see port()) and serves
    /// in a thread of its own. `metrics` returns the /metrics body; `health` returns the
    /// /healthz status code and body (200 "ok", 503 "draining"). On failure returns nullptr
    /// and says why in `error` (bad address, address in use, permission denied).
    static std::unique_ptr<metrics_http> start(const std::string& host_port, std::function<std::string()> metrics,
                                               std::function<std::pair<int, std::string>()> health,
                                               std::string& error);
    /// Stops serving and joins the thread.
    ~metrics_http();
    metrics_http(const metrics_http&) = delete;
    metrics_http& operator=(const metrics_http&) = delete;

    /// The port actually bound (the chosen one when started with port 0).
    [[nodiscard]] uint16_t port() const { return port_; }

private:
    struct impl;
    explicit metrics_http(std::unique_ptr<impl> p, uint16_t port);
    std::unique_ptr<impl> impl_;
    uint16_t port_ = 0;
};

}  // namespace sbc::control
