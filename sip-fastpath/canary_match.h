// Canary selectors with Hyperscan: a canary peer takes only the INVITEs whose field (Request-URI,
// From or To user) matches its pattern. One block-mode database per field holds every canary's
// pattern, with the canary's slot (0..63, stable while the canary exists) as the pattern id, so
// one scan per field yields the set of canaries a call matches as a 64-bit mask.
// compile() and the destructor run on the control core (the matcher lives in proxy_tables and is
// freed with its snapshot after an RCU grace period); match() runs on worker `w` only, with that
// worker's scratch: no heap, no locks.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sip-fastpath/hs_fields.h"
#include "sip-fastpath/proxy_tables.h"

namespace sbc::sip {

/// One canary: its slot in the mask, the field it looks at and the pattern.
struct canary_rule {
    uint8_t slot = 0;           ///< < max_canaries
    match_field field = match_field::from_user;
    std::string pattern;        ///< Hyperscan (PCRE subset) expression
};

/// "ruri", "from", "to" (also "ruri_user", "from_user", "to_user"): the field; nullopt otherwise.
std::optional<match_field> parse_canary_field(std::string_view name) noexcept;
/// "ruri", "from" or "to".
std::string_view canary_field_name(match_field f) noexcept;

class canary_matcher {
public:
    /// Compiles `rules` (block mode, HS_FLAG_SINGLEMATCH, id = slot) into one database per field
    /// and allocates one scratch per worker. nullptr with `error` naming the pattern and
    /// Hyperscan's reason when a pattern does not compile, a slot is out of range, or scratch
    /// cannot be allocated. Control core only.
    static std::shared_ptr<canary_matcher> compile(const std::vector<canary_rule>& rules, unsigned workers,
                                                   std::string& error);

    ~canary_matcher() = default;  ///< frees databases and scratches (hs_fields)
    canary_matcher(const canary_matcher&) = delete;
    canary_matcher& operator=(const canary_matcher&) = delete;

    /// Worker `w` only: bit s set when the canary in slot s matches the value of its field.
    /// `values` is indexed by match_field (the trunk entry is ignored). No heap, no locks.
    [[nodiscard]] uint64_t match(unsigned w, const std::array<std::string_view, match_field_count>& values) const noexcept;

private:
    canary_matcher() = default;

    hs_fields hs_;
};

}  // namespace sbc::sip
