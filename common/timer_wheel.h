// A hashed timer wheel over slot indices: each slot of a table (a call setup, a dialog) has at
// most one timer, kept in an intrusive doubly linked list per wheel bucket. Schedule, cancel
// and expire are O(1); one tick is one millisecond. Owned by one worker (worker only); the
// storage is allocated once at start, nothing is allocated afterwards.
#pragma once

#include <cstdint>
#include <memory>

namespace sbc {

class timer_wheel {
public:
    static constexpr uint32_t none = 0xffffffff;
    static constexpr uint32_t buckets = 4096;  ///< power of two; a lap is ~4 s

    explicit timer_wheel(uint32_t slots)
        : nodes_(new node[slots]), slots_(slots)
    {
        clear();
    }

    /// Back to a new wheel's state: nothing armed, the clock not started. Nothing allocated.
    void clear() noexcept
    {
        for (uint32_t i = 0; i < slots_; ++i) nodes_[i] = node{};
        for (auto& h : head_) h = none;
        now_ = 0;
        armed_ = 0;
    }

    [[nodiscard]] uint32_t capacity() const noexcept { return slots_; }
    [[nodiscard]] bool armed(uint32_t slot) const noexcept { return nodes_[slot].bucket != none; }
    [[nodiscard]] uint64_t due(uint32_t slot) const noexcept { return nodes_[slot].due; }

    /// (Re)arms `slot` to fire at `due_ms` (not before the next advance past it).
    void schedule(uint32_t slot, uint64_t due_ms) noexcept
    {
        cancel(slot);
        if (due_ms <= now_) due_ms = now_ + 1;  // the next tick visited
        node& n = nodes_[slot];
        n.due = due_ms;
        n.bucket = static_cast<uint32_t>(due_ms & (buckets - 1));
        n.prev = none;
        n.next = head_[n.bucket];
        if (n.next != none) nodes_[n.next].prev = slot;
        head_[n.bucket] = slot;
        ++armed_;
    }

    void cancel(uint32_t slot) noexcept
    {
        node& n = nodes_[slot];
        if (n.bucket == none) return;
        if (n.prev != none)
            nodes_[n.prev].next = n.next;
        else
            head_[n.bucket] = n.next;
        if (n.next != none) nodes_[n.next].prev = n.prev;
        n.bucket = n.prev = n.next = none;
        --armed_;
    }

    /// Moves time to `now_ms`, calling fire(slot) for every timer due by then (a timer is
    /// disarmed before its callback, which may re-arm it, but must not touch other slots).
    /// Visits at most `max_ticks` buckets per call so that a long pause cannot stall the
    /// loop (none when no timer is armed: the clock moves to `now_ms` at once), and stops early when more() turns false (the caller's output is full); the
    /// rest follows on the next calls. Returns the number of timers fired.
    template <class Fire, class More>
    uint32_t advance(uint64_t now_ms, Fire&& fire, More&& more, uint32_t max_ticks = 64) noexcept
    {
        uint32_t fired = 0;
        if (armed_ == 0) {  // nothing to visit: the clock jumps
            if (now_ < now_ms) now_ = now_ms;
            return 0;
        }
        for (uint32_t t = 0; now_ < now_ms && t < max_ticks; ++t) {
            const uint64_t tick = now_ + 1;
            const uint32_t b = static_cast<uint32_t>(tick & (buckets - 1));
            uint32_t s = head_[b];
            while (s != none) {
                const uint32_t next = nodes_[s].next;
                if (nodes_[s].due <= tick) {
                    if (!more()) return fired;  // this tick is visited again next time
                    cancel(s);
                    fire(s);
                    ++fired;
                }
                s = next;
            }
            now_ = tick;
        }
        return fired;
    }

    [[nodiscard]] uint64_t now() const noexcept { return now_; }
    /// Starts the clock (call once, before scheduling).
    void start(uint64_t now_ms) noexcept { now_ = now_ms; }

private:
    struct node {
        uint64_t due = 0;
        uint32_t bucket = none;
        uint32_t prev = none;
        uint32_t next = none;
    };
    std::unique_ptr<node[]> nodes_;
    uint32_t slots_;
    uint32_t head_[buckets];
    uint64_t now_ = 0;
    uint32_t armed_ = 0;  ///< timers armed: none, and advance only moves the clock
};

}  // namespace sbc
