// Hyperscan databases per match field plus one scratch per worker, shared by route_matcher and
// canary_matcher: each compiles one block-mode database per match_field from its own patterns
// (ids and flags of its choosing), grows one prototype scratch over them, clones it per worker,
// and scans a field with its own callback. compile_field(), make_scratch() and the destructor
// run on the control core; scan() runs on worker `w` only, with that worker's scratch: no heap,
// no locks.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "sip-fastpath/proxy_tables.h"

struct hs_database;
struct hs_scratch;

namespace sbc::sip {

class hs_fields {
public:
    /// Most fields one instance holds (route and canary fields, scanner fields, capture fields).
    static constexpr std::size_t max_fields = 8;

    /// One field's patterns, as parallel lists for hs_compile_multi.
    struct patterns {
        std::vector<const char*> exprs;
        std::vector<unsigned> flags;
        std::vector<unsigned> ids;

        void add(const char* expr, unsigned flag, unsigned id)
        {
            exprs.push_back(expr);
            flags.push_back(flag);
            ids.push_back(id);
        }
        [[nodiscard]] bool empty() const noexcept { return exprs.empty(); }
        [[nodiscard]] std::size_t size() const noexcept { return exprs.size(); }
    };

    enum class status { ok, compile_failed, scratch_failed };

    /// Same signature as Hyperscan's match_event_handler.
    using on_match = int (*)(unsigned int id, unsigned long long from, unsigned long long to, unsigned int flags,
                             void* ctx) noexcept;

    /// false with `error` set when this CPU cannot run Hyperscan.
    static bool platform_ok(std::string& error);

    hs_fields() = default;
    ~hs_fields();  ///< frees databases and scratches
    hs_fields(const hs_fields&) = delete;
    hs_fields& operator=(const hs_fields&) = delete;

    /// Compiles `p` (block mode) into field `f`'s database and grows the prototype scratch for
    /// it; an empty `p` leaves the field without a database. compile_failed: `expression` is the
    /// index in `p` of the pattern at fault (-1 when Hyperscan names none) and `message` is
    /// Hyperscan's reason. scratch_failed: the scratch could not be allocated.
    status compile_field(std::size_t f, const patterns& p, int& expression, std::string& message);
    /// compile_field with a failure put in words: `pattern "X" on FIELD does not compile: why`
    /// (X from p), or that no scratch for the `what` patterns could be allocated. False with
    /// `error` set on failure.
    bool compile_field(std::size_t f, const patterns& p, std::string_view field, std::string_view what,
                       std::string& error);

    /// One scratch per worker, cloned from the prototype (none when no field has a database:
    /// scan() is then never called). false with `error` naming the worker when a clone fails.
    bool make_scratch(unsigned workers, std::string& error);

    [[nodiscard]] bool has(std::size_t f) const noexcept { return db_[f] != nullptr; }
    [[nodiscard]] unsigned workers() const noexcept { return static_cast<unsigned>(scratch_.size()); }

    /// Worker `w` (< workers()) only, field `f` with a database: scans `value`, calling `cb`
    /// with `ctx` for each match. No heap, no locks.
    void scan(unsigned w, std::size_t f, std::string_view value, on_match cb, void* ctx) const noexcept;

private:
    std::array<hs_database*, max_fields> db_{};
    static_assert(match_field_count <= max_fields);
    hs_scratch* proto_ = nullptr;
    std::vector<hs_scratch*> scratch_;
};

}  // namespace sbc::sip
