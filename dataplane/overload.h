// Per-worker overload detection: each worker measures, on itself and cheaply, the share of its
// time spent on SIP work over a recent window ([overload] window_ms, from the SIP stage's own
// cycle count against the TSC, sampled every window_ms / 32; frames dropped before parsing,
// RTP and idle polling do not count: shedding new calls relieves none of them) and how full the rings into it are (its handoff-in
// rings, the stream thread's ring, the events ring toward the control core); from those and
// the [overload] thresholds it sets its proxy's reduction (proxy::set_overload: the share of
// new requests the proxy refuses with 503, and what RFC 7339 `oc` stamping announces).
// busy_window is plain data (unit tier); overload_poll runs on worker `w` only (no heap, locks,
// system calls or logging); overload_of is read by any thread (relaxed atomics: each value
// stands alone, a reader one sample late shows the previous sample).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "common/limits.h"

namespace sbc::dataplane {

struct worker;
struct snapshot;

/// Busy share over the last `slots` sample periods, from cumulative busy and total cycle
/// counts. Worker only.
class busy_window {
public:
    static constexpr std::size_t slots = 32;

    /// Takes one sample of the cumulative counts; returns the busy share since the oldest
    /// sample kept (at most `slots` samples back), in per mille, or the previous share when no
    /// cycles were counted since (the counters are folded in every 64 loop iterations).
    uint32_t push(uint64_t busy_cycles, uint64_t total_cycles) noexcept
    {
        // Counts that went back belong to another worker of the same id (a new runtime): start over.
        if (n_ != 0 && (total_cycles < total_[head_] || busy_cycles < busy_[head_])) reset();
        head_ = n_ == 0 ? 0 : (head_ + 1) % (slots + 1);
        busy_[head_] = busy_cycles;
        total_[head_] = total_cycles;
        if (n_ < slots + 1) ++n_;
        const std::size_t oldest = n_ < slots + 1 ? 0 : (head_ + 1) % (slots + 1);
        const uint64_t db = busy_cycles - busy_[oldest];
        const uint64_t dt = total_cycles - total_[oldest];
        if (dt != 0) permille_ = static_cast<uint32_t>(db >= dt ? 1000 : db * 1000 / dt);
        return permille_;
    }
    void reset() noexcept { n_ = head_ = permille_ = 0; }

private:
    std::array<uint64_t, slots + 1> busy_{};
    std::array<uint64_t, slots + 1> total_{};
    std::size_t head_ = 0;
    std::size_t n_ = 0;
    uint32_t permille_ = 0;
};

/// What a worker last measured, for `sbcctl stats` and /metrics.
struct overload_view {
    uint8_t reduction = 0;       ///< percent of new requests refused (0: not overloaded)
    uint16_t busy_permille = 0;  ///< busy share over the window, 0..1000
    uint8_t ring_percent = 0;    ///< fill of its fullest ring, 0..100
};

/// Worker `w` only, once per loop iteration (the SIP stage's poll): samples every
/// window_ms / 32 and sets w.proxy's reduction. Without proxy tables or a proxy: nothing.
void overload_poll(worker& w, const snapshot& snap, uint64_t now_tsc) noexcept;

/// Any thread: worker `worker`'s last measurement (all zero before its first).
overload_view overload_of(unsigned worker) noexcept;

}  // namespace sbc::dataplane
