// DNS SRV regions on c-ares: a non-blocking transport (ares_getsock + a zero-timeout poll +
// ares_process_fd, called from the control loop; no thread ever waits on DNS) and the glue
// that turns each `srv` region's answer into the peers of the next proxy tables, keeping peers
// that left DNS in the table (out of rotation) while their calls go on. The servers come from
// `[dns]`, or /etc/resolv.conf when it names none. Control core only.
#pragma once

#include <ares.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "control/config.h"
#include "control/dns_report.h"
#include "control/dns_resolver.h"
#include "control/proxy_build.h"

namespace sbc::control {

/// dns::transport over one c-ares channel. Control core only.
class cares_transport final : public dns::transport {
public:
    /// A channel with `c`'s servers (none: /etc/resolv.conf), timeout and tries; nullptr with
    /// `error` when c-ares cannot start (no resolv.conf and no servers, out of memory).
    static std::unique_ptr<cares_transport> create(const dns_config& c, std::string& error);
    ~cares_transport() override;
    cares_transport(const cares_transport&) = delete;
    cares_transport& operator=(const cares_transport&) = delete;

    void query(const std::string& name, uint16_t type, callback done) override;
    /// Reads what the sockets have and handles timeouts; never waits (poll(2) with timeout 0).
    void poll() override;
    /// Replaces the servers ("A.B.C.D[:PORT]", at least one); false with `error`.
    bool set_servers(const std::vector<std::string>& servers, std::string& error);
    /// The servers in use, "127.0.0.1:5353" or "/etc/resolv.conf (8.8.8.8:53)".
    [[nodiscard]] std::string servers_text() const;

private:
    cares_transport() = default;
    static void on_answer(void* arg, int status, int timeouts, unsigned char* abuf, int alen);

    ares_channel channel_ = nullptr;
    bool from_resolv_conf_ = false;
    std::size_t in_flight_ = 0;
};

/// The `srv` regions of the running config. Control core only.
class dns_regions {
public:
    using log_fn = std::function<void(const std::string&)>;
    /// Whether the peer of that peer_ids key ("region/a.b.c.d:port") still has calls.
    using calls_fn = std::function<bool(const std::string& key)>;

    dns_regions(log_fn log, calls_fn has_calls);
    ~dns_regions();

    /// Starts resolving the `srv` names of `c` (names of the running config stay until
    /// commit()), applies its [dns] servers and policy. False with `error` when c-ares cannot
    /// start; nothing to do (true) when `c` has no `srv` region.
    bool prepare(const config& c, std::string& error);
    /// The peers of each region of `c` for build_proxy_tables (index = region index).
    [[nodiscard]] std::vector<learned_region> peers_for(const config& c) const;
    /// `c` is published with `learned`: remembered, so that a peer leaving DNS later is kept
    /// while it has calls; names `c` no longer has are forgotten.
    void commit(const config& c, const std::vector<learned_region>& learned);
    /// Handles DNS without waiting; true when the tables must be rebuilt (a peer set changed,
    /// or a peer that left DNS has no call left).
    bool poll(uint64_t now_ms);

    [[nodiscard]] dns_report report(const config& c, uint64_t now_ms) const;
    /// "SRV-NAME TARGET" for a learned peer, "SRV-NAME (gone from DNS)" for a retired one,
    /// "" for a static one.
    [[nodiscard]] std::string source_of(const config& c, uint16_t region, const ip_address& address, uint16_t port) const;

private:
    log_fn log_;
    calls_fn has_calls_;
    // The transport outlives the resolver: destroying the channel runs the callbacks of the
    // queries in flight, which must find the resolver gone (they check a weak pointer).
    std::unique_ptr<cares_transport> transport_;
    std::unique_ptr<dns::srv_resolver> resolver_;
    std::vector<std::string> servers_;
    std::map<std::string, learned_region> published_;  ///< by region name
    uint64_t last_retired_check_ms_ = 0;
};

}  // namespace sbc::control
