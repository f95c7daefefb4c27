// Call detail records in sbc.toml: the `[cdr]` section (docs/config.md, "Call detail records").
// Read by control/config_cdr.cc; the writer (control/cdr_writer.h) and the workers' rings
// (port_options::cdr_ring) are set from it. Control core only (also sbcctl and tests).
#pragma once

#include <cstdint>
#include <string>

namespace sbc::control {

constexpr uint64_t default_cdr_rotate_bytes = uint64_t{100} << 20;  ///< 100 MiB
constexpr unsigned default_cdr_rotate_seconds = 3600;
constexpr unsigned default_cdr_keep = 24;
constexpr unsigned default_cdr_ring = 16384;

/// `[cdr]`; absent: no records are kept (the workers get no ring).
struct cdr_config {
    std::string path;  ///< the JSON-lines file; "" (no [cdr]): off
    uint64_t rotate_bytes = default_cdr_rotate_bytes;      ///< 0: no rotation by size; else 1 MiB..1 TiB
    unsigned rotate_seconds = default_cdr_rotate_seconds;  ///< 0: no rotation by time; else 60..2592000, on multiples (UTC)
    unsigned keep = default_cdr_keep;                      ///< rotated files kept, 1..10000; older ones are removed
    unsigned ring = default_cdr_ring;                      ///< records per worker ring, a power of two 64..1048576
    int line = 0;                                          ///< of the [cdr] table (0: absent)

    [[nodiscard]] bool enabled() const noexcept { return !path.empty(); }
    /// Whether a running sbcd could take `o` without a restart (it cannot: the rings and the file are set at start).
    [[nodiscard]] bool same_as(const cdr_config& o) const noexcept
    {
        return path == o.path && rotate_bytes == o.rotate_bytes && rotate_seconds == o.rotate_seconds &&
               keep == o.keep && ring == o.ring;
    }
};

}  // namespace sbc::control
