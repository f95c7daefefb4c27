// Range-checked decimal numbers of SIP headers. Any thread; no heap, no exceptions.
#include "sip-fastpath/sip_numbers.h"

namespace sbc::sip {

bool parse_uint(std::string_view text, uint32_t max, uint32_t& out) noexcept {
  std::size_t i = 0;
  std::size_t n = text.size();
  while (i < n && chars::is(text[i], chars::ws)) ++i;
  while (n > i && chars::is(text[n - 1], chars::ws)) --n;
  if (i == n) return false;
  uint64_t v = 0;
  for (; i < n; ++i) {
    unsigned d = static_cast<unsigned char>(text[i]) - static_cast<unsigned>('0');
    if (d > 9) return false;
    v = v * 10 + d;
    // Checked per digit so that a long run of digits cannot overflow the 64-bit accumulator.
    if (v > max) return false;
  }
  out = static_cast<uint32_t>(v);
  return true;
}

bool parse_uint(std::string_view buf, span s, uint32_t max, uint32_t& out) noexcept {
  return parse_uint(s.in(buf), max, out);
}

std::size_t write_uint(char* out, uint32_t v) noexcept {
  char tmp[10];
  std::size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  for (std::size_t i = 0; i < n; ++i) out[i] = tmp[n - 1 - i];
  return n;
}

}  // namespace sbc::sip
