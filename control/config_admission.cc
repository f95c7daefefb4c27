// Loads call admission from sbc.toml: `[admission]` (node limit, refusal code, Retry-After)
// and the limit keys of `[[trunk]]` (max_calls, max_calls_per_second, calls_burst),
// `[[region]]` (peer_max_calls) and a region's static peer (max_calls). Control core only
// (also sbcctl and tests); see config.cc for how problems are reported.
#include "control/config_reader.h"

namespace sbc::control::config_detail {

namespace {

constexpr int64_t max_call_limit = 10'000'000;
constexpr int64_t max_rate = 1'000'000;
constexpr std::array<unsigned, 7> refuse_codes{403, 480, 486, 500, 503, 600, 603};

}  // namespace

void read_trunk_admission(loader& l, table_reader& r, trunk_admission_config& a)
{
    r.get_uint("max_calls", a.max_calls, 1, max_call_limit, "concurrent calls on the trunk; leave it out for no limit");
    r.get_uint("max_calls_per_second", a.max_calls_per_second, 1, max_rate,
               "new calls per second on the trunk; leave it out for no limit");
    const toml::node* burst = r.get("calls_burst");
    r.get_uint("calls_burst", a.calls_burst, 1, max_rate, "new calls at once after a quiet time");
    if (burst && a.max_calls_per_second == 0)
        l.error(line_of(*burst), r.key("calls_burst"), "expected only with max_calls_per_second (it is that rate's burst)");
}

void read_region_admission(loader&, table_reader& r, unsigned& peer_max_calls)
{
    r.get_uint("peer_max_calls", peer_max_calls, 1, max_call_limit,
               "concurrent calls on each peer of the region, unless the peer sets max_calls");
}

void read_peer_admission(loader&, table_reader& r, unsigned& max_calls)
{
    r.get_uint("max_calls", max_calls, 1, max_call_limit, "concurrent calls on the peer; leave it out for no limit");
}

void read_admission(loader& l, const toml::table& t, admission_config& a)
{
    table_reader r(l, t, "admission");
    a.line = r.line();
    r.get_uint("max_calls", a.max_calls, 1, max_call_limit, "concurrent calls on the node; leave it out for no limit");
    const toml::node* code = r.get("refuse_code");
    unsigned c = a.refuse_code;
    r.get_uint("refuse_code", c, 400, 699, "the final response to a refused call");
    if (code && code->is_integer() && c != a.refuse_code) {
        if (std::find(refuse_codes.begin(), refuse_codes.end(), c) == refuse_codes.end())
            l.error(line_of(*code), r.key("refuse_code"),
                    "expected 403, 480, 486, 500, 503, 600 or 603 (a code that tells the caller to go elsewhere or "
                    "later), got " + std::to_string(c));
        else
            a.refuse_code = c;
    }
    r.get_uint("retry_after_s", a.retry_after_s, 0, 86400, "Retry-After of a refusal");
    r.finish();
}

}  // namespace sbc::control::config_detail
