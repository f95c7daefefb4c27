// Request-URI retargeting (RFC 3261 16.5, 16.6 step 2): an INVITE whose Request-URI names the
// SBC itself (a trunk's address or FQDN, with a port of that trunk) leaves toward each peer
// with that peer in it, so that a leg never carries the other leg's address, port or
// transport. A Request-URI naming anyone else is left as it came. Read once when the INVITE is
// kept (ruri_parts, offsets into the kept copy), written for every attempt and for the CANCEL
// and the ACK of a failure of that attempt (the same URI: RFC 3261 9.1, 17.1.1.3). Worker
// threads; no heap.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "common/address.h"
#include "sip-fastpath/proxy_tables.h"
#include "sip-fastpath/sip_message.h"

namespace sbc::sip {

/// The kept INVITE's Request-URI, as far as a retarget needs it (spans into the kept copy).
struct ruri_parts {
    span user;        ///< the user part, without '@'; empty when none
    span params;      ///< from the first ';' after the host, up to '?' or the end
    span headers;     ///< after '?'
    bool sips = false;
    bool ours = false;  ///< it names the SBC: attempts retarget it
};

/// Whether the parsed URI `u` (in `raw`) names the SBC: sip or sips, a trunk's address or its
/// FQDN, and a port of that trunk (5060 when none, 5061 for sips).
bool names_sbc(const proxy_tables& t, std::string_view raw, const uri& u) noexcept;

/// The parts of `m`'s Request-URI (parsed by the parser) that a retarget keeps, `ours` set
/// when it names the SBC; `moved` maps an offset of `m` to the kept copy.
template <typename Moved>
ruri_parts ruri_parts_of(const proxy_tables& t, const message& m, Moved moved) noexcept
{
    ruri_parts r;
    if (m.errors.has(error::bad_request_uri) || !names_sbc(t, m.raw, m.ruri)) return r;
    auto at = [&](span s) { return s.len == 0 ? span{} : span{static_cast<uint16_t>(moved(s.off)), s.len}; };
    r.user = at(m.ruri.user);
    r.params = at(m.ruri.params);
    r.headers = at(m.ruri.headers);
    r.sips = m.ruri.scheme == uri_scheme::sips;
    r.ours = true;
    return r;
}

/// The buffer a retargeted Request-URI is written into; a longer one (a long user part,
/// parameters or a TLS peer's name) is not retargeted: the INVITE goes as it came.
constexpr std::size_t max_retarget_size = 512;

/// "sip:USER@HOST:PORT;transport=..;PARAMS?HEADERS" toward `peer` into `out`: HOST:PORT is
/// `host_port` when given (the peer's, formatted when the tables were built), else the peer's
/// `server_name` (a TLS peer's name) when given, else its address, with its port; the transport
/// parameter says TCP or TLS (none for UDP; sips: for TLS when the INVITE came as sips); the
/// kept URI's parameters follow but for transport and maddr, which named the SBC. Returns
/// the length, 0 when it does not fit.
std::size_t write_retargeted(std::span<char> out, std::string_view kept, const ruri_parts& r, const endpoint& peer,
                             std::string_view server_name, std::string_view host_port = {}) noexcept;

/// The Request-URI an attempt toward `peer` (index `pi` in `t.peers`, or no_peer) carries,
/// written into `out`: empty when the INVITE's names someone else (it goes as it came) or the
/// retarget does not fit (then too). A TLS peer's server name is its host; a peer of the table
/// gives its uri_host.
std::string_view retargeted(const proxy_tables& t, std::string_view text, const ruri_parts& r, const endpoint& peer,
                            uint32_t pi, std::span<char> out) noexcept;

}  // namespace sbc::sip
