// Builds a response to a parsed request per RFC 3261 section 8.2.6: all Via values in
// order, From, To (with a tag when the response is not 100), Call-ID, CSeq and
// Content-Length 0, plus an optional Retry-After, Unsupported and further header lines.
// Any thread; no heap, no exceptions.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "sip-fastpath/overload_control.h"
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
  std::string_view extra;        // header lines, each ending in CRLF, before Content-Length
  const via_splice* top_via = nullptr;  // RFC 7339 feedback spliced into the top Via element
};

/// Standard reason phrase of a status code ("Service Unavailable"), or by class.
std::string_view default_reason(uint16_t code) noexcept;

/// Writes the response into out and returns its length. Errors: error::no_space,
/// bad_status_code for a code outside 100-699, missing_via without a Via, the request's
/// first_error for a response or a message whose start line could not be read and that
/// lacks either a full header index or a CSeq.
///
/// A malformed request is answered all the same (a 400 stops its retransmissions): its
/// client matches the answer by the top Via branch and the CSeq method (RFC 3261 section
/// 17.1.3), so those are what must be right. What the request lacks is written as a
/// stand-in that parses: From or To as <sip:anonymous@anonymous.invalid> (the anonymous
/// form of RFC 3261 section 8.1.1.3), Call-ID as absent@anonymous.invalid, CSeq as
/// "0 <request method>". A request whose start line could not be read has no method, so
/// without a CSeq it cannot be answered.
write_result build_response(const message& req, const response_spec& spec,
                            std::span<char> out) noexcept;

}  // namespace sbc::sip
