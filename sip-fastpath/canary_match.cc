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
    if (hs_valid_platform() != HS_SUCCESS) {
        error = "Hyperscan needs a CPU with SSSE3; this one has not";
        return nullptr;
    }
    hs_scratch* proto = nullptr;
    for (std::size_t f = 0; f < match_field_count; ++f) {
        std::vector<const char*> exprs;
        std::vector<unsigned> flags;
        std::vector<unsigned> ids;
        std::vector<const canary_rule*> of;
        for (const canary_rule& r : rules) {
            if (static_cast<std::size_t>(r.field) != f) continue;
            if (r.slot >= max_canaries || r.field == match_field::trunk) {
                error = "canary pattern \"" + r.pattern + "\": slot or field out of range";
                if (proto != nullptr) hs_free_scratch(proto);
                return nullptr;
            }
            exprs.push_back(r.pattern.c_str());
            flags.push_back(HS_FLAG_SINGLEMATCH);
            ids.push_back(r.slot);
            of.push_back(&r);
        }
        if (exprs.empty()) continue;
        hs_compile_error_t* ce = nullptr;
        if (hs_compile_multi(exprs.data(), flags.data(), ids.data(), static_cast<unsigned>(exprs.size()), HS_MODE_BLOCK,
                             nullptr, &m->db_[f], &ce) != HS_SUCCESS) {
            const bool which = ce != nullptr && ce->expression >= 0 && static_cast<std::size_t>(ce->expression) < of.size();
            error = (which ? "pattern \"" + of[static_cast<std::size_t>(ce->expression)]->pattern + "\"" : std::string("patterns")) +
                    " on " + std::string(canary_field_name(static_cast<match_field>(f))) +
                    " does not compile: " + (ce != nullptr ? ce->message : "unknown error");
            hs_free_compile_error(ce);
            if (proto != nullptr) hs_free_scratch(proto);
            return nullptr;
        }
        if (hs_alloc_scratch(m->db_[f], &proto) != HS_SUCCESS) {
            error = "Hyperscan cannot allocate scratch for the canary patterns";
            if (proto != nullptr) hs_free_scratch(proto);
            return nullptr;
        }
    }
    if (proto == nullptr) {
        m->scratch_.assign(workers, nullptr);
        return m;
    }
    m->scratch_.reserve(workers);
    for (unsigned w = 0; w < workers; ++w) {
        hs_scratch* s = nullptr;
        if (hs_clone_scratch(proto, &s) != HS_SUCCESS) {
            error = "Hyperscan cannot allocate scratch for worker " + std::to_string(w);
            hs_free_scratch(proto);
            return nullptr;
        }
        m->scratch_.push_back(s);
    }
    hs_free_scratch(proto);
    return m;
}

canary_matcher::~canary_matcher()
{
    for (hs_scratch* s : scratch_)
        if (s != nullptr) hs_free_scratch(s);
    for (hs_database* d : db_)
        if (d != nullptr) hs_free_database(d);
}

uint64_t canary_matcher::match(unsigned w, const std::array<std::string_view, match_field_count>& values) const noexcept
{
    if (w >= scratch_.size()) return 0;
    hs_scratch* s = scratch_[w];
    uint64_t mask = 0;
    for (std::size_t f = 0; f < match_field_count; ++f) {
        if (db_[f] == nullptr) continue;
        // Block mode needs a non-null pointer even for an empty value.
        const char* data = values[f].empty() ? "" : values[f].data();
        hs_scan(db_[f], data, static_cast<unsigned>(values[f].size()), 0, s, on_match, &mask);
    }
    return mask;
}

}  // namespace sbc::sip
