// Proxy verdict over a parsed message (RFC 3261 section 16.3). Any thread; no heap, no
// exceptions.
#include "sip-fastpath/sip_verdict.h"

namespace sbc::sip {
namespace {

constexpr uint64_t bit(error e) { return uint64_t{1} << static_cast<unsigned>(e); }

// Problems that leave no Via to answer to: nothing read (empty, too large), or a header
// index that stopped early (no end of headers, more lines than it holds), where a Via past
// the stop would be missing from the response.
constexpr uint64_t unanswerable = bit(error::empty) | bit(error::too_large) |
                                  bit(error::headers_truncated) | bit(error::too_many_headers) |
                                  bit(error::missing_via);

verdict respond(uint16_t code, std::string_view reason, error cause) noexcept {
  verdict v;
  v.act = action::respond;
  v.code = code;
  v.reason = reason;
  v.cause = cause;
  return v;
}

verdict drop(error cause) noexcept {
  verdict v;
  v.act = action::drop;
  v.cause = cause;
  return v;
}

// A top Via a response can go back by: valid, or refused after its sent-by was read (empty
// parameters, ";;,;,,", or another version, "SIP/7.0/UDP": RFC 4475 section 3.1.2): RFC 3261
// 18.2.2 sends a UDP response to the packet's source, and the response copies the Vias as
// they came.
bool answerable(const message& m) noexcept { return m.has_top_via || m.top_via.sent_by; }

bool supported(std::string_view opt, std::span<const std::string_view> list) noexcept {
  for (std::string_view s : list)
    if (eq_nocase(s, opt)) return true;
  return false;
}

}  // namespace

std::string_view action_name(action a) noexcept {
  switch (a) {
    case action::forward: return "forward";
    case action::respond: return "respond";
    case action::drop: return "drop";
  }
  return "drop";
}

verdict proxy_verdict(const message& m, const proxy_policy& policy) noexcept {
  if (m.kind == message_kind::invalid) {
    // A broken Request-Line (a broken Status-Line stops the parse: no Via). The client
    // matches the 400 by its top Via branch and CSeq method (RFC 3261 section 17.1.3):
    // without a CSeq there is no method to name, and a CSeq of ACK is never answered.
    if ((m.errors.bits & unanswerable) != 0 || !answerable(m) || m.h_cseq == no_header ||
        m.cseq_method == method::ack)
      return drop(m.first_error);
    return respond(400, error_text(m.first_error), m.first_error);
  }
  // The parser's fast pass plus the full grammar check.
  error deep_first = error::none;
  const error_set deep = policy.full_check ? check_message(m, deep_first) : error_set{};
  const bool ok = m.ok() && deep.empty();
  const error first = m.first_error != error::none ? m.first_error : deep_first;
  if (m.is_response()) {
    // Nobody to answer a response to: anything wrong with it, including a status code
    // outside 100-699, drops it.
    if (!ok) return drop(first);
    verdict v;
    v.act = action::forward;
    return v;
  }
  if ((m.errors.bits & unanswerable) != 0 || !answerable(m)) {
    error cause = m.first_error;
    if (cause == error::none) cause = error::bad_via;
    return drop(cause);
  }
  // RFC 3261 section 17: an ACK never gets a response.
  if (m.req_method == method::ack && !ok) return drop(first);
  if (m.errors.has(error::bad_version))
    return respond(505, "Version Not Supported", error::bad_version);
  if (!ok) return respond(400, error_text(first), first);  // the reason names the problem
  bool routable = m.ruri.scheme == uri_scheme::sip || m.ruri.scheme == uri_scheme::sips ||
                  (policy.route_tel && m.ruri.scheme == uri_scheme::tel);
  if (!routable) return respond(416, "Unsupported URI Scheme", error::none);
  if (m.max_forwards == 0) return respond(483, "Too Many Hops", error::none);
  for (unsigned i = 0; i < m.header_count; ++i) {
    if (m.headers[i].id != header_id::proxy_require) continue;
    value_iter it(m.raw, m.headers[i].value);
    span opt;
    error err = error::none;
    while (it.next(opt, err)) {
      if (!supported(opt.in(m.raw), policy.supported_options)) {
        verdict v = respond(420, "Bad Extension", error::none);
        v.unsupported = opt;
        return v;
      }
    }
  }
  verdict v;
  v.act = action::forward;
  return v;
}

}  // namespace sbc::sip
