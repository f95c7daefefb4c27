// SDP (RFC 4566) as far as media anchoring needs it: where the connection address, the m=
// ports and the a=rtcp attribute sit in a body (offsets, no copies), what each m-line asks
// for (address, RTP and RTCP ports, rtcp-mux, clock rate), and a rewrite that replaces only
// those tokens and copies every other byte as it was. Any thread; no heap, no exceptions.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace sbc::rtp {

constexpr unsigned max_sdp_media = 8;

/// A token's place in the body: [off, off + len).
struct sdp_span {
    uint32_t off = 0;
    uint32_t len = 0;
    [[nodiscard]] bool empty() const noexcept { return len == 0; }
    [[nodiscard]] std::string_view in(std::string_view s) const noexcept { return s.substr(off, len); }
};

struct sdp_media {
    uint16_t port = 0;          ///< 0: a rejected or disabled stream (left alone)
    sdp_span port_tok;          ///< the port digits of the m= line (before any "/count")
    sdp_span c_addr;            ///< media-level c= address token, empty when none
    uint32_t c_ip = 0;          ///< media-level c= address (host order), 0: none or not IPv4
    bool c_ipv4 = false;        ///< media-level c= present and IN IP4
    sdp_span rtcp_port_tok;     ///< a=rtcp:<port> digits, empty when absent
    sdp_span rtcp_addr;         ///< a=rtcp:<port> IN IP4 <addr> address, empty when absent
    uint16_t rtcp_port = 0;     ///< from a=rtcp, 0 when absent (then RTP port + 1)
    uint32_t rtcp_ip = 0;       ///< from a=rtcp's address, 0 when absent
    bool rtcp_mux = false;      ///< a=rtcp-mux present
    bool rtp = false;           ///< transport is RTP/* (RTP/AVP, RTP/SAVP, ...); others are left alone
    uint32_t clock_hz = 8000;   ///< clock rate of the first payload format

    /// Where this stream's RTP goes: the media-level c=, else the session-level one.
    [[nodiscard]] uint32_t ip(uint32_t session_ip) const noexcept { return c_ipv4 ? c_ip : session_ip; }
};

struct sdp {
    sdp_span o_addr;            ///< o= "<addrtype> <address>" (IN IP4 or IN IP6), empty when none
    sdp_span c_addr;            ///< session-level c= address token
    uint32_t c_ip = 0;
    bool c_ipv4 = false;        ///< session-level c= present and IN IP4
    bool ipv6 = false;          ///< some c= is IN IP6: not anchored (IPv4 only for now)
    std::array<sdp_media, max_sdp_media> media{};
    unsigned n_media = 0;       ///< m-lines seen, at most max_sdp_media kept
    unsigned extra_media = 0;   ///< m-lines past max_sdp_media (the body is then not anchored)
};

/// Parses `body`; false when it is not an SDP body we can anchor (no v= line first, a line
/// that is not "x=...", a bad m= or c= line). Never reads outside body.
bool parse_sdp(std::string_view body, sdp& out) noexcept;
/// How many bodies this thread has parsed with parse_sdp: what a test counts to show that an
/// offer and an answer are each parsed once per call, whatever its retries.
uint64_t sdp_parse_count() noexcept;

/// What to write instead: our address (dotted quad text) and, per m-line, our RTP port
/// (0: leave that m-line's tokens alone). RTCP ports written are RTP port + 1.
struct sdp_rewrite {
    std::string_view address;
    std::array<uint16_t, max_sdp_media> port{};
};

/// Writes `body` with every c= address (session and media level, IPv4), the m= ports and the
/// a=rtcp port and address replaced per `r`, and the o= line's address type and address made
/// ours ("IP4 <address>": the leg sees the SBC as the session's originator, never the other
/// side's address); every other byte is copied unchanged. Returns the length written, or 0
/// when it does not fit in out.
std::size_t rewrite_sdp(std::string_view body, const sdp& parsed, const sdp_rewrite& r, std::span<char> out) noexcept;

}  // namespace sbc::rtp
