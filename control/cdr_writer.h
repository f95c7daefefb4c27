// The call detail record writer: turns the records the workers hand over (control/cdr_ring.h
// dequeues them) into JSON lines in the [cdr] file, rotates it by size and by time (renamed to
// PATH.YYYYmmddTHHMMSSZ, the oldest beyond `keep` removed), reopens it on request (SIGHUP, for
// logrotate), keeps the last records for `sbcctl cdr tail`, and never loses a record silently:
// records lost to a full ring (the workers count them) or to a failed write are counted and
// logged, one line per second at most. Control core only (off the packet path; it may block on
// the file system for the length of one write).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/call_record.h"
#include "control/cdr_format.h"
#include "control/config_cdr.h"

namespace sbc::control {

class cdr_writer {
public:
    using log_fn = std::function<void(const std::string& line)>;

    /// Opens (appends to) `cfg.path`; nullptr with `error` when it cannot be opened. `clock`
    /// maps the workers' clock to wall time; `now_ms` is the wall time now (Unix ms).
    static std::unique_ptr<cdr_writer> open(const cdr_config& cfg, const cdr_clock& clock, int64_t now_ms, log_fn log,
                                            std::string& error);
    ~cdr_writer();
    cdr_writer(const cdr_writer&) = delete;
    cdr_writer& operator=(const cdr_writer&) = delete;

    /// The names records' indices refer to (after every publish).
    void set_names(cdr_names names) { names_ = std::move(names); }

    /// Formats one record and queues its line for the next flush(); keeps it for the tail.
    void add(const call_record& r);
    /// Writes the queued lines (one write), rotating first when the file is due (size or time
    /// boundary). A failed write counts its records as write errors and is logged.
    void flush(int64_t now_ms);
    /// Once per loop iteration: rotation by time even without records, and the rate-limited log
    /// of losses. `dropped_total`: every worker's cdr_dropped counter, summed.
    void tick(int64_t now_ms, uint64_t dropped_total);
    /// Closes and reopens the file at its path (after logrotate moved it away). Queued lines
    /// are written first.
    void reopen(int64_t now_ms);

    [[nodiscard]] const cdr_tail& tail() const noexcept { return tail_; }
    [[nodiscard]] cdr_report report() const;

private:
    cdr_writer(const cdr_config& cfg, const cdr_clock& clock, log_fn log);
    bool open_file(std::string& error);
    void close_file();
    void rotate(int64_t now_ms);
    void prune();
    [[nodiscard]] int64_t period_of(int64_t now_ms) const;

    cdr_config cfg_;
    cdr_clock clock_;
    log_fn log_;
    cdr_names names_;
    cdr_tail tail_;
    int fd_ = -1;
    uint64_t size_ = 0;       ///< bytes in the open file
    int64_t period_ = 0;      ///< rotate_seconds period the open file belongs to
    std::string pending_;     ///< lines queued since the last flush
    uint64_t pending_records_ = 0;
    uint64_t written_ = 0;
    uint64_t write_errors_ = 0;
    uint64_t rotations_ = 0;
    // Rate-limited log lines: what was lost since the last line of its kind, and when that was.
    uint64_t dropped_total_ = 0;      ///< every worker's cdr_dropped, as last told
    uint64_t dropped_seen_ = 0;       ///< dropped_total at the last drop line
    int64_t dropped_logged_ms_ = 0;
    uint64_t errors_unlogged_ = 0;
    int64_t errors_logged_ms_ = 0;
    std::string last_error_;
};

}  // namespace sbc::control
