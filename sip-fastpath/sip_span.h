// Offsets into a received SIP message, and the byte classes and helpers that the
// parser, URI parser and editor share. Any thread; no heap, no exceptions.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sbc::sip {

/// Largest message the engine handles; offsets are 16-bit (a UDP datagram fits).
inline constexpr std::size_t max_message_size = 65535;

/// A byte range of the message buffer: offset and length, never a copy.
struct span {
  uint16_t off = 0;
  uint16_t len = 0;

  [[nodiscard]] constexpr bool empty() const noexcept { return len == 0; }
  [[nodiscard]] constexpr uint32_t end() const noexcept { return uint32_t{off} + len; }
  [[nodiscard]] constexpr std::string_view in(std::string_view buf) const noexcept {
    return buf.substr(off, len);
  }
  friend constexpr bool operator==(span, span) = default;
};

constexpr span make_span(std::size_t begin, std::size_t end) noexcept {
  return span{static_cast<uint16_t>(begin), static_cast<uint16_t>(end - begin)};
}

namespace chars {

enum : uint16_t {
  token = 1,     // RFC 3261 token
  ws = 2,        // SP HT CR LF (LWS once folded)
  word = 4,      // RFC 3261 word (Call-ID)
  digit = 8,
  uric = 16,     // bytes allowed in a URI (unreserved, reserved, escape)
  hexdig = 32,
  user = 64,     // URI user part: unreserved, '%', user-unreserved "&=+$,;?/"
  password = 128,  // unreserved, '%', "&=+$,"
  uparam = 256,  // URI parameters incl. separators: unreserved, '%', "[]/:&+$;="
  uheader = 512,   // URI headers: unreserved, '%', "[]/?:+$&="
  pvalue = 1024,   // header parameter names and unquoted values: token plus "[]:/&$"
  hostc = 2048,    // hostname, IPv4, IPv6 reference bytes: alnum "-._:[]"
  pdelim = 4096,   // ends a parameter name or value in the parser's fast pass
  hostend = 8192,  // ends a URI's host: ':' (port), ';' (parameters), '?' (headers)
  plain = 16384,   // taken as they are by every part of a URI: alnum "-_.=" (skip_plain)
};

constexpr bool in(char c, std::string_view set) {
  for (char x : set)
    if (x == c) return true;
  return false;
}

constexpr std::array<uint16_t, 256> make_table() {
  std::array<uint16_t, 256> t{};
  for (int i = 0; i < 256; ++i) {
    const char c = static_cast<char>(i);
    uint16_t v = 0;
    const bool alnum = (i >= 'a' && i <= 'z') || (i >= 'A' && i <= 'Z') || (i >= '0' && i <= '9');
    const bool unreserved = alnum || in(c, "-_.!~*'()");
    if (alnum || in(c, "-.!%*_+`'~")) v |= token;
    if (in(c, " \t\r\n")) v |= ws;
    if (alnum || in(c, "-.!%*_+`'~()<>:\\\"/[]?{}")) v |= word;
    if (i >= '0' && i <= '9') v |= digit;
    if (alnum || in(c, "-_.!~*'()%;/?:@&=+$,[]")) v |= uric;
    if ((i >= '0' && i <= '9') || (i >= 'a' && i <= 'f') || (i >= 'A' && i <= 'F')) v |= hexdig;
    if (unreserved || in(c, "%&=+$,;?/")) v |= user;
    if (unreserved || in(c, "%&=+$,")) v |= password;
    if (unreserved || in(c, "%[]/:&+$;=")) v |= uparam;
    if (unreserved || in(c, "%[]/?:+$&=")) v |= uheader;
    if ((v & token) != 0 || in(c, "[]:/&$")) v |= pvalue;
    if (alnum || in(c, "-._:[]")) v |= hostc;
    if (in(c, " \t\r\n;,=\"<>")) v |= pdelim;
    if (in(c, ":;?")) v |= hostend;
    if (alnum || in(c, "-_.=")) v |= plain;
    t[static_cast<std::size_t>(i)] = v;
  }
  return t;
}

inline constexpr std::array<uint16_t, 256> table = make_table();

constexpr bool is(char c, uint16_t cls) noexcept {
  return (table[static_cast<unsigned char>(c)] & cls) != 0;
}

}  // namespace chars

/// Offset of the first byte c in d[pos, end), or end. Inline and 16 bytes at a time: header
/// lines are short, and a libc memchr call costs more than the scan itself. Loads may read
/// up to `limit` (>= end; the end of the whole buffer), never past it, so that a short
/// range inside a large buffer needs no byte-by-byte tail.
inline uint32_t find_byte(const char* d, uint32_t pos, uint32_t end, char c,
                          uint32_t limit = 0) noexcept {
  if (limit < end) limit = end;
#if defined(__SSE2__)
  const __m128i needle = _mm_set1_epi8(c);
  while (pos < end && pos + 16 <= limit) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + pos));
    const int mask = _mm_movemask_epi8(_mm_cmpeq_epi8(v, needle));
    if (mask != 0) {
      const uint32_t at = pos + static_cast<uint32_t>(__builtin_ctz(static_cast<unsigned>(mask)));
      return at < end ? at : end;
    }
    pos += 16;
  }
#endif
  while (pos < end && d[pos] != c) ++pos;
  return pos < end ? pos : end;
}

/// Offset of the first byte in d[pos, end) that is not a letter, a digit, '-', '_', '.' or
/// '=' (chars::plain: bytes every part of a URI takes as they are), or end; 16 bytes at a
/// time, loads up to `limit` like find_byte. Long runs of them are the rule in our own URIs (topology hiding's
/// base64), which a byte-wise check would cost several instructions a byte.
inline uint32_t skip_plain(const char* d, uint32_t pos, uint32_t end, uint32_t limit = 0) noexcept {
  if (limit < end) limit = end;
#if defined(__SSE2__)
  // v - lo <= hi - lo, unsigned: min_epu8(t, k) == t.
  const auto in_range = [](__m128i v, char lo, char hi) {
    const __m128i t = _mm_sub_epi8(v, _mm_set1_epi8(lo));
    return _mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8(static_cast<char>(hi - lo))), t);
  };
  while (pos < end && pos + 16 <= limit) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + pos));
    const __m128i plain = _mm_or_si128(
        _mm_or_si128(in_range(_mm_or_si128(v, _mm_set1_epi8(0x20)), 'a', 'z'), in_range(v, '0', '9')),
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('-')), _mm_cmpeq_epi8(v, _mm_set1_epi8('_'))),
                     _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('.')), _mm_cmpeq_epi8(v, _mm_set1_epi8('=')))));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(plain)) ^ 0xffffU;
    if (mask != 0) {
      const uint32_t at = pos + static_cast<uint32_t>(__builtin_ctz(mask));
      return at < end ? at : end;
    }
    pos += 16;
  }
#endif
  while (pos < end && chars::is(d[pos], chars::plain)) ++pos;
  return pos < end ? pos : end;
}

/// Offset of the first parameter value delimiter (';' ',' SP HT CR LF, and `extra`) in
/// d[pos, end), or end; 16 bytes at a time, loads up to `limit` like find_byte.
inline uint32_t find_value_end(const char* d, uint32_t pos, uint32_t end, uint32_t limit = 0,
                               char extra = ';') noexcept {
  if (limit < end) limit = end;
#if defined(__SSE2__)
  const __m128i semi = _mm_set1_epi8(';');
  const __m128i comma = _mm_set1_epi8(',');
  const __m128i sp = _mm_set1_epi8(' ');
  const __m128i ht = _mm_set1_epi8('\t');
  const __m128i cr = _mm_set1_epi8('\r');
  const __m128i lf = _mm_set1_epi8('\n');
  const __m128i ex = _mm_set1_epi8(extra);
  while (pos < end && pos + 16 <= limit) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + pos));
    const __m128i hit = _mm_or_si128(
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, semi), _mm_cmpeq_epi8(v, comma)),
                     _mm_or_si128(_mm_cmpeq_epi8(v, sp), _mm_cmpeq_epi8(v, ht))),
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, lf)),
                     _mm_cmpeq_epi8(v, ex)));
    const int mask = _mm_movemask_epi8(hit);
    if (mask != 0) {
      const uint32_t at = pos + static_cast<uint32_t>(__builtin_ctz(static_cast<unsigned>(mask)));
      return at < end ? at : end;
    }
    pos += 16;
  }
#endif
  while (pos < end) {
    const char c = d[pos];
    if (c == ';' || c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == extra)
      break;
    ++pos;
  }
  return pos < end ? pos : end;
}

/// Offset of the first byte that matters to a comma-separated list ('"', '<', '>', ',') in
/// d[pos, end), or end; 16 bytes at a time, loads up to `limit` like find_byte.
inline uint32_t find_list_special(const char* d, uint32_t pos, uint32_t end, uint32_t limit = 0) noexcept {
  if (limit < end) limit = end;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i lt = _mm_set1_epi8('<');
  const __m128i gt = _mm_set1_epi8('>');
  const __m128i comma = _mm_set1_epi8(',');
  while (pos < end && pos + 16 <= limit) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + pos));
    const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, lt)),
                                     _mm_or_si128(_mm_cmpeq_epi8(v, gt), _mm_cmpeq_epi8(v, comma)));
    const int mask = _mm_movemask_epi8(hit);
    if (mask != 0) {
      const uint32_t at = pos + static_cast<uint32_t>(__builtin_ctz(static_cast<unsigned>(mask)));
      return at < end ? at : end;
    }
    pos += 16;
  }
#endif
  while (pos < end) {
    const char c = d[pos];
    if (c == '"' || c == '<' || c == '>' || c == ',') break;
    ++pos;
  }
  return pos < end ? pos : end;
}

/// Case-insensitive equality of a token against a lowercase literal. Valid for token
/// bytes only: OR-ing 0x20 maps no other token byte onto a lowercase letter or '-'.
constexpr bool eq_lower(std::string_view s, std::string_view lower) noexcept {
  if (s.size() != lower.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) | 0x20U) != static_cast<unsigned char>(lower[i]))
      return false;
  return true;
}

/// eq_lower against a literal of at most 8 bytes, as one 8-byte compare: the case bit is
/// folded in only where the literal has a letter, so other bytes must match exactly.
template <std::size_t N>
inline bool ieq_lit(std::string_view s, const char (&lit)[N]) noexcept {
  static_assert(N >= 2 && N - 1 <= 8, "literal of 1 to 8 bytes");
  if (s.size() != N - 1) return false;
  if constexpr (std::endian::native != std::endian::little) {
    return eq_lower(s, std::string_view(lit, N - 1));
  } else {
    uint64_t a = 0;
    uint64_t b = 0;
    uint64_t fold = 0;
    std::memcpy(&a, s.data(), N - 1);
    std::memcpy(&b, lit, N - 1);
    for (std::size_t i = 0; i + 1 < N; ++i)
      if (lit[i] >= 'a' && lit[i] <= 'z') fold |= uint64_t{0x20} << (8 * i);
    return (a | fold) == b;
  }
}

/// General ASCII case-insensitive equality.
constexpr bool eq_nocase(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    unsigned char x = static_cast<unsigned char>(a[i]);
    unsigned char y = static_cast<unsigned char>(b[i]);
    if (x >= 'A' && x <= 'Z') x = static_cast<unsigned char>(x | 0x20U);
    if (y >= 'A' && y <= 'Z') y = static_cast<unsigned char>(y | 0x20U);
    if (x != y) return false;
  }
  return true;
}

/// Span with leading and trailing linear white space (including folds) removed.
constexpr span trim(std::string_view buf, span s) noexcept {
  uint32_t b = s.off;
  uint32_t e = s.end();
  while (b < e && chars::is(buf[b], chars::ws)) ++b;
  while (e > b && chars::is(buf[e - 1], chars::ws)) --e;
  return make_span(b, e);
}

}  // namespace sbc::sip
