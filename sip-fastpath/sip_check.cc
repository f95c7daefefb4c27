// The full grammar check of a parsed message, beyond the parser's fast pass (which
// validates only what forwarding needs). Any thread; no heap, no exceptions.
#include "sip-fastpath/sip_header_checks.h"
#include "sip-fastpath/sip_message.h"

namespace sbc::sip {

error_set check_message(const message& m, error& first) noexcept {
  error_set set;
  first = error::none;
  if (m.kind == message_kind::invalid) return set;
  error_sink es{set, first};
  const std::string_view b = m.raw;
  for (unsigned i = 0; i < m.header_count; ++i) {
    const header& h = m.headers[i];
    name_addr tmp;
    switch (h.id) {
      case header_id::via:
        check_via(es, b, h.value, nullptr, true);
        break;
      case header_id::from:
        if (i == m.h_from) check_name_addr_header(es, b, h.value, error::bad_from, error::none, &tmp, true);
        break;
      case header_id::to:
        if (i == m.h_to) check_name_addr_header(es, b, h.value, error::bad_to, error::none, &tmp, true);
        break;
      case header_id::contact:
        check_name_addr_header(es, b, h.value, error::bad_contact, error::none, nullptr, true);
        break;
      case header_id::route:
      case header_id::record_route:
        check_name_addr_header(es, b, h.value, error::bad_route, error::none, nullptr, true);
        break;
      default:
        break;
    }
  }
  return set;
}

}  // namespace sbc::sip
