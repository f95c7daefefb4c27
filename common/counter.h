// Single-writer counters and gauges: a statistic that exactly one thread (its owner: a worker,
// the stream thread, the capture thread, the control core) changes and any thread reads. It is
// the one idiom for statistics in sbcd: every counter and gauge is a `single_writer<T>`, alone
// or in an array. The owner adds with a relaxed load and a relaxed store, which is a plain load,
// add and store on x86 and ARM (no lock prefix, no exclusive monitor); readers load relaxed.
//
// Why relaxed is enough: with a single writer no add can be lost (nobody else stores between
// the owner's load and store), the atomic keeps each load and store whole (a reader never sees
// a torn value), and each counter stands alone: nobody derives an ordering between two
// counters, or between a counter and other data, from the values read.
//
// Not statistics, and so not single_writer: words that several workers change to enforce a limit
// (sip/admission.h takes and gives with compare-and-swap and fetch_sub), and words that publish
// data (the flow table, the neighbour table: their own header says how).
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

namespace sbc {

/// A counter or gauge with its rule in its type: add(), bump(), move() and set() by its one
/// writer only, get() by anyone. As large as the integer it holds, so arrays of them lay out
/// as arrays of the integer.
template <class T = uint64_t>
class single_writer {
    static_assert(std::is_integral_v<T>, "counters are integers");

public:
    constexpr single_writer() noexcept = default;
    /// Starts at `v` (a gauge whose idle value is not 0).
    constexpr explicit single_writer(T v) noexcept : v_(v) {}

    /// Adds `n`.
    void add(T n) noexcept { v_.store(static_cast<T>(v_.load(std::memory_order_relaxed) + n), std::memory_order_relaxed); }
    /// Adds 1.
    void bump() noexcept { add(T{1}); }
    /// Moves a gauge up or down by `d` (calls under way); unsigned wrap-around makes a negative
    /// `d` a subtraction.
    void move(std::make_signed_t<T> d) noexcept { add(static_cast<T>(d)); }
    /// Sets a gauge to the owner's current value.
    void set(T v) noexcept { v_.store(v, std::memory_order_relaxed); }
    /// A value the owner stored, possibly not its latest; from any thread.
    [[nodiscard]] T get() const noexcept { return v_.load(std::memory_order_relaxed); }

private:
    std::atomic<T> v_{0};
};

static_assert(sizeof(single_writer<uint64_t>) == sizeof(uint64_t));
static_assert(sizeof(single_writer<uint32_t>) == sizeof(uint32_t));

}  // namespace sbc
