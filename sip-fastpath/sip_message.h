// The parsed form of one SIP message: start line, an index of every header by offsets,
// the decoded values a proxy needs, the body, and every problem found. parse() fills it
// in one pass over the caller's buffer. Any thread; no heap, no exceptions.
#pragma once

#include <cstdint>
#include <string_view>

#include "sip-fastpath/sip_error.h"
#include "sip-fastpath/sip_span.h"
#include "sip-fastpath/sip_uri.h"

namespace sbc::sip {

/// Header lines indexed per message; one more is error::too_many_headers.
inline constexpr std::size_t max_headers = 64;

enum class method : uint8_t {
  unknown, invite, ack, bye, cancel, options, register_, prack, subscribe, notify,
  publish, info, refer, message, update,
};

/// Headers the engine knows by name (long or compact form); the rest are `other`.
enum class header_id : uint8_t {
  other, via, from, to, call_id, cseq, contact, content_length, content_type, max_forwards,
  route, record_route, expires, proxy_require, require, supported, content_encoding, subject,
  event, allow_events, refer_to, referred_by, session_expires, identity, accept_contact,
  reject_contact, request_disposition, retry_after, reason, allow, user_agent, server,
  unsupported,
};

enum class message_kind : uint8_t { invalid, request, response };

/// One header line (a folded header is one line). `value` is trimmed of outer LWS and
/// may contain folds (CRLF + SP/HT): consumers treat them as white space.
struct header {
  span name;
  span value;
  span line;  // the whole header line including its line end
  header_id id = header_id::other;
};

inline constexpr uint8_t no_header = 0xff;

struct message {
  std::string_view raw;  // the buffer parsed; every span points into it
  message_kind kind = message_kind::invalid;
  method req_method = method::unknown;
  uint16_t status = 0;
  span start_line;  // without its line end
  span method_text;
  span request_uri;
  span version;
  span reason;      // reason phrase of a response
  uri ruri;         // parsed Request-URI (requests)

  uint8_t header_count = 0;
  header headers[max_headers];

  // Index into headers[] of the first occurrence, or no_header.
  uint8_t h_via = no_header;
  uint8_t h_from = no_header;
  uint8_t h_to = no_header;
  uint8_t h_call_id = no_header;
  uint8_t h_cseq = no_header;
  uint8_t h_max_forwards = no_header;
  uint8_t h_content_length = no_header;
  uint8_t h_content_type = no_header;
  uint8_t h_proxy_require = no_header;
  uint8_t h_record_route = no_header;
  uint8_t h_route = no_header;
  uint8_t h_contact = no_header;
  uint8_t h_expires = no_header;

  uint32_t cseq = 0;
  method cseq_method = method::unknown;
  span cseq_method_text;
  int16_t max_forwards = -1;  // -1: absent or malformed
  int64_t expires = -1;       // -1: absent or malformed
  uint32_t content_length = 0;
  bool has_content_length = false;

  via top_via;   // first element of the first Via header
  bool has_top_via = false;
  name_addr from;
  name_addr to;

  uint32_t headers_end = 0;  // offset of the first body byte (after the empty line)
  span body;                 // Content-Length bytes; bytes after it are ignored

  error_set errors;
  error first_error = error::none;  // the first problem found, for counters and Reason

  /// A header's value read as one name-addr, and its URI, kept for the several readers of it.
  struct element_memo {
    enum : uint8_t { unknown, absent, name_addr_only, both } state = unknown;
    name_addr na;
    uri u;
  };
  /// The first Contact header's: parsed on first use (first_contact, first_contact_uri), or
  /// by the full check (check_message) as it validates it, once per message, for the several
  /// readers of a call's Contact (the dialog's parties, topology hiding, media's BYEs).
  mutable element_memo contact_;
  /// The first Route header's, when it holds one element: kept by the full check
  /// (first_route), for the in-dialog route walk. parse() resets both.
  mutable element_memo route_;

  [[nodiscard]] bool ok() const noexcept { return errors.empty(); }
  [[nodiscard]] bool is_request() const noexcept { return kind == message_kind::request; }
  [[nodiscard]] bool is_response() const noexcept { return kind == message_kind::response; }
  [[nodiscard]] std::string_view text(span s) const noexcept { return s.in(raw); }
  [[nodiscard]] const header* find(header_id id) const noexcept {
    for (unsigned i = 0; i < header_count; ++i)
      if (headers[i].id == id) return &headers[i];
    return nullptr;
  }
  [[nodiscard]] std::string_view call_id() const noexcept {
    return h_call_id == no_header ? std::string_view{} : text(headers[h_call_id].value);
  }
};

/// Parses one SIP message (one UDP datagram's payload) into `out`, which must stay
/// alongside `buf` (it holds offsets into it). Never reads outside buf, never allocates,
/// never throws. Returns out.first_error (error::none when the message is valid).
///
/// Structural errors (empty, too_large, headers_truncated, too_many_headers, and
/// bad_start_line on a Status-Line) stop the parse. A broken Request-Line (bad_start_line:
/// kind stays invalid, no method or Request-URI) and a line that is not a header
/// (bad_header_line: skipped) do not, so that the request can still be answered 400; every
/// other problem is recorded in out.errors and parsing continues so that all problems can
/// be reported.
error parse(std::string_view buf, message& out) noexcept;

/// Where the lines of a rewritten message came from (header and number rules write a new
/// text from a parsed one, sip_rules.cc): whether the start line is the original's, byte for
/// byte, and for each header line of the new text the original header it copies byte for
/// byte and how far it moved, or no_header for a line written anew.
struct line_origin {
  uint8_t from;
  int32_t delta;  // offset in the new text minus offset in the original
};
struct rewrite_map {
  bool start_line_kept = false;
  uint8_t count = 0;
  line_origin lines[max_headers];  // the first `count` are written (not cleared before)
};

/// parse(buf, out) for `buf`, a rewrite of `orig` as `map` says: what a copied line parsed
/// to in `orig` (the start line with its Request-URI, the top Via, From, To, CSeq) is taken
/// from it, moved, instead of being parsed again. The result is the same as parse's; when
/// `orig` has errors, or a line is not where `map` puts it, that line is parsed as usual.
error parse_rewritten(std::string_view buf, const message& orig, const rewrite_map& map, message& out) noexcept;

/// The full grammar check that parse() leaves out of its fast pass: every Via element,
/// the URIs of From and To, and every Contact, Route and Record-Route element. Returns
/// the problems found (none: an empty set); `first` gets the first of them. Pure.
error_set check_message(const message& m, error& first) noexcept;

/// The first Contact's value as one name-addr (parse_name_addr, bad_contact), or null when
/// there is none or it is not one; parsed once per message.
const name_addr* first_contact(const message& m) noexcept;
/// The first Route header's one element and its URI as check_message() parsed them; null
/// when it did not (no full check, no Route, several elements in that header, a bad one).
const message::element_memo* first_route(const message& m) noexcept;
/// Its URI, or null when first_contact is null or its URI does not parse; parsed once.
const uri* first_contact_uri(const message& m) noexcept;

/// How many messages this thread has parsed whole (parse, and parse_rewritten when its
/// original had errors): what a test counts to show that a message is parsed once per worker
/// that needs it.
uint64_t parse_count() noexcept;
/// How many rewrites this thread has parsed from their original (parse_rewritten: only the
/// lines the rewrite changed are parsed).
uint64_t rewrite_parse_count() noexcept;

/// Method from its name (case-sensitive, RFC 3261 section 7.1); method::unknown otherwise.
method method_from_name(std::string_view name) noexcept;
/// Canonical name of a known method; empty for method::unknown.
std::string_view method_name(method m) noexcept;
/// Header id of a header name (long or compact form, any case).
header_id header_from_name(std::string_view name) noexcept;
/// Fast path for the parser: when p (avail bytes) starts with a known header name followed
/// by ':' or white space, returns its id and sets len; header_id::other otherwise.
header_id match_header_name(const char* p, uint32_t avail, uint32_t& len) noexcept;
/// Canonical long name ("Call-ID"); empty for header_id::other.
std::string_view header_name(header_id id) noexcept;

}  // namespace sbc::sip
