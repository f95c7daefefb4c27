// Builds an outgoing message from a received one plus proxy edits (push/pop the top Via,
// add Record-Route, replace the Request-URI, decrement Max-Forwards, replace the body and
// fix Content-Length) in one pass into a caller-provided buffer, which may be the
// received buffer itself with headroom in front. Any thread; no heap, no exceptions.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "sip-fastpath/overload_control.h"
#include "sip-fastpath/sip_message.h"
#include "sip-fastpath/sip_writer.h"

namespace sbc::sip {

/// Input bytes [at, at + del) replaced by `text` (del 0: inserted at `at`), for edits another
/// stage worked out on the same message (the outbound rules: sip_rules.h rule_edits). Never
/// overlaps what the named edits below touch.
struct line_edit {
  uint32_t at = 0;
  uint32_t del = 0;
  std::string_view text;
};

/// Edits to apply; every view must stay valid during edit() and must not point into the
/// bytes being rewritten. Defaults change nothing.
struct edits {
  bool pop_via = false;                  // remove the top Via value (responses)
  bool pop_route = false;                // remove the top Route value (loose routing, 16.12)
  uint8_t pop_routes = 0;                // remove this many top Route values, across Route
                                         // headers (our doubled entries, RFC 5658); pop_route is 1
  std::string_view push_via;             // Via value to add on top, e.g. "SIP/2.0/UDP h;branch=z9hG4bK1"
  std::string_view record_route;         // Record-Route value to add on top, e.g. "<sip:h;lr>"
  std::string_view record_route_2;       // a second Record-Route header right below it (RFC 5658)
  std::string_view request_uri;          // new Request-URI (requests)
  bool decrement_max_forwards = false;   // adds "Max-Forwards: 70" when absent (RFC 3261 16.6)
  bool replace_body = false;
  std::string_view body;                 // with replace_body
  std::string_view content_type;         // with replace_body: new Content-Type, empty: keep
  const via_splice* via_params = nullptr; // RFC 7339 feedback: cuts and text in one Via element
                                          // (not the one pop_via removes)
  // Topology hiding (sip-fastpath/topology_hiding.h):
  bool drop_vias = false;                // remove every Via line (with push_via: ours is the only one)
  bool drop_record_routes = false;       // remove every Record-Route line (record_route: ours only)
  std::string_view contact;              // new value of the first Contact line (others removed); empty: keep
  std::string_view push_route;           // Route value(s) put where the first Route line is (after
                                         // what pop_routes removes), else before the blank line
  std::span<const line_edit> lines;      // applied after the edits above (at one offset: after them)
};

/// Writes m with `e` applied into out and returns its length. The output always carries a
/// Content-Length equal to its body; bytes after the declared body are not copied.
///
/// In place: out may contain m.raw (received at out.data() + headroom); the edit then
/// succeeds only when no write overtakes input not yet read, else error::no_space.
///
/// Errors: error::no_space (does not fit), the message's own first_error when it has no
/// valid start line or header block, missing_via for pop_via without a Via,
/// bad_max_forwards when decrementing a Max-Forwards of 0, bad_request_uri when asked to
/// replace the Request-URI of a response.
write_result edit(const message& m, const edits& e, std::span<char> out) noexcept;

/// How far edit() moved the input's bytes: each operation's input offset and the bytes it
/// added less those it removed, in input order. Lets a caller index the output by the input's
/// parse instead of parsing the output again.
struct edit_shifts {
  static constexpr std::size_t capacity = 16;
  struct shift {
    uint32_t at;
    int32_t delta;
    bool insert;  // removes nothing: bytes at `at` itself move too
  };
  std::array<shift, capacity> ops{};
  std::size_t n = 0;
  bool complete = false;  // false: more operations than capacity, moved() is not to be used
  /// Where input offset `off` is in the output (`off` not inside an edited range).
  [[nodiscard]] uint32_t moved(uint32_t off) const noexcept {
    int64_t o = off;
    for (std::size_t i = 0; i < n && (ops[i].at < off || (ops[i].at == off && ops[i].insert)); ++i) o += ops[i].delta;
    return static_cast<uint32_t>(o);
  }
};
/// edit() that also says how it moved the input (`shifts`).
write_result edit(const message& m, const edits& e, std::span<char> out, edit_shifts& shifts) noexcept;

}  // namespace sbc::sip
