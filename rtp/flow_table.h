// The media flow table: a direct index on (media address index, UDP port) -> the stream that
// port belongs to, the streams themselves (one per anchored m-line, both legs, RTP and RTCP)
// and per-flow counters (one flow = the packets arriving on one of our ports).
//
// Threads: allocated once by the control core at start (no heap afterwards). Index entries
// and stream records are written only by the worker that owns the port (the owner is
// derivable from the port: each worker has its own slice of the range). Any worker reads
// them (RSS may deliver media anywhere), under RCU: a torn-down stream's ports and record
// are reused only after the quarantine (longer than any grace period), so a reader that
// found an entry just before teardown still reads a valid, if stale, record. The fields a
// reader loads while the owner may store them are atomics (media_stream says which and why).
// The learning half of a stream (the latched far end of one leg) and each flow's counters
// are written by the worker that receives that flow: RSS hashes a fixed 5-tuple to one
// queue, so each direction has one writer. No DPDK types here: the unit tier tests it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/counter.h"
#include "common/limits.h"

namespace sbc::rtp {

using sbc::max_media_addresses;
using sbc::max_workers;

/// Which leg of a call: A is the caller's side (upstream), B the callee's (downstream).
enum class leg : uint8_t { a = 0, b = 1 };
constexpr unsigned other(unsigned side) noexcept { return side ^ 1u; }

/// Far end of one leg, packed in one word so that readers never see half an update:
/// ip (host order) << 32 | port << 16 | flags.
namespace far_flag {
constexpr uint64_t known = 1;    ///< an address is set (from SDP or latched)
constexpr uint64_t latched = 2;  ///< learned from the packets themselves
}  // namespace far_flag
constexpr uint64_t pack_far(uint32_t ip, uint16_t port, uint64_t flags) noexcept
{
    return uint64_t{ip} << 32 | uint64_t{port} << 16 | flags;
}
constexpr uint32_t far_ip(uint64_t v) noexcept { return static_cast<uint32_t>(v >> 32); }
constexpr uint16_t far_port(uint64_t v) noexcept { return static_cast<uint16_t>(v >> 16); }

namespace stream_flag {
constexpr uint8_t active = 1;    ///< set last at setup, cleared first at teardown
constexpr uint8_t rtcp_mux = 2;  ///< RTCP shares the RTP port (RFC 5761): no RTCP flows
constexpr uint8_t strict = 4;    ///< only the SDP address may send (no latching)
}  // namespace stream_flag

/// One anchored m-line between the two legs: one cache line, read by any worker per packet
/// and by the control core's views. Every field is atomic, because some thread reads each
/// while another may write it; all loads are relaxed (a plain load of an aligned word on x86).
/// Who writes what, and why relaxed is enough:
///  - port, addr, owner, session: the owner, only while the stream is unpublished (set up, or
///    reused after the quarantine). The relay reaches a record through its index entry, loaded
///    with acquire after the owner's release store in publish(), so it sees them complete; the
///    quarantine (longer than an RCU grace period) keeps them from changing under a reader
///    that found the entry before teardown. The views read them without RCU and may see a
///    stale record, which they tolerate.
///  - far, far_mac: see their own comments. flags: release-stored last at setup.
///  - clock_hz: the owner, also while published (a re-INVITE's new codec).
struct alignas(64) media_stream {
    /// [side][0 rtp, 1 rtcp]: where packets for that leg go, and whom we accept from it.
    /// Written by the owner from SDP (unlatched), then by the receiving worker when it latches.
    /// One word each, so a reader never sees half an address; relaxed, because each word is
    /// the whole value (nothing else is published through it).
    std::atomic<uint64_t> far[2][2];
    /// [side]: the far end's (or its next hop's) MAC, 48 bits, bit 63 set when known; learned
    /// from the first packet that leg sends (the receiving worker writes it), cleared by the
    /// owner when that leg's SDP moves it. Relaxed: a MAC one packet stale goes to the old
    /// next hop once, as a latch racing a re-INVITE would anyway.
    std::atomic<uint64_t> far_mac[2];
    std::atomic<uint16_t> port[2]{};  ///< our even RTP port facing each leg (RTCP: +1)
    std::atomic<uint8_t> addr[2]{};   ///< our media address index facing each leg
    std::atomic<uint8_t> flags{0};    ///< stream_flag; release-stored last at setup
    std::atomic<uint8_t> owner{0};    ///< worker that owns the stream and its ports
    /// RTP timestamp rate of the stream's first payload type: what the receiving workers turn
    /// arrival times into for RFC 3550 jitter. The owner rewrites it when an answer or a
    /// re-INVITE names another codec; relaxed, because it is one word read on its own and a
    /// few packets timed at the old rate only nudge the jitter estimate.
    std::atomic<uint32_t> clock_hz{8000};
    std::atomic<uint32_t> session{0};  ///< owner-local session slot (for views)
};
static_assert(sizeof(media_stream) == 64);

constexpr uint64_t mac_known = uint64_t{1} << 63;

/// Counters of one flow (packets arriving on one of our ports). One writer: the worker that
/// receives the flow; readers (control core, views) load the atomics relaxed. The RFC 3550
/// state (A.1 sequence tracking, A.8 jitter) is the writer's own and plain.
struct alignas(64) flow_stats {
    sbc::single_writer<uint64_t> packets;
    sbc::single_writer<uint64_t> bytes;      ///< UDP payload bytes
    sbc::single_writer<uint64_t> last_ms;    ///< arrival of the last packet (worker clock, ms)
    sbc::single_writer<uint32_t> lost;       ///< expected - received (RFC 3550 A.3), 0 when negative
    sbc::single_writer<uint32_t> jitter;     ///< interarrival jitter, timestamp units << 4 (A.8)
    sbc::single_writer<uint32_t> dropped;    ///< refused by latching (wrong source)
    /// RTP payload type of the flow's first RTP packet (255: none yet), for its call record.
    /// Written once by the receiving worker, when the RTP state starts.
    sbc::single_writer<uint8_t> payload_type{255};
    // writer-only RTP state
    uint32_t cycles = 0;        ///< sequence number wraps << 16
    uint32_t base_seq = 0;
    uint32_t received = 0;
    int32_t last_transit = 0;
    uint16_t max_seq = 0;
    bool started = false;

    /// Resets everything (owner, when the flow is set up again after quarantine).
    void reset() noexcept;
};
static_assert(sizeof(flow_stats) == 64);

/// Updates a flow's RFC 3550 state with one RTP packet: sequence tracking (A.1, without
/// probation), loss (A.3) and interarrival jitter (A.8); packets and bytes are the caller's. `arrival` is
/// the arrival time in RTP timestamp units. Writer of the flow only.
void rtp_account(flow_stats& s, uint16_t seq, uint32_t rtp_ts, uint32_t arrival) noexcept;

/// What a lookup finds for one of our ports.
struct flow_ref {
    uint32_t stream = 0;  ///< index into the stream array
    uint8_t side = 0;     ///< the leg this port faces (packets arriving here come from it)
    uint8_t rtcp = 0;     ///< 1: the odd (RTCP) port
    [[nodiscard]] bool found() const noexcept { return stream != ~0u; }
};

struct flow_table_config {
    std::vector<uint32_t> addresses;  ///< our media addresses (host order), index = address index
    uint16_t port_min = 20000;        ///< even
    uint16_t port_max = 59999;        ///< inclusive
    unsigned workers = 1;
};

class flow_table {
public:
    explicit flow_table(const flow_table_config& c);
    ~flow_table();
    flow_table(const flow_table&) = delete;
    flow_table& operator=(const flow_table&) = delete;

    /// Any thread: the address index of `ip` (host order), or -1.
    [[nodiscard]] int address_index(uint32_t ip) const noexcept
    {
        for (unsigned i = 0; i < n_addresses_; ++i)
            if (addresses_[i] == ip) return static_cast<int>(i);
        return -1;
    }
    [[nodiscard]] uint32_t address(unsigned idx) const noexcept { return addresses_[idx]; }
    [[nodiscard]] unsigned address_count() const noexcept { return n_addresses_; }
    [[nodiscard]] uint16_t port_min() const noexcept { return port_min_; }
    [[nodiscard]] uint16_t port_max() const noexcept { return port_max_; }
    [[nodiscard]] unsigned workers() const noexcept { return workers_; }
    /// Even-port pairs per address in each worker's slice.
    [[nodiscard]] uint32_t pairs_per_worker() const noexcept { return pairs_per_worker_; }
    /// Any thread: the worker owning `port` (its slice of the range), or -1 outside the range.
    [[nodiscard]] int owner_of(uint16_t port) const noexcept
    {
        if (port < port_min_ || port > port_max_) return -1;
        const uint32_t w = (static_cast<uint32_t>(port - port_min_) >> 1) / pairs_per_worker_;
        return w < workers_ ? static_cast<int>(w) : -1;
    }
    /// Any thread: whether (ip, port) is in our media range (the UDP stage's test).
    [[nodiscard]] bool in_range(uint16_t port) const noexcept { return port >= port_min_ && port <= port_max_; }

    /// Any thread (RCU read side): the flow on our (address index, port); found() false when
    /// none. One load of a 4-byte index entry (acquire: the record was written before it).
    [[nodiscard]] flow_ref lookup(unsigned addr, uint16_t port) const noexcept
    {
        if (addr >= n_addresses_ || port < port_min_ || port > port_max_) return {~0u, 0, 0};
        const uint32_t v = index_[slot(addr, port)].load(std::memory_order_acquire);
        if (v == 0) return {~0u, 0, 0};
        const uint32_t e = v - 1;
        return {e >> 2, static_cast<uint8_t>((e >> 1) & 1), static_cast<uint8_t>(e & 1)};
    }
    /// The lookup's index word address, for prefetching a burst.
    [[nodiscard]] const void* index_address(unsigned addr, uint16_t port) const noexcept
    {
        return &index_[slot(addr, port)];
    }

    [[nodiscard]] media_stream& stream(uint32_t id) noexcept { return streams_[id]; }
    [[nodiscard]] const media_stream& stream(uint32_t id) const noexcept { return streams_[id]; }
    /// The counters of the flow arriving on our (address index, port).
    [[nodiscard]] flow_stats& stats(unsigned addr, uint16_t port) noexcept { return stats_[slot(addr, port)]; }
    [[nodiscard]] const flow_stats& stats(unsigned addr, uint16_t port) const noexcept
    {
        return stats_[slot(addr, port)];
    }

    /// Stream id of the pair (address index, even port) facing leg A: streams are numbered by
    /// their A-side pair, so they need no allocator of their own.
    [[nodiscard]] uint32_t stream_id(unsigned addr, uint16_t even_port) const noexcept
    {
        return addr * pairs_per_address_ + (static_cast<uint32_t>(even_port - port_min_) >> 1);
    }

    /// Owner only: publishes the index entries of a stream whose record is filled in (its
    /// RTP ports, and RTCP ports unless rtcp-mux), then sets it active.
    void publish(uint32_t id) noexcept;
    /// Owner only: removes a stream's index entries and clears active. Its ports go to the
    /// quarantine of their pool; the caller does that.
    void unpublish(uint32_t id) noexcept;

    /// Bytes allocated for `flows` one-way flows' lookup (index, stream) and counters; what
    /// the benchmark reports as bytes per flow is measured, this is the layout's arithmetic.
    [[nodiscard]] std::size_t bytes_allocated() const noexcept;
    [[nodiscard]] uint32_t streams_capacity() const noexcept { return n_addresses_ * pairs_per_address_; }

private:
    [[nodiscard]] std::size_t slot(unsigned addr, uint16_t port) const noexcept
    {
        return std::size_t{addr} * ports_per_address_ + static_cast<uint32_t>(port - port_min_);
    }
    void set_index(unsigned addr, uint16_t port, uint32_t v) noexcept;

    uint32_t addresses_[max_media_addresses]{};
    unsigned n_addresses_ = 0;
    uint16_t port_min_ = 0;
    uint16_t port_max_ = 0;
    unsigned workers_ = 1;
    uint32_t ports_per_address_ = 0;
    uint32_t pairs_per_address_ = 0;
    uint32_t pairs_per_worker_ = 0;
    std::atomic<uint32_t>* index_ = nullptr;  ///< (stream << 2 | side << 1 | rtcp) + 1; 0 = none
    media_stream* streams_ = nullptr;
    flow_stats* stats_ = nullptr;
    std::size_t index_bytes_ = 0, streams_bytes_ = 0, stats_bytes_ = 0;
};

}  // namespace sbc::rtp
