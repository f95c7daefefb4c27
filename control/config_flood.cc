// Loads [flood] of sbc.toml (see config_flood.h and docs/config.md): rates in messages per
// second per source and worker (0: no limit), bursts, the malformed-message rule and the denial
// time; each bad value refused with file, line and key. Control core only (also sbcctl, tests).
#include <string>

#include "control/config.h"
#include "control/config_reader.h"

namespace sbc::control::config_detail {

constexpr int64_t max_rate = 10'000'000;
constexpr int64_t max_burst = 1'000'000;  // a bucket counts thousandths of a token in 32 bits

void read_flood(loader& l, const toml::table& t, flood_config& f)
{
    table_reader r(l, t, "flood");
    f.line = r.line();
    r.get_bool("enabled", f.enabled);
    auto rate = [&](std::string_view k, uint32_t& out,
                    std::string_view per = "messages per second per source and worker; 0: no limit") {
        unsigned v = out;
        r.get_uint(k, v, 0, max_rate, per);
        out = v;
    };
    auto burst = [&](std::string_view k, uint32_t& out) {
        unsigned v = out;
        r.get_uint(k, v, 1, max_burst, "messages a source may send at once above its rate");
        out = v;
    };
    rate("trusted_rate", f.trusted_rate);
    burst("trusted_burst", f.trusted_burst);
    rate("untrusted_rate", f.untrusted_rate);
    burst("untrusted_burst", f.untrusted_burst);
    rate("untrusted_trunk_rate", f.untrusted_trunk_rate,
         "messages per second from all untrusted sources of one trunk, per worker; 0: no limit");
    burst("untrusted_trunk_burst", f.untrusted_trunk_burst);
    rate("unknown_rate", f.unknown_rate, "messages per second from all unknown sources, per worker; 0: no limit");
    burst("unknown_burst", f.unknown_burst);
    {
        unsigned v = f.deny_after_malformed;
        r.get_uint("deny_after_malformed", v, 0, 1'000'000, "malformed messages within malformed_window_s; 0: never");
        f.deny_after_malformed = v;
    }
    unsigned window_s = f.malformed_window_ms / 1000;
    r.get_uint("malformed_window_s", window_s, 1, 3600, "seconds");
    f.malformed_window_ms = window_s * 1000;
    r.get_uint("deny_s", f.deny_s, 1, 604800, "seconds a reported source stays denied");
    r.finish();
}

void read_trunk_flood(loader& l, table_reader& r, trunk_config& tc)
{
    auto own = [&](std::string_view k, std::optional<uint32_t>& out, int64_t min, int64_t max, std::string_view what) {
        const toml::node* n = r.get(k);
        if (n == nullptr) return;
        if (tc.trusted) {
            l.error(line_of(*n), r.key(k),
                    "applies to the untrusted sources of a trunk; this trunk is trusted = true (its sources are "
                    "rate-limited one by one, by [flood] trusted_rate)");
            return;
        }
        constexpr unsigned unread = ~0u;  // above every max: get_uint stores only a value in range
        unsigned v = unread;
        r.get_uint(k, v, min, max, what);
        if (v != unread) out = v;
    };
    own("untrusted_trunk_rate", tc.untrusted_trunk_rate, 0, max_rate,
        "messages per second from all of this trunk's untrusted sources, per worker; 0: no limit; "
        "default: [flood] untrusted_trunk_rate");
    own("untrusted_trunk_burst", tc.untrusted_trunk_burst, 1, max_burst,
        "messages this trunk's untrusted sources may send at once above its rate; default: [flood] untrusted_trunk_burst");
}

}  // namespace sbc::control::config_detail
