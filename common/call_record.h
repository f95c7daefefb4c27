// One call detail record as a worker hands it to the control core when a call ends (answered
// or not): plain data, fixed size, copied into a per-worker single-producer ring (an
// rte_ring of elements of sizeof(call_record)); the control core turns it into one JSON line
// (control/cdr_writer.*). Times are the worker's millisecond clock (rte_rdtsc() / tsc_per_ms,
// as sip_input::now_ms); the control core maps them to wall-clock time.
// Written by: the worker that owns the call (sip::proxy fills it, the dataplane enqueues it).
// Read by: the control core, after dequeuing its copy.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "common/address.h"

namespace sbc {

/// How one attempt of a call toward a peer ended.
enum class cdr_outcome : uint8_t {
    answered = 1,    ///< 2xx
    code = 2,        ///< a final non-2xx response (`code`)
    timeout = 3,     ///< no answer within the peer's no-answer timer (silence)
    icmp = 4,        ///< ICMP unreachable
    connection = 5,  ///< the TCP/TLS connection failed or there was none
    cancelled = 6,   ///< the caller cancelled while this attempt was under way
    not_sent = 7,    ///< the INVITE could not be sent (too big, no route, no buffer)
};

/// Who sent the final response the caller got.
enum class cdr_final_by : uint8_t { none = 0, peer = 1, sbc = 2 };

/// Why the call ended.
enum class cdr_end : uint8_t {
    failed = 1,          ///< never answered: the final non-2xx went to the caller
    cancelled = 2,       ///< the caller sent CANCEL before an answer
    bye_caller = 3,      ///< answered; the caller (A side) sent BYE
    bye_callee = 4,      ///< answered; the callee (B side) sent BYE
    media_timeout = 5,   ///< answered; media went silent, the SBC sent BYE to both sides
    bye_timeout = 6,     ///< answered; a BYE got no answer (408), the dialog ended
    drain = 7,           ///< answered; still up when the drain deadline passed
    refused = 8,         ///< refused before any attempt (admission, no route, overload, draining)
};

constexpr std::size_t cdr_max_attempts = 8;   ///< attempts kept per call; more are counted in `attempts`
constexpr std::size_t cdr_callid_size = 96;   ///< Call-ID bytes kept (longer ones are cut, `callid_cut`)
constexpr std::size_t cdr_user_size = 40;     ///< From/To user part bytes kept

struct cdr_attempt {
    uint32_t peer_id = 0;          ///< index into the snapshot's peers (the control core names it)
    uint32_t sent_ms = 0;          ///< from the call's INVITE to this attempt's INVITE
    uint32_t ended_ms = 0;         ///< from the call's INVITE to its outcome
    uint16_t code = 0;             ///< its final response (answered, code); 0 otherwise
    cdr_outcome outcome = cdr_outcome::code;
    uint8_t pad = 0;
};

/// One direction of the call's media (the flow arriving from that side, first m-line's RTP).
struct cdr_media {
    uint64_t packets = 0;
    uint64_t bytes = 0;
    uint32_t lost = 0;             ///< RFC 3550 cumulative loss as counted by the relay
    uint32_t jitter_us = 0;        ///< RFC 3550 interarrival jitter at the end, microseconds
    uint8_t payload_type = 255;    ///< RTP payload type seen (255: none); the E-model's codec
    std::array<uint8_t, 7> pad{};
};

struct call_record {
    uint64_t invite_ms = 0;        ///< worker clock: the caller's INVITE arrived
    uint32_t first_provisional_ms = 0;  ///< from the INVITE to the first provisional above 100 relayed (0: none)
    uint32_t answer_ms = 0;        ///< from the INVITE to the 2xx relayed (0: not answered)
    uint32_t end_ms = 0;           ///< from the INVITE to the end of the call
    uint16_t trunk = 0;            ///< arrival trunk index
    uint16_t route = 0xffff;       ///< route index (0xffff: none)
    uint16_t final_code = 0;       ///< the final response the caller got (200 when answered)
    cdr_final_by final_by = cdr_final_by::none;
    cdr_end end = cdr_end::failed;
    uint8_t worker = 0;
    uint8_t n_attempts = 0;        ///< attempts kept in `attempts`
    uint8_t attempts_total = 0;    ///< attempts made (may exceed cdr_max_attempts)
    bool has_media = false;        ///< the SBC anchored the call's media; `media` is valid
    bool callid_cut = false;
    uint8_t callid_len = 0;
    uint8_t from_len = 0;
    uint8_t to_len = 0;
    std::array<char, cdr_callid_size> callid{};
    std::array<char, cdr_user_size> from_user{};
    std::array<char, cdr_user_size> to_user{};
    std::array<cdr_attempt, cdr_max_attempts> attempts{};
    std::array<cdr_media, 2> media{};  ///< [0] from the caller (A), [1] from the callee (B)

    [[nodiscard]] std::string_view call_id() const noexcept { return {callid.data(), callid_len}; }
    [[nodiscard]] std::string_view from() const noexcept { return {from_user.data(), from_len}; }
    [[nodiscard]] std::string_view to() const noexcept { return {to_user.data(), to_len}; }
};
static_assert(sizeof(call_record) % 8 == 0, "a ring element: a multiple of 8 bytes");
static_assert(sizeof(call_record) <= 512, "one record stays small: it is copied per call");

/// Names used in the JSON lines and in `sbcctl cdr tail`.
std::string_view cdr_outcome_name(cdr_outcome o) noexcept;
std::string_view cdr_end_name(cdr_end e) noexcept;
std::string_view cdr_final_by_name(cdr_final_by f) noexcept;

}  // namespace sbc
