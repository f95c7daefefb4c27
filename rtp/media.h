// Media anchoring, the per-worker half: the [media] settings, the worker's pool of media
// ports (with quarantine), its call sessions (which streams a call has, keyed by Call-ID
// hash), the SDP rewrite the proxy calls through sip::media_hook, the inactivity check, and
// the read-only views sbcctl and /metrics show.
//
// Threads: a media_sessions object belongs to one worker (worker only: no heap, locks or
// system calls after construction, which the control core does at start). The views
// (media_sessions::calls, summarize) are read by the control core while the worker runs:
// they read only atomics and tolerate a call ending meanwhile (the entry may be stale).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/counter.h"
#include "common/counter_list.h"
#include "common/limits.h"
#include "common/address.h"
#include "common/slot_table.h"
#include "rtp/flow_table.h"
#include "sip-fastpath/media_hook.h"
#include "common/timer_wheel.h"

namespace sbc::rtp {

enum class latching : uint8_t { symmetric, strict };

constexpr uint16_t default_port_min = 20000;
constexpr uint16_t default_port_max = 59999;
constexpr uint32_t default_inactivity_timeout_s = 60;
constexpr uint32_t default_quarantine_ms = 5000;
constexpr unsigned max_streams_per_call = 4;  ///< m-lines anchored per call; more stay unchanged

/// The `[media]` section (control/config.* parses it). Absent: no anchoring at all.
struct media_config {
    bool enabled = false;
    std::vector<ip_address> addresses;  ///< each one of an interface's addresses (IPv4 only for now)
    uint16_t port_min = default_port_min;  ///< even
    uint16_t port_max = default_port_max;
    latching mode = latching::symmetric;
    uint32_t inactivity_timeout_s = default_inactivity_timeout_s;  ///< 0: never
    uint32_t quarantine_ms = default_quarantine_ms;  ///< a freed port is reused after this
    uint32_t sessions_per_worker = sbc::default_media_sessions_per_worker;            ///< calls with media per worker
    bool operator==(const media_config&) const = default;
};

/// One worker's media ports: even/odd pairs from its slice of the range, on every media
/// address. A freed pair waits quarantine_ms before reuse, so late packets of an ended call
/// never reach a new one and no reader still holds its stream. Worker only, except the
/// counts, which the control core reads.
class port_pool {
public:
    port_pool(const flow_table& t, unsigned worker, uint32_t quarantine_ms);

    struct pair {
        uint8_t addr = 0;     ///< address index
        uint16_t port = 0;    ///< even RTP port; RTCP is port + 1
    };
    /// Takes a free pair on address index `addr`; false when none is free there
    /// (quarantined ones are not free).
    bool take(unsigned addr, pair& out) noexcept;
    /// The address index with the most free pairs (where a new call's ports come from).
    [[nodiscard]] unsigned emptiest_address() const noexcept;
    /// Gives a pair back; it becomes free at now_ms + quarantine.
    void give_back(pair p, uint64_t now_ms) noexcept;
    /// Moves pairs whose quarantine has passed back to the free lists.
    void reclaim(uint64_t now_ms) noexcept;

    /// Any thread: pairs free now, in quarantine, and in all.
    [[nodiscard]] uint32_t free_count() const noexcept { return free_view_.get(); }
    [[nodiscard]] uint32_t quarantined() const noexcept { return q_view_.get(); }
    [[nodiscard]] uint32_t capacity() const noexcept { return per_address_ * n_addresses_; }

private:
    void publish_counts() noexcept;

    unsigned n_addresses_ = 0;
    uint32_t per_address_ = 0;      ///< pairs of this worker's slice on one address
    uint32_t quarantine_ms_ = 0;
    std::unique_ptr<uint16_t[]> free_;  ///< per address a FIFO ring of even ports
    std::unique_ptr<uint32_t[]> head_;  ///< per address
    std::unique_ptr<uint32_t[]> count_; ///< per address
    uint32_t total_free_ = 0;
    struct held {
        pair p;
        uint64_t until_ms;
    };
    std::unique_ptr<held[]> quarantine_;  ///< FIFO ring in release order
    uint32_t q_head_ = 0, q_count_ = 0;
    sbc::single_writer<uint32_t> free_view_;
    sbc::single_writer<uint32_t> q_view_;
};

/// Per-worker media counters (one writer: the worker; readers load relaxed).
#define SBC_MEDIA_COUNTERS(X)                                                          \
    X(sdp_rewritten, "SDP bodies rewritten to the SBC's media address")                \
    X(sdp_unparsable, "SDP bodies forwarded unchanged because they did not parse")    \
    X(no_ports, "offers refused because the worker's media ports were used up")        \
    X(no_sessions, "offers refused because the worker's media session table was full") \
    X(sessions_started, "calls whose media the SBC anchors")                           \
    X(sessions_ended, "anchored calls torn down")                                      \
    X(sessions_silent, "calls ended by the media inactivity timeout")                  \
    X(ended_rtp_packets, "RTP packets that reached the SBC on anchored calls, added when each call ended (both directions, every m-line)") \
    X(ended_rtp_lost, "RTP packets lost on the way to the SBC (RFC 3550 cumulative loss) on anchored calls, added when each call ended")

SBC_LIST_ENUM(media_counter, SBC_MEDIA_COUNTERS);
constexpr std::size_t media_counter_count = list_size<media_counter>;
std::string_view media_counter_name(media_counter c) noexcept;
std::string_view media_counter_help(media_counter c) noexcept;

/// Upper bounds, in ms, of the histogram of RTP interarrival jitter (RFC 3550) that each
/// anchored flow with packets had when its call ended; one more bucket holds what is above.
constexpr std::array<uint32_t, 8> jitter_bounds_ms{1, 2, 5, 10, 20, 30, 50, 100};
constexpr std::size_t jitter_buckets = jitter_bounds_ms.size() + 1;

/// One direction of one stream as the views show it (a flow: packets arriving on `port`).
struct flow_view {
    endpoint local;          ///< our address and port the flow arrives on
    endpoint far;            ///< where the packets came from (latched) or the SDP said; unset: not known
    bool latched = false;
    uint64_t packets = 0, bytes = 0;
    uint32_t lost = 0;
    double jitter_ms = 0;    ///< RFC 3550 interarrival jitter, in milliseconds
    uint32_t dropped = 0;    ///< refused by latching
};

/// One anchored m-line: [side] = the flow arriving from that leg ([0] from A, [1] from B).
struct stream_view {
    unsigned index = 0;      ///< m-line number
    bool rtcp_mux = false;
    std::array<flow_view, 2> rtp;
    std::array<flow_view, 2> rtcp;
};

struct call_media_view {
    uint64_t call = 0;       ///< Call-ID hash
    unsigned worker = 0;
    uint64_t started_ms = 0;
    std::vector<stream_view> streams;
};

/// Media totals of one worker (or summed): what /metrics shows.
struct media_summary {
    std::array<uint64_t, media_counter_count> counters{};
    uint64_t sessions_active = 0;
    uint64_t streams_active = 0;
    uint64_t ports_free = 0;         ///< even/odd pairs free (not counting quarantine)
    uint64_t ports_quarantined = 0;
    std::array<uint64_t, jitter_buckets> jitter_flows{};  ///< ended flows by end jitter (jitter_bounds_ms)
    uint64_t jitter_sum_us = 0;                             ///< their jitter summed
};

/// One worker's calls with anchored media; the proxy reaches it through sip::media_hook.
class media_sessions final : public sip::media_hook {
public:
    /// Control core, at start: `t` is shared by every worker and outlives this object.
    media_sessions(flow_table& t, unsigned worker, const media_config& c);
    ~media_sessions();
    media_sessions(const media_sessions&) = delete;
    media_sessions& operator=(const media_sessions&) = delete;

    // sip::media_hook (worker only)
    sip::sdp_verdict rewrite_sdp(uint64_t call, sip::media_leg to, std::string_view content_type,
                                 std::string_view body, std::span<char> out, std::size_t& out_len,
                                 uint64_t now_ms) noexcept override;
    void call_ended(uint64_t call, uint64_t now_ms) noexcept override;
    uint32_t silent_calls(uint64_t now_ms, std::span<uint64_t> calls) noexcept override;
    bool call_figures(uint64_t call, std::span<sbc::cdr_media, 2> out) noexcept override;

    /// Worker only, once per loop or less: returns quarantined ports whose time is up.
    void tick(uint64_t now_ms) noexcept;

    /// Control core: the calls with media this worker holds now (allocates; not for workers).
    [[nodiscard]] std::vector<call_media_view> calls() const;
    /// Control core: this worker's totals.
    [[nodiscard]] media_summary summary() const noexcept;

    [[nodiscard]] const port_pool& ports() const noexcept { return pool_; }
    [[nodiscard]] unsigned worker() const noexcept { return worker_; }

    struct session;

private:
    uint32_t create(uint64_t call, uint64_t now_ms) noexcept;
    void end(uint32_t slot, uint64_t now_ms) noexcept;
    bool ensure_stream(uint32_t slot, unsigned m) noexcept;
    void count(media_counter c, uint64_t n = 1) noexcept;
    [[nodiscard]] uint64_t last_media_ms(const session& s) const noexcept;
    /// The RTP flow of `st` arriving from `side` as a call record shows it.
    [[nodiscard]] sbc::cdr_media rtp_figures(const media_stream& st, unsigned side) const noexcept;
    /// Adds an ending call's RTP packets, loss and jitter to the node-wide figures.
    void count_quality(const session& s) noexcept;

    flow_table& table_;
    unsigned worker_;
    media_config cfg_;
    port_pool pool_;
    slot_table<session> sessions_;  ///< by Call-ID hash; the views read the records' atomics
    timer_wheel timers_;  ///< per session: when to look at its media again
    std::array<sbc::single_writer<uint64_t>, media_counter_count> counters_{};
    sbc::single_writer<uint64_t> sessions_active_;
    sbc::single_writer<uint64_t> streams_active_;
    std::array<sbc::single_writer<uint64_t>, jitter_buckets> jitter_flows_{};
    sbc::single_writer<uint64_t> jitter_sum_us_;
};

/// Adds b into a.
void accumulate(media_summary& a, const media_summary& b) noexcept;

}  // namespace sbc::rtp
