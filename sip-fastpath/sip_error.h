// SIP parse and validation errors: one list, expanded into the enum, the stable short
// names (counter labels) and the human descriptions (Reason text, sipcheck output).
// Any thread; constant data only.
#pragma once

#include <cstdint>
#include <string_view>

namespace sbc::sip {

// Append only: the short names are counter labels that dashboards depend on.
#define SBC_SIP_ERRORS(_)                                                            \
  _(empty, "empty message")                                                          \
  _(too_large, "message larger than 65535 bytes")                                    \
  _(bad_start_line, "malformed start line")                                          \
  _(bad_method, "malformed method")                                                  \
  _(bad_request_uri, "malformed Request-URI")                                        \
  _(bad_version, "unknown SIP version")                                              \
  _(bad_status_code, "status code outside 100-699")                                  \
  _(bad_header_line, "malformed header line")                                        \
  _(too_many_headers, "too many headers")                                            \
  _(headers_truncated, "headers not terminated by an empty line")                    \
  _(body_truncated, "Content-Length larger than the received body")                  \
  _(bad_content_length, "malformed Content-Length")                                  \
  _(bad_cseq, "malformed CSeq")                                                      \
  _(cseq_method_mismatch, "CSeq method does not match the request method")           \
  _(bad_max_forwards, "malformed Max-Forwards")                                      \
  _(bad_expires, "malformed Expires")                                                \
  _(bad_call_id, "malformed Call-ID")                                                \
  _(bad_from, "malformed From")                                                      \
  _(bad_to, "malformed To")                                                          \
  _(bad_via, "malformed Via")                                                        \
  _(bad_contact, "malformed Contact")                                                \
  _(bad_route, "malformed Route or Record-Route")                                    \
  _(unbalanced_quotes, "unbalanced quotes")                                          \
  _(unbalanced_angle, "unbalanced angle brackets")                                   \
  _(duplicate_call_id, "several Call-ID values")                                     \
  _(duplicate_from, "several From values")                                           \
  _(duplicate_to, "several To values")                                               \
  _(duplicate_cseq, "several CSeq values")                                           \
  _(duplicate_max_forwards, "several Max-Forwards values")                           \
  _(duplicate_content_length, "several Content-Length values")                       \
  _(missing_via, "missing Via")                                                      \
  _(missing_from, "missing From")                                                    \
  _(missing_to, "missing To")                                                        \
  _(missing_call_id, "missing Call-ID")                                              \
  _(missing_cseq, "missing CSeq")                                                    \
  _(no_space, "output buffer too small")

enum class error : uint8_t {
  none = 0,
#define SBC_SIP_ERROR_ENUM(name, text) name,
  SBC_SIP_ERRORS(SBC_SIP_ERROR_ENUM)
#undef SBC_SIP_ERROR_ENUM
      count_,
};

inline constexpr unsigned error_count = static_cast<unsigned>(error::count_);
static_assert(error_count <= 64, "errors are kept in a 64-bit set");

/// Stable short name ("cseq_method_mismatch"), "none" for error::none. Any thread.
std::string_view error_name(error e) noexcept;
/// Human description ("CSeq method does not match the request method"). Any thread.
std::string_view error_text(error e) noexcept;

/// A set of errors; a message may carry several.
struct error_set {
  uint64_t bits = 0;
  constexpr void add(error e) noexcept { bits |= uint64_t{1} << static_cast<unsigned>(e); }
  [[nodiscard]] constexpr bool has(error e) const noexcept {
    return (bits >> static_cast<unsigned>(e)) & 1U;
  }
  [[nodiscard]] constexpr bool empty() const noexcept { return bits == 0; }
  /// Calls f(error) for each member, in enum order.
  template <typename F>
  void for_each(F&& f) const {
    for (uint64_t b = bits; b != 0; b &= b - 1) f(static_cast<error>(__builtin_ctzll(b)));
  }
};

}  // namespace sbc::sip
