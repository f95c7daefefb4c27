// One-pass SIP message parser: start line, header index, per-header checks, framing.
// Any thread; no heap, no exceptions; never reads outside the buffer it is given.
#include <cstring>

#include "sip-fastpath/sip_message.h"
#include "sip-fastpath/sip_header_checks.h"
#include "sip-fastpath/sip_numbers.h"

namespace sbc::sip {
namespace {

void add(message& m, error e) noexcept {
  if (m.first_error == error::none) m.first_error = e;
  m.errors.add(e);
}

error_sink sink(message& m) noexcept { return error_sink{m.errors, m.first_error}; }

error fail(message& m, error e) noexcept {
  add(m, e);
  return m.first_error;
}

void reset(message& m, std::string_view buf) noexcept {
  // Field by field: the header array is left as is, header_count says what is valid.
  m.raw = buf;
  m.kind = message_kind::invalid;
  m.req_method = method::unknown;
  m.status = 0;
  m.start_line = m.method_text = m.request_uri = m.version = m.reason = span{};
  m.ruri = uri{};
  m.header_count = 0;
  m.h_via = m.h_from = m.h_to = m.h_call_id = m.h_cseq = m.h_max_forwards = no_header;
  m.h_content_length = m.h_content_type = m.h_proxy_require = m.h_record_route = no_header;
  m.h_route = m.h_contact = m.h_expires = no_header;
  m.cseq = 0;
  m.cseq_method = method::unknown;
  m.cseq_method_text = span{};
  m.max_forwards = -1;
  m.expires = -1;
  m.content_length = 0;
  m.has_content_length = false;
  m.has_top_via = false;
  m.headers_end = 0;
  m.body = span{};
  m.errors = error_set{};
  m.first_error = error::none;
  m.contact_.state = message::element_memo::unknown;
  m.route_.state = message::element_memo::unknown;
}

thread_local uint64_t parses = 0;     // parse()
thread_local uint64_t rewrites = 0;   // parse_rewritten()

// "SIP/2.0" -> true; "SIP/x.y" -> sets *known=false; anything else -> false.
bool check_version(std::string_view v, bool& known) noexcept {
  if (v == "SIP/2.0") {
    known = true;
    return true;
  }
  if (v.size() < 7 || !eq_lower(v.substr(0, 3), "sip") || v[3] != '/') return false;
  std::size_t dot = v.find('.', 4);
  if (dot == std::string_view::npos || dot == 4 || dot + 1 == v.size()) return false;
  for (std::size_t i = 4; i < v.size(); ++i)
    if (i != dot && !chars::is(v[i], chars::digit)) return false;
  known = v.substr(4) == "2.0";
  return true;
}

// A first line that starts "SIP/" is a Status-Line: a response, never answered.
bool is_status_line(std::string_view b, uint32_t le) noexcept {
  return le >= 4 && ieq_lit(b.substr(0, 3), "sip") && b[3] == '/';
}

// A request's third part that is not "SIP/x.y" but still one word ("SIP/2", "HTTP/1.1"):
// a protocol version we do not speak, answered 505 rather than 400 (RFC 3261 section
// 8.2.2 does not name it; 505 tells the sender what to change).
bool version_like(std::string_view v) noexcept {
  if (v.empty()) return false;
  for (char c : v)
    if (c != '/' && !chars::is(c, chars::token)) return false;
  return true;
}

bool parse_start_line(message& m, uint32_t le) noexcept {
  std::string_view b = m.raw;
  if (is_status_line(b, le)) {
    // Status-Line = SIP-Version SP Status-Code SP Reason-Phrase
    uint32_t sp = 4;
    while (sp < le && b[sp] != ' ') ++sp;
    m.version = make_span(0, sp);
    bool known = false;
    if (!check_version(m.version.in(b), known)) return false;
    // three digits, then SP and the reason phrase (a missing SP before an empty phrase is
    // tolerated)
    if (sp + 4 > le) return false;
    if (sp + 4 < le && b[sp + 4] != ' ') return false;
    uint32_t code = 0;
    for (uint32_t i = sp + 1; i < sp + 4; ++i)
      if (!chars::is(b[i], chars::digit)) return false;
    parse_uint(b.substr(sp + 1, 3), 999, code);
    m.kind = message_kind::response;
    m.status = static_cast<uint16_t>(code);
    m.reason = sp + 4 < le ? make_span(sp + 5, le) : make_span(le, le);
    if (!known) add(m, error::bad_version);
    if (code < 100 || code > 699) add(m, error::bad_status_code);
    return true;
  }
  // Request-Line = Method SP Request-URI SP SIP-Version
  uint32_t p = 0;
  while (p < le && chars::is(b[p], chars::token)) ++p;
  if (p == 0 || p >= le || b[p] != ' ') return false;
  m.method_text = make_span(0, p);
  uint32_t ub = ++p;
  p = find_byte(b.data(), ub, le, ' ', static_cast<uint32_t>(b.size()));
  if (p == le || p == ub) return false;
  m.request_uri = make_span(ub, p);
  m.version = make_span(p + 1, le);
  bool known = false;
  if (!check_version(m.version.in(b), known) && !version_like(m.version.in(b))) return false;
  m.kind = message_kind::request;
  m.req_method = method_from_name(m.method_text.in(b));
  if (!known) add(m, error::bad_version);
  // parse_uri admits only URI bytes, so control bytes and white space are rejected there.
  if (!parse_uri(b, m.request_uri, m.ruri)) add(m, error::bad_request_uri);
  return true;
}

void parse_cseq(message& m, span v) noexcept {
  std::string_view b = m.raw;
  uint32_t p = v.off;
  const uint32_t e = v.end();
  while (p < e && chars::is(b[p], chars::digit)) ++p;
  uint32_t n = 0;
  if (p == v.off || !parse_uint(b.substr(v.off, p - v.off), 0xffffffffU, n)) {
    add(m, error::bad_cseq);
    return;
  }
  uint32_t ws = p;
  while (p < e && chars::is(b[p], chars::ws)) ++p;
  uint32_t mb = p;
  while (p < e && chars::is(b[p], chars::token)) ++p;
  if (ws == mb || mb == p || p != e) {
    add(m, error::bad_cseq);
    return;
  }
  m.cseq = n;
  m.cseq_method_text = make_span(mb, p);
  m.cseq_method = method_from_name(m.cseq_method_text.in(b));
}

// callid = word ["@" word]. Sixteen bytes at a time: a byte outside `word` is a control
// byte or SP (<= 0x20), DEL, a byte >= 0x80, or one of # $ & , ; = ^ |.
void check_call_id(message& m, span v) noexcept {
  const char* d = m.raw.data();
  uint32_t i = v.off;
  const uint32_t e = v.end();
  bool ok = !v.empty();
  unsigned ats = 0;
#if defined(__SSE2__)
  const uint32_t limit = static_cast<uint32_t>(m.raw.size());
  const __m128i space = _mm_set1_epi8(0x20);
  const __m128i del = _mm_set1_epi8(0x7f);
  const __m128i at = _mm_set1_epi8('@');
  const __m128i c0 = _mm_set1_epi8('#');
  const __m128i c1 = _mm_set1_epi8('$');
  const __m128i c2 = _mm_set1_epi8('&');
  const __m128i c3 = _mm_set1_epi8(',');
  const __m128i c4 = _mm_set1_epi8(';');
  const __m128i c5 = _mm_set1_epi8('=');
  const __m128i c6 = _mm_set1_epi8('^');
  const __m128i c7 = _mm_set1_epi8('|');
  const __m128i above_space = _mm_add_epi8(space, _mm_set1_epi8(1));
  while (ok && i < e && i + 16 <= limit) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + i));
    // Signed compare: bytes >= 0x80 are negative, so "x <= 0x20" catches them too.
    const __m128i bad = _mm_or_si128(
        _mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(x, above_space), _mm_cmpeq_epi8(x, del)),
                     _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, c0), _mm_cmpeq_epi8(x, c1)),
                                  _mm_or_si128(_mm_cmpeq_epi8(x, c2), _mm_cmpeq_epi8(x, c3)))),
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, c4), _mm_cmpeq_epi8(x, c5)),
                     _mm_or_si128(_mm_cmpeq_epi8(x, c6), _mm_cmpeq_epi8(x, c7))));
    const uint32_t n = e - i < 16 ? e - i : 16;
    const unsigned keep = n == 16 ? 0xffffU : ((1U << n) - 1U);
    if ((static_cast<unsigned>(_mm_movemask_epi8(bad)) & keep) != 0) ok = false;
    const unsigned ats_here = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, at))) & keep;
    // Only "none", "one" or "more than one" matters: no popcount needed.
    if (ats_here != 0) ats += (ats_here & (ats_here - 1)) != 0 ? 2 : 1;
    i += n;
  }
#endif
  for (; i < e && ok; ++i) {
    const char c = d[i];
    if (c == '@') {
      ++ats;
    } else if (!chars::is(c, chars::word)) {
      ok = false;
    }
  }
  if (!ok || ats > 1) add(m, error::bad_call_id);
}

// True when a single-value header is seen again (records the duplicate error).
bool seen(message& m, uint8_t& slot, uint8_t index, error dup) noexcept {
  if (slot != no_header) {
    add(m, dup);
    return true;
  }
  slot = index;
  return false;
}

void index_header(message& m, uint8_t i) noexcept {
  header& h = m.headers[i];
  std::string_view b = m.raw;
  switch (h.id) {
    case header_id::via:
      if (m.h_via == no_header) {
        error_sink es = sink(m);
        m.has_top_via = check_via(es, b, h.value, &m.top_via, false);
      }
      if (m.h_via == no_header) m.h_via = i;
      break;
    case header_id::from:
      if (!seen(m, m.h_from, i, error::duplicate_from)) {
        error_sink es = sink(m);
        check_name_addr_header(es, b, h.value, error::bad_from, error::duplicate_from, &m.from,
                               false);
      }
      break;
    case header_id::to:
      if (!seen(m, m.h_to, i, error::duplicate_to)) {
        error_sink es = sink(m);
        check_name_addr_header(es, b, h.value, error::bad_to, error::duplicate_to, &m.to, false);
      }
      break;
    case header_id::call_id:
      if (!seen(m, m.h_call_id, i, error::duplicate_call_id)) check_call_id(m, h.value);
      break;
    case header_id::cseq:
      if (!seen(m, m.h_cseq, i, error::duplicate_cseq)) parse_cseq(m, h.value);
      break;
    case header_id::max_forwards:
      if (!seen(m, m.h_max_forwards, i, error::duplicate_max_forwards)) {
        uint32_t v = 0;
        if (parse_uint(b, h.value, 255, v)) {
          m.max_forwards = static_cast<int16_t>(v);
        } else {
          add(m, error::bad_max_forwards);
        }
      }
      break;
    case header_id::content_length:
      if (!seen(m, m.h_content_length, i, error::duplicate_content_length)) {
        uint32_t v = 0;
        if (parse_uint(b, h.value, 0xffffffffU, v)) {
          m.content_length = v;
          m.has_content_length = true;
        } else {
          add(m, error::bad_content_length);
        }
      }
      break;
    case header_id::expires:
      if (m.h_expires == no_header) {
        m.h_expires = i;
        uint32_t v = 0;
        if (parse_uint(b, h.value, 0xffffffffU, v)) {
          m.expires = v;
        } else {
          add(m, error::bad_expires);
        }
      }
      break;
    case header_id::contact:
      if (m.h_contact == no_header) m.h_contact = i;
      break;
    case header_id::route:
      if (m.h_route == no_header) m.h_route = i;
      break;
    case header_id::record_route:
      if (m.h_record_route == no_header) m.h_record_route = i;
      break;
    case header_id::content_type:
      if (m.h_content_type == no_header) m.h_content_type = i;
      break;
    case header_id::proxy_require:
      if (m.h_proxy_require == no_header) m.h_proxy_require = i;
      break;
    default:
      break;
  }
}

// Span `s` of a line that moved by `d` (a span at offset 0 is absent: never inside a header).
span moved(span s, int32_t d) noexcept {
  if (s.off == 0) return s;
  return span{static_cast<uint16_t>(s.off + d), s.len};
}

via moved(const via& v, int32_t d) noexcept {
  via o = v;
  for (span* s : {&o.protocol, &o.transport, &o.host, &o.params, &o.branch, &o.received, &o.rport, &o.maddr})
    *s = moved(*s, d);
  return o;
}

name_addr moved(const name_addr& na, int32_t d) noexcept {
  name_addr o = na;
  for (span* s : {&o.display, &o.uri_text, &o.params, &o.tag}) *s = moved(*s, d);
  return o;
}

// index_header for header `i`, a byte-for-byte copy of header `j` of the clean message `orig`
// moved by `d`: what orig's parse found in it is taken, moved, instead of parsing it again.
void index_copied(message& m, uint8_t i, const message& orig, uint8_t j, int32_t d) noexcept {
  switch (m.headers[i].id) {
    case header_id::via:
      if (m.h_via == no_header && orig.h_via == j) {
        m.top_via = moved(orig.top_via, d);
        m.has_top_via = orig.has_top_via;
        m.h_via = i;
        return;
      }
      break;
    case header_id::from:
      if (m.h_from == no_header && orig.h_from == j) {
        m.from = moved(orig.from, d);
        m.h_from = i;
        return;
      }
      break;
    case header_id::to:
      if (m.h_to == no_header && orig.h_to == j) {
        m.to = moved(orig.to, d);
        m.h_to = i;
        return;
      }
      break;
    case header_id::cseq:
      if (m.h_cseq == no_header && orig.h_cseq == j) {
        m.h_cseq = i;
        m.cseq = orig.cseq;
        m.cseq_method = orig.cseq_method;
        m.cseq_method_text = moved(orig.cseq_method_text, d);
        return;
      }
      break;
    default:
      break;
  }
  index_header(m, i);
}

// End of the header line that starts at `from`, past any continuation lines (folding);
// n when the headers end before it.
uint32_t line_end(const char* d, uint32_t from, uint32_t n) noexcept {
  uint32_t eol = find_byte(d, from, n, '\n');
  while (eol + 1 < n && (d[eol + 1] == ' ' || d[eol + 1] == '\t'))
    eol = find_byte(d, eol + 1, n, '\n');
  return eol;
}


// parse(), and parse_rewritten() when `orig` is given.
// The start line, `le` bytes: taken from `orig` when a rewrite kept it (parse_rewritten), else
// parsed. False for a broken Status-Line, which stops the parse (a response: nobody to answer,
// nothing more to read). A broken Request-Line may still be answered 400 from its headers, so
// they are indexed; the message stays invalid (never forwarded) and carries no method or
// Request-URI.
bool read_start_line(message& m, uint32_t le, const message* orig, const rewrite_map* map) noexcept {
  m.start_line = make_span(0, le);
  if (orig != nullptr && map->start_line_kept && orig->start_line == m.start_line && orig->is_request()) {
    m.kind = orig->kind;
    m.req_method = orig->req_method;
    m.method_text = orig->method_text;
    m.request_uri = orig->request_uri;
    m.version = orig->version;
    m.ruri = orig->ruri;
  } else if (!parse_start_line(m, le)) {
    if (is_status_line(m.raw, le)) return false;
    add(m, error::bad_start_line);
    m.method_text = m.request_uri = m.version = span{};
  }
  return true;
}

// After the headers, which end at `pos`: the body by Content-Length (framing over UDP: bytes
// after it are ignored), and the headers every message must have.
error finish(message& m, uint32_t pos) noexcept {
  const std::string_view buf = m.raw;
  const auto n = static_cast<uint32_t>(buf.size());
  m.headers_end = pos;
  const uint32_t avail = n - pos;
  if (m.has_content_length) {
    if (m.content_length > avail) {
      add(m, error::body_truncated);
      m.body = make_span(pos, n);
    } else {
      m.body = make_span(pos, pos + m.content_length);
    }
  } else {
    m.body = make_span(pos, n);
  }
  if (m.h_via == no_header) add(m, error::missing_via);
  if (m.h_from == no_header) add(m, error::missing_from);
  if (m.h_to == no_header) add(m, error::missing_to);
  if (m.h_call_id == no_header) add(m, error::missing_call_id);
  if (m.h_cseq == no_header) add(m, error::missing_cseq);
  if (m.is_request() && !m.cseq_method_text.empty() &&
      m.cseq_method_text.in(buf) != m.method_text.in(buf))
    add(m, error::cseq_method_mismatch);
  return m.first_error;
}

error parse_impl(std::string_view buf, message& m, const message* orig, const rewrite_map* map) noexcept {
  ++(orig == nullptr ? parses : rewrites);
  reset(m, buf);
  if (buf.empty()) return fail(m, error::empty);
  if (buf.size() > max_message_size) return fail(m, error::too_large);
  const char* d = buf.data();
  const auto n = static_cast<uint32_t>(buf.size());

  uint32_t pos = find_byte(d, 0, n, '\n');
  if (pos == n) return fail(m, error::headers_truncated);
  uint32_t le = pos;
  if (le > 0 && d[le - 1] == '\r') --le;
  if (!read_start_line(m, le, orig, map)) return fail(m, error::bad_start_line);
  ++pos;

  // Headers: each line end is found 16 bytes at a time; a line starting with SP/HT continues the
  // previous one (folding). Bare LF line ends are accepted as well as CRLF.
  for (;;) {
    if (pos >= n) return fail(m, error::headers_truncated);
    char c = d[pos];
    if (c == '\n') {
      ++pos;
      break;
    }
    if (c == '\r') {
      if (pos + 1 >= n) return fail(m, error::headers_truncated);
      if (d[pos + 1] == '\n') {
        pos += 2;
        break;
      }
    }
    uint32_t name_len = 0;
    header_id id = match_header_name(d + pos, n - pos, name_len);
    uint32_t name_end = pos + name_len;
    if (id == header_id::other)
      while (name_end < n && chars::is(d[name_end], chars::token)) ++name_end;
    uint32_t colon = name_end;
    if (colon < n && d[colon] != ':')
      while (colon < n && (d[colon] == ' ' || d[colon] == '\t')) ++colon;
    if (colon >= n) return fail(m, error::headers_truncated);
    if (name_end == pos || d[colon] != ':') [[unlikely]] {
      // Not a header line: recorded and skipped with its continuation lines, so that the
      // headers after it are still indexed (a 400 needs Via, From, To, Call-ID, CSeq). The
      // message is never forwarded: bad_header_line makes it invalid.
      add(m, error::bad_header_line);
      const uint32_t skip = line_end(d, pos, n);
      if (skip == n) return fail(m, error::headers_truncated);
      pos = skip + 1;
      continue;
    }

    uint32_t eol = line_end(d, colon, n);
    if (eol == n) return fail(m, error::headers_truncated);
    if (m.header_count == max_headers) return fail(m, error::too_many_headers);
    uint8_t i = m.header_count++;
    header& h = m.headers[i];
    h.name = make_span(pos, name_end);
    // Value: usually one SP after the colon and CRLF at the end; trim() only otherwise.
    uint32_t vb = colon + 1;
    if (vb < eol && d[vb] == ' ') ++vb;
    uint32_t ve = eol;
    if (ve > vb && d[ve - 1] == '\r') --ve;
    if ((vb < ve && chars::is(d[vb], chars::ws)) || (ve > vb && chars::is(d[ve - 1], chars::ws))) {
      h.value = trim(buf, make_span(vb, ve));
    } else {
      h.value = make_span(vb, ve);
    }
    h.line = make_span(pos, eol + 1);
    h.id = id;
    const line_origin* o = orig != nullptr && i < map->count ? &map->lines[i] : nullptr;
    if (o != nullptr && o->from < orig->header_count &&
        moved(orig->headers[o->from].line, o->delta) == h.line && orig->headers[o->from].id == id) {
      index_copied(m, i, *orig, o->from, o->delta);
    } else {
      index_header(m, i);
    }
    pos = eol + 1;
  }
  return finish(m, pos);
}

}  // namespace

error parse(std::string_view buf, message& m) noexcept { return parse_impl(buf, m, nullptr, nullptr); }

uint64_t parse_count() noexcept { return parses; }

uint64_t rewrite_parse_count() noexcept { return rewrites; }

const name_addr* first_contact(const message& m) noexcept {
  using memo = message::element_memo;
  memo& c = m.contact_;
  if (c.state == memo::unknown) {
    c.state = memo::absent;
    if (m.h_contact != no_header &&
        parse_name_addr(m.raw, m.headers[m.h_contact].value, c.na, error::bad_contact) == error::none)
      c.state = parse_uri(m.raw, c.na.uri_text, c.u) ? memo::both : memo::name_addr_only;
  }
  return c.state == memo::absent ? nullptr : &c.na;
}

const uri* first_contact_uri(const message& m) noexcept {
  return first_contact(m) != nullptr && m.contact_.state == message::element_memo::both ? &m.contact_.u : nullptr;
}

const message::element_memo* first_route(const message& m) noexcept {
  return m.route_.state == message::element_memo::both ? &m.route_ : nullptr;
}

error parse_rewritten(std::string_view buf, const message& orig, const rewrite_map& map, message& out) noexcept {
  const bool clean = orig.first_error == error::none && orig.errors.empty();
  return parse_impl(buf, out, clean ? &orig : nullptr, clean ? &map : nullptr);
}

}  // namespace sbc::sip
