// libFuzzer target: the SIP parser, full check, proxy verdict and response builder on
// arbitrary bytes. Checks that every span stays inside the input and that a request the
// verdict answers yields a response that parses back. Fuzzing only.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sip-fastpath/sip_message.h"
#include "sip-fastpath/sip_response.h"
#include "sip-fastpath/sip_verdict.h"

namespace {

void check_span(sbc::sip::span s, std::size_t size) {
  if (s.end() > size) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sbc::sip;
  static message m;
  static message back;
  static char out[2 * max_message_size];
  std::string_view in(reinterpret_cast<const char*>(data), size);
  parse(in, m);
  for (unsigned i = 0; i < m.header_count; ++i) {
    check_span(m.headers[i].line, size);
    check_span(m.headers[i].value, size);
  }
  check_span(m.body, size);
  check_span(m.request_uri, size);
  if (m.has_top_via) check_span(m.top_via.branch, size);
  error first = error::none;
  error_set deep = check_message(m, first);
  if (!deep.empty() && first == error::none) std::abort();
  verdict v = proxy_verdict(m);
  if (v.act == action::respond) {
    if (v.code < 400 || v.code > 599) std::abort();
    response_spec spec;
    spec.code = v.code;
    spec.reason = v.reason;
    spec.to_tag = "fz";
    write_result r = build_response(m, spec, std::span<char>(out, sizeof out));
    if (!r.ok()) std::abort();  // a request the verdict answers must be answerable
    if (r.len > max_message_size) return 0;
    parse(std::string_view(out, r.len), back);
    if (!back.is_response() || back.status != v.code) std::abort();
  }
  return 0;
}
