// sbc-sipcheck's checks and renderings: what one captured message is, what is wrong with
// it, and what the proxy would do, as text for people or JSON lines for scripts.
// Tool only (main thread); allocates freely.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sbc::sip {

/// Files larger than this are reported as oversized, not parsed.
inline constexpr std::size_t sipcheck_max_input = 65535;

struct file_report {
  std::string file;
  bool valid = false;
  std::string kind = "invalid";  // "request", "response", "invalid"
  std::string method;            // requests
  int status = 0;                // responses
  std::string call_id;
  std::string branch;
  std::string action = "drop";   // "forward", "respond", "drop"
  int code = 0;                  // with respond
  std::string reason;            // with respond
  std::vector<std::string> errors;    // short names
  std::vector<std::string> details;   // one human line per error
};

/// Checks one message as read from `file`; `data` holds at most sipcheck_max_input + 1
/// bytes (more means oversized), and `size` is the file's full size.
file_report check_message(std::string_view file, std::string_view data, std::size_t size);

/// A file that could not be read.
file_report unreadable_report(std::string_view file, std::string_view why);

std::string render_text(const file_report& r);
std::string render_json(const file_report& r);

}  // namespace sbc::sip
