// Unit tests of transport/stream_framer.h: SIP messages and RFC 5626 keep-alives split out of
// a byte stream however the reads cut it, the framing errors that close a connection, and the
// message buffers going back to the stream thread's free list. Test thread only.
#include "transport/stream_framer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

using sbc::streams::conn_reason;
using sbc::streams::frame_kind;
using sbc::streams::framer_buffers;
using sbc::streams::stream_framer;

/// One item next() gave, with the message copied out (its view ends at the next call).
struct item {
    frame_kind kind;
    std::string message;
    conn_reason reason;
    bool operator==(const item&) const = default;
};

item message(std::string m) { return {frame_kind::message, std::move(m), conn_reason::none}; }
item ping() { return {frame_kind::ping, "", conn_reason::none}; }
item pong() { return {frame_kind::pong, "", conn_reason::none}; }
item error(conn_reason r) { return {frame_kind::error, "", r}; }

void PrintTo(const item& i, std::ostream* os) {
    *os << "{kind " << static_cast<int>(i.kind) << ", reason " << static_cast<int>(i.reason)
        << ", \"" << i.message << "\"}";
}

/// next() until need_more, or one error.
std::vector<item> drain(stream_framer& f) {
    std::vector<item> out;
    for (;;) {
        const auto fr = f.next();
        if (fr.kind == frame_kind::need_more) return out;
        out.push_back({fr.kind, std::string(fr.message), fr.reason});
        if (fr.kind == frame_kind::error) return out;
    }
}

/// What the stream thread does: read `bytes` into space() `chunk` bytes at most per read,
/// committing and draining after each read.
std::vector<item> feed(stream_framer& f, std::string_view bytes, std::size_t chunk = SIZE_MAX) {
    std::vector<item> out;
    while (!bytes.empty()) {
        const auto room = f.space();
        const std::size_t n = std::min({chunk, room.size(), bytes.size()});
        std::memcpy(room.data(), bytes.data(), n);
        f.commit(n);
        bytes.remove_prefix(n);
        for (auto& i : drain(f)) out.push_back(std::move(i));
        if (!out.empty() && out.back().kind == frame_kind::error) return out;
    }
    return out;
}

/// A request with the given Content-Length header line(s) and body.
std::string request(std::string_view length_lines, std::string_view body, std::string_view call_id = "a84b4c76e66710") {
    std::string m = "INVITE sip:bob@biloxi.example.com SIP/2.0\r\n"
                    "Via: SIP/2.0/TLS client.atlanta.example.com:5061;branch=z9hG4bK74bf9\r\n"
                    "Max-Forwards: 70\r\n"
                    "From: Alice <sips:alice@atlanta.example.com>;tag=9fxced76sl\r\n"
                    "To: Bob <sips:bob@biloxi.example.com>\r\n"
                    "Call-ID: ";
    m += call_id;
    m += "\r\nCSeq: 1 INVITE\r\nContent-Type: application/sdp\r\n";
    m += length_lines;
    m += "\r\n";
    m += body;
    return m;
}

/// A request whose Content-Length matches its body.
std::string request_with_body(std::string_view body, std::string_view call_id = "a84b4c76e66710") {
    return request("Content-Length: " + std::to_string(body.size()) + "\r\n", body, call_id);
}

const std::string sdp = "v=0\r\no=alice 2890844526 2890844526 IN IP4 192.0.2.101\r\ns=-\r\n"
                        "c=IN IP4 192.0.2.101\r\nt=0 0\r\nm=audio 49172 RTP/AVP 0\r\n";

TEST(stream_framer, frames_a_message_with_a_body_split_at_every_point) {
    const std::string m = request_with_body(sdp);
    framer_buffers pool(16384);
    for (std::size_t cut = 1; cut < m.size(); ++cut) {
        stream_framer f(pool);
        EXPECT_TRUE(feed(f, std::string_view(m).substr(0, cut)).empty()) << "cut at " << cut;
        EXPECT_TRUE(f.partial()) << "cut at " << cut;
        EXPECT_EQ(feed(f, std::string_view(m).substr(cut)), std::vector{message(m)}) << "cut at " << cut;
        EXPECT_FALSE(f.partial()) << "cut at " << cut;
    }
}

TEST(stream_framer, frames_messages_fed_one_byte_at_a_time_with_keepalives_between) {
    const std::string a = request_with_body(sdp, "one");
    const std::string b = request_with_body("", "two");
    framer_buffers pool(16384);
    stream_framer f(pool);
    EXPECT_EQ(feed(f, a, 1), std::vector{message(a)});
    EXPECT_EQ(feed(f, "\r\n\r\n"), std::vector{ping()});  // a ping is one 4-byte write
    EXPECT_EQ(feed(f, b + "\r\n", 1), (std::vector{message(b), pong()}));
    EXPECT_FALSE(f.partial());
}

TEST(stream_framer, reads_a_ping_cut_after_its_first_crlf_as_two_pongs) {
    // A CRLF with nothing after it is answered at once: a pong must not wait for more bytes.
    framer_buffers pool(16384);
    stream_framer f(pool);
    EXPECT_EQ(feed(f, "\r\n\r\n", 2), (std::vector{pong(), pong()}));
}

TEST(stream_framer, frames_several_messages_and_keepalives_from_one_read) {
    const std::string a = request_with_body(sdp, "one");
    const std::string b = request_with_body("", "two");
    const std::string c = request_with_body("x", "three");
    framer_buffers pool(16384);
    stream_framer f(pool);
    EXPECT_EQ(feed(f, a + b + "\r\n\r\n" + c + "\r\n"),
              (std::vector{message(a), message(b), ping(), message(c), pong()}));
    EXPECT_FALSE(f.partial());
}

TEST(stream_framer, keeps_framing_a_long_stream_through_a_buffer_far_smaller_than_it) {
    framer_buffers pool(1024);
    std::string stream;
    std::vector<item> expected;
    for (int i = 0; i < 50; ++i) {
        expected.push_back(message(request_with_body(i % 2 ? sdp : "", "call-" + std::to_string(i))));
        stream += expected.back().message;
    }
    ASSERT_GT(stream.size(), 5 * pool.buffer_bytes());
    for (std::size_t chunk : {7u, 100u, 333u, 4096u}) {
        stream_framer f(pool);
        EXPECT_EQ(feed(f, stream, chunk), expected) << "reads of " << chunk;
    }
}

TEST(stream_framer, takes_the_length_of_a_body_that_contains_crlfcrlf_from_content_length) {
    const std::string a = request_with_body("first\r\n\r\nINVITE sip:x SIP/2.0\r\n\r\n", "one");
    const std::string b = request_with_body("\r\n\r\n", "two");
    framer_buffers pool(16384);
    stream_framer f(pool);
    EXPECT_EQ(feed(f, a + b), (std::vector{message(a), message(b)}));
}

TEST(stream_framer, reports_a_ping_and_a_pong_between_messages) {
    framer_buffers pool(16384);
    stream_framer f(pool);
    EXPECT_EQ(feed(f, "\r\n\r\n"), std::vector{ping()});
    EXPECT_EQ(feed(f, "\r\n"), std::vector{pong()});
    EXPECT_FALSE(f.partial());
    EXPECT_EQ(pool.in_use(), 0u);
}

TEST(stream_framer, waits_for_the_last_lf_of_a_ping) {
    framer_buffers pool(16384);
    stream_framer f(pool);
    EXPECT_TRUE(feed(f, "\r\n\r").empty());
    EXPECT_TRUE(f.partial());
    EXPECT_EQ(feed(f, "\n"), std::vector{ping()});
    EXPECT_FALSE(f.partial());
}

TEST(stream_framer, rejects_a_cr_between_messages_that_starts_no_crlf) {
    framer_buffers pool(16384);
    stream_framer f(pool);
    EXPECT_EQ(feed(f, "\rINVITE"), std::vector{error(conn_reason::bad_framing)});
}

TEST(stream_framer, rejects_a_message_without_content_length) {
    framer_buffers pool(16384);
    stream_framer f(pool);
    EXPECT_EQ(feed(f, request("", "")), std::vector{error(conn_reason::bad_framing)});
    EXPECT_EQ(f.next().kind, frame_kind::error);  // and keeps saying so
}

TEST(stream_framer, rejects_malformed_content_length_values) {
    for (const char* value : {"-1", "+5", "abc", "", "5 5", "5, 5", "0x10", "5a", "4294967296",
                              "99999999999999999999999"}) {
        framer_buffers pool(16384);
        stream_framer f(pool);
        const std::string lines = std::string("Content-Length: ") + value + "\r\n";
        EXPECT_EQ(feed(f, request(lines, "hello")), std::vector{error(conn_reason::bad_framing)})
            << "Content-Length: " << value;
    }
}

TEST(stream_framer, rejects_two_different_content_lengths) {
    for (const char* lines : {"Content-Length: 5\r\nContent-Length: 6\r\n", "Content-Length: 5\r\nl: 6\r\n"}) {
        framer_buffers pool(16384);
        stream_framer f(pool);
        EXPECT_EQ(feed(f, request(lines, "hello!")), std::vector{error(conn_reason::bad_framing)}) << lines;
    }
}

TEST(stream_framer, reads_content_length_in_any_case_compact_form_and_lws) {
    for (const char* lines : {"Content-Length:5\r\n", "content-length  :  5  \r\n", "CONTENT-LENGTH:\t5\t\r\n",
                              "l: 5\r\n", "L:5\r\n", "Content-Length:\r\n 5\r\n", "Content-Length: 5\r\nl: 5\r\n",
                              "X-Content-Length: 99\r\nContent-Length: 5\r\nll: 7\r\n"}) {
        framer_buffers pool(16384);
        stream_framer f(pool);
        const std::string m = request(lines, "hello");
        EXPECT_EQ(feed(f, m + "\r\n"), (std::vector{message(m), pong()})) << lines;
    }
}

TEST(stream_framer, accepts_a_message_of_exactly_max_message_bytes) {
    const std::string m = request_with_body(std::string(300, 'x'));
    framer_buffers pool(static_cast<uint32_t>(m.size()));
    stream_framer f(pool);
    EXPECT_EQ(feed(f, m + m, 50), (std::vector{message(m), message(m)}));
}

TEST(stream_framer, rejects_a_body_past_max_message_bytes_as_soon_as_the_headers_are_in) {
    const std::string m = request_with_body(std::string(301, 'x'));
    framer_buffers pool(static_cast<uint32_t>(m.size() - 1));
    stream_framer f(pool);
    const std::size_t headers = m.find("\r\n\r\n") + 4;
    EXPECT_EQ(feed(f, std::string_view(m).substr(0, headers)), std::vector{error(conn_reason::too_big)});
}

TEST(stream_framer, rejects_headers_past_max_message_bytes_before_they_end) {
    framer_buffers pool(512);
    stream_framer f(pool);
    std::string headers = "INVITE sip:bob@biloxi.example.com SIP/2.0\r\n";
    while (headers.size() < 512) headers += "X-Filler: 0123456789abcdef\r\n";
    EXPECT_EQ(feed(f, headers, 64), std::vector{error(conn_reason::too_big)});
}

TEST(stream_framer, leaves_room_to_read_after_a_nearly_full_unfinished_message) {
    framer_buffers pool(512);
    stream_framer f(pool);
    std::string head = "INVITE sip:bob@biloxi.example.com SIP/2.0\r\nX-Filler: ";
    head.resize(511, 'y');
    EXPECT_TRUE(feed(f, head).empty());
    EXPECT_TRUE(f.partial());
    EXPECT_FALSE(f.space().empty());
}

TEST(stream_framer, gives_its_buffer_back_when_nothing_is_buffered) {
    framer_buffers pool(16384);
    stream_framer f(pool);
    const std::string m = request_with_body(sdp);
    feed(f, std::string_view(m).substr(0, 100));
    EXPECT_EQ(pool.in_use(), 1u);  // an unfinished message keeps it
    feed(f, std::string_view(m).substr(100));
    EXPECT_EQ(pool.in_use(), 0u);
    EXPECT_EQ(pool.free_count(), 1u);

    f.space();  // a read that finds nothing (EAGAIN)
    f.commit(0);
    EXPECT_EQ(pool.in_use(), 0u);
    EXPECT_EQ(pool.free_count(), 1u);
}

TEST(stream_framer, reuses_free_buffers_and_keeps_no_more_than_asked) {
    framer_buffers pool(16384, 1);
    stream_framer a(pool);
    stream_framer b(pool);
    const std::string m = request_with_body(sdp);
    feed(a, std::string_view(m).substr(0, 10));
    feed(b, std::string_view(m).substr(0, 10));
    EXPECT_EQ(pool.in_use(), 2u);
    feed(a, std::string_view(m).substr(10));
    feed(b, std::string_view(m).substr(10));
    EXPECT_EQ(pool.in_use(), 0u);
    EXPECT_EQ(pool.free_count(), 1u);
    feed(a, std::string_view(m).substr(0, 10));
    EXPECT_EQ(pool.free_count(), 0u);  // taken from the free list
}

TEST(stream_framer, gives_its_buffer_back_when_cleared_or_destroyed) {
    framer_buffers pool(16384);
    const std::string m = request_with_body(sdp);
    {
        stream_framer f(pool);
        feed(f, std::string_view(m).substr(0, 10));
        stream_framer moved(std::move(f));
        EXPECT_EQ(pool.in_use(), 1u);
        EXPECT_EQ(feed(moved, std::string_view(m).substr(10)), std::vector{message(m)});
        feed(moved, std::string_view(m).substr(0, 10));
        moved.clear();
        EXPECT_EQ(pool.in_use(), 0u);
        EXPECT_FALSE(moved.partial());
        feed(moved, std::string_view(m).substr(0, 10));
    }
    EXPECT_EQ(pool.in_use(), 0u);
}

}  // namespace
