// Method and header name tables: name -> id by a switch on length (then a
// case-insensitive compare), id -> canonical name. Any thread; no heap, no exceptions.
#include <array>
#include <bit>
#include <cstring>

#include "sip-fastpath/sip_message.h"

namespace sbc::sip {
namespace {

constexpr std::array<std::string_view, 15> method_names = {
    "",        "INVITE", "ACK",    "BYE",     "CANCEL", "OPTIONS", "REGISTER", "PRACK",
    "SUBSCRIBE", "NOTIFY", "PUBLISH", "INFO", "REFER",  "MESSAGE", "UPDATE",
};

constexpr std::array<std::string_view, 33> header_names = {
    "",
    "Via",
    "From",
    "To",
    "Call-ID",
    "CSeq",
    "Contact",
    "Content-Length",
    "Content-Type",
    "Max-Forwards",
    "Route",
    "Record-Route",
    "Expires",
    "Proxy-Require",
    "Require",
    "Supported",
    "Content-Encoding",
    "Subject",
    "Event",
    "Allow-Events",
    "Refer-To",
    "Referred-By",
    "Session-Expires",
    "Identity",
    "Accept-Contact",
    "Reject-Contact",
    "Request-Disposition",
    "Retry-After",
    "Reason",
    "Allow",
    "User-Agent",
    "Server",
    "Unsupported",
};

header_id compact(char c) noexcept {
  switch (c | 0x20) {
    case 'i': return header_id::call_id;
    case 'm': return header_id::contact;
    case 'e': return header_id::content_encoding;
    case 'l': return header_id::content_length;
    case 'c': return header_id::content_type;
    case 'f': return header_id::from;
    case 's': return header_id::subject;
    case 'k': return header_id::supported;
    case 't': return header_id::to;
    case 'v': return header_id::via;
    case 'o': return header_id::event;
    case 'u': return header_id::allow_events;
    case 'r': return header_id::refer_to;
    case 'x': return header_id::session_expires;
    case 'y': return header_id::identity;
    case 'b': return header_id::referred_by;
    case 'a': return header_id::accept_contact;
    case 'j': return header_id::reject_contact;
    case 'd': return header_id::request_disposition;
    default: return header_id::other;
  }
}

constexpr std::array<char, 256> make_lower() {
  std::array<char, 256> t{};
  for (int i = 0; i < 256; ++i)
    t[static_cast<std::size_t>(i)] = static_cast<char>((i >= 'A' && i <= 'Z') ? i + 32 : i);
  return t;
}
constexpr std::array<char, 256> lower = make_lower();

// A header name as up to three 8-byte words, compared eight bytes at a time: `fold` sets
// the case bit only where the name has a letter, so that any other byte must match exactly.
struct name_pattern {
  uint64_t word[3] = {};
  uint64_t fold[3] = {};
  uint64_t mask[3] = {};
  uint32_t len = 0;
  uint32_t words = 0;
  const char* text = nullptr;
};

constexpr name_pattern make_pattern(const char* lit) {
  name_pattern p;
  p.text = lit;
  while (lit[p.len] != '\0') ++p.len;
  p.words = (p.len + 7) / 8;
  for (uint32_t i = 0; i < p.len; ++i) {
    const uint32_t w = i / 8;
    const uint32_t shift = (i % 8) * 8;  // little-endian byte order within a word
    const auto c = static_cast<unsigned char>(lit[i]);
    p.word[w] |= uint64_t{c} << shift;
    p.mask[w] |= uint64_t{0xff} << shift;
    if (c >= 'a' && c <= 'z') p.fold[w] |= uint64_t{0x20} << shift;
  }
  return p;
}

inline bool name_is(const char* p, uint32_t avail, const name_pattern& pat) noexcept {
  if (avail <= pat.len) return false;  // the delimiter must follow the name
  if (std::endian::native == std::endian::little && avail >= pat.words * 8) {
    for (uint32_t w = 0; w < pat.words; ++w) {
      uint64_t v;
      std::memcpy(&v, p + 8 * w, 8);
      if (((v | pat.fold[w]) & pat.mask[w]) != pat.word[w]) return false;
    }
  } else {
    for (uint32_t i = 0; i < pat.len; ++i)
      if (lower[static_cast<unsigned char>(p[i])] != pat.text[i]) return false;
  }
  const char d = p[pat.len];
  return d == ':' || d == ' ' || d == '\t';
}

}  // namespace

header_id match_header_name(const char* p, uint32_t avail, uint32_t& len) noexcept {
  if (avail < 2) return header_id::other;
  if (p[1] == ':' || p[1] == ' ' || p[1] == '\t') {
    len = 1;
    return compact(p[0]);
  }
#define SBC_SIP_NAME(lit, id)                                     \
  {                                                               \
    static constexpr name_pattern pattern = make_pattern(lit);    \
    if (name_is(p, avail, pattern)) {                             \
      len = pattern.len;                                          \
      return header_id::id;                                       \
    }                                                             \
  }
  switch (lower[static_cast<unsigned char>(p[0])]) {
    case 'a':
      SBC_SIP_NAME("allow", allow)
      SBC_SIP_NAME("allow-events", allow_events)
      SBC_SIP_NAME("accept-contact", accept_contact)
      break;
    case 'c':
      SBC_SIP_NAME("call-id", call_id)
      SBC_SIP_NAME("cseq", cseq)
      SBC_SIP_NAME("contact", contact)
      SBC_SIP_NAME("content-length", content_length)
      SBC_SIP_NAME("content-type", content_type)
      SBC_SIP_NAME("content-encoding", content_encoding)
      break;
    case 'e':
      SBC_SIP_NAME("expires", expires)
      SBC_SIP_NAME("event", event)
      break;
    case 'f': SBC_SIP_NAME("from", from) break;
    case 'i': SBC_SIP_NAME("identity", identity) break;
    case 'm': SBC_SIP_NAME("max-forwards", max_forwards) break;
    case 'p': SBC_SIP_NAME("proxy-require", proxy_require) break;
    case 'r':
      SBC_SIP_NAME("route", route)
      SBC_SIP_NAME("record-route", record_route)
      SBC_SIP_NAME("require", require)
      SBC_SIP_NAME("reason", reason)
      SBC_SIP_NAME("retry-after", retry_after)
      SBC_SIP_NAME("refer-to", refer_to)
      SBC_SIP_NAME("referred-by", referred_by)
      SBC_SIP_NAME("reject-contact", reject_contact)
      SBC_SIP_NAME("request-disposition", request_disposition)
      break;
    case 's':
      SBC_SIP_NAME("supported", supported)
      SBC_SIP_NAME("server", server)
      SBC_SIP_NAME("session-expires", session_expires)
      SBC_SIP_NAME("subject", subject)
      break;
    case 't': SBC_SIP_NAME("to", to) break;
    case 'u':
      SBC_SIP_NAME("user-agent", user_agent)
      SBC_SIP_NAME("unsupported", unsupported)
      break;
    case 'v': SBC_SIP_NAME("via", via) break;
    default: break;
  }
#undef SBC_SIP_NAME
  return header_id::other;
}

method method_from_name(std::string_view n) noexcept {
  switch (n.size()) {
    case 3:
      if (n == "ACK") return method::ack;
      if (n == "BYE") return method::bye;
      break;
    case 4:
      if (n == "INFO") return method::info;
      break;
    case 5:
      if (n == "PRACK") return method::prack;
      if (n == "REFER") return method::refer;
      break;
    case 6:
      if (n == "INVITE") return method::invite;
      if (n == "CANCEL") return method::cancel;
      if (n == "NOTIFY") return method::notify;
      if (n == "UPDATE") return method::update;
      break;
    case 7:
      if (n == "OPTIONS") return method::options;
      if (n == "PUBLISH") return method::publish;
      if (n == "MESSAGE") return method::message;
      break;
    case 8:
      if (n == "REGISTER") return method::register_;
      break;
    case 9:
      if (n == "SUBSCRIBE") return method::subscribe;
      break;
    default:
      break;
  }
  return method::unknown;
}

std::string_view method_name(method m) noexcept {
  auto i = static_cast<std::size_t>(m);
  return i < method_names.size() ? method_names[i] : std::string_view{};
}

std::string_view header_name(header_id id) noexcept {
  auto i = static_cast<std::size_t>(id);
  return i < header_names.size() ? header_names[i] : std::string_view{};
}

header_id header_from_name(std::string_view n) noexcept {
  // Names are tokens here (the parser checked), so eq_lower is exact.
  switch (n.size()) {
    case 1: return compact(n[0]);
    case 2: if (eq_lower(n, "to")) return header_id::to; break;
    case 3: if (eq_lower(n, "via")) return header_id::via; break;
    case 4:
      if (eq_lower(n, "cseq")) return header_id::cseq;
      if (eq_lower(n, "from")) return header_id::from;
      break;
    case 5:
      if (eq_lower(n, "route")) return header_id::route;
      if (eq_lower(n, "allow")) return header_id::allow;
      if (eq_lower(n, "event")) return header_id::event;
      break;
    case 6:
      if (eq_lower(n, "server")) return header_id::server;
      if (eq_lower(n, "reason")) return header_id::reason;
      break;
    case 7:
      switch (n[0] | 0x20) {
        case 'c':
          if (eq_lower(n, "call-id")) return header_id::call_id;
          if (eq_lower(n, "contact")) return header_id::contact;
          break;
        case 'e': if (eq_lower(n, "expires")) return header_id::expires; break;
        case 'r': if (eq_lower(n, "require")) return header_id::require; break;
        case 's': if (eq_lower(n, "subject")) return header_id::subject; break;
        default: break;
      }
      break;
    case 8:
      if (eq_lower(n, "refer-to")) return header_id::refer_to;
      if (eq_lower(n, "identity")) return header_id::identity;
      break;
    case 9: if (eq_lower(n, "supported")) return header_id::supported; break;
    case 10: if (eq_lower(n, "user-agent")) return header_id::user_agent; break;
    case 11:
      if (eq_lower(n, "referred-by")) return header_id::referred_by;
      if (eq_lower(n, "retry-after")) return header_id::retry_after;
      if (eq_lower(n, "unsupported")) return header_id::unsupported;
      break;
    case 12:
      switch (n[0] | 0x20) {
        case 'm': if (eq_lower(n, "max-forwards")) return header_id::max_forwards; break;
        case 'r': if (eq_lower(n, "record-route")) return header_id::record_route; break;
        case 'c': if (eq_lower(n, "content-type")) return header_id::content_type; break;
        case 'a': if (eq_lower(n, "allow-events")) return header_id::allow_events; break;
        default: break;
      }
      break;
    case 13: if (eq_lower(n, "proxy-require")) return header_id::proxy_require; break;
    case 14:
      if (eq_lower(n, "content-length")) return header_id::content_length;
      if (eq_lower(n, "accept-contact")) return header_id::accept_contact;
      if (eq_lower(n, "reject-contact")) return header_id::reject_contact;
      break;
    case 15: if (eq_lower(n, "session-expires")) return header_id::session_expires; break;
    case 16: if (eq_lower(n, "content-encoding")) return header_id::content_encoding; break;
    case 19:
      if (eq_lower(n, "request-disposition")) return header_id::request_disposition;
      break;
    default: break;
  }
  return header_id::other;
}

}  // namespace sbc::sip
