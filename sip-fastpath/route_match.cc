// Route matching with Hyperscan (see route_match.h). compile() and the destructor: control
// core. match(): worker `w`, with its own scratch.
#include "sip-fastpath/route_match.h"

#include <hs/hs.h>

#include <climits>

namespace sbc::sip {

namespace {

const char* field_name(std::size_t f)
{
    static constexpr std::array<const char*, match_field_count> names{"ruri_user", "from_user", "to_user", "trunk"};
    return names[f];
}

// Called by hs_scan for every pattern that matches (once per pattern: SINGLEMATCH). Keeps the
// lowest id; scanning goes on, since Hyperscan reports matches in end-offset order, not by id.
int on_match(unsigned int id, unsigned long long /*from*/, unsigned long long /*to*/, unsigned int /*flags*/,
             void* ctx) noexcept
{
    int& best = *static_cast<int*>(ctx);
    if (best < 0 || static_cast<int>(id) < best) best = static_cast<int>(id);
    return best == 0 ? 1 : 0;  // route 0 cannot be beaten: stop
}

}  // namespace

std::shared_ptr<route_matcher> route_matcher::compile(const std::vector<route>& routes, unsigned workers,
                                                      std::string& error)
{
    std::shared_ptr<route_matcher> m(new route_matcher());
    if (routes.size() > static_cast<std::size_t>(INT_MAX)) {
        error = "too many routes";
        return nullptr;
    }
    if (hs_valid_platform() != HS_SUCCESS) {
        error = "Hyperscan needs a CPU with SSSE3; this one has not";
        return nullptr;
    }
    hs_scratch* proto = nullptr;
    for (std::size_t f = 0; f < match_field_count; ++f) {
        std::vector<const char*> exprs;
        std::vector<unsigned> flags;
        std::vector<unsigned> ids;
        for (std::size_t i = 0; i < routes.size(); ++i) {
            const route& r = routes[i];
            if (static_cast<std::size_t>(r.field) != f || r.pattern.empty()) continue;
            exprs.push_back(r.pattern.c_str());
            flags.push_back(HS_FLAG_SINGLEMATCH | HS_FLAG_ALLOWEMPTY);
            ids.push_back(static_cast<unsigned>(i));
        }
        m->counts_[f] = exprs.size();
        if (exprs.empty()) continue;
        m->min_id_[f] = static_cast<int>(ids.front());
        hs_compile_error_t* ce = nullptr;
        if (hs_compile_multi(exprs.data(), flags.data(), ids.data(), static_cast<unsigned>(exprs.size()), HS_MODE_BLOCK,
                             nullptr, &m->db_[f], &ce) != HS_SUCCESS) {
            if (ce != nullptr && ce->expression >= 0 && static_cast<std::size_t>(ce->expression) < ids.size()) {
                const route& bad = routes[ids[static_cast<std::size_t>(ce->expression)]];
                error = "route " + std::to_string(ids[static_cast<std::size_t>(ce->expression)]) + " \"" + bad.name +
                        "\": pattern \"" + bad.pattern + "\" does not compile: " + ce->message;
            } else {
                error = std::string("routes on ") + field_name(f) +
                        ": Hyperscan cannot compile them: " + (ce != nullptr ? ce->message : "unknown error");
            }
            hs_free_compile_error(ce);
            if (proto != nullptr) hs_free_scratch(proto);
            return nullptr;  // m's destructor frees the databases compiled so far
        }
        if (hs_alloc_scratch(m->db_[f], &proto) != HS_SUCCESS) {
            error = "Hyperscan cannot allocate scratch for the routes";
            if (proto != nullptr) hs_free_scratch(proto);
            return nullptr;
        }
    }
    if (proto == nullptr) {
        // No patterns at all: match() answers -1 without touching a scratch.
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

route_matcher::~route_matcher()
{
    for (hs_scratch* s : scratch_)
        if (s != nullptr) hs_free_scratch(s);
    for (hs_database* d : db_)
        if (d != nullptr) hs_free_database(d);
}

int route_matcher::match(unsigned w, const std::array<std::string_view, match_field_count>& values) const noexcept
{
    if (w >= scratch_.size()) return -1;
    hs_scratch* s = scratch_[w];
    int best = -1;
    for (std::size_t f = 0; f < match_field_count; ++f) {
        if (db_[f] == nullptr || (best >= 0 && min_id_[f] > best)) continue;
        int found = -1;
        // Block mode needs a non-null pointer even for an empty value.
        const char* data = values[f].empty() ? "" : values[f].data();
        hs_scan(db_[f], data, static_cast<unsigned>(values[f].size()), 0, s, on_match, &found);
        if (found >= 0 && (best < 0 || found < best)) best = found;
    }
    return best;
}

}  // namespace sbc::sip
