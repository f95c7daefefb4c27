// Capture filters with Hyperscan (see capture_match.h). compile(): control core. match(): worker
// `w`, with its own scratch.
#include "sip-fastpath/capture_match.h"

#include <hs/hs.h>

namespace sbc::sip {

namespace {

constexpr std::array<std::string_view, capture_field_count> names{"callid", "from", "to", "ruri", "source"};

// One match is enough: the scan stops at the first.
int on_match(unsigned int, unsigned long long, unsigned long long, unsigned int, void* ctx) noexcept
{
    *static_cast<bool*>(ctx) = true;
    return 1;
}

}  // namespace

std::string_view capture_field_name(capture_field f) noexcept { return names[static_cast<std::size_t>(f)]; }

std::optional<capture_pattern> parse_capture_match(std::string_view text, std::string& error)
{
    const std::size_t colon = text.find(':');
    const std::string_view field = colon == std::string_view::npos ? text : text.substr(0, colon);
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i] != field) continue;
        if (colon == std::string_view::npos || colon + 1 == text.size()) {
            error = "--match " + std::string(text) + ": no pattern after '" + std::string(field) + ":'";
            return std::nullopt;
        }
        return capture_pattern{static_cast<capture_field>(i), std::string(text.substr(colon + 1))};
    }
    error = "--match " + std::string(text) + ": FIELD:PATTERN with FIELD one of callid, from, to, ruri, source";
    return std::nullopt;
}

std::shared_ptr<capture_matcher> capture_matcher::compile(const std::vector<capture_pattern>& patterns,
                                                          unsigned workers, std::string& error)
{
    if (!hs_fields::platform_ok(error)) return nullptr;
    std::shared_ptr<capture_matcher> m(new capture_matcher());
    for (std::size_t f = 0; f < capture_field_count; ++f) {
        hs_fields::patterns p;
        for (std::size_t i = 0; i < patterns.size(); ++i) {
            if (static_cast<std::size_t>(patterns[i].field) != f) continue;
            p.add(patterns[i].expr.c_str(), HS_FLAG_SINGLEMATCH, static_cast<unsigned>(i));
        }
        if (!m->hs_.compile_field(f, p, names[f], "capture", error)) return nullptr;
    }
    if (!m->hs_.make_scratch(workers, error)) return nullptr;
    return m;
}

bool capture_matcher::match(unsigned w, const std::array<std::string_view, capture_field_count>& values) const noexcept
{
    if (w >= hs_.workers()) return false;
    bool hit = false;
    for (std::size_t f = 0; f < capture_field_count && !hit; ++f)
        if (!values[f].empty() && hs_.has(f)) hs_.scan(w, f, values[f], on_match, &hit);
    return hit;
}

bool capture_matcher::match(unsigned w, const message& m, std::string_view other_side) const noexcept
{
    std::array<std::string_view, capture_field_count> v{};
    v[static_cast<std::size_t>(capture_field::callid)] = m.call_id();
    if (m.h_from != no_header) v[static_cast<std::size_t>(capture_field::from)] = m.text(m.headers[m.h_from].value);
    if (m.h_to != no_header) v[static_cast<std::size_t>(capture_field::to)] = m.text(m.headers[m.h_to].value);
    if (m.is_request()) v[static_cast<std::size_t>(capture_field::ruri)] = m.text(m.request_uri);
    v[static_cast<std::size_t>(capture_field::source)] = other_side;
    return match(w, v);
}

}  // namespace sbc::sip
