// SDP parse and rewrite for media anchoring (see sdp.h): one pass over the lines to find the
// tokens we replace, one pass to copy the body with them replaced. Any thread; no heap.
#include "rtp/sdp.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "common/address.h"

namespace sbc::rtp {

namespace {

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

/// Reads a decimal number of at most `max_digits` at s[pos]; advances pos.
bool read_uint(std::string_view s, std::size_t& pos, uint32_t& v, unsigned max_digits = 10) noexcept
{
    const std::size_t start = pos;
    uint64_t x = 0;
    while (pos < s.size() && is_digit(s[pos]) && pos - start < max_digits) x = x * 10 + static_cast<uint64_t>(s[pos++] - '0');
    if (pos == start || x > 0xffffffffu) return false;
    v = static_cast<uint32_t>(x);
    return true;
}

/// The next space-separated token of `line` from pos (spans relative to the body via base).
sdp_span token(std::string_view line, std::size_t& pos, uint32_t base) noexcept
{
    while (pos < line.size() && line[pos] == ' ') ++pos;
    const std::size_t start = pos;
    while (pos < line.size() && line[pos] != ' ') ++pos;
    return {static_cast<uint32_t>(base + start), static_cast<uint32_t>(pos - start)};
}

/// "IN IP4 <addr>" (the value of c= or the tail of a=rtcp): the address token and whether it
/// is IPv4; false when the line is not of that shape.
bool connection(std::string_view body, std::string_view v, uint32_t base, sdp_span& addr, uint32_t& ip, bool& ipv4,
                bool& ipv6) noexcept
{
    std::size_t pos = 0;
    const sdp_span net = token(v, pos, base);
    const sdp_span type = token(v, pos, base);
    sdp_span a = token(v, pos, base);
    if (net.in(body) != "IN" || a.empty()) return false;
    // Multicast "addr/ttl": only the address part is ours to replace (and we never anchor it).
    const std::string_view at = a.in(body);
    const std::size_t slash = at.find('/');
    if (slash != std::string_view::npos) a.len = static_cast<uint32_t>(slash);
    if (type.in(body) == "IP6") {
        ipv6 = true;
        ipv4 = false;
        addr = a;
        return true;
    }
    if (type.in(body) != "IP4") return false;
    const std::optional<ip_address> parsed = parse_ipv4(a.in(body));
    ipv4 = parsed.has_value();
    if (ipv4) ip = parsed->v4_host();
    addr = a;
    return ipv4;
}

uint32_t static_clock(uint32_t pt) noexcept
{
    // RFC 3551 table 4/5 for the static payload types that are not 8000 Hz.
    switch (pt) {
    case 6: return 16000;   // DVI4/16000
    case 10: case 11: return 44100;  // L16
    case 14: case 25: case 26: case 28: case 31: case 32: case 33: case 34: return 90000;  // MPA, video
    case 16: return 11025;
    case 17: return 22050;
    default: return 8000;
    }
}

thread_local uint64_t sdp_parses = 0;

}  // namespace

uint64_t sdp_parse_count() noexcept { return sdp_parses; }

namespace {

/// An m-line's value `v` (at `vbase` in `body`) into `m`: its port (and its token, for the
/// rewrite), whether it is RTP, and the clock of its first format when that is static;
/// `first_pt` gets that format (0xffffffff when it is not a number). False when malformed.
bool read_media_line(std::string_view body, std::string_view v, uint32_t vbase, sdp_media& m,
                     uint32_t& first_pt) noexcept
{
    first_pt = 0xffffffff;
    std::size_t p = 0;
    const sdp_span media = token(v, p, vbase);
    if (media.empty()) return false;
    while (p < v.size() && v[p] == ' ') ++p;
    const std::size_t port_start = p;
    uint32_t port;
    if (!read_uint(v, p, port, 5) || port > 65535) return false;
    m.port = static_cast<uint16_t>(port);
    m.port_tok = {static_cast<uint32_t>(vbase + port_start), static_cast<uint32_t>(p - port_start)};
    if (p < v.size() && v[p] == '/') {  // "port/count"
        ++p;
        uint32_t count;
        if (!read_uint(v, p, count, 5)) return false;
    }
    const sdp_span proto = token(v, p, vbase);
    m.rtp = proto.in(body).substr(0, 4) == "RTP/" || proto.in(body).substr(0, 8) == "UDP/TLS/";
    const sdp_span fmt = token(v, p, vbase);
    std::size_t fp = 0;
    uint32_t pt;
    const std::string_view ft = fmt.in(body);
    if (read_uint(ft, fp, pt, 3) && fp == ft.size()) {
        first_pt = pt;
        m.clock_hz = static_clock(pt);
    }
    return true;
}

/// An a-line's value of the current m-line: rtcp-mux, rtcp (port, and address when given),
/// and the rtpmap of its first format (its clock). False when an rtcp port is malformed.
bool read_attribute(std::string_view body, std::string_view v, uint32_t vbase, uint32_t first_pt, sdp_media& m,
                    bool& ipv6) noexcept
{
    if (v == "rtcp-mux") {
        m.rtcp_mux = true;
    } else if (v.substr(0, 5) == "rtcp:") {
        std::size_t p = 5;
        uint32_t port;
        if (!read_uint(v, p, port, 5) || port > 65535) return false;
        m.rtcp_port = static_cast<uint16_t>(port);
        m.rtcp_port_tok = {vbase + 5, static_cast<uint32_t>(p - 5)};
        if (p < v.size()) {
            uint32_t ip = 0;
            bool ipv4 = false;
            sdp_span addr;
            if (connection(body, v.substr(p), static_cast<uint32_t>(vbase + p), addr, ip, ipv4, ipv6)) {
                m.rtcp_addr = addr;
                m.rtcp_ip = ipv4 ? ip : 0;
            }
        }
    } else if (v.substr(0, 7) == "rtpmap:" && first_pt != 0xffffffff) {
        std::size_t p = 7;
        uint32_t pt;
        if (!read_uint(v, p, pt, 3) || pt != first_pt) return true;
        const std::size_t slash = v.find('/', p);
        if (slash == std::string_view::npos) return true;
        std::size_t q = slash + 1;
        uint32_t hz;
        if (read_uint(v, q, hz, 7) && hz != 0) m.clock_hz = hz;
    }
    return true;
}

/// o=<username> <sess-id> <sess-version> IN <IP4|IP6> <address>: the span of the address
/// type and the address, left empty for any other shape (the line is then kept as it is).
void origin(std::string_view body, std::string_view v, uint32_t vbase, sdp_span& at) noexcept
{
    std::size_t pos = 0;
    for (int i = 0; i < 3; ++i)
        if (token(v, pos, vbase).empty()) return;
    const sdp_span net = token(v, pos, vbase);
    const sdp_span type = token(v, pos, vbase);
    const sdp_span addr = token(v, pos, vbase);
    if (net.in(body) != "IN" || (type.in(body) != "IP4" && type.in(body) != "IP6") || addr.empty()) return;
    at = {type.off, addr.off + addr.len - type.off};
}

}  // namespace

bool parse_sdp(std::string_view body, sdp& out) noexcept
{
    ++sdp_parses;
    out = sdp{};
    if (body.size() < 4 || body.substr(0, 2) != "v=") return false;
    sdp_media* cur = nullptr;
    uint32_t first_pt = 0xffffffff;  // of the current m-line
    std::size_t pos = 0;
    while (pos < body.size()) {
        std::size_t end = body.find('\n', pos);
        const std::size_t next = end == std::string_view::npos ? body.size() : end + 1;
        if (end == std::string_view::npos) end = body.size();
        std::size_t stop = end;
        if (stop > pos && body[stop - 1] == '\r') --stop;
        const std::string_view line = body.substr(pos, stop - pos);
        const auto base = static_cast<uint32_t>(pos);
        pos = next;
        if (line.empty()) continue;  // a trailing empty line is tolerated
        if (line.size() < 2 || line[1] != '=') return false;
        const std::string_view v = line.substr(2);
        const uint32_t vbase = base + 2;
        switch (line[0]) {
        case 'o':
            if (out.n_media == 0 && out.o_addr.empty()) origin(body, v, vbase, out.o_addr);
            break;
        case 'm':
            if (out.n_media >= max_sdp_media) {
                ++out.extra_media;
                cur = nullptr;
                continue;
            }
            cur = &out.media[out.n_media++];
            if (!read_media_line(body, v, vbase, *cur, first_pt)) return false;
            break;
        case 'c': {
            sdp_span addr;
            uint32_t ip = 0;
            bool ipv4 = false;
            if (!connection(body, v, vbase, addr, ip, ipv4, out.ipv6) && !out.ipv6) return false;
            if (cur != nullptr) {
                cur->c_addr = addr;
                cur->c_ip = ip;
                cur->c_ipv4 = ipv4;
            } else if (out.n_media == 0 && out.extra_media == 0) {
                out.c_addr = addr;
                out.c_ip = ip;
                out.c_ipv4 = ipv4;
            }
            break;
        }
        case 'a':
            if (cur != nullptr && !read_attribute(body, v, vbase, first_pt, *cur, out.ipv6)) return false;
            break;
        default: break;
        }
    }
    return true;
}

std::size_t rewrite_sdp(std::string_view body, const sdp& parsed, const sdp_rewrite& r, std::span<char> out) noexcept
{
    struct edit {
        sdp_span at;
        std::string_view text;  ///< the replacement, or empty for a port number
        uint16_t port = 0;
    };
    // At most: o=, session c=, and per m-line its port, c=, a=rtcp port and address.
    std::array<edit, 2 + max_sdp_media * 4> edits{};
    unsigned n = 0;
    auto add_text = [&](sdp_span at, std::string_view text) {
        if (!at.empty()) edits[n++] = edit{at, text, 0};
    };
    auto add_port = [&](sdp_span at, uint16_t port) {
        if (!at.empty()) edits[n++] = edit{at, {}, port};
    };
    char origin[4 + 46];  // "IP4 " and the address
    if (!parsed.o_addr.empty() && !r.address.empty() && r.address.size() <= sizeof origin - 4) {
        std::memcpy(origin, "IP4 ", 4);
        std::memcpy(origin + 4, r.address.data(), r.address.size());
        add_text(parsed.o_addr, {origin, 4 + r.address.size()});
    }
    if (parsed.c_ipv4) add_text(parsed.c_addr, r.address);
    for (unsigned i = 0; i < parsed.n_media; ++i) {
        const sdp_media& m = parsed.media[i];
        const uint16_t port = r.port[i];
        if (port == 0 || m.port == 0) continue;
        add_port(m.port_tok, port);
        if (m.c_ipv4) add_text(m.c_addr, r.address);
        if (!m.rtcp_port_tok.empty()) add_port(m.rtcp_port_tok, m.rtcp_mux ? port : static_cast<uint16_t>(port + 1));
        if (!m.rtcp_addr.empty() && m.rtcp_ip != 0) add_text(m.rtcp_addr, r.address);
    }
    std::sort(edits.begin(), edits.begin() + n, [](const edit& a, const edit& b) { return a.at.off < b.at.off; });
    std::size_t w = 0, from = 0;
    auto copy = [&](const char* p, std::size_t len) {
        if (w + len > out.size()) return false;
        std::memcpy(out.data() + w, p, len);
        w += len;
        return true;
    };
    for (unsigned i = 0; i < n; ++i) {
        const edit& e = edits[i];
        if (e.at.off < from) return 0;  // overlapping tokens: never from parse_sdp
        if (!copy(body.data() + from, e.at.off - from)) return 0;
        if (e.text.empty()) {
            char digits[5];
            int k = 0;
            uint16_t v = e.port;
            do {
                digits[4 - k++] = static_cast<char>('0' + v % 10);
                v = static_cast<uint16_t>(v / 10);
            } while (v != 0);
            if (!copy(digits + 5 - k, static_cast<std::size_t>(k))) return 0;
        } else if (!copy(e.text.data(), e.text.size())) {
            return 0;
        }
        from = e.at.off + e.at.len;
    }
    if (!copy(body.data() + from, body.size() - from)) return 0;
    return w;
}

}  // namespace sbc::rtp
