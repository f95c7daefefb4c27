// A fixed-capacity table of T with a hash index (key -> slot) and a LIFO free list: what a
// worker keeps per call or per transaction (media sessions, the proxy's setups and dialogs).
// Slots are stable indices: timers, Via branches and views name an entry by its slot.
//
// Threads: one owner thread (a worker) for every member function. The only heap use is the
// constructor's (control core, at start); insert, find and erase never allocate, throw, lock
// or make system calls. Other threads may read the T records (at(slot)) only where T's own
// fields make that safe (atomics); the index and the free list are the owner's alone.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>

namespace sbc {

/// A table of `capacity` records of T, found by a key that is already a well-mixed hash (a
/// Call-ID hash): its low bits pick the bucket. Chained hashing, no probing, so erase is
/// O(chain) and never moves a record. Each record sits in one cell with its key and chain link:
/// a lookup that finds it has the record's first bytes in the same cache line (the proxy looks
/// a setup or dialog up for nearly every message; separate key and link arrays cost a miss each).
template <typename T, std::unsigned_integral Key = uint64_t>
class slot_table {
public:
    using slot_type = uint32_t;
    /// What insert and find return for "no slot".
    static constexpr slot_type none = 0xffffffff;

    /// Control core: `capacity` records (default-constructed), all free. 0 is allowed (a table
    /// where every insert fails). Capacity must stay below 2^31 - 1.
    explicit slot_table(uint32_t capacity)
        : cap_(capacity),
          mask_(bucket_count(capacity) - 1),
          cells_(new cell[capacity == 0 ? 1 : capacity]()),
          heads_(new uint32_t[mask_ + 1])
    {
        for (uint32_t i = 0; i <= mask_; ++i) heads_[i] = end;
        // Free list through next_: slot 0 first, then 1, 2, ... (the order a fresh table hands
        // slots out in); an erased slot goes on top and is the next one handed out.
        for (uint32_t i = 0; i < cap_; ++i) cells_[i].next = free_bit | (i + 1 < cap_ ? i + 1 : end);
        free_head_ = cap_ == 0 ? end : 0;
    }
    slot_table(const slot_table&) = delete;
    slot_table& operator=(const slot_table&) = delete;

    /// Takes a free slot for `key` and indexes it; none when the table is full. The record at
    /// the slot is left as its last user left it (the caller resets what it needs to: a
    /// generation number may want to survive). Does not look for an existing entry with the
    /// same key: the newest is the one find returns.
    [[nodiscard]] slot_type insert(Key key) noexcept
    {
        if (free_head_ == end) return none;
        const uint32_t s = free_head_;
        free_head_ = cells_[s].next & ~free_bit;
        cells_[s].key = key;
        uint32_t& head = heads_[bucket(key)];
        cells_[s].next = head;
        head = s;
        ++size_;
        return s;
    }

    /// The slot holding `key` (the most recently inserted if several), or none.
    [[nodiscard]] slot_type find(Key key) const noexcept
    {
        for (uint32_t s = heads_[bucket(key)]; s != end; s = cells_[s].next)
            if (cells_[s].key == key) return s;
        return none;
    }

    /// Removes a used slot from the index and puts it on top of the free list (reused first:
    /// its record is still in cache). `s` must be a slot insert returned and not yet erased.
    void erase(slot_type s) noexcept
    {
        uint32_t* link = &heads_[bucket(cells_[s].key)];
        while (*link != end && *link != s) link = &cells_[*link].next;
        if (*link == s) *link = cells_[s].next;
        cells_[s].next = free_bit | free_head_;
        free_head_ = s;
        --size_;
    }

    /// The record at `s` (any slot below capacity(), used or not).
    [[nodiscard]] T& at(slot_type s) noexcept { return cells_[s].value; }
    [[nodiscard]] const T& at(slot_type s) const noexcept { return cells_[s].value; }
    /// The key a used slot was inserted with.
    [[nodiscard]] Key key(slot_type s) const noexcept { return cells_[s].key; }
    /// Whether `s` holds an entry (inserted and not erased).
    [[nodiscard]] bool used(slot_type s) const noexcept { return s < cap_ && (cells_[s].next & free_bit) == 0; }

    [[nodiscard]] uint32_t capacity() const noexcept { return cap_; }
    [[nodiscard]] uint32_t size() const noexcept { return size_; }
    [[nodiscard]] bool full() const noexcept { return size_ == cap_; }

    /// Calls fn(slot) for every used slot, in slot order. fn may erase the slot it is given.
    template <typename Fn>
    void for_each(Fn&& fn)
    {
        for (uint32_t s = 0; s < cap_; ++s)
            if ((cells_[s].next & free_bit) == 0) fn(s);
    }

private:
    /// Marks a free slot's next_ (a free-list link); a used slot's holds a chain link.
    static constexpr uint32_t free_bit = 0x80000000u;
    /// Ends a chain and the free list (fits beside free_bit; capacity stays below it).
    static constexpr uint32_t end = 0x7fffffffu;

    static uint32_t bucket_count(uint32_t n) noexcept
    {
        uint32_t p = 1;
        while (p < n) p <<= 1;
        return p;
    }
    [[nodiscard]] uint32_t bucket(Key key) const noexcept { return static_cast<uint32_t>(key & mask_); }

    uint32_t cap_;
    uint32_t mask_;
    uint32_t size_ = 0;
    uint32_t free_head_ = end;
    struct cell {
        Key key{};
        uint32_t next = end;  ///< used: next in the bucket's chain; free: free_bit | next free; end
        T value{};
    };
    std::unique_ptr<cell[]> cells_;
    std::unique_ptr<uint32_t[]> heads_;  ///< per bucket: first slot of its chain, or end
};

}  // namespace sbc
