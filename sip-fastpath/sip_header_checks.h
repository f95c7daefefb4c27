// Header value checks shared by the parser's fast pass and check_message()'s full pass:
// comma-separated Via and name-addr lists. Any thread; no heap, no exceptions.
#pragma once

#include <cstdint>
#include <string_view>

#include "sip-fastpath/sip_error.h"
#include "sip-fastpath/sip_uri.h"

namespace sbc::sip {

/// Where checks record problems: a set plus the first one found.
struct error_sink {
  error_set& set;
  error& first;
  void add(error e) noexcept {
    if (e == error::none) return;
    if (first == error::none) first = e;
    set.add(e);
  }
};

uint32_t skip_ws(std::string_view b, uint32_t p, uint32_t e) noexcept;

/// The only element of a name-addr header value and its URI, as a strict check parsed them;
/// `ok` only when the value held that one element and it was valid.
struct parsed_element {
  name_addr na;
  uri u;
  bool ok = false;
};

/// Walks the comma-separated elements of a name-addr header value. With `single`, a
/// second element is the `dup` error and the first is parsed into *single. With strict
/// false URIs are located, not validated, and parameter bytes are not checked. With `only`
/// (strict), a value of one valid element is kept there for readers that would parse it
/// again (first_contact, the in-dialog route walk).
void check_name_addr_header(error_sink& es, std::string_view b, span v, error bad, error dup,
                            name_addr* single, bool strict, parsed_element* only = nullptr) noexcept;

/// Checks a Via header value: the first element only, its hosts and parameter bytes
/// unchecked (the fast pass), or all of them strictly. The first element goes to *top_out
/// when given. False when a problem was recorded.
bool check_via(error_sink& es, std::string_view b, span v, via* top_out, bool all) noexcept;

}  // namespace sbc::sip
