// Bounded output cursor over a caller-provided buffer, shared by the editor and the
// response builder. Any thread; no heap, no exceptions.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "sip-fastpath/sip_error.h"
#include "sip-fastpath/sip_numbers.h"

namespace sbc::sip {

/// Outcome of writing a message: its length, or an error (error::no_space when it does
/// not fit; nothing useful is left in the buffer then).
struct write_result {
  error err = error::none;
  uint32_t len = 0;
  [[nodiscard]] bool ok() const noexcept { return err == error::none; }
};

struct writer {
  char* p;
  char* end;
  char* begin;
  bool full = false;

  explicit writer(std::span<char> out) noexcept
      : p(out.data()), end(out.data() + out.size()), begin(out.data()) {}

  void put(std::string_view s) noexcept {
    if (full || static_cast<std::size_t>(end - p) < s.size()) {
      full = true;
      return;
    }
    if (!s.empty()) std::memmove(p, s.data(), s.size());
    p += s.size();
  }
  void put_uint(uint32_t v) noexcept {
    char tmp[10];
    put(std::string_view(tmp, write_uint(tmp, v)));
  }
  [[nodiscard]] write_result result() const noexcept {
    if (full) return {error::no_space, 0};
    return {error::none, static_cast<uint32_t>(p - begin)};
  }
};

}  // namespace sbc::sip
