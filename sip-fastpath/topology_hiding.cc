// Topology hiding's encodings (see topology_hiding.h). Any thread; process_hiding_key on the
// control core only.
#include "sip-fastpath/topology_hiding.h"

#include <array>
#include <cstring>
#include <random>

#include "sip-fastpath/proxy_ids.h"

namespace sbc::sip {

namespace {

constexpr char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// base64url digit values by byte, -1 for a byte that is none (one load per digit: decoding
/// runs on every response and in-dialog request of a hidden call).
constexpr std::array<int8_t, 256> b64_values = [] {
    std::array<int8_t, 256> v{};
    v.fill(-1);
    for (int i = 0; i < 64; ++i) v[static_cast<uint8_t>(b64[i])] = static_cast<int8_t>(i);
    return v;
}();

int b64_value(char c) noexcept
{
    return b64_values[static_cast<uint8_t>(c)];
}

constexpr uint64_t mix(uint64_t z) noexcept
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/// The integrity tag of `plain` under `key`: a keyed hash taken a word at a time (every response
/// and in-dialog request of a hidden call decodes, and every message of one encodes: a byte-wise
/// hash was a third of their cost).
uint32_t tag_of(std::string_view plain, uint64_t key) noexcept
{
    const char* p = plain.data();
    const std::size_t n = plain.size();
    uint64_t h = key ^ (uint64_t{n} * 0x9E3779B97F4A7C15ull);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        std::memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    if (i < n) {
        uint64_t w = 0;
        std::memcpy(&w, p + i, n - i);
        h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    }
    return static_cast<uint32_t>(mix(h) >> 16);
}

/// XORs `n` bytes at `p` with the keystream of (key, tag).
void xor_stream(char* p, std::size_t n, uint64_t key, uint32_t tag) noexcept
{
    uint64_t state = key ^ (uint64_t{tag} * 0x9E3779B97F4A7C15ull);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {  // whole words (byte order as the tail's: little-endian x86)
        state += 0x9E3779B97F4A7C15ull;
        uint64_t w;
        std::memcpy(&w, p + i, 8);
        w ^= mix(state);
        std::memcpy(p + i, &w, 8);
    }
    if (i < n) {
        state += 0x9E3779B97F4A7C15ull;
        uint64_t k = mix(state);
        for (; i < n; ++i, k >>= 8) p[i] = static_cast<char>(p[i] ^ static_cast<char>(k));
    }
}

/// Appends to a bounded buffer; `ok` turns false when something does not fit.
struct sink {
    std::span<char> out;
    std::size_t n = 0;
    bool ok = true;
    void put(std::string_view s) noexcept
    {
        if (!ok || n + s.size() > out.size()) {
            ok = false;
            return;
        }
        std::memcpy(out.data() + n, s.data(), s.size());
        n += s.size();
    }
    [[nodiscard]] std::size_t done() const noexcept { return ok ? n : 0; }
};

/// Header `id`'s values joined with `sep`.
std::size_t join_headers(const message& m, header_id id, std::string_view sep, std::span<char> out) noexcept
{
    sink s{out};
    for (unsigned i = 0; i < m.header_count; ++i) {
        if (m.headers[i].id != id) continue;
        if (s.n != 0) s.put(sep);
        s.put(m.text(m.headers[i].value));
    }
    return s.done();
}

}  // namespace

uint64_t process_hiding_key()
{
    static const uint64_t key = [] {
        std::random_device rd;
        const uint64_t k = (uint64_t{rd()} << 32) ^ rd();
        return k != 0 ? k : 0x5bd1e9955bd1e995ull;
    }();
    return key;
}

std::size_t th_encode(std::span<char> out, std::string_view plain, uint64_t key) noexcept
{
    if (plain.size() > th_max_plain || out.size() < th_encoded_size(plain.size())) return 0;
    char buf[4 + th_max_plain];
    const uint32_t tag = tag_of(plain, key);
    for (int i = 0; i < 4; ++i) buf[i] = static_cast<char>(tag >> (24 - 8 * i));
    std::memcpy(buf + 4, plain.data(), plain.size());
    xor_stream(buf + 4, plain.size(), key, tag);
    const std::size_t n = plain.size() + 4;
    std::size_t w = 0;
    std::size_t i = 0;
    for (; i + 3 <= n; i += 3) {  // whole groups of three bytes: four digits
        const uint32_t v = (uint32_t{static_cast<uint8_t>(buf[i])} << 16) |
                           (uint32_t{static_cast<uint8_t>(buf[i + 1])} << 8) | static_cast<uint8_t>(buf[i + 2]);
        out[w] = b64[(v >> 18) & 63];
        out[w + 1] = b64[(v >> 12) & 63];
        out[w + 2] = b64[(v >> 6) & 63];
        out[w + 3] = b64[v & 63];
        w += 4;
    }
    for (; i < n; i += 3) {  // one or two bytes left: two or three digits
        const uint32_t b0 = static_cast<uint8_t>(buf[i]);
        const uint32_t b1 = i + 1 < n ? static_cast<uint8_t>(buf[i + 1]) : 0;
        const uint32_t b2 = i + 2 < n ? static_cast<uint8_t>(buf[i + 2]) : 0;
        const uint32_t v = (b0 << 16) | (b1 << 8) | b2;
        out[w++] = b64[(v >> 18) & 63];
        out[w++] = b64[(v >> 12) & 63];
        if (i + 1 < n) out[w++] = b64[(v >> 6) & 63];
        if (i + 2 < n) out[w++] = b64[v & 63];
    }
    return w;
}

int th_decode(std::string_view enc, uint64_t key, std::span<char> out) noexcept
{
    if (enc.size() % 4 == 1 || enc.size() < 6) return -1;
    const std::size_t n = enc.size() / 4 * 3 + (enc.size() % 4 == 0 ? 0 : enc.size() % 4 - 1);
    if (n < 4 || n - 4 > out.size() || n - 4 > th_max_plain) return -1;
    char buf[4 + th_max_plain];
    std::size_t w = 0;
    std::size_t i = 0;
    for (; i + 4 <= enc.size(); i += 4) {  // whole groups of four digits: three bytes
        const int d0 = b64_value(enc[i]), d1 = b64_value(enc[i + 1]);
        const int d2 = b64_value(enc[i + 2]), d3 = b64_value(enc[i + 3]);
        if ((d0 | d1 | d2 | d3) < 0) return -1;
        const auto v = static_cast<uint32_t>((d0 << 18) | (d1 << 12) | (d2 << 6) | d3);
        buf[w++] = static_cast<char>(v >> 16);
        buf[w++] = static_cast<char>(v >> 8);
        buf[w++] = static_cast<char>(v);
    }
    if (i < enc.size()) {  // two or three digits left: one or two bytes
        uint32_t v = 0;
        const std::size_t k = enc.size() - i;
        for (std::size_t j = 0; j < 4; ++j) {
            const int d = j < k ? b64_value(enc[i + j]) : 0;
            if (d < 0) return -1;
            v = (v << 6) | static_cast<uint32_t>(d);
        }
        for (std::size_t j = 0; j + 1 < k; ++j) buf[w++] = static_cast<char>(v >> (16 - 8 * j));
    }
    uint32_t tag = 0;
    for (int i = 0; i < 4; ++i) tag = (tag << 8) | static_cast<uint8_t>(buf[i]);
    xor_stream(buf + 4, n - 4, key, tag);
    const std::string_view plain(buf + 4, n - 4);
    if (tag_of(plain, key) != tag) return -1;
    std::memcpy(out.data(), plain.data(), plain.size());
    return static_cast<int>(plain.size());
}

std::size_t join_vias(const message& m, std::span<char> out) noexcept
{
    return join_headers(m, header_id::via, "\r\nVia: ", out);
}

std::size_t join_record_routes(const message& m, std::span<char> out) noexcept
{
    return join_headers(m, header_id::record_route, ", ", out);
}

std::size_t write_hidden_via(std::span<char> out, const endpoint& local, std::string_view branch,
                             const endpoint& src, const message& m, uint64_t key, bool advertise_oc) noexcept
{
    // The sender as sbc-src writes it, taken from write_via's own text (one format).
    char plain[th_max_plain];
    char tmp[max_via_size];
    const std::size_t tl = write_via(tmp, local, "x", src);
    const std::string_view t(tmp, tl);
    const std::size_t at = t.find(";sbc-src=");
    if (tl == 0 || at == std::string_view::npos) return 0;
    const std::string_view src_text = t.substr(at + 9);
    std::memcpy(plain, src_text.data(), src_text.size());
    plain[src_text.size()] = '\n';
    const std::size_t head = src_text.size() + 1;
    const std::size_t vl = join_vias(m, std::span<char>(plain + head, sizeof plain - head));
    if (vl == 0) return 0;
    sink s{out};
    const std::string_view ours(tmp, at);  // "SIP/2.0/UDP host:port;branch=x"
    s.put(ours.substr(0, ours.size() - 1));
    s.put(branch);
    s.put(";");
    s.put(th_param);
    s.put("=");
    if (!s.ok) return 0;
    const std::size_t el = th_encode(out.subspan(s.n), {plain, head + vl}, key);
    if (el == 0) return 0;
    s.n += el;
    if (advertise_oc) s.put(";oc;oc-algo=\"loss\"");
    return s.done();
}

th_found read_hidden_via(const message& m, uint64_t key, std::span<char> buf, hidden_via& out) noexcept
{
    if (!m.has_top_via) return th_found::absent;
    bool found = false;
    const std::string_view enc = param_value(m.text(m.top_via.params), th_param, found);
    if (!found) return th_found::absent;
    const int n = th_decode(enc, key, buf);
    if (n < 0) return th_found::bad;
    const std::string_view plain(buf.data(), static_cast<std::size_t>(n));
    const std::size_t nl = plain.find('\n');
    if (nl == std::string_view::npos || !read_via_source(plain.substr(0, nl), out.src)) return th_found::bad;
    out.vias = plain.substr(nl + 1);
    return out.vias.empty() ? th_found::bad : th_found::ok;
}

bool holds_th(std::string_view text) noexcept
{
    return memmem(text.data(), text.size(), th_param.data(), th_param.size()) != nullptr;
}

std::size_t add_th_param(std::span<char> out, std::string_view uri, std::string_view enc) noexcept
{
    const bool bracketed = !uri.empty() && uri.back() == '>';
    sink s{out};
    s.put(bracketed ? uri.substr(0, uri.size() - 1) : uri);
    s.put(";");
    s.put(th_param);
    s.put("=");
    s.put(enc);
    if (bracketed) s.put(">");
    return s.done();
}

std::size_t write_hidden_contact(std::span<char> out, const endpoint& local, std::string_view host, uint8_t worker,
                                 std::string_view original, uint64_t key) noexcept
{
    // Record-Route's form (host or FQDN, port, transport, ;w=), less ";lr", plus sbc-th.
    char rr[max_record_route_size];
    const std::size_t rl = write_record_route(rr, local, host, worker);
    const std::string_view r(rr, rl);
    const std::size_t lr = r.find(";lr;w=");
    if (rl == 0 || lr == std::string_view::npos) return 0;
    char enc[th_max_encoded];
    const std::size_t el = th_encode(enc, original, key);
    if (el == 0) return 0;
    sink s{out};
    s.put(r.substr(0, lr));
    s.put(r.substr(lr + 3, r.size() - lr - 4));  // ";w=WW"
    s.put(";");
    s.put(th_param);
    s.put("=");
    s.put({enc, el});
    s.put(">");
    return s.done();
}

std::size_t without_via_source(std::span<char> via) noexcept
{
    const std::string_view v(via.data(), via.size());
    const std::size_t at = v.find(";sbc-src=");
    if (at == std::string_view::npos) return via.size();
    std::size_t end = v.find(';', at + 1);
    if (end == std::string_view::npos) end = v.size();
    std::memmove(via.data() + at, via.data() + end, v.size() - end);
    return v.size() - (end - at);
}

std::string_view contact_uri(const message& m) noexcept
{
    const name_addr* na = first_contact(m);  // parsed once per message
    return na != nullptr ? m.text(na->uri_text) : std::string_view{};
}

bool has_hidden_via(const message& m) noexcept
{
    bool found = false;
    if (m.has_top_via) param_value(m.text(m.top_via.params), th_param, found);
    return found;
}

bool hidden_via_source(const message& m, uint64_t key, endpoint& src) noexcept
{
    char buf[th_max_plain];
    hidden_via hv;
    if (read_hidden_via(m, key, buf, hv) != th_found::ok) return false;
    src = hv.src;
    return true;
}

int hidden_contact_owner(const message& m) noexcept
{
    if (!m.is_request()) return -1;
    const std::string_view params = m.ruri.params.in(m.raw);
    bool found = false;
    param_value(params, th_param, found);
    if (!found) return -1;
    uint64_t w = 0;
    if (!get_hex(param_value(params, "w", found), w) || !found) return -1;
    return static_cast<int>(w);
}

}  // namespace sbc::sip
