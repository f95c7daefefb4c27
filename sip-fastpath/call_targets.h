// Where a request goes, read from its URIs: a URI's host (an address literal), port and
// transport as an endpoint; whether a Route URI is one of our Record-Routes (and which of our
// endpoints it names); the host of a message's Contact. The fast path does no DNS: a name is
// no target. Any thread; pure over the tables and the message.
#pragma once

#include <optional>
#include <string_view>

#include "common/address.h"
#include "sip-fastpath/proxy_tables.h"
#include "sip-fastpath/sip_message.h"

namespace sbc::sip {

/// The sbc-th parameter of one of our Route URIs (topology hiding), read with the same parse.
struct route_th {
    std::string_view value;
    bool found = false;
};

/// Whether a Route URI is one of our Record-Routes (RFC 3261 16.4): ";lr" and our worker
/// parameter, and a host and port of ours: the address and any port (any transport) of a
/// trunk, or the FQDN of a trunk or of a region with a port of a trunk its peers use. `local`
/// gets our endpoint it names; `th`, when asked, its sbc-th parameter.
bool is_our_route(const proxy_tables& t, std::string_view raw, span uri_text, endpoint& local,
                  route_th* th = nullptr) noexcept;
/// The same for a Route URI parsed already (first_route: the full check's).
bool is_our_route(const proxy_tables& t, std::string_view raw, const uri& u, endpoint& local,
                  route_th* th = nullptr) noexcept;
/// A URI's host (an address literal), port and transport as an endpoint; false for a name.
bool uri_target(std::string_view raw, span uri_text, endpoint& ep) noexcept;
/// The same for a URI parsed already (the parser's Request-URI, a message's Contact).
bool parsed_uri_target(std::string_view raw, const uri& u, endpoint& ep) noexcept;
/// The host of a message's Contact when it is an address literal (a name, or no Contact:
/// nullopt); the Contact is parsed once per message (first_contact_uri).
std::optional<ip_address> contact_address(const message& m) noexcept;

/// Whether a response carries a Via below the top one (it can be relayed).
bool has_second_via(const message& m) noexcept;

/// Host names compared without case (RFC 3261 19.1.4); never equal when empty.
bool same_host_name(std::string_view a, std::string_view b) noexcept;

}  // namespace sbc::sip
