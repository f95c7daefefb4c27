// libFuzzer target: parse, then apply proxy edits chosen by the first input byte, into a
// fresh buffer and in place with headroom. A valid message must stay valid after edits
// and both outputs must be identical. Fuzzing only.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "sip-fastpath/sip_editor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sbc::sip;
  if (size < 1) return 0;
  const uint8_t flags = data[0];
  ++data;
  --size;
  static message m;
  static message back;
  static char fresh[2 * max_message_size];
  static char inplace[2 * max_message_size];
  std::string_view in(reinterpret_cast<const char*>(data), size);
  parse(in, m);

  edits e;
  if (flags & 1) e.push_via = "SIP/2.0/UDP 198.18.0.1:5060;branch=z9hG4bK-fuzz";
  if (flags & 2) e.pop_via = true;
  if (flags & 4) e.record_route = "<sip:198.18.0.1;lr>";
  if ((flags & 8) && m.is_request()) e.request_uri = "sip:x@198.18.0.2:5062";
  if (flags & 16) e.decrement_max_forwards = true;
  if (flags & 32) {
    e.replace_body = true;
    e.body = "v=0\r\nc=IN IP4 198.18.0.1\r\n";
    if (flags & 64) e.content_type = "application/sdp";
  }
  write_result r = edit(m, e, std::span<char>(fresh, sizeof fresh));
  if (!r.ok()) return 0;
  if (r.len > sizeof fresh) std::abort();

  // The same edit in place, with enough headroom, must give the same bytes.
  constexpr std::size_t headroom = 512;
  if (size + headroom <= sizeof inplace) {
    std::memcpy(inplace + headroom, data, size);
    message& m2 = back;
    parse(std::string_view(inplace + headroom, size), m2);
    write_result r2 = edit(m2, e, std::span<char>(inplace, sizeof inplace));
    if (!r2.ok() || r2.len != r.len || std::memcmp(inplace, fresh, r.len) != 0) std::abort();
  }

  // Round trip: a valid message (fast pass and full check) stays valid, edits visible.
  error first = error::none;
  const bool was_ok = m.ok() && check_message(m, first).empty();
  const bool had_two_vias = [&] {
    unsigned n = 0;
    for (unsigned i = 0; i < m.header_count; ++i) n += m.headers[i].id == header_id::via;
    return n >= 2;
  }();
  if (m.header_count + 4 > max_headers) return 0;  // the edits may push it over the cap
  parse(std::string_view(fresh, r.len), back);
  // Popping what may be the only Via, without pushing one, legitimately leaves none.
  if (e.pop_via && e.push_via.empty() && !had_two_vias) return 0;
  if (was_ok) {
    if (!back.ok() || !check_message(back, first).empty()) std::abort();
    if (back.body.len != (e.replace_body ? e.body.size() : m.body.len)) std::abort();
    if (!e.request_uri.empty() && back.request_uri.in(std::string_view(fresh, r.len)) != e.request_uri)
      std::abort();
  }
  return 0;
}
