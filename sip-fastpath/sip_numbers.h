// Range-checked decimal numbers of SIP headers (CSeq, Expires, Max-Forwards,
// Content-Length, ports, status codes): overflow is an error, never a wrap.
// Any thread; no heap, no exceptions.
#pragma once

#include <cstdint>
#include <string_view>

#include "sip-fastpath/sip_span.h"

namespace sbc::sip {

/// Parses buf[s] (surrounding linear white space allowed) as a decimal number no larger
/// than max. Returns false on an empty field, a sign, any non-digit or a value above max.
bool parse_uint(std::string_view buf, span s, uint32_t max, uint32_t& out) noexcept;

/// Same, over a plain view.
bool parse_uint(std::string_view text, uint32_t max, uint32_t& out) noexcept;

/// Writes v in decimal at out (at least 10 bytes); returns the number of digits.
std::size_t write_uint(char* out, uint32_t v) noexcept;

}  // namespace sbc::sip
