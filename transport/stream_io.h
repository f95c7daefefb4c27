// The stream thread's state and its connection I/O (stream_io.cc; the writes in
// stream_write.cc): listening, accepting and
// connecting, TLS handshakes, reading and framing, writing, closing, and what goes to the
// workers and the control core on the way. The loop around it is stream_thread.cc.
// Stream thread only (start() constructs it on the control core before the thread runs).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <sys/epoll.h>

#include "common/limits.h"
#include "dataplane/snapshot.h"
#include "dataplane/stream_ring.h"
#include "sip-fastpath/sip_message.h"
#include "transport/stream_conn.h"
#include "transport/stream_thread.h"

namespace sbc::streams {

/// epoll data of a listener (| its index) and of the exception port's RX fd; a connection's is its id.
inline constexpr uint64_t listener_tag = 1ull << 63;
inline constexpr uint64_t exception_tag = 1ull << 62;

struct listener {
    int fd = -1;
    endpoint local;
    uint16_t trunk = 0;
};

/// A TCP/TLS peer of the snapshot and its persistent connections.
struct peer_entry {
    endpoint remote;
    endpoint local;              ///< the trunk's leg endpoint (our address; Via's port)
    uint16_t trunk = 0;
    uint16_t region = 0;
    std::string name;
    std::string server_name;
    std::vector<uint32_t> conns;
    uint64_t backoff_ms = 0;     ///< 0 after a success
    uint64_t next_try_ms = 0;
    bool reported_down = false;  ///< the control core was told of a failure since the last success
    conn_reason reported_why = conn_reason::none;  ///< the reason it was last told
    std::string last_error;
    std::size_t next_pick = 0;   ///< round robin over its established connections
};

struct stream_thread::impl {
    impl(const stream_thread_options& o, stream_stats& stats, std::atomic<bool>& stop,
         std::atomic<std::shared_ptr<const tls_set>>& tls, std::atomic<std::shared_ptr<const stream_report>>& report);
    ~impl();
    void run();

    // stream_thread.cc
    void reconcile(const dataplane::snapshot& snap);
    void keep_peers_connected();
    uint64_t backoff(peer_entry& e);
    [[nodiscard]] std::shared_ptr<tls_context> client_context(uint16_t region) const;
    [[nodiscard]] std::shared_ptr<tls_context> server_context(uint16_t trunk) const;
    void run_timers(const dataplane::snapshot& snap);
    void publish_report(const dataplane::snapshot& snap);

    // stream_io.cc; the writes (send_*, spill_pending, tls_write*, mark_dirty, over_limit,
    // flush*, drain_sends, send_message, connection_for, remember_invite) in stream_write.cc
    void open_listener(const endpoint& local, uint16_t trunk);
    void on_event(const dataplane::snapshot& snap, const epoll_event& ev);
    void accept_on(const dataplane::snapshot& snap, listener& l);
    conn* connect_to(const endpoint& remote, const endpoint& local, uint16_t trunk, const std::string& server_name,
                     std::shared_ptr<tls_context> tls, uint32_t peer_id);
    void on_connected(conn& c);
    void handshake(conn& c);
    void established(conn& c);
    /// The connection is up for its peer: backoff reset, the control core told.
    void confirm(conn& c);
    /// Reads and frames what `c` has, at most max_reads times (then again next iteration, through
    /// rereads_, when OpenSSL still holds records).
    void read_from(conn& c);
    /// After the reads of an iteration: confirmation, and output OpenSSL made while reading.
    void after_read(conn& c);
    /// The connections read_from left with records in OpenSSL's buffer, read first next iteration.
    unsigned read_again();
    void deliver(conn& c, std::string_view msg);
    /// Queues `m` for worker `worker`'s stream_in ring (a message, or a lost connection's
    /// notice), handed over when the iteration ends or a burst is full (hand_staged).
    void stage(std::size_t worker, rte_mbuf* m, bool message);
    void hand_staged(std::size_t worker);
    /// Every worker's staged mbufs onto its ring: the loop calls it once per iteration.
    void hand_all_staged();
    /// Queues `bytes` (copied) behind what waits on `c`; TLS: through SSL_write at once when up,
    /// behind the pending mbufs.
    void send_bytes(conn& c, std::string_view bytes);
    /// Sends the message in `m` (and frees it): from the mbuf itself when nothing waits before it.
    void send_mbuf(conn& c, rte_mbuf* m);
    /// Writes what waits on `c`: its pending mbufs (TCP: sendmsg; TLS: one SSL_write), then
    /// `out`; arms EPOLLOUT for a rest.
    void flush(conn& c);
    /// TCP: sendmsg over the pending mbufs; what is not taken goes to `out`. False: closed.
    bool flush_pending(conn& c);
    /// TCP: the pending mbufs copied to the end of `out` (behind a backlog, or before other bytes).
    void spill_pending(conn& c);
    /// TLS: SSL_write of `bytes` into the records of `out`. False: closed.
    bool tls_write(conn& c, std::string_view bytes);
    /// TLS: the pending mbufs encrypted in one SSL_write (several: gathered in `plain_` first)
    /// and freed. False: closed.
    bool tls_write_pending(conn& c);
    /// In the list of connections flush_dirty writes (once per loop iteration).
    void mark_dirty(conn& c);
    /// Closes `c` (output_overflow) when `more` bytes would take it over max_unsent; true then.
    bool over_limit(conn& c, std::size_t more);
    /// Writes what send_bytes queued on each connection since the last call.
    void flush_dirty();
    void watch(conn& c, bool want_write);
    unsigned drain_sends(const dataplane::snapshot& snap);
    void send_message(const dataplane::snapshot& snap, rte_mbuf* m);
    conn* connection_for(const dataplane::stream_send& h);
    void remember_invite(conn& c, std::string_view msg, uint8_t worker);
    void close_conn(conn& c, conn_reason why, const std::string& detail);
    void close_all();
    /// Marks `fd`'s IP packets with the SIP DSCP of the interface that owns `local` (IP_TOS;
    /// an accepted socket inherits its listener's). The kernel then writes it in every segment.
    void mark_sip(int fd, const ip_address& local) const;
    /// Learns each interface's SIP TOS from the snapshot and re-marks the open sockets when one
    /// changed (a reload): reconcile calls it first.
    void learn_sip_tos(const dataplane::snapshot& snap);

    stream_thread_options o_;
    stream_stats& stats_;
    std::atomic<bool>& stop_;
    std::atomic<std::shared_ptr<const tls_set>>& tls_;
    std::atomic<std::shared_ptr<const stream_report>>& report_;
    int ep_ = -1;
    uint64_t now_ms_ = 0;
    uint64_t generation_ = ~0ull;
    framer_buffers buffers_;
    conn_table conns_;
    std::vector<listener> listeners_;
    std::map<uint32_t, peer_entry> peers_;           ///< by peer id
    std::unordered_map<uint16_t, std::string> trunk_names_;
    std::unordered_map<uint64_t, uint32_t> conns_by_source_;       ///< inbound connections per remote address
    std::unordered_map<uint64_t, uint32_t> handshakes_by_source_;  ///< inbound handshakes this second
    uint64_t handshake_window_ms_ = 0;
    std::vector<std::string> problems_;
    static constexpr int max_reads = 16;  ///< reads of one connection per iteration (fairness)
    std::vector<uint32_t> rereads_;       ///< see read_again
    std::vector<uint32_t> dirty_;  ///< connections with output queued this iteration
    std::vector<std::pair<ip_address, uint8_t>> sip_tos_;  ///< (our address, its interface's tos_sip)
    std::string plain_;  ///< tls_write_pending's gathered plaintext, kept between iterations
    std::unique_ptr<sip::message> scratch_;  ///< what deliver parses a message into to find its owner
    static_assert(burst_size <= 32, "staged::messages has a bit per entry");
    struct staged {
        std::array<rte_mbuf*, burst_size> pkts{};
        uint32_t n = 0;
        uint32_t messages = 0;  ///< bit i: pkts[i] is a message (else a lost connection's notice)
    };
    std::vector<staged> staged_;  ///< by worker: what goes onto its stream_in ring this iteration
};

}  // namespace sbc::streams
