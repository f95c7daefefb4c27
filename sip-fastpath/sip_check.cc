// The full grammar check of a parsed message, beyond the parser's fast pass (which
// validates only what forwarding needs); it keeps the first Contact and Route it parsed in
// the message's memos (sip_message.h). Any thread; no heap, no exceptions.
#include "sip-fastpath/sip_header_checks.h"
#include "sip-fastpath/sip_message.h"

namespace sbc::sip {

namespace {

// What the check parsed of a header's one element, for its readers (first_contact,
// first_route): the same name-addr and URI they would parse, so none of them parses it again.
void keep(message::element_memo& memo, const parsed_element& e) noexcept {
  if (!e.ok || memo.state != message::element_memo::unknown) return;
  memo.na = e.na;
  memo.u = e.u;
  memo.state = message::element_memo::both;
}

}  // namespace

error_set check_message(const message& m, error& first) noexcept {
  error_set set;
  first = error::none;
  if (m.kind == message_kind::invalid) return set;
  error_sink es{set, first};
  const std::string_view b = m.raw;
  for (unsigned i = 0; i < m.header_count; ++i) {
    const header& h = m.headers[i];
    name_addr tmp;
    parsed_element first;
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
        check_name_addr_header(es, b, h.value, error::bad_contact, error::none, nullptr, true,
                               i == m.h_contact ? &first : nullptr);
        if (i == m.h_contact) keep(m.contact_, first);
        break;
      case header_id::route:
        check_name_addr_header(es, b, h.value, error::bad_route, error::none, nullptr, true,
                               i == m.h_route ? &first : nullptr);
        if (i == m.h_route) keep(m.route_, first);
        break;
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
