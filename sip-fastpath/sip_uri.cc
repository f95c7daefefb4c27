// SIP header value grammar on offsets: URIs, name-addr, Via, parameters, value lists.
// Any thread; no heap, no exceptions. Every loop is bounded by the span it was given, and
// byte classes come from one table (sip_span.h) so each byte costs a load and a test.
#include "sip-fastpath/sip_uri.h"

#include <cstring>

#include "sip-fastpath/sip_numbers.h"

namespace sbc::sip {
namespace {

constexpr bool is_alpha(char c) noexcept {
  return static_cast<unsigned char>((static_cast<unsigned char>(c) | 0x20U) - 'a') < 26;
}

// A run of bytes of class `cls`, where each '%' must start a two-hex-digit escape.
bool check_run(std::string_view t, uint16_t cls) noexcept {
  for (std::size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (!chars::is(c, cls)) return false;
    if (c == '%') {
      if (i + 2 >= t.size() || !chars::is(t[i + 1], chars::hexdig) ||
          !chars::is(t[i + 2], chars::hexdig))
        return false;
      i += 2;
    }
  }
  return true;
}

// An IPv6 address without brackets (RFC 3261 25.1 IPv6address): hex digits, colons (2 to 7)
// and the dots of an embedded IPv4 tail.
bool check_ipv6_bare(std::string_view h) noexcept {
  if (h.size() < 2) return false;
  unsigned colons = 0;
  for (char c : h) {
    if (c == ':') {
      ++colons;
    } else if (!chars::is(c, chars::hexdig) && c != '.') {
      return false;
    }
  }
  return colons >= 2 && colons <= 7;
}

bool check_ipv6_ref(std::string_view h) noexcept {
  if (h.size() < 4 || h.front() != '[' || h.back() != ']') return false;
  return check_ipv6_bare(h.substr(1, h.size() - 2));
}

uint32_t skip_ws(std::string_view buf, uint32_t p, uint32_t e) noexcept {
  while (p < e && chars::is(buf[p], chars::ws)) ++p;
  return p;
}

// Port digits at [b, e): 1-5 digits, 1-65535.
bool read_port(std::string_view buf, uint32_t b, uint32_t e, uint16_t& port) noexcept {
  if (e == b || e - b > 5) return false;
  uint32_t v = 0;
  for (uint32_t i = b; i < e; ++i) {
    if (!chars::is(buf[i], chars::digit)) return false;
    v = v * 10 + static_cast<uint32_t>(buf[i] - '0');
  }
  if (v == 0 || v > 65535) return false;
  port = static_cast<uint16_t>(v);
  return true;
}

}  // namespace

bool check_host(std::string_view h, host_kind& kind) noexcept {
  if (h.empty()) return false;
  if (h.front() == '[') {
    kind = host_kind::ipv6;
    return check_ipv6_ref(h);
  }
  // One pass that reads an IPv4 address and host name labels at the same time.
  unsigned label = 0;
  unsigned digits = 0;
  unsigned dots = 0;
  uint32_t octet = 0;
  bool numeric = true;
  bool v4ok = true;
  for (char c : h) {
    if (c == '.') {
      if (label == 0) return false;  // ".." or a leading '.'
      ++dots;
      label = digits = 0;
      octet = 0;
      continue;
    }
    ++label;
    if (c >= '0' && c <= '9') {
      octet = octet * 10 + static_cast<uint32_t>(c - '0');
      if (++digits > 3 || octet > 255) v4ok = false;
    } else if (is_alpha(c) || c == '-' || c == '_') {
      // '_' is outside RFC 1035 but common in real deployments' internal names.
      numeric = false;
    } else {
      return false;
    }
  }
  if (numeric) {
    kind = host_kind::ipv4;
    return v4ok && label > 0 && dots == 3;
  }
  kind = host_kind::name;
  return h.front() != '-';
}

uint32_t skip_quoted(std::string_view buf, uint32_t pos, uint32_t end) noexcept {
  // pos is at the opening quote.
  for (uint32_t i = pos + 1; i < end; ++i) {
    char c = buf[i];
    if (c == '\\') {
      // quoted-pair (RFC 3261 section 25.1): any octet but CR and LF, NUL included.
      if (++i < end && (buf[i] == '\r' || buf[i] == '\n')) return 0;
      continue;
    }
    if (c == '"') return i + 1;
  }
  return 0;
}

bool parse_uri(std::string_view buf, span s, uri& out) noexcept {
  out = uri{};
  std::string_view t = s.in(buf);
  // scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
  std::size_t colon = 0;
  if (t.empty() || !is_alpha(t[0])) return false;
  for (colon = 1; colon < t.size() && t[colon] != ':'; ++colon) {
    char c = t[colon];
    if (!is_alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') return false;
  }
  if (colon == t.size()) return false;
  out.scheme_text = make_span(s.off, s.off + colon);
  out.opaque = make_span(s.off + colon + 1, s.end());
  if (colon == 3 && eq_nocase(t.substr(0, 3), "sip")) {
    out.scheme = uri_scheme::sip;
  } else if (colon == 4 && eq_nocase(t.substr(0, 4), "sips")) {
    out.scheme = uri_scheme::sips;
  } else {
    out.scheme = (colon == 3 && eq_nocase(t.substr(0, 3), "tel")) ? uri_scheme::tel
                                                                 : uri_scheme::other;
    // Other schemes are opaque, but must still be URI bytes and not empty.
    if (out.opaque.empty()) return false;
    for (char c : out.opaque.in(buf))
      if (!chars::is(c, chars::uric) && c != '#') return false;
    return true;
  }

  uint32_t p = s.off + static_cast<uint32_t>(colon) + 1;
  const uint32_t e = s.end();
  if (p == e) return false;
  // userinfo ends at the first '@': '@' is not allowed unescaped in params or headers.
  const uint32_t a = find_byte(buf.data(), p, e, '@', static_cast<uint32_t>(buf.size()));
  if (a != e) {
    // The user part runs to ':' (a password follows) or '@'; ':' is not a user byte, so
    // the bytes are checked as they are read.
    uint32_t pc = p;
    while ((pc = skip_plain(buf.data(), pc, a, static_cast<uint32_t>(buf.size()))) < a && buf[pc] != ':') {
      if (!chars::is(buf[pc], chars::user)) return false;
      if (buf[pc] == '%') {
        if (pc + 2 >= a || !chars::is(buf[pc + 1], chars::hexdig) || !chars::is(buf[pc + 2], chars::hexdig))
          return false;
        pc += 2;
      }
      ++pc;
    }
    out.user = make_span(p, pc);
    if (pc < a) out.password = make_span(pc + 1, a);
    if (out.user.empty()) return false;
    if (!check_run(out.password.in(buf), chars::password)) return false;
    p = a + 1;
  }
  // host
  uint32_t hb = p;
  if (p < e && buf[p] == '[') {
    while (p < e && buf[p] != ']') ++p;
    if (p == e) return false;
    ++p;
  } else {
    while (p < e && !chars::is(buf[p], chars::hostend)) ++p;
  }
  out.host = make_span(hb, p);
  if (!check_host(out.host.in(buf), out.host_type)) return false;
  if (p < e && buf[p] == ':') {
    uint32_t pb = ++p;
    while (p < e && buf[p] != ';' && buf[p] != '?') ++p;
    if (!read_port(buf, pb, p, out.port)) return false;
  }
  if (p < e && buf[p] == ';') {
    // The parameters run to '?' (headers) or the end, checked as they are read ('?' is not
    // a parameter byte): every byte a parameter byte, each '%' an escape, and every
    // parameter with a name (no ";;", no ";=", no ';' last).
    const uint32_t pb = p;
    const auto limit = static_cast<uint32_t>(buf.size());
    for (; p < e; ++p) {
      p = skip_plain(buf.data(), p, e, limit);  // bytes that need no look of their own
      if (p == e || buf[p] == '?') break;
      const char c = buf[p];
      if (!chars::is(c, chars::uparam)) return false;
      if (c == ';') {
        if (p + 1 == e || buf[p + 1] == ';' || buf[p + 1] == '=' || buf[p + 1] == '?') return false;
      } else if (c == '%') {
        if (p + 2 >= e || !chars::is(buf[p + 1], chars::hexdig) || !chars::is(buf[p + 2], chars::hexdig))
          return false;
        p += 2;
      }
    }
    out.params = make_span(pb, p);
  }
  if (p < e && buf[p] == '?') {
    out.headers = make_span(p + 1, e);
    if (out.headers.empty() || !check_run(out.headers.in(buf), chars::uheader)) return false;
  }
  return true;
}

bool param_iter::next(param& out, bool& bad) noexcept {
  bad = false;
  pos = skip_ws(buf, pos, end);
  if (pos >= end) return false;
  if (buf[pos] != ';') {
    if (!(list && buf[pos] == ',')) bad = true;
    return false;
  }
  pos = skip_ws(buf, pos + 1, end);
  uint32_t nb = pos;
  if (strict) {
    while (pos < end && chars::is(buf[pos], chars::pvalue)) ++pos;
  } else {
    while (pos < end && !chars::is(buf[pos], chars::pdelim)) ++pos;
  }
  out.name = make_span(nb, pos);
  out.value = span{};
  out.has_value = false;
  if (out.name.empty()) {
    bad = true;
    return false;
  }
  pos = skip_ws(buf, pos, end);
  if (pos < end && buf[pos] == '=') {
    pos = skip_ws(buf, pos + 1, end);
    uint32_t vb = pos;
    if (pos < end && buf[pos] == '"') {
      uint32_t q = skip_quoted(buf, pos, end);
      if (q == 0) {
        bad = true;
        return false;
      }
      pos = q;
    } else {
      if (strict) {
        while (pos < end && chars::is(buf[pos], chars::pvalue)) ++pos;
      } else {
        pos = find_value_end(buf.data(), pos, end, static_cast<uint32_t>(buf.size()));
      }
      if (pos == vb) {
        bad = true;
        return false;
      }
    }
    out.value = make_span(vb, pos);
    out.has_value = true;
  }
  return true;
}

bool find_param(std::string_view buf, span params, std::string_view lower_name,
                param& out) noexcept {
  param_iter it(buf, params);
  bool bad = false;
  while (it.next(out, bad))
    if (eq_lower(out.name.in(buf), lower_name)) return true;
  return false;
}

bool value_iter::next(span& out, error& err) noexcept {
  while (pos < end) {
    uint32_t b = pos;
    bool angle = false;
    while (pos < end) {
      pos = find_list_special(buf.data(), pos, end, static_cast<uint32_t>(buf.size()));
      if (pos >= end) break;
      char c = buf[pos];
      if (c == '"') {
        uint32_t q = skip_quoted(buf, pos, end);
        if (q == 0) {
          err = error::unbalanced_quotes;
          pos = end;
          return false;
        }
        pos = q;
        continue;
      }
      if (c == '<') {
        if (angle) {
          err = error::unbalanced_angle;
          pos = end;
          return false;
        }
        angle = true;
      } else if (c == '>') {
        if (!angle) {
          err = error::unbalanced_angle;
          pos = end;
          return false;
        }
        angle = false;
      } else if (c == ',' && !angle) {
        break;
      }
      ++pos;
    }
    if (angle) {
      err = error::unbalanced_angle;
      pos = end;
      return false;
    }
    out = trim(buf, make_span(b, pos));
    if (pos < end) ++pos;  // the comma
    if (!out.empty()) return true;
  }
  return false;
}

error parse_name_addr_at(std::string_view buf, uint32_t pos, uint32_t e, name_addr& out,
                         error bad, uint32_t& next, bool strict, uri* uri_out) noexcept {
  out = name_addr{};
  uint32_t p = skip_ws(buf, pos, e);
  next = p;
  if (p >= e) return bad;
  uint32_t lt = e;  // offset of '<' in the name-addr form
  if (buf[p] == '"') {
    uint32_t q = skip_quoted(buf, p, e);
    if (q == 0) return error::unbalanced_quotes;
    out.display = make_span(p, q);
    lt = skip_ws(buf, q, e);
    if (lt >= e || buf[lt] != '<') return bad;
  } else {
    // display-name tokens stop at '<'; an addr-spec stops at its scheme's ':'.
    uint32_t i = p;
    while (i < e && (chars::is(buf[i], chars::token) || chars::is(buf[i], chars::ws))) ++i;
    if (i < e && buf[i] == '<') {
      lt = i;
      out.display = trim(buf, make_span(p, i));
    }
  }
  uint32_t after = 0;
  if (lt != e) {
    out.angle = true;
    const uint32_t g = find_byte(buf.data(), lt + 1, e, '>', static_cast<uint32_t>(buf.size()));
    if (g == e) return error::unbalanced_angle;
    out.uri_text = make_span(lt + 1, g);
    if (find_byte(buf.data(), lt + 1, g, '<', static_cast<uint32_t>(buf.size())) != g)
      return error::unbalanced_angle;
    after = g + 1;
  } else {
    // addr-spec: the URI runs to the first ';' (later ';' belong to the header) or ','.
    uint32_t i = p;
    while (i < e && buf[i] != ';' && buf[i] != ',' && !chars::is(buf[i], chars::ws)) {
      if (buf[i] == '>' || buf[i] == '<') return error::unbalanced_angle;
      if (buf[i] == '"') return skip_quoted(buf, i, e) == 0 ? error::unbalanced_quotes : bad;
      ++i;
    }
    out.uri_text = make_span(p, i);
    after = i;
  }
  if (strict) {
    uri u;
    if (!parse_uri(buf, out.uri_text, uri_out != nullptr ? *uri_out : u)) return bad;
  } else if (out.uri_text.empty()) {
    return bad;
  }
  param_iter it(buf, after, e, true);
  it.strict = strict;
  param pr;
  bool bad_param = false;
  while (it.next(pr, bad_param)) {
    if (ieq_lit(pr.name.in(buf), "tag")) {
      if (!pr.has_value || pr.value.empty()) return bad;
      out.tag = pr.value;
      out.has_tag = true;
    }
  }
  out.params = make_span(after, it.pos);
  next = it.pos;
  if (bad_param) {
    // An unterminated quoted value, or a stray quote or bracket, is the specific defect.
    for (uint32_t i = it.pos; i < e; ++i) {
      if (buf[i] == '"') {
        if (skip_quoted(buf, i, e) == 0) return error::unbalanced_quotes;
        break;
      }
      if (buf[i] == '<' || buf[i] == '>') return error::unbalanced_angle;
    }
    return bad;
  }
  return error::none;
}

error parse_name_addr(std::string_view buf, span value, name_addr& out, error bad) noexcept {
  uint32_t next = 0;
  error err = parse_name_addr_at(buf, value.off, value.end(), out, bad, next);
  if (err != error::none) return err;
  return skip_ws(buf, next, value.end()) == value.end() ? error::none : bad;
}

bool parse_via_at(std::string_view buf, uint32_t pos, uint32_t e, via& out,
                  uint32_t& next, bool strict) noexcept {
  out = via{};
  uint32_t p = skip_ws(buf, pos, e);
  const uint32_t b = p;
  next = p;
  // sent-protocol = protocol-name SLASH protocol-version SLASH transport, LWS allowed.
  // The common form "SIP/2.0/" without white space is read in one compare.
  span parts[3];
  int first_part = 0;
  if (e - p > 8 && ieq_lit(buf.substr(p, 3), "sip") && buf.substr(p + 3, 5) == "/2.0/") {
    parts[0] = make_span(p, p + 3);
    parts[1] = make_span(p + 4, p + 7);
    p += 8;
    first_part = 2;
  }
  for (int k = first_part; k < 3; ++k) {
    p = skip_ws(buf, p, e);
    uint32_t tb = p;
    while (p < e && chars::is(buf[p], chars::token)) ++p;
    parts[k] = make_span(tb, p);
    if (parts[k].empty()) return false;
    p = skip_ws(buf, p, e);
    if (k < 2) {
      if (p >= e || buf[p] != '/') return false;
      ++p;
    }
  }
  if (!ieq_lit(parts[0].in(buf), "sip")) return false;
  // Another SIP version ("SIP/7.0/UDP"): read on for the sent-by (a 505 goes back to it),
  // and the element is refused at the end.
  out.other_version = parts[1].in(buf) != "2.0";
  out.protocol = make_span(b, parts[2].end());
  out.transport = parts[2];
  // sent-by = host [ COLON port ]
  uint32_t hb = p;
  if (p < e && buf[p] == '[') {
    while (p < e && buf[p] != ']') ++p;
    if (p == e) return false;
    ++p;
  } else if (strict) {
    while (p < e && chars::is(buf[p], chars::hostc) && buf[p] != ':') ++p;
  } else {
    p = find_value_end(buf.data(), p, e, static_cast<uint32_t>(buf.size()), ':');
  }
  out.host = make_span(hb, p);
  host_kind kind;
  if (out.host.empty() || (strict && !check_host(out.host.in(buf), kind))) return false;
  p = skip_ws(buf, p, e);
  if (p < e && buf[p] == ':') {
    p = skip_ws(buf, p + 1, e);
    uint32_t pb = p;
    while (p < e && chars::is(buf[p], chars::digit)) ++p;
    if (!read_port(buf, pb, p, out.port)) return false;
  }
  out.sent_by = true;
  param_iter it(buf, p, e, true);
  it.strict = strict;
  param pr;
  bool bad = false;
  while (it.next(pr, bad)) {
    std::string_view n = pr.name.in(buf);
    switch (n.size()) {
      case 6:
        if (ieq_lit(n, "branch")) {
          if (!pr.has_value) return false;
          out.branch = pr.value;
          out.has_branch = true;
        }
        break;
      case 8:
        if (ieq_lit(n, "received")) {
          // An address, IPv6 with or without brackets (RFC 5118 4.5: the grammar has none,
          // and implementations send both).
          host_kind k;
          const std::string_view rv = pr.value.in(buf);
          if (!pr.has_value ||
              (strict && !check_ipv6_bare(rv) && (!check_host(rv, k) || k == host_kind::name)))
            return false;
          out.received = pr.value;
        }
        break;
      case 5:
        if (ieq_lit(n, "rport")) {
          uint16_t rp = 0;
          if (pr.has_value && !read_port(buf, pr.value.off, pr.value.end(), rp)) return false;
          out.rport = pr.value;
          out.has_rport = true;
        } else if (ieq_lit(n, "maddr")) {
          if (!pr.has_value) return false;
          out.maddr = pr.value;
        }
        break;
      default:
        break;
    }
  }
  out.params = make_span(p, it.pos);
  next = it.pos;
  return !bad && !out.other_version;
}

bool parse_via(std::string_view buf, span value, via& out) noexcept {
  uint32_t next = 0;
  return parse_via_at(buf, value.off, value.end(), out, next) &&
         skip_ws(buf, next, value.end()) == value.end();
}

}  // namespace sbc::sip
