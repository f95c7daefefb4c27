// Call detail records as the operator sees them: one record (common/call_record.h) turned into
// the JSON object of its line in the CDR file, with names from the published tables and
// wall-clock times; the in-memory tail that `sbcctl cdr tail` reads; the table sbcctl prints;
// and the writer's counters for the control socket and /metrics.
// append_cdr_line, cdr_json, cdr_tail: control core (the CDR writer). render_cdr_*: sbcctl. to_json(cdr_report),
// cdr_prometheus: control core (pure functions over a copy).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/call_record.h"

namespace sbc::sip {
struct proxy_tables;
}

namespace sbc::control {

/// A peer as a record names it: its name and "address:port".
struct cdr_peer_name {
    std::string name;
    std::string address;
};

/// The names behind a record's indices, as last published (a reload may rename them).
struct cdr_names {
    std::vector<std::string> trunks;    ///< by trunk index
    std::vector<std::string> routes;    ///< by route index
    std::vector<cdr_peer_name> peers;   ///< by peer id (empty name: none)
};

/// The names of `t`'s trunks, routes and peers.
[[nodiscard]] cdr_names cdr_names_of(const sip::proxy_tables& t);

/// How a worker's millisecond clock (rte_rdtsc() / tsc_per_ms) maps to wall-clock time: both
/// read at the same moment, once, when the writer starts.
struct cdr_clock {
    int64_t wall_ms_at = 0;     ///< Unix time in ms
    uint64_t worker_ms_at = 0;  ///< the worker clock at that moment
    [[nodiscard]] int64_t wall_ms(uint64_t worker_ms) const noexcept
    {
        return wall_ms_at + (static_cast<int64_t>(worker_ms) - static_cast<int64_t>(worker_ms_at));
    }
};

/// "2026-12-02T00:31:02.123Z".
[[nodiscard]] std::string iso8601_ms(int64_t unix_ms);

/// Appends the record's JSON line (with its '\n') to `out` (the shape is in docs/operations.md,
/// "Call detail records"): start and stop as ISO 8601 UTC, call_id, from, to, trunk, route,
/// peers tried with their outcome, final code and who sent it, setup times, duration, why it
/// ended, worker, and media per direction with an estimated MOS (control/emodel.h). Written
/// directly, without a JSON object in between: the writer formats every call of every worker
/// on one core. Bytes of the Call-ID and users that are not valid UTF-8 become U+FFFD.
void append_cdr_line(std::string& out, const call_record& r, const cdr_names& names, const cdr_clock& clock);

/// The same record as a JSON object (append_cdr_line's line, parsed).
[[nodiscard]] nlohmann::json cdr_json(const call_record& r, const cdr_names& names, const cdr_clock& clock);

/// The last records written, each with a sequence number (1, 2, ...), for `sbcctl cdr tail`:
/// kept as their lines, parsed only when asked for. Control core only.
class cdr_tail {
public:
    static constexpr std::size_t default_capacity = 1000;
    explicit cdr_tail(std::size_t capacity = default_capacity) : capacity_(capacity) {}

    /// Keeps `line` (one JSON object; its "seq" is added when it is read); the oldest goes
    /// beyond the capacity.
    void push(std::string line);
    /// The last `n` records as JSON objects with their "seq", oldest first.
    [[nodiscard]] nlohmann::json last(std::size_t n) const;
    /// The records with a sequence number above `seq`, oldest first, at most `max`.
    [[nodiscard]] nlohmann::json since(uint64_t seq, std::size_t max = default_capacity) const;
    /// The sequence number of the newest record (0: none yet).
    [[nodiscard]] uint64_t last_seq() const noexcept { return seq_; }
    [[nodiscard]] std::size_t size() const noexcept { return kept_.size(); }

private:
    std::size_t capacity_;
    uint64_t seq_ = 0;
    std::deque<std::string> kept_;
    [[nodiscard]] nlohmann::json record_at(std::size_t i) const;
};

/// What the writer did, for the control socket and /metrics.
struct cdr_report {
    bool enabled = false;
    std::string path;
    uint64_t written = 0;       ///< records written to the file
    uint64_t dropped = 0;       ///< records lost on a full worker ring (every worker's cdr_dropped)
    uint64_t write_errors = 0;  ///< records lost because the file could not be written
    uint64_t rotations = 0;     ///< files rotated (by size or time)
};

[[nodiscard]] nlohmann::json to_json(const cdr_report& r);
/// sbc_cdr_records_written_total, sbc_cdr_write_errors_total, sbc_cdr_rotations_total; "" when
/// [cdr] is off. (Records lost on a full ring are per worker, sbc_cdr_dropped_total{worker}, with
/// the workers' counters in stats.cc.)
[[nodiscard]] std::string cdr_prometheus(const cdr_report& r);

/// One record's row of `sbcctl cdr tail`: time, call-id (cut to 20), from, to, trunk, peers
/// tried as name:outcome[/code], final code/by, setup ms, duration s, end, MOS A/B.
[[nodiscard]] std::vector<std::string> cdr_row(const nlohmann::json& record);
/// The header row.
[[nodiscard]] std::vector<std::string> cdr_header();
/// `rows` in fixed-width columns (so that the rows --follow prints later line up with these);
/// a wider value pushes the rest of its row right.
[[nodiscard]] std::string render_cdr_rows(const std::vector<std::vector<std::string>>& rows);
/// `sbcctl cdr tail`: the header and a row per record of the `cdr` answer ("records").
[[nodiscard]] std::string render_cdr_text(const nlohmann::json& answer, bool header = true);

}  // namespace sbc::control
