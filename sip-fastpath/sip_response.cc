// Response builder per RFC 3261 section 8.2.6. Any thread; no heap, no exceptions.
#include "sip-fastpath/sip_response.h"

namespace sbc::sip {
namespace {

// Stand-ins for what a malformed request lacks (see build_response in the header).
constexpr std::string_view anonymous_address = "<sip:anonymous@anonymous.invalid>";
constexpr std::string_view absent_call_id = "absent@anonymous.invalid";

// A header value with a splice applied: its cuts left out (in order, inside the value) and its
// text added at `at` (the top Via element's end, RFC 7339 feedback).
void put_spliced(writer& w, std::string_view raw, span value, const via_splice& s) noexcept {
  uint32_t r = value.off;
  auto copy_to = [&](uint32_t to) {
    if (to > r) w.put(raw.substr(r, to - r));
    if (to > r) r = to;
  };
  bool inserted = false;
  for (uint8_t k = 0; k < s.n_cut; ++k) {
    const span c = s.cut[k];
    if (c.off < r || c.end() > value.end()) continue;  // not inside, or out of order: left as is
    if (!inserted && s.at <= c.off) {
      copy_to(s.at);
      w.put(s.text);
      inserted = true;
    }
    copy_to(c.off);
    r = c.end();
  }
  if (!inserted) {
    copy_to(s.at < value.end() ? s.at : value.end());
    w.put(s.text);
  }
  copy_to(value.end());
}

}  // namespace

std::string_view default_reason(uint16_t code) noexcept {
  switch (code) {
    case 100: return "Trying";
    case 180: return "Ringing";
    case 181: return "Call Is Being Forwarded";
    case 182: return "Queued";
    case 183: return "Session Progress";
    case 200: return "OK";
    case 202: return "Accepted";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 407: return "Proxy Authentication Required";
    case 408: return "Request Timeout";
    case 410: return "Gone";
    case 413: return "Request Entity Too Large";
    case 414: return "Request-URI Too Long";
    case 415: return "Unsupported Media Type";
    case 416: return "Unsupported URI Scheme";
    case 420: return "Bad Extension";
    case 421: return "Extension Required";
    case 423: return "Interval Too Brief";
    case 480: return "Temporarily Unavailable";
    case 481: return "Call/Transaction Does Not Exist";
    case 482: return "Loop Detected";
    case 483: return "Too Many Hops";
    case 484: return "Address Incomplete";
    case 485: return "Ambiguous";
    case 486: return "Busy Here";
    case 487: return "Request Terminated";
    case 488: return "Not Acceptable Here";
    case 491: return "Request Pending";
    case 500: return "Server Internal Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Server Time-out";
    case 505: return "Version Not Supported";
    case 513: return "Message Too Large";
    case 600: return "Busy Everywhere";
    case 603: return "Decline";
    case 604: return "Does Not Exist Anywhere";
    case 606: return "Not Acceptable";
    default: break;
  }
  switch (code / 100) {
    case 1: return "Trying";
    case 2: return "OK";
    case 3: return "Redirect";
    case 4: return "Client Error";
    case 5: return "Server Error";
    default: return "Global Failure";
  }
}

write_result build_response(const message& req, const response_spec& spec,
                            std::span<char> out) noexcept {
  if (spec.code < 100 || spec.code > 699) return {error::bad_status_code, 0};
  const error first = req.first_error == error::none ? error::bad_start_line : req.first_error;
  if (req.is_response()) return {first, 0};
  // A broken Request-Line: answerable only when its headers were all indexed and a CSeq
  // names the method.
  if (!req.is_request() && (req.headers_end == 0 || req.h_cseq == no_header)) return {first, 0};
  if (req.h_via == no_header) return {error::missing_via, 0};

  const std::string_view raw = req.raw;
  auto value = [&](uint8_t h, std::string_view absent) {
    return h == no_header ? absent : req.headers[h].value.in(raw);
  };
  writer w(out);
  w.put("SIP/2.0 ");
  w.put_uint(spec.code);
  w.put(" ");
  w.put(spec.reason.empty() ? default_reason(spec.code) : spec.reason);
  w.put("\r\n");
  // Every Via line in order, values as received (RFC 3261 section 8.2.6.2).
  for (unsigned i = 0; i < req.header_count; ++i) {
    if (req.headers[i].id != header_id::via) continue;
    w.put("Via: ");
    if (i == req.h_via && spec.top_via != nullptr && !spec.top_via->text.empty())
      put_spliced(w, raw, req.headers[i].value, *spec.top_via);
    else
      w.put(req.headers[i].value.in(raw));
    w.put("\r\n");
  }
  w.put("From: ");
  w.put(value(req.h_from, anonymous_address));
  w.put("\r\nTo: ");
  w.put(value(req.h_to, anonymous_address));
  if (spec.code > 100 && !req.to.has_tag && !spec.to_tag.empty()) {
    w.put(";tag=");
    w.put(spec.to_tag);
  }
  w.put("\r\nCall-ID: ");
  w.put(value(req.h_call_id, absent_call_id));
  w.put("\r\nCSeq: ");
  if (req.h_cseq != no_header) {
    w.put(req.headers[req.h_cseq].value.in(raw));
  } else {
    w.put("0 ");
    w.put(req.method_text.in(raw));
  }
  w.put("\r\n");
  if (!spec.unsupported.empty()) {
    w.put("Unsupported: ");
    w.put(spec.unsupported);
    w.put("\r\n");
  }
  if (spec.has_retry_after) {
    w.put("Retry-After: ");
    w.put_uint(spec.retry_after);
    w.put("\r\n");
  }
  w.put(spec.extra);
  w.put("Content-Length: 0\r\n\r\n");
  return w.result();
}

}  // namespace sbc::sip
