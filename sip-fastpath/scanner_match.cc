// Scanner signatures with Hyperscan (see scanner_match.h). compile(), check() and the
// destructor: control core. match(): worker `w`, with its own scratch.
#include "sip-fastpath/scanner_match.h"

#include <array>

#include <hs/hs.h>

namespace sbc::sip {

namespace {

// Every scanner pattern: caseless (scanners vary the case of their names), and one match is
// enough (the scan stops at the first).
constexpr unsigned pattern_flags = HS_FLAG_CASELESS | HS_FLAG_SINGLEMATCH;

// The shipped list: tools that public SIP security lists name as scanners (the SIPVicious
// suite's defaults, the User-Agent block lists of iptables string-match and fail2ban/Kamailio
// REQINIT examples). Left out on purpose: sipsak (an administrators' tool, used for OPTIONS
// monitoring in production) and commercial SDKs some scanners borrow (PortSIP, Ozeki, whose
// User-Agent legitimate softphones also send). Short names are bounded by \b so that they do
// not match inside another product's name.
constexpr std::array<scanner_signature, 17> defaults{{
    {scanner_field::user_agent, "friendly-scanner", "SIPVicious svmap, svwar, svcrack (default User-Agent)"},
    {scanner_field::user_agent, "friendly-request", "SIPVicious (later versions and forks)"},
    {scanner_field::user_agent, "sipvicious", "SIPVicious"},
    {scanner_field::user_agent, "sipcli", "sipcli"},
    {scanner_field::user_agent, "VaxSIPUserAgent", "VaxSIPUserAgent (scanning bots)"},
    {scanner_field::user_agent, "VaxIPUserAgent", "VaxIPUserAgent (scanning bots)"},
    {scanner_field::user_agent, "sundayddr", "sundayddr"},
    {scanner_field::user_agent, "\\biWar\\b", "iWar"},
    {scanner_field::user_agent, "\\bSIVuS\\b", "SIVuS"},
    {scanner_field::user_agent, "\\bsmap\\b", "smap"},
    {scanner_field::user_agent, "sip-?scan", "SIPScan, sip-scan"},
    {scanner_field::user_agent, "\\bGulp\\b", "Gulp"},
    {scanner_field::user_agent, "siparmyknife", "SIP Army Knife"},
    {scanner_field::user_agent, "pplsip", "SIPPTS and Pepelux's earlier tools (default User-Agent)"},
    {scanner_field::user_agent, "Nmap NSE", "Nmap's SIP scripts"},
    {scanner_field::from, "sipvicious", "SIPVicious svmap (From display name)"},
    {scanner_field::to, "sipvicious", "SIPVicious svmap (To display name)"},
}};

// Called by hs_scan for the first matching pattern: keeps it and stops the scan.
int on_match(unsigned int id, unsigned long long /*from*/, unsigned long long /*to*/, unsigned int /*flags*/,
             void* ctx) noexcept
{
    auto* hit = static_cast<scanner_hit*>(ctx);
    hit->matched = true;
    hit->builtin = (id & 1u) != 0;
    return 1;
}

}  // namespace

std::string_view scanner_field_name(scanner_field f) noexcept
{
    switch (f) {
    case scanner_field::user_agent: return "user_agent";
    case scanner_field::from: return "from";
    case scanner_field::to: return "to";
    }
    return "user_agent";
}

std::span<const scanner_signature> default_scanner_signatures() noexcept { return defaults; }

std::vector<scanner_pattern> scanner_matcher::with_defaults(bool use_defaults, std::vector<scanner_pattern> extra)
{
    std::vector<scanner_pattern> all;
    if (use_defaults)
        for (const scanner_signature& s : defaults) all.push_back({s.field, s.pattern, true});
    for (auto& p : extra) all.push_back(std::move(p));
    return all;
}

bool scanner_matcher::check(const std::string& expr, std::string& error)
{
    if (!hs_fields::platform_ok(error)) return false;
    hs_database_t* db = nullptr;
    hs_compile_error_t* ce = nullptr;
    if (hs_compile(expr.c_str(), pattern_flags, HS_MODE_BLOCK, nullptr, &db, &ce) != HS_SUCCESS) {
        error = ce != nullptr ? ce->message : "unknown error";
        hs_free_compile_error(ce);
        return false;
    }
    hs_free_database(db);
    return true;
}

std::shared_ptr<scanner_matcher> scanner_matcher::compile(const std::vector<scanner_pattern>& patterns,
                                                          const scanner_policy& policy, unsigned workers,
                                                          std::string& error)
{
    std::shared_ptr<scanner_matcher> m(new scanner_matcher());
    m->policy_ = policy;
    if (!hs_fields::platform_ok(error)) return nullptr;
    for (std::size_t f = 0; f < scanner_field_count; ++f) {
        hs_fields::patterns p;
        for (std::size_t i = 0; i < patterns.size(); ++i) {
            const scanner_pattern& sp = patterns[i];
            if (static_cast<std::size_t>(sp.field) != f) continue;
            // The id says whether it is a shipped signature (bit 0); the rest keeps ids distinct.
            p.add(sp.expr.c_str(), pattern_flags, static_cast<unsigned>(i << 1) | (sp.builtin ? 1u : 0u));
        }
        m->counts_[f] = p.size();
        if (!m->hs_.compile_field(f, p, scanner_field_name(static_cast<scanner_field>(f)), "scanner", error)) return nullptr;
    }
    if (!m->hs_.make_scratch(workers, error)) return nullptr;
    return m;
}

scanner_hit scanner_matcher::match(unsigned w, std::string_view user_agent, std::string_view from,
                                   std::string_view to) const noexcept
{
    scanner_hit hit;
    if (w >= hs_.workers()) return hit;
    const std::array<std::string_view, scanner_field_count> values{user_agent, from, to};
    for (std::size_t f = 0; f < scanner_field_count; ++f) {
        if (values[f].empty() || !hs_.has(f)) continue;
        hs_.scan(w, f, values[f], on_match, &hit);
        if (hit.matched) {
            hit.field = static_cast<scanner_field>(f);
            return hit;
        }
    }
    return hit;
}

scanner_hit scanner_matcher::match(unsigned w, const message& m) const noexcept
{
    const header* ua = m.find(header_id::user_agent);
    const std::string_view user_agent = ua != nullptr ? m.text(ua->value) : std::string_view{};
    const std::string_view from = m.h_from != no_header ? m.text(m.headers[m.h_from].value) : std::string_view{};
    const std::string_view to = m.h_to != no_header ? m.text(m.headers[m.h_to].value) : std::string_view{};
    return match(w, user_agent, from, to);
}

}  // namespace sbc::sip
