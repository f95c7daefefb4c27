// SIP message framing on a byte stream and the buffers it borrows (stream_framer.h).
// Stream thread only.
#include "transport/stream_framer.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

namespace sbc::streams {

namespace {

constexpr std::string_view header_end = "\r\n\r\n";

bool is_wsp(char c) noexcept { return c == ' ' || c == '\t'; }

/// Whitespace inside a header value: SP, HTAB and the CRLF of a folded line (RFC 3261 LWS).
bool is_lws(char c) noexcept { return is_wsp(c) || c == '\r' || c == '\n'; }

bool is_content_length(std::string_view name) noexcept {
    while (!name.empty() && is_wsp(name.back())) name.remove_suffix(1);
    constexpr std::string_view full = "content-length";
    if (name.size() == 1) return name[0] == 'l' || name[0] == 'L';
    if (name.size() != full.size()) return false;
    return std::equal(name.begin(), name.end(), full.begin(), [](char a, char b) {
        return (a >= 'A' && a <= 'Z' ? static_cast<char>(a - 'A' + 'a') : a) == b;
    });
}

/// 1*DIGIT with LWS either side, fitting 32 bits; anything else (sign, list, junk) fails.
bool parse_length(std::string_view v, uint32_t& out) noexcept {
    std::size_t i = 0;
    while (i < v.size() && is_lws(v[i])) ++i;
    const std::size_t digits_from = i;
    uint64_t n = 0;
    for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) {
        n = n * 10 + static_cast<uint64_t>(v[i] - '0');
        if (n > std::numeric_limits<uint32_t>::max()) return false;
    }
    if (i == digits_from) return false;
    while (i < v.size() && is_lws(v[i])) ++i;
    if (i != v.size()) return false;
    out = static_cast<uint32_t>(n);
    return true;
}

/// The Content-Length of a message whose start line and header lines, each ending in CRLF,
/// are `head`. Header fields are unfolded by continuing over CRLFs followed by SP or HTAB.
conn_reason content_length(std::string_view head, uint32_t& length) noexcept {
    bool found = false;
    std::size_t pos = head.find("\r\n") + 2;  // past the start line; head ends in CRLF
    while (pos < head.size()) {
        std::size_t end = pos;
        do {
            end = head.find("\r\n", end) + 2;
        } while (end < head.size() && is_wsp(head[end]));
        const std::string_view field = head.substr(pos, end - 2 - pos);
        pos = end;
        const std::size_t colon = field.find(':');
        if (colon == std::string_view::npos || !is_content_length(field.substr(0, colon))) continue;
        uint32_t value = 0;
        if (!parse_length(field.substr(colon + 1), value)) return conn_reason::bad_framing;
        if (found && value != length) return conn_reason::bad_framing;
        found = true;
        length = value;
    }
    return found ? conn_reason::none : conn_reason::bad_framing;
}

}  // namespace

framer_buffers::framer_buffers(uint32_t max_message_bytes, std::size_t keep_free)
    : max_message_bytes_(max_message_bytes),
      buffer_bytes_(max_message_bytes + framer_slack_bytes),
      keep_free_(keep_free) {
    free_.reserve(keep_free);
}

char* framer_buffers::take() {
    ++in_use_;
    if (free_.empty()) return new char[buffer_bytes_];
    char* b = free_.back().release();
    free_.pop_back();
    return b;
}

void framer_buffers::give_back(char* buffer) noexcept {
    --in_use_;
    if (free_.size() < keep_free_)
        free_.emplace_back(buffer);
    else
        delete[] buffer;
}

stream_framer::stream_framer(stream_framer&& other) noexcept
    : buffers_(other.buffers_),
      buffer_(std::exchange(other.buffer_, nullptr)),
      begin_(std::exchange(other.begin_, 0)),
      end_(std::exchange(other.end_, 0)),
      scanned_(std::exchange(other.scanned_, 0)),
      total_(std::exchange(other.total_, 0)),
      failed_(std::exchange(other.failed_, conn_reason::none)) {}

stream_framer& stream_framer::operator=(stream_framer&& other) noexcept {
    if (this != &other) {
        clear();
        buffers_ = other.buffers_;
        buffer_ = std::exchange(other.buffer_, nullptr);
        begin_ = std::exchange(other.begin_, 0);
        end_ = std::exchange(other.end_, 0);
        scanned_ = std::exchange(other.scanned_, 0);
        total_ = std::exchange(other.total_, 0);
        failed_ = std::exchange(other.failed_, conn_reason::none);
    }
    return *this;
}

std::span<char> stream_framer::space() {
    if (buffer_ == nullptr) {
        buffer_ = buffers_->take();
        begin_ = end_ = 0;
    } else if (begin_ > 0) {
        // Only the unframed tail moves: less than one message, and once per read, not per message.
        std::memmove(buffer_, buffer_ + begin_, end_ - begin_);
        end_ -= begin_;
        begin_ = 0;
    }
    return {buffer_ + end_, buffers_->buffer_bytes() - end_};
}

void stream_framer::commit(std::size_t n) noexcept {
    end_ += n;
    if (end_ == begin_ && failed_ == conn_reason::none) clear();
}

void stream_framer::clear() noexcept {
    if (buffer_ != nullptr) buffers_->give_back(buffer_);
    buffer_ = nullptr;
    begin_ = end_ = scanned_ = total_ = 0;
    failed_ = conn_reason::none;
}

frame stream_framer::fail(conn_reason r) noexcept {
    failed_ = r;
    return {frame_kind::error, {}, r};
}

frame stream_framer::keepalive() noexcept {
    const std::size_t avail = end_ - begin_;
    const char* p = buffer_ + begin_;
    if (avail < 2) return {};
    if (p[1] != '\n') return fail(conn_reason::bad_framing);
    if (avail >= 4 && p[2] == '\r' && p[3] == '\n') {
        begin_ += 4;
        return {frame_kind::ping, {}, conn_reason::none};
    }
    if (avail == 3 && p[2] == '\r') return {};  // a ping whose last LF is still on its way
    begin_ += 2;
    return {frame_kind::pong, {}, conn_reason::none};
}

frame stream_framer::next() noexcept {
    if (failed_ != conn_reason::none) return {frame_kind::error, {}, failed_};
    const std::size_t avail = end_ - begin_;
    if (avail == 0) {
        clear();
        return {};
    }
    const char* p = buffer_ + begin_;
    if (p[0] == '\r') return keepalive();  // a message never starts with CR
    const std::size_t max = buffers_->max_message_bytes();
    if (total_ == 0) {
        const std::string_view seen(p, std::min(avail, max));
        // Resume where the last search stopped, less 3 bytes for a CRLFCRLF cut by a read.
        const std::size_t at = seen.find(header_end, scanned_ < 3 ? 0 : scanned_ - 3);
        if (at == std::string_view::npos) {
            if (avail >= max) return fail(conn_reason::too_big);
            scanned_ = seen.size();
            return {};
        }
        uint32_t length = 0;
        if (const conn_reason r = content_length(seen.substr(0, at + 2), length); r != conn_reason::none)
            return fail(r);
        const uint64_t total = at + header_end.size() + uint64_t{length};
        if (total > max) return fail(conn_reason::too_big);
        total_ = static_cast<std::size_t>(total);
    }
    if (avail < total_) return {};
    const frame f{frame_kind::message, std::string_view(p, total_), conn_reason::none};
    begin_ += total_;
    scanned_ = total_ = 0;
    return f;
}

}  // namespace sbc::streams
