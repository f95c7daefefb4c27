// SIP message framing on a byte stream (TCP, TLS): RFC 3261 §18.3 (every message carries
// Content-Length) and RFC 5626 §3.5.1 keep-alives (CRLFCRLF ping, CRLF pong) between messages.
// One stream_framer per connection; the message buffers come from the stream thread's
// framer_buffers and go back to it whenever a connection has nothing buffered, so an idle
// connection holds none. Stream thread only (nothing here is shared between threads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "transport/stream_config.h"

namespace sbc::streams {

/// Bytes each buffer holds beyond max_message_bytes, so that a read that completes a
/// full-size message can also carry the start of the next one.
inline constexpr std::size_t framer_slack_bytes = 1024;

/// The message buffers of one stream thread: each holds max_message_bytes + framer_slack_bytes.
/// A buffer is allocated only when the free list is empty, so in the steady state taking and
/// giving back costs no heap call. Must outlive every framer that uses it.
class framer_buffers {
public:
    /// Buffers for messages of up to `max_message_bytes`; up to `keep_free` idle ones are kept
    /// for reuse, the rest freed when given back.
    explicit framer_buffers(uint32_t max_message_bytes, std::size_t keep_free = 16);
    framer_buffers(const framer_buffers&) = delete;
    framer_buffers& operator=(const framer_buffers&) = delete;

    [[nodiscard]] uint32_t max_message_bytes() const noexcept { return max_message_bytes_; }
    /// The capacity of each buffer.
    [[nodiscard]] std::size_t buffer_bytes() const noexcept { return buffer_bytes_; }
    /// Buffers held by framers now.
    [[nodiscard]] std::size_t in_use() const noexcept { return in_use_; }
    /// Idle buffers waiting in the free list.
    [[nodiscard]] std::size_t free_count() const noexcept { return free_.size(); }

    /// A buffer of buffer_bytes(): from the free list, or freshly allocated when it is empty.
    char* take();
    /// Gives back a buffer from take().
    void give_back(char* buffer) noexcept;

private:
    uint32_t max_message_bytes_;
    std::size_t buffer_bytes_;
    std::size_t keep_free_;
    std::size_t in_use_ = 0;
    std::vector<std::unique_ptr<char[]>> free_;  // reserved to keep_free_: give_back never allocates
};

enum class frame_kind : uint8_t {
    need_more,  ///< nothing complete is buffered: read more, then commit() and next() again
    message,    ///< frame::message holds one whole SIP message, headers and body
    ping,       ///< CRLFCRLF between messages: answer with CRLF (RFC 5626 §4.4.1)
    pong,       ///< a lone CRLF between messages: the answer to our ping
    error,      ///< frame::reason says why; close the connection (next() keeps saying so)
};

/// One item taken from the stream.
struct frame {
    frame_kind kind = frame_kind::need_more;
    /// kind message: the message's bytes, valid until the next call to next(), space() or clear().
    std::string_view message;
    /// kind error: too_big (headers, or headers and body, longer than max_message_bytes) or
    /// bad_framing (Content-Length missing, malformed, not fitting 32 bits, or given twice
    /// with different values; a CR between messages that does not start a CRLF).
    conn_reason reason = conn_reason::none;
};

/// Splits one connection's bytes into messages and keep-alives. The stream thread reads
/// straight into space(), commit()s what it read (also 0 on EAGAIN, which lets an empty
/// framer give its buffer back), then calls next() until it says need_more.
///
/// A keep-alive is recognised from the bytes buffered at a message boundary: a CRLF with
/// nothing after it yet is taken as a pong at once (a pong must not wait for bytes that never
/// come), so a ping split by the network after its first CRLF reads as two pongs.
class stream_framer {
public:
    explicit stream_framer(framer_buffers& buffers) noexcept : buffers_(&buffers) {}
    ~stream_framer() { clear(); }
    stream_framer(stream_framer&& other) noexcept;
    stream_framer& operator=(stream_framer&& other) noexcept;
    stream_framer(const stream_framer&) = delete;
    stream_framer& operator=(const stream_framer&) = delete;

    /// Room to read into, at least one byte once next() has said need_more; takes a buffer
    /// from the free list when none is held, and moves unframed bytes to the buffer's front.
    std::span<char> space();
    /// `n` bytes were written at the start of the last space() (n <= its size).
    void commit(std::size_t n) noexcept;
    /// The next message, keep-alive or error; need_more when nothing complete is buffered,
    /// and then, with nothing buffered at all, the buffer goes back to the free list.
    frame next() noexcept;
    /// Once next() said need_more: bytes of an unfinished message (or keep-alive) are
    /// buffered, so the partial-message timer should run.
    [[nodiscard]] bool partial() const noexcept { return end_ > begin_; }
    /// Drops everything buffered and any error, and gives the buffer back (connection closed).
    void clear() noexcept;

private:
    frame fail(conn_reason r) noexcept;
    frame keepalive() noexcept;

    framer_buffers* buffers_;
    char* buffer_ = nullptr;     // from buffers_, or nullptr while nothing is buffered
    std::size_t begin_ = 0;      // first byte not yet framed
    std::size_t end_ = 0;        // one past the last byte read
    std::size_t scanned_ = 0;    // bytes after begin_ already searched for the header end
    std::size_t total_ = 0;      // whole length of the message at begin_ once its headers are in; 0 before
    conn_reason failed_ = conn_reason::none;
};

}  // namespace sbc::streams
