// What a proxy does with a parsed message: forward it, answer it with a status code, or
// drop it. A pure function shared by the fast path and sbc-sipcheck.
// Any thread; no heap, no exceptions.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "sip-fastpath/sip_message.h"

namespace sbc::sip {

enum class action : uint8_t { forward, respond, drop };

/// Short stable name: "forward", "respond", "drop".
std::string_view action_name(action a) noexcept;

struct verdict {
  action act = action::drop;
  uint16_t code = 0;          // with action::respond
  std::string_view reason;    // reason phrase for the response (static text)
  error cause = error::none;  // the problem behind a respond/drop, for counters
  span unsupported;           // with 420: the first Proxy-Require option not supported
};

/// What the proxy accepts; the defaults route sip and sips only.
struct proxy_policy {
  std::span<const std::string_view> supported_options;  // Proxy-Require values honoured
  bool route_tel = false;  // accept tel: Request-URIs (otherwise 416)
  // The full grammar check (every Via, Contact, Route and Record-Route element, the URIs
  // of From and To) costs about as much as the parse itself. The proxy asks for it on
  // requests that start something (the untrusted entry point) and skips it on responses and
  // in-dialog requests, whose fields it uses are checked by the parse's fast pass.
  bool full_check = true;
};

/// Decides per RFC 3261 section 16.3, in its order: 505 unknown version, 400 malformed
/// (reason names the first problem), 416 unroutable Request-URI scheme, 483 Max-Forwards
/// 0, 420 unknown Proxy-Require option.
///
/// Every request with a readable top Via is answered, so that its sender stops
/// retransmitting (RFC 3261 sections 8.1.3.5 and 8.2): a broken Request-Line gets 400
/// "malformed start line", a missing From, To, Call-ID or CSeq 400 naming it, a third
/// Request-Line part other than SIP/2.0 ("SIP/3.0", "SIP/2", "HTTP/1.1") 505. Dropped, with
/// the problem as cause: requests without a readable top Via, or whose headers were not all
/// indexed (no empty line, too many headers, empty, too large); a broken Request-Line
/// without CSeq (no method to match the answer to); any ACK with a problem (RFC 3261
/// section 17); malformed responses and status codes outside 100-699.
verdict proxy_verdict(const message& m, const proxy_policy& policy = {}) noexcept;

}  // namespace sbc::sip
