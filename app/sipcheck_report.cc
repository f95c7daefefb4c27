// sbc-sipcheck's checks and renderings. Tool only (main thread); allocates freely.
#include "app/sipcheck_report.h"

#include <memory>

#include <nlohmann/json.hpp>

#include "sip-fastpath/sip_message.h"
#include "sip-fastpath/sip_verdict.h"

namespace sbc::sip {
namespace {

// Binary input: a NUL before the body, or control bytes in the first line. A NUL escaped
// inside a quoted string (RFC 3261 quoted-pair: any octet but CR and LF) is text.
bool looks_binary(std::string_view data) {
  std::size_t head = data.find("\r\n\r\n");
  std::string_view headers = data.substr(0, head == std::string_view::npos ? data.size() : head);
  bool quoted = false;
  for (std::size_t i = 0; i < headers.size(); ++i) {
    const char c = headers[i];
    if (c == '\0') return true;
    if (c == '\n') {
      // A quoted string ends with its header (an unterminated one is the parser's to report).
      const bool folded = i + 1 < headers.size() && (headers[i + 1] == ' ' || headers[i + 1] == '\t');
      if (!folded) quoted = false;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == '\\' && quoted && i + 1 < headers.size() && headers[i + 1] != '\r' &&
               headers[i + 1] != '\n') {
      ++i;  // the escaped octet, NUL included
    }
  }
  std::size_t nl = data.find('\n');
  std::string_view first = data.substr(0, nl == std::string_view::npos ? data.size() : nl);
  if (!first.empty() && first.back() == '\r') first.remove_suffix(1);
  for (char c : first) {
    auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) return true;
  }
  return false;
}

std::string printable(std::string_view s) {
  std::string out;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? '?' : c;
  }
  return out;
}

}  // namespace

file_report unreadable_report(std::string_view file, std::string_view why) {
  file_report r;
  r.file = std::string(file);
  r.errors.emplace_back("unreadable");
  r.details.push_back("cannot read: " + std::string(why));
  return r;
}

file_report check_message(std::string_view file, std::string_view data, std::size_t size) {
  file_report r;
  r.file = std::string(file);
  if (size > sipcheck_max_input) {
    r.errors.emplace_back("too_large");
    r.details.push_back("file is " + std::to_string(size) + " bytes; a SIP message over UDP is at most " +
                        std::to_string(sipcheck_max_input) + " bytes (64 KiB)");
    return r;
  }
  if (data.empty()) {
    r.errors.emplace_back("empty");
    r.details.emplace_back("file is empty");
    return r;
  }
  if (looks_binary(data)) {
    r.errors.emplace_back("binary");
    r.details.emplace_back(
        "binary data, not a SIP message (a NUL in the headers outside a quoted-pair, or control bytes "
        "in the start line)");
    return r;
  }
  // The message object is large (a fixed header index): keep it off the stack.
  auto m = std::make_unique<message>();
  parse(data, *m);
  error deep_first = error::none;
  error_set all = check_message(*m, deep_first);
  all.bits |= m->errors.bits;
  r.valid = all.empty();
  if (m->is_request()) {
    r.kind = "request";
    r.method = printable(m->text(m->method_text));
  } else if (m->is_response()) {
    r.kind = "response";
    r.status = m->status;
  }
  r.call_id = printable(m->call_id());
  if (m->has_top_via && m->top_via.has_branch) r.branch = printable(m->text(m->top_via.branch));
  all.for_each([&](error e) {
    r.errors.emplace_back(error_name(e));
    r.details.emplace_back(error_text(e));
  });
  verdict v = proxy_verdict(*m);
  r.action = std::string(action_name(v.act));
  if (v.act == action::respond) {
    r.code = v.code;
    r.reason = std::string(v.reason);
    if (v.code == 420) r.reason += " (" + printable(m->text(v.unsupported)) + ")";
  }
  return r;
}

std::string render_text(const file_report& r) {
  std::string s = r.file + ": " + (r.valid ? "valid" : "INVALID");
  if (r.kind == "request") {
    s += " request " + r.method;
  } else if (r.kind == "response") {
    s += " response " + std::to_string(r.status);
  }
  s += "\n";
  if (r.kind != "invalid" || !r.branch.empty()) {  // a broken Request-Line's headers are read too
    s += "  Call-ID: " + (r.call_id.empty() ? std::string("(none)") : r.call_id) + "\n";
    s += "  top Via branch: " + (r.branch.empty() ? std::string("(none)") : r.branch) + "\n";
  }
  if (r.errors.empty()) s += "  problems: none\n";
  for (std::size_t i = 0; i < r.errors.size(); ++i)
    s += "  problem: " + r.errors[i] + ": " + r.details[i] + "\n";
  s += "  action: " + r.action;
  if (r.action == "respond") s += " " + std::to_string(r.code) + " " + r.reason;
  s += "\n";
  return s;
}

std::string render_json(const file_report& r) {
  nlohmann::json j;
  j["file"] = r.file;
  j["valid"] = r.valid;
  j["kind"] = r.kind;
  if (r.kind == "request") j["method"] = r.method;
  if (r.kind == "response") j["status"] = r.status;
  j["call_id"] = r.call_id;
  j["branch"] = r.branch;
  j["action"] = r.action == "respond" ? "respond " + std::to_string(r.code) : r.action;
  if (r.action == "respond") {
    j["code"] = r.code;
    j["reason"] = r.reason;
  }
  j["errors"] = r.errors;
  j["details"] = r.details;
  // Captures can hold any bytes: replace invalid UTF-8 instead of throwing.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace sbc::sip
