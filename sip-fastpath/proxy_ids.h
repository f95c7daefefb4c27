// The identifiers the SBC mints into SIP messages, and reading them back: the Via branch of
// a forwarded request (owner worker, setup slot, generation, attempt; or, for stateless
// forwarding, the address to relay the response to), our Via and Record-Route for the
// transport of the leg they are on, and the worker parameter of our Record-Route. Any
// thread; pure, no heap.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "common/address.h"
#include "sip-fastpath/sip_message.h"

namespace sbc::sip {

/// "z9hG4bKsT" + worker(2) + slot(8) + generation(4) + attempt(1), hex.
constexpr std::string_view branch_stateful = "z9hG4bKsT";
/// "z9hG4bKsL" + worker(2) + hash(12), hex; the Via also carries ;sbc-src= (write_via).
constexpr std::string_view branch_stateless = "z9hG4bKsL";
constexpr std::size_t branch_stateful_len = 9 + 2 + 8 + 4 + 1;

struct txn_id {
    uint8_t worker = 0;
    uint32_t slot = 0;
    uint16_t gen = 0;
    uint8_t attempt = 0;
};

/// Writes the stateful branch into out (branch_stateful_len bytes).
void write_branch(char* out, const txn_id& id) noexcept;
/// Reads a stateful branch; false when `branch` is not one of ours.
bool read_branch(std::string_view branch, txn_id& id) noexcept;
/// Writes the stateless branch of `worker` for `key` (its low 48 bits) into out; its length
/// (branch_stateless_len).
std::size_t write_stateless_branch(char* out, uint8_t worker, uint64_t key) noexcept;
constexpr std::size_t branch_stateless_len = 9 + 2 + 12;
/// Owner worker of a stateless branch, or -1.
int stateless_owner(std::string_view branch) noexcept;

/// The worker that owns a message's state, from the branch or Record-Route parameter the
/// SBC minted (or the Contact it wrote, topology_hiding.h); -1 when none of ours is in it (any
/// worker may handle it). Defined in proxy.cc.
int message_owner(const message& m) noexcept;
/// The same from the message's text: parses `text` into `scratch`, then message_owner(scratch);
/// -1 when it does not parse. Exactly what a worker decides for the message it receives, so that
/// the stream thread hands a message straight to that worker and the worker does not hand it on.
/// Any thread, each with its own `scratch`; no heap.
int message_owner(std::string_view text, message& scratch) noexcept;

/// Hex helpers.
char* put_hex(char* out, uint64_t v, unsigned digits) noexcept;
bool get_hex(std::string_view s, uint64_t& v) noexcept;

/// Longest Via value write_via writes (IPv6, stream transport, longest branch).
constexpr std::size_t max_via_size = 176;
/// Longest host name the SBC presents (an FQDN, RFC 1035).
constexpr std::size_t max_fqdn_size = 253;
/// Longest Record-Route value write_record_route writes (an FQDN host at most max_fqdn_size).
constexpr std::size_t max_record_route_size = 96 + max_fqdn_size;

/// Our Via for a request that `src` sent and we forward from `local`, with `branch`:
/// "SIP/2.0/UDP 198.18.0.1:5060;branch=...;sbc-src=..." — the sent-protocol is the transport
/// of the leg the request goes out on (local.proto), IPv6 hosts in brackets, and sbc-src
/// encodes where the response goes back (read_via_source). With `advertise_oc`, then
/// ";oc;oc-algo=\"loss\"": RFC 7339 section 5.1, we take overload control feedback (the loss
/// algorithm) from the server the request goes to. Returns the length written, 0 when `out` is
/// too small.
std::size_t write_via(std::span<char> out, const endpoint& local, std::string_view branch,
                      const endpoint& src, bool advertise_oc = false) noexcept;
/// The endpoint a Via's sbc-src value names: "IIIIIIII.PPPP" (IPv4, UDP, the form since the
/// start), 32 hex digits for IPv6, then ".tCCCCCCCC" (TCP) or ".sCCCCCCCC" (TLS) with the
/// connection id. False when `value` is none of these.
bool read_via_source(std::string_view value, endpoint& src) noexcept;
/// Our Record-Route, so that in-dialog requests come back through `local`'s leg to worker
/// `worker`: "<sip:198.18.0.1:5060;lr;w=00>", with ";transport=tcp" or ";transport=tls" on a
/// stream leg. Returns the length written, 0 when `out` is too small.
std::size_t write_record_route(std::span<char> out, const endpoint& local, uint8_t worker) noexcept;
/// The same with `host` (the FQDN the SBC presents on that leg) instead of local's address:
/// "<sip:sbc.example.com:5061;transport=tls;lr;w=00>"; an empty `host` writes the address.
/// 0 when `out` is too small or `host` is longer than max_fqdn_size.
std::size_t write_record_route(std::span<char> out, const endpoint& local, std::string_view host,
                               uint8_t worker) noexcept;

/// The value of URI or header parameter `name` (lower case) in a ";a=b;c" list, or empty;
/// `found` tells a present parameter without value from an absent one.
std::string_view param_value(std::string_view params, std::string_view name, bool& found) noexcept;

}  // namespace sbc::sip
