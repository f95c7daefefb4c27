// Canary selectors with Hyperscan (see canary_match.h). compile() and the destructor: control
// core. match(): worker `w`, with its own scratch.
#include "sip-fastpath/canary_match.h"

#include <hs/hs.h>

namespace sbc::sip {

namespace {

// Called by hs_scan once per matching pattern (SINGLEMATCH): collects the slots.
int on_match(unsigned int id, unsigned long long /*from*/, unsigned long long /*to*/, unsigned int /*flags*/,
             void* ctx) noexcept
{
    *static_cast<uint64_t*>(ctx) |= uint64_t{1} << (id & 63);
    return 0;
}

}  // namespace

std::optional<match_field> parse_canary_field(std::string_view name) noexcept
{
    if (name == "ruri" || name == "ruri_user") return match_field::ruri_user;
    if (name == "from" || name == "from_user") return match_field::from_user;
    if (name == "to" || name == "to_user") return match_field::to_user;
    return std::nullopt;
}

std::string_view canary_field_name(match_field f) noexcept
{
    switch (f) {
    case match_field::ruri_user: return "ruri";
    case match_field::from_user: return "from";
    case match_field::to_user: return "to";
    case match_field::trunk: break;
    }
    return "trunk";
}

std::shared_ptr<canary_matcher> canary_matcher::compile(const std::vector<canary_rule>& rules, unsigned workers,
                                                        std::string& error)
{
    std::shared_ptr<canary_matcher> m(new canary_matcher());
    if (!hs_fields::platform_ok(error)) return nullptr;
    for (std::size_t f = 0; f < match_field_count; ++f) {
        hs_fields::patterns p;
        for (const canary_rule& r : rules) {
            if (static_cast<std::size_t>(r.field) != f) continue;
            if (r.slot >= max_canaries || r.field == match_field::trunk) {
                error = "canary pattern \"" + r.pattern + "\": slot or field out of range";
                return nullptr;
            }
            p.add(r.pattern.c_str(), HS_FLAG_SINGLEMATCH, r.slot);
        }
        if (!m->hs_.compile_field(f, p, canary_field_name(static_cast<match_field>(f)), "canary", error)) return nullptr;
    }
    if (!m->hs_.make_scratch(workers, error)) return nullptr;
    return m;
}

uint64_t canary_matcher::match(unsigned w, const std::array<std::string_view, match_field_count>& values) const noexcept
{
    if (w >= hs_.workers()) return 0;
    uint64_t mask = 0;
    for (std::size_t f = 0; f < match_field_count; ++f)
        if (hs_.has(f)) hs_.scan(w, f, values[f], on_match, &mask);
    return mask;
}

}  // namespace sbc::sip
