// The identifiers the SBC mints into SIP messages, and reading them back: the Via branch of
// a forwarded request (owner worker, setup slot, generation, attempt; or, for stateless
// forwarding, the address to relay the response to) and the worker parameter of our
// Record-Route. Any thread; pure.
#pragma once

#include <cstdint>
#include <string_view>

#include "sip-fastpath/sip_message.h"

namespace sbc::sip {

/// "z9hG4bKsT" + worker(2) + slot(8) + generation(4) + attempt(1), hex.
constexpr std::string_view branch_stateful = "z9hG4bKsT";
/// "z9hG4bKsL" + worker(2) + hash(12), hex; the Via also carries ;sbc-src=IIIIIIII.PPPP.
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
/// Owner worker of a stateless branch, or -1.
int stateless_owner(std::string_view branch) noexcept;

/// Hex helpers.
char* put_hex(char* out, uint64_t v, unsigned digits) noexcept;
bool get_hex(std::string_view s, uint64_t& v) noexcept;

/// Dotted quad of a host-order address into out (at most 15 bytes); returns the end.
char* put_ipv4(char* out, uint32_t ip) noexcept;
/// Parses a dotted quad; false when `s` is not exactly one.
bool parse_ipv4_text(std::string_view s, uint32_t& ip) noexcept;

/// The value of URI or header parameter `name` (lower case) in a ";a=b;c" list, or empty;
/// `found` tells a present parameter without value from an absent one.
std::string_view param_value(std::string_view params, std::string_view name, bool& found) noexcept;

}  // namespace sbc::sip
