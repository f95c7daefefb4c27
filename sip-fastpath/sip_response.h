// Builds a response to a parsed request per RFC 3261 section 8.2.6: all Via values in
// order, From, To (with a tag when the response is not 100), Call-ID, CSeq and
// Content-Length 0, plus an optional Retry-After and Unsupported.
// Any thread; no heap, no exceptions.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "sip-fastpath/sip_message.h"
#include "sip-fastpath/sip_writer.h"

namespace sbc::sip {

struct response_spec {
  uint16_t code = 200;
  std::string_view reason;       // reason phrase; empty: the standard one for code
  std::string_view to_tag;       // added when To has no tag and code > 100
  bool has_retry_after = false;
  uint32_t retry_after = 0;      // seconds
  std::string_view unsupported;  // value of an Unsupported header (with 420)
};

/// Standard reason phrase of a status code ("Service Unavailable"), or by class.
std::string_view default_reason(uint16_t code) noexcept;

/// Writes the response into out and returns its length. Errors: error::no_space,
/// bad_status_code for a code outside 100-699, the request's first_error when it cannot
/// be answered (not a request, or Via/From/To/Call-ID/CSeq missing).
write_result build_response(const message& req, const response_spec& spec,
                            std::span<char> out) noexcept;

}  // namespace sbc::sip
