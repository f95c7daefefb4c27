// SIP over TCP and TLS as the control core runs it: sbcd's namespace, the exception port and
// the stream thread (transport/), started after the first snapshot is published and stopped
// before the dataplane; the TLS contexts built from the config at start and at every reload
// (established connections keep theirs). Control core only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "control/config.h"
#include "transport/exception_port.h"
#include "transport/netns.h"
#include "transport/stream_thread.h"

namespace sbc::dataplane {
struct dataplane_runtime;
}

namespace sbc::control {

/// One configured certificate, for /metrics (its expiry).
struct certificate_info {
    std::string owner;     ///< "trunk NAME", "region NAME" or "tls"
    std::string file;
    std::string subject;
    int64_t not_after = 0;
};

class stream_service {
public:
    /// Whether `c` has any trunk or region that uses TCP or TLS.
    static bool needed(const config& c);
    /// The TLS contexts of `c`: trunks' servers and regions' clients, by index. Null with
    /// `error` ("trunk[N].tls: ...") when one cannot be built.
    static std::shared_ptr<const streams::tls_set> build_tls(const config& c, std::string& error);

    ~stream_service();
    /// Creates the namespace "sbcd-<file prefix>", the exception port on the first port's MAC
    /// with every interface's address, and starts the stream thread on `rt`'s stream rings
    /// (dataplane::stream_rings_of: the thread sees nothing else of the dataplane). Nothing when
    /// not needed.
    bool start(const config& c, dataplane::dataplane_runtime& rt, const std::string& ns_name, std::string& error);
    /// Reload: new TLS contexts for new connections. False with `error` (nothing changed) when
    /// the new config needs streams and sbcd started without them (a restart adds them).
    bool reload(const config& c, std::string& error);
    void stop();

    [[nodiscard]] bool running() const noexcept { return thread_ != nullptr; }
    [[nodiscard]] const streams::stream_thread* thread() const noexcept { return thread_.get(); }
    [[nodiscard]] const std::vector<certificate_info>& certificates() const noexcept { return certs_; }
    [[nodiscard]] const std::string& namespace_name() const noexcept { return ns_name_; }

private:
    std::unique_ptr<streams::netns> ns_;
    streams::exception_port port_;
    std::unique_ptr<streams::stream_thread> thread_;
    std::vector<certificate_info> certs_;
    std::string ns_name_;
};

}  // namespace sbc::control
