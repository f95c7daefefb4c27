// Builders for SIP test messages: a valid request or response as a list of header lines
// that a test changes one at a time. Test code only.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sip-fastpath/sip_message.h"

namespace sbc::sip::testutil {

/// A message parsed from its own copy of the text (which the message's spans point into).
struct parsed_text {
  std::string text;
  std::unique_ptr<message> m = std::make_unique<message>();
  explicit parsed_text(std::string t) : text(std::move(t)) { parse(text, *m); }
  std::string_view operator()(span s) const { return s.in(text); }
};

struct draft {
  std::string start;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  /// Replaces the first header called `name` (exact case), or appends it.
  draft& set(std::string_view name, std::string_view value) {
    for (auto& h : headers) {
      if (h.first == name) {
        h.second = std::string(value);
        return *this;
      }
    }
    headers.emplace_back(name, value);
    return *this;
  }
  /// Appends a header line even if one of that name exists.
  draft& add(std::string_view name, std::string_view value) {
    headers.emplace_back(name, value);
    return *this;
  }
  draft& remove(std::string_view name) {
    std::erase_if(headers, [&](const auto& h) { return h.first == name; });
    return *this;
  }
  [[nodiscard]] std::string text() const {
    std::string s = start + "\r\n";
    for (const auto& h : headers) s += h.first + ": " + h.second + "\r\n";
    s += "\r\n";
    s += body;
    return s;
  }
};

inline draft request(std::string_view method = "INVITE",
                     std::string_view ruri = "sip:bob@198.18.0.20") {
  draft d;
  d.start = std::string(method) + " " + std::string(ruri) + " SIP/2.0";
  d.headers = {
      {"Via", "SIP/2.0/UDP 198.18.0.10:5060;branch=z9hG4bKabc"},
      {"Max-Forwards", "70"},
      {"From", "\"Alice\" <sip:alice@198.18.0.10>;tag=f1"},
      {"To", "<sip:bob@198.18.0.20>"},
      {"Call-ID", "call-1@198.18.0.10"},
      {"CSeq", "1 " + std::string(method)},
      {"Content-Length", "0"},
  };
  return d;
}

inline draft response(int code = 200, std::string_view reason = "OK") {
  draft d;
  d.start = "SIP/2.0 " + std::to_string(code) + " " + std::string(reason);
  d.headers = {
      {"Via", "SIP/2.0/UDP 198.18.0.10:5060;branch=z9hG4bKabc"},
      {"From", "\"Alice\" <sip:alice@198.18.0.10>;tag=f1"},
      {"To", "<sip:bob@198.18.0.20>;tag=t1"},
      {"Call-ID", "call-1@198.18.0.10"},
      {"CSeq", "1 INVITE"},
      {"Content-Length", "0"},
  };
  return d;
}

}  // namespace sbc::sip::testutil
