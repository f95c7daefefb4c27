// Route matching with Hyperscan: one block-mode database per match field (Request-URI user,
// From user, To user, trunk name), compiled from the routes of a snapshot, and one scratch per
// worker. compile() and the destructor run on the control core (the matcher lives in
// proxy_tables, freed with its snapshot after an RCU grace period); match() runs on worker `w`
// only, with that worker's scratch: no heap, no locks.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sip-fastpath/hs_fields.h"
#include "sip-fastpath/proxy_tables.h"

namespace sbc::sip {

class route_matcher {
public:
    /// Compiles one database per match_field from `routes` (block mode, HS_FLAG_SINGLEMATCH |
    /// HS_FLAG_ALLOWEMPTY; id = route index) and allocates one scratch per worker. Routes with an
    /// empty pattern (the default route) are left out. nullptr with `error` naming the route and
    /// Hyperscan's message when a pattern does not compile, or when scratch cannot be allocated.
    static std::shared_ptr<route_matcher> compile(const std::vector<route>& routes, unsigned workers,
                                                  std::string& error);

    ~route_matcher() = default;  ///< frees databases and scratches (hs_fields)
    route_matcher(const route_matcher&) = delete;
    route_matcher& operator=(const route_matcher&) = delete;

    /// Worker `w` only: the lowest route index whose pattern matches the value of its field, or
    /// -1. Values are indexed by match_field; an empty value matches only patterns that match
    /// the empty string (such as ".*" or "^$"). No heap, no locks.
    [[nodiscard]] int match(unsigned w, const std::array<std::string_view, match_field_count>& values) const noexcept;

    [[nodiscard]] unsigned workers() const noexcept { return hs_.workers(); }
    /// Patterns compiled for `f` (for tests and logs).
    [[nodiscard]] std::size_t patterns(match_field f) const noexcept { return counts_[static_cast<std::size_t>(f)]; }

private:
    route_matcher() = default;

    hs_fields hs_;
    std::array<std::size_t, match_field_count> counts_{};
    std::array<int, match_field_count> min_id_{};  ///< lowest route index in each database
};

}  // namespace sbc::sip
