// The topology hiding stage ([[trunk]] topology_hiding; the encodings are topology_hiding.h):
// the INVITE toward a hidden side (point "before an attempt"), the responses coming back
// ("response in"), what a hidden dialog keeps ("dialog up"), and the encodings of the in-dialog
// requests of a hidden dialog, which the core routes (call_in_dialog.cc). A side is hidden when
// its trunk hides: the caller's, the trunk the call arrived on (stage::hide_caller); the
// callee's, its peer's trunk (stage::hide_callee). Its own state: the callee's Contact of each
// hidden dialog. Worker only: no heap after start, no locks or system calls.
#pragma once

#include <memory>

#include "sip-fastpath/call_state.h"
#include "sip-fastpath/sip_editor.h"
#include "sip-fastpath/topology_hiding.h"

namespace sbc::sip {

struct hiding_stage {
    explicit hiding_stage(uint32_t dialogs) : targets(new th_target[dialogs]) {}  // untouched until used
    std::unique_ptr<th_target[]> targets;  ///< by dialog slot: the callee's Contact URI of a hidden dialog
};

namespace hiding {

[[nodiscard]] inline bool trunk_hides(const proxy_tables& t, uint16_t trunk) noexcept
{
    return trunk < t.trunks.size() && t.trunks[trunk].topology_hiding;
}
/// Whether peer index `p`'s trunk hides.
[[nodiscard]] inline bool peer_hides(const proxy_tables& t, uint32_t p) noexcept
{
    return p < t.peers.size() && trunk_hides(t, t.peers[p].trunk);
}

/// Before an attempt: the INVITE `inv` of a call from `caller` toward peer index `p` (whose
/// trunk hides), leaving from `local` with `branch`: our Via, Record-Route and Contact in `ed`
/// take their hiding forms (written into `th`). False when they do not fit (counted).
bool on_attempt(const call_env& e, uint32_t p, const message& inv, std::string_view branch, const endpoint& local,
                const endpoint& caller, edits& ed, th_scratch& th) noexcept;

/// Response in, first half: a hidden Via of ours on top of `m` gives back the Vias it replaced
/// (into `ed`) and, when `dst` is given, sets it to the sender it names. False when it does
/// not decode (counted: not to be relayed).
bool restore_vias(const call_env& e, const message& m, endpoint* dst, edits& ed, th_scratch& th) noexcept;
/// Response in, second half: `m` relayed from our endpoint `our`; toward a hidden side
/// (`hide_to`) its Contact and Record-Routes are hidden; our Record-Route gives back the route
/// set it hid. False when something of ours does not decode or fit (counted).
bool hide_response(const call_env& e, const message& m, const endpoint& our, bool hide_to, edits& ed,
                   th_scratch& th) noexcept;

/// Dialog up: which sides of the dialog in slot `d` are hidden (dialog_entry::th_caller,
/// th_callee), from the call's attempt stages; the callee's Contact (of the 2xx `ok`) is kept
/// when any is.
uint8_t on_dialog_up(hiding_stage& s, stage_mask stages, const message& ok, uint32_t d) noexcept;
/// The callee's Contact URI kept for dialog `d` (empty: none).
std::string_view target_of(const hiding_stage& s, uint32_t d) noexcept;
/// True, with `next` its target, when `ruri` (a Request-URI decoded from the Contact we wrote)
/// is the callee's Contact kept for dialog `d` and that names an address: the target read
/// when the dialog started, so the URI is not parsed again for each request.
bool kept_target(const hiding_stage& s, uint32_t d, std::string_view ruri, endpoint& next) noexcept;

/// In-dialog: the route set an encoded ;sbc-th= of our Route hid, into `th.routes`; false
/// when it does not decode.
bool decode_routes(const call_env& e, std::string_view enc, th_scratch& th, std::string_view& routes) noexcept;
/// In-dialog: the Request-URI the Contact we wrote replaced (its ;sbc-th=), into `th.ruri`;
/// `ruri` stays empty when the Request-URI is not one we wrote. False when it does not decode.
bool decode_ruri(const call_env& e, const message& m, th_scratch& th, std::string_view& ruri) noexcept;
/// Whether the Request-URI of `m` names the SBC: a trunk's address or FQDN, with a port of it.
bool names_us(const proxy_tables& t, const message& m) noexcept;
/// The first value of a route set in its own buffer, as a next hop; false when it names no address.
bool first_route(std::string_view routes, endpoint& next) noexcept;
/// The name we present on our endpoint `local` (its trunk's FQDN), or "" (the address).
std::string_view host_of(const proxy_tables& t, const endpoint& local) noexcept;
/// In-dialog toward a hidden side: our Via (hiding the sender `src` and the Vias of `m`; an
/// ACK's, never answered, carries neither) and our Contact in `ed`; false when they do not
/// fit (counted th_too_big).
bool hide_request(const call_env& e, const message& m, const endpoint& local, std::string_view branch,
                  const endpoint& src, bool advertise, edits& ed, th_scratch& th) noexcept;

}  // namespace hiding
}  // namespace sbc::sip
