// The CDR writer (see cdr_writer.h). Control core only.
#include "control/cdr_writer.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

namespace sbc::control {

namespace {

constexpr int64_t log_interval_ms = 1000;

/// "20261202T003102Z".
std::string rotation_stamp(int64_t unix_ms)
{
    const std::time_t s = static_cast<std::time_t>(unix_ms / 1000);
    std::tm tm{};
    gmtime_r(&s, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
    return buf;
}

/// Whether `rest` (what follows "BASE.") is a stamp as rotation_stamp writes it, maybe with "-N".
bool is_rotation_suffix(std::string_view rest)
{
    if (rest.size() < 16) return false;
    for (std::size_t i = 0; i < 16; ++i) {
        const char c = rest[i];
        const bool ok = i == 8 ? c == 'T' : i == 15 ? c == 'Z' : (c >= '0' && c <= '9');
        if (!ok) return false;
    }
    if (rest.size() == 16) return true;
    if (rest[16] != '-' || rest.size() == 17) return false;
    return std::all_of(rest.begin() + 17, rest.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool exists(const std::string& p)
{
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0;
}

}  // namespace

cdr_writer::cdr_writer(const cdr_config& cfg, const cdr_clock& clock, log_fn log)
    : cfg_(cfg), clock_(clock), log_(std::move(log))
{
}

cdr_writer::~cdr_writer() { close_file(); }

std::unique_ptr<cdr_writer> cdr_writer::open(const cdr_config& cfg, const cdr_clock& clock, int64_t now_ms, log_fn log,
                                             std::string& error)
{
    std::unique_ptr<cdr_writer> w(new cdr_writer(cfg, clock, std::move(log)));
    if (!w->open_file(error)) return nullptr;
    w->period_ = w->period_of(now_ms);
    return w;
}

bool cdr_writer::open_file(std::string& error)
{
    fd_ = ::open(cfg_.path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (fd_ < 0) {
        error = "cannot open " + cfg_.path + ": " + std::strerror(errno);
        return false;
    }
    struct stat st {};
    size_ = ::fstat(fd_, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
    return true;
}

void cdr_writer::close_file()
{
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

int64_t cdr_writer::period_of(int64_t now_ms) const
{
    return cfg_.rotate_seconds == 0 ? 0 : now_ms / 1000 / cfg_.rotate_seconds;
}

void cdr_writer::add(const call_record& r)
{
    const std::size_t at = pending_.size();
    append_cdr_line(pending_, r, names_, clock_);
    ++pending_records_;
    tail_.push(pending_.substr(at, pending_.size() - at - 1));  // without its '\n'
}

void cdr_writer::rotate(int64_t now_ms)
{
    close_file();
    std::string target = cfg_.path + "." + rotation_stamp(now_ms);
    for (int n = 1; exists(target) && n < 1000; ++n) target = cfg_.path + "." + rotation_stamp(now_ms) + "-" + std::to_string(n);
    if (::rename(cfg_.path.c_str(), target.c_str()) != 0)
        log_("cdr: cannot rotate " + cfg_.path + " to " + target + ": " + std::strerror(errno) + "; appending to it");
    else
        ++rotations_;
    std::string error;
    if (!open_file(error)) log_("cdr: " + error);  // the next flush tries again and counts what it loses
    period_ = period_of(now_ms);
    prune();
}

void cdr_writer::prune()
{
    const auto slash = cfg_.path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : cfg_.path.substr(0, slash));
    const std::string base = (slash == std::string::npos ? cfg_.path : cfg_.path.substr(slash + 1)) + ".";
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return;
    std::vector<std::string> rotated;
    while (const dirent* e = ::readdir(d)) {
        const std::string_view name = e->d_name;
        if (name.size() > base.size() && name.substr(0, base.size()) == base && is_rotation_suffix(name.substr(base.size())))
            rotated.emplace_back(name);
    }
    ::closedir(d);
    if (rotated.size() <= cfg_.keep) return;
    // The stamp sorts by time ("...Z" before "...Z-1", the second rotation of that second).
    std::sort(rotated.begin(), rotated.end());
    for (std::size_t i = 0; i + cfg_.keep < rotated.size(); ++i) {
        const std::string p = dir + "/" + rotated[i];
        if (::unlink(p.c_str()) != 0) log_("cdr: cannot remove " + p + ": " + std::strerror(errno));
    }
}

void cdr_writer::flush(int64_t now_ms)
{
    if (pending_records_ == 0) return;
    if (cfg_.rotate_seconds != 0 && period_of(now_ms) != period_) {
        if (size_ > 0) rotate(now_ms);
        period_ = period_of(now_ms);
    }
    if (cfg_.rotate_bytes != 0 && size_ > 0 && size_ + pending_.size() > cfg_.rotate_bytes) rotate(now_ms);
    if (fd_ < 0) {
        std::string error;
        if (!open_file(error)) last_error_ = error;
    }
    std::size_t done = 0;
    while (fd_ >= 0 && done < pending_.size()) {
        const ssize_t n = ::write(fd_, pending_.data() + done, pending_.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            last_error_ = "cannot write " + cfg_.path + ": " + (n < 0 ? std::strerror(errno) : "wrote nothing");
            close_file();  // reopened at the next flush
            break;
        }
        done += static_cast<std::size_t>(n);
    }
    size_ += done;
    // A record counts as written when its whole line is; a cut line is lost (and counted).
    const auto lines = static_cast<uint64_t>(std::count(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(done), '\n'));
    written_ += lines;
    if (lines < pending_records_) {
        write_errors_ += pending_records_ - lines;
        errors_unlogged_ += pending_records_ - lines;
    }
    pending_.clear();
    pending_records_ = 0;
    tick(now_ms, dropped_total_);
}

void cdr_writer::tick(int64_t now_ms, uint64_t dropped_total)
{
    if (pending_records_ == 0 && cfg_.rotate_seconds != 0 && period_of(now_ms) != period_) {
        if (size_ > 0) rotate(now_ms);
        period_ = period_of(now_ms);
    }
    dropped_total_ = std::max(dropped_total_, dropped_total);
    if (dropped_total > dropped_seen_ && now_ms - dropped_logged_ms_ >= log_interval_ms) {
        log_("cdr: " + std::to_string(dropped_total - dropped_seen_) +
             " record(s) lost: a worker's CDR ring was full (the writer fell behind); " + std::to_string(dropped_total) +
             " in all (sbc_cdr_dropped_total)");
        dropped_seen_ = dropped_total;
        dropped_logged_ms_ = now_ms;
    }
    if (errors_unlogged_ != 0 && now_ms - errors_logged_ms_ >= log_interval_ms) {
        log_("cdr: " + std::to_string(errors_unlogged_) + " record(s) lost: " + last_error_ + "; " +
             std::to_string(write_errors_) + " in all (sbc_cdr_write_errors_total)");
        errors_unlogged_ = 0;
        errors_logged_ms_ = now_ms;
    }
}

void cdr_writer::reopen(int64_t now_ms)
{
    flush(now_ms);
    close_file();
    std::string error;
    if (!open_file(error)) {
        last_error_ = error;
        log_("cdr: " + error + " (tried again at the next record)");
    }
}

cdr_report cdr_writer::report() const
{
    cdr_report r;
    r.enabled = true;
    r.path = cfg_.path;
    r.written = written_;
    r.dropped = dropped_total_;
    r.write_errors = write_errors_;
    r.rotations = rotations_;
    return r;
}

}  // namespace sbc::control
