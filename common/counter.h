// Single-writer counters: a statistic that exactly one thread (its owner, a worker) adds to and
// any thread reads. The owner adds with a relaxed load and a relaxed store, which is a plain
// load, add and store on x86 and ARM (no lock prefix, no exclusive monitor); readers load
// relaxed. Any thread may read; only the owner may add.
//
// Why relaxed is enough: with a single writer no add can be lost (nobody else stores between
// the owner's load and store), the atomic keeps each load and store whole (a reader never sees
// a torn value), and each counter stands alone: nobody derives an ordering between two
// counters, or between a counter and other data, from the values read.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

namespace sbc {

/// Adds `n` to `c`. Only the one thread that writes `c` may call it (see the file comment).
template <class T>
inline void sw_add(std::atomic<T>& c, T n) noexcept
{
    static_assert(std::is_integral_v<T>, "counters are integers");
    c.store(static_cast<T>(c.load(std::memory_order_relaxed) + n), std::memory_order_relaxed);
}

/// Adds 1 to `c`; only its one writer may call it.
template <class T>
inline void sw_bump(std::atomic<T>& c) noexcept
{
    sw_add(c, T{1});
}

/// Moves a gauge up or down by `d` (calls under way); only its one writer may call it.
/// Unsigned wrap-around makes a negative `d` a subtraction.
template <class T>
inline void sw_move(std::atomic<T>& g, std::make_signed_t<T> d) noexcept
{
    static_assert(std::is_integral_v<T>, "gauges are integers");
    g.store(static_cast<T>(g.load(std::memory_order_relaxed) + static_cast<T>(d)), std::memory_order_relaxed);
}

/// Sets `c` to `v` (a gauge: the owner's current value); only its one writer may call it.
template <class T>
inline void sw_set(std::atomic<T>& c, T v) noexcept
{
    c.store(v, std::memory_order_relaxed);
}

/// Reads `c` from any thread: a value the owner stored, possibly not its latest.
template <class T>
[[nodiscard]] inline T sw_get(const std::atomic<T>& c) noexcept
{
    return c.load(std::memory_order_relaxed);
}

/// A counter with its rule in its type: add() by the owner only, get() by anyone.
template <class T = uint64_t>
class single_writer {
public:
    void add(T n) noexcept { sw_add(v_, n); }
    void bump() noexcept { sw_bump(v_); }
    [[nodiscard]] T get() const noexcept { return sw_get(v_); }

private:
    std::atomic<T> v_{0};
};

}  // namespace sbc
