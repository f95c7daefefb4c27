// The flow table's storage, publication and teardown (see flow_table.h), and the RFC 3550
// per-flow statistics. Construction: control core at start; publish/unpublish: the owner
// worker; rtp_account: the worker receiving the flow.
#include "rtp/flow_table.h"

#include <sys/mman.h>

#include <cstring>
#include <new>

namespace sbc::rtp {

namespace {

/// Anonymous zeroed memory: pages are only backed once touched, so a large range whose
/// ports are mostly idle costs little.
void* map_zeroed(std::size_t bytes)
{
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return p;
}

}  // namespace

void flow_stats::reset() noexcept
{
    packets.set(0);
    bytes.set(0);
    last_ms.set(0);
    lost.set(0);
    jitter.set(0);
    dropped.set(0);
    payload_type.set(255);
    cycles = base_seq = received = 0;
    last_transit = 0;
    max_seq = 0;
    started = false;
}

void rtp_account(flow_stats& s, uint16_t seq, uint32_t rtp_ts, uint32_t arrival) noexcept
{
    constexpr uint16_t max_dropout = 3000;
    constexpr uint16_t max_misorder = 100;
    const auto transit = static_cast<int32_t>(arrival - rtp_ts);
    if (!s.started) {
        s.started = true;
        s.base_seq = seq;
        s.max_seq = seq;
        s.cycles = 0;
        s.received = 1;
        s.last_transit = transit;
        return;
    }
    const auto udelta = static_cast<uint16_t>(seq - s.max_seq);
    if (udelta < max_dropout) {
        if (seq < s.max_seq) s.cycles += 1u << 16;  // wrapped
        s.max_seq = seq;
    } else if (udelta <= 65535 - max_misorder) {
        // A jump too large to be loss: the sender restarted; start counting afresh (A.1
        // resynchronises after two packets; one is enough for a relay's statistics).
        s.base_seq = seq;
        s.max_seq = seq;
        s.cycles = 0;
        s.received = 0;
    }
    // else: duplicate or reordered, counted as received
    ++s.received;
    const uint32_t extended_max = s.cycles + s.max_seq;
    const int64_t expected = int64_t{extended_max} - s.base_seq + 1;
    const int64_t lost = expected - s.received;
    s.lost.set(lost > 0 ? static_cast<uint32_t>(lost) : 0);
    // A.8: J += (|D| - J) / 16, kept scaled by 16.
    int32_t d = transit - s.last_transit;
    s.last_transit = transit;
    if (d < 0) d = -d;
    const uint32_t j = s.jitter.get();
    s.jitter.set(j + static_cast<uint32_t>(d) - ((j + 8) >> 4));
}

flow_table::flow_table(const flow_table_config& c)
{
    n_addresses_ = static_cast<unsigned>(c.addresses.size() < max_media_addresses ? c.addresses.size() : max_media_addresses);
    for (unsigned i = 0; i < n_addresses_; ++i) addresses_[i] = c.addresses[i];
    port_min_ = static_cast<uint16_t>(c.port_min & ~1u);
    port_max_ = c.port_max;
    workers_ = c.workers == 0 ? 1 : c.workers;
    ports_per_address_ = static_cast<uint32_t>(port_max_ - port_min_) + 1;
    pairs_per_address_ = ports_per_address_ / 2;
    pairs_per_worker_ = pairs_per_address_ / workers_;
    if (pairs_per_worker_ == 0) pairs_per_worker_ = 1;
    const std::size_t slots = std::size_t{n_addresses_} * ports_per_address_;
    index_bytes_ = slots * sizeof(std::atomic<uint32_t>);
    streams_bytes_ = std::size_t{n_addresses_} * pairs_per_address_ * sizeof(media_stream);
    stats_bytes_ = slots * sizeof(flow_stats);
    if (slots == 0) return;
    index_ = static_cast<std::atomic<uint32_t>*>(map_zeroed(index_bytes_));
    streams_ = static_cast<media_stream*>(map_zeroed(streams_bytes_));
    stats_ = static_cast<flow_stats*>(map_zeroed(stats_bytes_));
}

flow_table::~flow_table()
{
    if (index_ != nullptr) munmap(index_, index_bytes_);
    if (streams_ != nullptr) munmap(streams_, streams_bytes_);
    if (stats_ != nullptr) munmap(stats_, stats_bytes_);
}

void flow_table::set_index(unsigned addr, uint16_t port, uint32_t v) noexcept
{
    // Release: a reader that sees the entry also sees the stream record written before it.
    index_[slot(addr, port)].store(v, std::memory_order_release);
}

void flow_table::publish(uint32_t id) noexcept
{
    media_stream& s = streams_[id];
    const bool mux = (s.flags.load(std::memory_order_relaxed) & stream_flag::rtcp_mux) != 0;
    for (uint32_t side = 0; side < 2; ++side) {
        const uint8_t a = s.addr[side].load(std::memory_order_relaxed);
        const uint16_t p = s.port[side].load(std::memory_order_relaxed);
        stats(a, p).reset();
        set_index(a, p, ((id << 2) | (side << 1)) + 1);
        if (!mux) {
            stats(a, static_cast<uint16_t>(p + 1)).reset();
            set_index(a, static_cast<uint16_t>(p + 1), ((id << 2) | (side << 1) | 1) + 1);
        }
    }
    s.flags.store(static_cast<uint8_t>(s.flags.load(std::memory_order_relaxed) | stream_flag::active),
                  std::memory_order_release);
}

void flow_table::unpublish(uint32_t id) noexcept
{
    media_stream& s = streams_[id];
    s.flags.store(static_cast<uint8_t>(s.flags.load(std::memory_order_relaxed) & ~stream_flag::active),
                  std::memory_order_release);
    for (unsigned side = 0; side < 2; ++side) {
        const uint8_t a = s.addr[side].load(std::memory_order_relaxed);
        const uint16_t p = s.port[side].load(std::memory_order_relaxed);
        set_index(a, p, 0);
        set_index(a, static_cast<uint16_t>(p + 1), 0);
    }
}

std::size_t flow_table::bytes_allocated() const noexcept { return index_bytes_ + streams_bytes_ + stats_bytes_; }

}  // namespace sbc::rtp
