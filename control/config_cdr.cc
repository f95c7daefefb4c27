// Loads `[cdr]` from sbc.toml: path, rotate_bytes, rotate_seconds, keep, ring (control/config_cdr.h).
// Control core only (also sbcctl and tests); see config.cc for how problems are reported.
#include "control/config_reader.h"

namespace sbc::control::config_detail {

namespace {

constexpr int64_t min_rotate_bytes = int64_t{1} << 20;
constexpr int64_t max_rotate_bytes = int64_t{1} << 40;
constexpr int64_t min_rotate_seconds = 60;
constexpr int64_t max_rotate_seconds = 30 * 86400;
constexpr int64_t min_ring = 64;
constexpr int64_t max_ring = 1 << 20;

}  // namespace

void read_cdr(loader& l, const toml::table& t, cdr_config& c)
{
    table_reader r(l, t, "cdr");
    c.line = r.line();
    if (const auto* p = r.get_string("path", c.path)) {
        if (c.path.empty() || c.path.back() == '/')
            l.error(line_of(*p), r.key("path"),
                    "expected the path of a file (the JSON lines; rotated ones are written next to it), got " +
                        quoted(c.path));
        else if (c.path.find('\n') != std::string::npos)
            l.error(line_of(*p), r.key("path"), "expected a file name without a newline");
    } else if (!t.contains("path")) {
        l.error(c.line, r.key("path"), "missing; expected the file the records are written to, e.g. "
                                       "\"/var/log/sbc/cdr.jsonl\" (leave [cdr] out for no records)");
    }
    if (auto v = r.typed<int64_t>("rotate_bytes", "an integer")) {
        const int64_t b = v->get();
        if (b != 0 && (b < min_rotate_bytes || b > max_rotate_bytes))
            l.error(line_of(*v), r.key("rotate_bytes"),
                    "expected 0 (no rotation by size) or " + std::to_string(min_rotate_bytes) + ".." +
                        std::to_string(max_rotate_bytes) + " (1 MiB..1 TiB), got " + std::to_string(b));
        else
            c.rotate_bytes = static_cast<uint64_t>(b);
    }
    if (auto v = r.typed<int64_t>("rotate_seconds", "an integer")) {
        const int64_t s = v->get();
        if (s != 0 && (s < min_rotate_seconds || s > max_rotate_seconds))
            l.error(line_of(*v), r.key("rotate_seconds"),
                    "expected 0 (no rotation by time) or " + std::to_string(min_rotate_seconds) + ".." +
                        std::to_string(max_rotate_seconds) + " (a minute..30 days), got " + std::to_string(s));
        else
            c.rotate_seconds = static_cast<unsigned>(s);
    }
    r.get_uint("keep", c.keep, 1, 10000, "rotated files kept; older ones are removed");
    if (auto v = r.typed<int64_t>("ring", "an integer")) {
        const int64_t n = v->get();
        if (n < min_ring || n > max_ring || (n & (n - 1)) != 0)
            l.error(line_of(*v), r.key("ring"),
                    "expected a power of two in " + std::to_string(min_ring) + ".." + std::to_string(max_ring) +
                        " (records each worker holds for the writer), got " + std::to_string(n));
        else
            c.ring = static_cast<unsigned>(n);
    }
    r.finish();
}

}  // namespace sbc::control::config_detail
