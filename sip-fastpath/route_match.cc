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
    if (!hs_fields::platform_ok(error)) return nullptr;
    for (std::size_t f = 0; f < match_field_count; ++f) {
        hs_fields::patterns p;
        for (std::size_t i = 0; i < routes.size(); ++i) {
            const route& r = routes[i];
            if (static_cast<std::size_t>(r.field) != f || r.pattern.empty()) continue;
            p.add(r.pattern.c_str(), HS_FLAG_SINGLEMATCH | HS_FLAG_ALLOWEMPTY, static_cast<unsigned>(i));
        }
        m->counts_[f] = p.size();
        if (p.empty()) continue;
        m->min_id_[f] = static_cast<int>(p.ids.front());
        int bad = -1;
        std::string reason;
        switch (m->hs_.compile_field(f, p, bad, reason)) {
        case hs_fields::status::ok: break;
        case hs_fields::status::compile_failed: {
            if (bad >= 0) {
                const unsigned id = p.ids[static_cast<std::size_t>(bad)];
                const route& r = routes[id];
                error = "route " + std::to_string(id) + " \"" + r.name + "\": pattern \"" + r.pattern +
                        "\" does not compile: " + reason;
            } else {
                error = std::string("routes on ") + field_name(f) + ": Hyperscan cannot compile them: " + reason;
            }
            return nullptr;  // m's destructor frees the databases compiled so far
        }
        case hs_fields::status::scratch_failed:
            error = "Hyperscan cannot allocate scratch for the routes";
            return nullptr;
        }
    }
    // No patterns at all: match() answers -1 without touching a scratch.
    if (!m->hs_.make_scratch(workers, error)) return nullptr;
    return m;
}

int route_matcher::match(unsigned w, const std::array<std::string_view, match_field_count>& values) const noexcept
{
    if (w >= hs_.workers()) return -1;
    int best = -1;
    for (std::size_t f = 0; f < match_field_count; ++f) {
        if (!hs_.has(f) || (best >= 0 && min_id_[f] > best)) continue;
        int found = -1;
        hs_.scan(w, f, values[f], on_match, &found);
        if (found >= 0 && (best < 0 || found < best)) best = found;
    }
    return best;
}

}  // namespace sbc::sip
