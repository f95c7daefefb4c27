// Header value checks shared by the parser's fast pass and check_message()'s full pass.
// Any thread; no heap, no exceptions.
#include "sip-fastpath/sip_header_checks.h"

namespace sbc::sip {

uint32_t skip_ws(std::string_view b, uint32_t p, uint32_t e) noexcept {
  while (p < e && chars::is(b[p], chars::ws)) ++p;
  return p;
}

// Walks the comma-separated elements of a name-addr header. With `single`, a second
// element is the `dup` error and the first is parsed into *single.
void check_name_addr_header(error_sink& es, std::string_view b, span v, error bad, error dup,
                            name_addr* single, bool strict, parsed_element* only) noexcept {
  const uint32_t e = v.end();
  uint32_t p = v.off;
  name_addr tmp;
  bool kept = false;  // the first element went to *only
  for (unsigned count = 0;; ++count) {
    if (count == 1 && single != nullptr) {
      if (dup != error::none) es.add(dup);
      return;
    }
    uint32_t next = p;
    if (single == nullptr && bad == error::bad_contact && p < e && b[p] == '*') {
      next = p + 1;  // Contact: * (REGISTER removing all bindings)
    } else {
      const bool keep = count == 0 && only != nullptr && strict;
      error err = parse_name_addr_at(b, p, e,
                                     keep                                 ? only->na
                                     : count == 0 && single != nullptr ? *single
                                                                       : tmp,
                                     bad, next, strict, keep ? &only->u : nullptr);
      if (err != error::none) {
        es.add(err);
        return;
      }
      kept = keep;
    }
    p = skip_ws(b, next, e);
    if (p == e) {
      if (count == 0 && kept) only->ok = true;  // one element, valid
      return;
    }
    if (b[p] != ',') {
      es.add(bad);
      return;
    }
    p = skip_ws(b, p + 1, e);
    if (p == e) {
      es.add(bad);  // trailing comma
      return;
    }
  }
}

bool check_via(error_sink& es, std::string_view b, span v, via* top_out, bool all) noexcept {
  const uint32_t e = v.end();
  uint32_t p = v.off;
  via tmp;
  for (unsigned count = 0;; ++count) {
    const bool top = top_out != nullptr && count == 0;
    uint32_t next = p;
    if (!parse_via_at(b, p, e, top ? *top_out : tmp, next, all)) {
      // Name the unbalanced quote when that is what broke the element.
      for (uint32_t i = next; i < e; ++i) {
        if (b[i] == '"') {
          if (skip_quoted(b, i, e) == 0) {
            es.add(error::unbalanced_quotes);
            return false;
          }
          break;
        }
      }
      es.add(error::bad_via);
      return false;
    }
    if (!all) return true;  // the parser's fast pass checks the top Via only
    p = skip_ws(b, next, e);
    if (p == e) return true;
    if (b[p] != ',') {
      es.add(error::bad_via);
      return false;
    }
    p = skip_ws(b, p + 1, e);
    if (p == e) {
      es.add(error::bad_via);
      return false;
    }
  }
}

}  // namespace sbc::sip
