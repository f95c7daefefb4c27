// The call record stage ([cdr]; common/call_record.h): one record per call setup slot while the
// call is being set up (from "request in"), filled at each attempt and response, moved to a
// record per dialog slot at "dialog up", handed to the cdr_sink at "dialog ended" or when the
// setup fails; a new INVITE refused before any attempt gets a record of its own. Its own
// state: the records of the calls under way, allocated when a sink is set (set_cdr_sink), so
// that a worker without call records spends neither memory nor time on them. When each field
// is filled is said in stage_cdr.cc. Worker only: allocated by the control core before the
// worker runs, nothing after.
#pragma once

#include <cstdint>
#include <memory>

#include "common/call_record.h"
#include "sip-fastpath/call_state.h"
#include "sip-fastpath/cdr_sink.h"
#include "sip-fastpath/media_hook.h"

namespace sbc::sip {

/// One call's record and what filling it needs besides.
struct cdr_call {
    sbc::call_record rec;
    uint64_t callid_hash;  ///< what the media hook knows the call by
    uint64_t bye_ms;       ///< when a BYE of the dialog was seen (bye_from says from whom)
    bool live;             ///< the call is under way: its record is still to be handed over
    bool attempt_open;     ///< the last attempt in rec has no outcome yet
    uint8_t bye_from;      ///< 0: no BYE seen; 1: the caller's; 2: the callee's
};

/// New INVITEs refused recently, by their transaction key: a retransmission of one (its
/// refusal was lost) makes no second record. Direct-mapped: an older key is forgotten when
/// another takes its place.
constexpr std::size_t cdr_refused_keys = 256;

struct cdr_stage {
    cdr_stage(cdr_sink* s, uint32_t setups, uint32_t dialogs);
    ~cdr_stage();
    cdr_stage(const cdr_stage&) = delete;
    cdr_stage& operator=(const cdr_stage&) = delete;

    std::allocator<cdr_call> alloc;
    cdr_sink* sink;
    media_hook* media = nullptr;  ///< the worker's media hook (the records' media figures), or null
    uint32_t n_setups;
    uint32_t n_dialogs;
    cdr_call* setups;   ///< by setup slot
    cdr_call* dialogs;  ///< by dialog slot
    std::unique_ptr<uint64_t[]> refused;
};

namespace cdr {

/// A new INVITE `m` from `in` was refused with `code` before any attempt (route: its route
/// index, or 0xffff): a record of its own, unless it is a retransmission of one.
void refused(cdr_stage& s, const message& m, const sip_input& in, uint8_t worker, uint16_t code, uint16_t route) noexcept;
/// Setup `slot` (Call-ID hash `call`) took the new INVITE `m` from `in` on route `route`.
void setup_started(cdr_stage& s, uint32_t slot, const message& m, const sip_input& in, uint8_t worker, uint16_t route,
                   uint64_t call) noexcept;
/// Setup `slot` sent an attempt to peer id `peer_id` at `now`.
void attempt_sent(cdr_stage& s, uint32_t slot, uint32_t peer_id, uint64_t now) noexcept;
/// The current attempt of setup `slot` ended with `o` (`code` for answered and code) at `now`;
/// nothing when it has its outcome already.
void attempt_end(cdr_stage& s, uint32_t slot, sbc::cdr_outcome o, uint16_t code, uint64_t now) noexcept;
/// A provisional above 100 went to the caller of setup `slot` at `now`.
void provisional(cdr_stage& s, uint32_t slot, uint64_t now) noexcept;
/// The final `code` the caller of setup `slot` gets, and who sent it.
void final_answer(cdr_stage& s, uint32_t slot, uint16_t code, sbc::cdr_final_by by) noexcept;
/// Setup `slot` ended without an answer (its final went upstream) at `now`: handed over.
void setup_end(cdr_stage& s, uint32_t slot, bool cancelled, uint64_t now) noexcept;
/// Setup `slot` was answered with `code` at `now` into dialog slot `d` (none_slot: no dialog
/// entry, handed over at once): its record moves to the dialog.
void answered(cdr_stage& s, uint32_t slot, uint32_t d, uint16_t code, uint64_t now) noexcept;
/// A BYE of the dialog in slot `d` (entry `de`) came from `from` at `now` (the first one
/// counts); `t` tells a peer's address (null: not known).
void bye(cdr_stage& s, uint32_t d, const dialog_entry& de, const endpoint& from, const proxy_tables* t,
         uint64_t now) noexcept;
/// The dialog in slot `d` ended (`why`, at `now`; 0: `clock`): handed over.
void dialog_end(cdr_stage& s, uint32_t d, sbc::cdr_end why, uint64_t now, uint64_t clock) noexcept;
/// The worker stopped: every call still under way is handed over as ended by the drain.
void drain(cdr_stage& s, const setup_table& setups, const dialog_table& dialogs, uint64_t now) noexcept;

}  // namespace cdr
}  // namespace sbc::sip
