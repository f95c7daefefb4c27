// The stream thread: every TCP and TLS connection of sbcd (docs/architecture.md, "Streams").
// A non-worker thread, pinned to [streams] cpu, inside sbcd's own namespace. It pumps the
// exception port (exception_port.h), runs epoll over non-blocking kernel sockets with OpenSSL
// 3 for TLS, frames SIP on them (stream_framer.h), gives complete messages to workers and
// sends what workers (and the control core's probes) hand it (dataplane/stream_ring.h).
// It keeps persistent connections to every TCP/TLS peer of the snapshot, listens on every
// trunk's TCP/TLS port, and tells the control core when a peer's connection fails.
// No worker ever waits for it: every ring between them drops and counts when full.
// start/stop/set_tls/report/stats: control core. Everything else: the stream thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/address.h"
#include "common/counter.h"
#include "dataplane/stream_ring.h"
#include "transport/exception_port.h"
#include "transport/netns.h"
#include "transport/stream_config.h"
#include "transport/tls_context.h"

namespace sbc::streams {

/// The TLS contexts in use; immutable once published, replaced whole by set_tls (reload).
/// Connections keep the context they were made with.
struct tls_set {
    std::vector<std::shared_ptr<tls_context>> trunk_server;   ///< by trunk index; null: no TLS there
    std::vector<std::shared_ptr<tls_context>> region_client;  ///< by region index; null: none
    std::shared_ptr<tls_context> default_client;              ///< [tls] as a client (anyone else)
};

/// One connection as `sbcctl conns` shows it.
struct conn_report {
    uint32_t id = 0;
    bool outbound = false;
    std::string state;         ///< connecting, handshaking, established
    endpoint local;
    endpoint remote;
    std::string owner;         ///< "trunk NAME" or "peer NAME"
    std::string tls_version;   ///< "" for TCP
    std::string cipher;
    std::string peer_subject;
    uint64_t age_ms = 0;
    uint64_t msgs_in = 0, msgs_out = 0, bytes_in = 0, bytes_out = 0;
};

/// A peer's connection state, for `sbcctl peers` and `conns`.
struct peer_conn_report {
    uint32_t peer_id = 0;
    std::string name;
    uint32_t established = 0;  ///< connections up
    std::string last_error;    ///< why the last one failed ("certificate name mismatch: ...")
};

/// What the stream thread publishes every half second; immutable once published.
struct stream_report {
    std::vector<conn_report> conns;
    std::vector<peer_conn_report> peers;
    std::vector<std::string> problems;  ///< listeners that could not be opened, and why
};

#define SBC_STREAM_COUNTERS(X)                                                   \
    X(accepted, "inbound connections accepted")                                   \
    X(refused, "inbound connections refused (limits, source not allowed)")        \
    X(connects, "outbound connections attempted")                                 \
    X(handshakes_ok, "TLS handshakes completed")                                  \
    X(msgs_in, "SIP messages received on streams")                                \
    X(msgs_out, "SIP messages sent on streams")                                   \
    X(to_owner, "SIP messages received on streams and given straight to the worker that owns their transaction or dialog") \
    X(by_connection, "SIP messages received on streams that name no owner (new requests), given to a worker by connection") \
    X(bytes_in, "bytes received on streams (after TLS)")                          \
    X(bytes_out, "bytes sent on streams (before TLS)")                            \
    X(pings_answered, "CRLF keep-alive pings answered")                          \
    X(worker_ring_full, "SIP messages lost: a worker's ring was full")            \
    X(no_buffer, "SIP messages lost: no stream buffer free")                      \
    X(no_connection, "SIP messages not sent: no connection to their destination") \
    X(output_overflow, "connections closed: too much unsent output")

/// Counters: the stream thread writes (single_writer, common/counter.h: its one writer), anyone reads
/// (relaxed; each stands alone).
struct stream_stats {
#define SBC_X(name, help) sbc::single_writer<uint64_t> name;
    SBC_STREAM_COUNTERS(SBC_X)
#undef SBC_X
    std::array<sbc::single_writer<uint64_t>, conn_reason_count> closed{};             ///< connections ended, by reason
    std::array<sbc::single_writer<uint64_t>, conn_reason_count> handshakes_failed{};  ///< by reason
    std::array<sbc::single_writer<uint64_t>, 3> open_by_state{};  ///< connecting, handshaking, established (as shown)
    pump_counters pump;
};

struct stream_thread_options {
    stream_settings settings;
    const netns* ns = nullptr;
    exception_port* port = nullptr;
    dataplane::stream_rings rings;  ///< the dataplane's ends that the thread uses (stream_ring.h)
};

class stream_thread {
public:
    stream_thread();
    ~stream_thread();
    stream_thread(const stream_thread&) = delete;
    stream_thread& operator=(const stream_thread&) = delete;

    /// Starts the thread (the snapshot must be published). False with a message when the
    /// thread cannot start.
    bool start(const stream_thread_options& o, std::shared_ptr<const tls_set> tls, std::string& error);
    /// Closes every connection and joins the thread.
    void stop();
    /// Reload: new connections use `tls`; established ones keep theirs.
    void set_tls(std::shared_ptr<const tls_set> tls);
    /// The latest report (null before the first).
    [[nodiscard]] std::shared_ptr<const stream_report> report() const;
    [[nodiscard]] const stream_stats& stats() const noexcept { return stats_; }

    struct impl;

private:
    std::unique_ptr<impl> impl_;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    stream_stats stats_;
    std::atomic<std::shared_ptr<const tls_set>> tls_;
    std::atomic<std::shared_ptr<const stream_report>> report_;
};

}  // namespace sbc::streams
