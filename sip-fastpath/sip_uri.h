// SIP header value grammar on offsets: URIs (sip, sips, others kept opaque), name-addr and
// addr-spec, Via values, ;parameters and comma-separated value lists. All results are
// spans of the caller's buffer. Any thread; no heap, no exceptions.
#pragma once

#include <cstdint>
#include <string_view>

#include "sip-fastpath/sip_error.h"
#include "sip-fastpath/sip_span.h"

namespace sbc::sip {

enum class uri_scheme : uint8_t { sip, sips, tel, other };
enum class host_kind : uint8_t { none, name, ipv4, ipv6 };

/// A parsed URI. For sip/sips every part is located; for other schemes only the
/// scheme, and the rest (after ':') is in `opaque`.
struct uri {
  uri_scheme scheme = uri_scheme::other;
  host_kind host_type = host_kind::none;
  uint16_t port = 0;  // 0: absent
  span scheme_text;
  span user;      // escapes left as received
  span password;
  span host;      // IPv6 references include the brackets
  span params;    // from the first ';' after the host, up to '?' or the end
  span headers;   // after '?'
  span opaque;    // everything after "scheme:"
};

/// Parses the URI at buf[s]. Returns false when the text is not a URI (no scheme) or a
/// sip/sips URI breaks RFC 3261 section 25 (bad escape, empty or malformed host, port
/// above 65535, forbidden byte).
bool parse_uri(std::string_view buf, span s, uri& out) noexcept;

/// One ;name[=value] parameter.
struct param {
  span name;
  span value;  // quoted values keep their quotes
  bool has_value = false;
};

/// Walks ";a=b;c;d=\"q;x\"" parameter lists (each parameter after a ';').
struct param_iter {
  std::string_view buf;
  uint32_t pos;
  uint32_t end;
  bool list = false;  // a top-level ',' ends the list (header values with several elements)
  bool strict = true;  // false: find names and values without checking their bytes

  param_iter(std::string_view b, span s) noexcept : buf(b), pos(s.off), end(s.end()) {}
  param_iter(std::string_view b, uint32_t p, uint32_t e, bool in_list) noexcept
      : buf(b), pos(p), end(e), list(in_list) {}
  /// Next parameter; false at the end (pos then rests at the end or at the ',').
  /// Sets `bad` on malformed input (missing ';', empty name, unterminated quoted value,
  /// byte outside the grammar) and returns false.
  bool next(param& p, bool& bad) noexcept;
};

/// Finds parameter `lower_name` (lowercase) in a parameter list. Returns true when present.
bool find_param(std::string_view buf, span params, std::string_view lower_name,
                param& out) noexcept;

/// Splits a header value at top-level commas (not inside quotes or <>), trimming each
/// element. Empty elements are skipped.
struct value_iter {
  std::string_view buf;
  uint32_t pos;
  uint32_t end;

  value_iter(std::string_view b, span s) noexcept : buf(b), pos(s.off), end(s.end()) {}
  /// Next element; false at the end. On unbalanced quotes or angle brackets sets err and
  /// returns false.
  bool next(span& out, error& err) noexcept;
};

/// name-addr or addr-spec followed by header parameters (From, To, Contact, Route...).
struct name_addr {
  span display;   // display name (quoted strings keep their quotes); empty when absent
  span uri_text;  // the URI without angle brackets
  span params;    // header parameters, starting at ';', possibly empty
  span tag;       // value of ;tag=, empty when absent
  bool angle = false;
  bool has_tag = false;
};

/// Parses one element of a name-addr header. Returns error::none, unbalanced_quotes,
/// unbalanced_angle, or `bad` for any other defect (bad URI, stray bytes, bad params).
error parse_name_addr(std::string_view buf, span value, name_addr& out, error bad) noexcept;

/// List form: parses the element starting at `pos`, stopping before a top-level ',' or
/// at `end`; `next` gets the offset where it stopped.
/// With strict false (the parser's fast pass) the URI is only located and parameter bytes
/// are not checked; check_message() does the full check. With strict, *uri_out (when given)
/// gets the URI as parsed.
error parse_name_addr_at(std::string_view buf, uint32_t pos, uint32_t end, name_addr& out,
                         error bad, uint32_t& next, bool strict = true,
                         uri* uri_out = nullptr) noexcept;

/// One Via element.
struct via {
  span protocol;   // "SIP/2.0/UDP" as received (may contain LWS around '/')
  span transport;  // "UDP"
  span host;       // IPv6 references include the brackets
  uint16_t port = 0;
  span params;     // from ';', possibly empty
  span branch;
  span received;
  span rport;      // value of rport (empty when given without value)
  span maddr;
  bool has_branch = false;
  bool has_rport = false;
  // Set also when the element is refused: sent-protocol and sent-by were read (a request
  // can still be answered, RFC 4475 3.1.2), and whether the version was not 2.0.
  bool sent_by = false;
  bool other_version = false;
};

/// Parses one Via element. Returns false when malformed (not SIP/2.0, missing
/// host, port out of range, bad params); `sent_by` and `other_version` say how far it got.
bool parse_via(std::string_view buf, span value, via& out) noexcept;

/// List form of parse_via: stops before a top-level ',' or at `end`, offset in `next`.
/// With strict false (the parser's fast pass) hosts and parameter bytes are not checked.
bool parse_via_at(std::string_view buf, uint32_t pos, uint32_t end, via& out,
                  uint32_t& next, bool strict = true) noexcept;

/// Checks that buf[s] is a quoted-string starting at s.off with its closing quote at or
/// before s.end(); returns the offset just past the closing quote, or 0 when unterminated
/// or when a `\` escapes CR or LF (a quoted-pair may escape any other octet, NUL included).
uint32_t skip_quoted(std::string_view buf, uint32_t pos, uint32_t end) noexcept;

/// Host syntax: hostname, IPv4 or [IPv6]. Sets kind; false when invalid.
bool check_host(std::string_view host, host_kind& kind) noexcept;

}  // namespace sbc::sip
