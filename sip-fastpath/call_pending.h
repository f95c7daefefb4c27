// Part of the call core: in-dialog requests the proxy relayed statelessly toward a peer (any transport) and that the peer
// has not answered yet (BYE, re-INVITE, UPDATE): a fixed table, keyed by the key of our
// stateless branch, with a timer wheel for the peer's no-answer deadline and, per entry, a copy
// of the request's headers to write the 408 its sender gets if nothing comes back (RFC 3261
// 16.7) from.
// So a call whose callee died ends in a second instead of the sender retransmitting for 32 s
// and getting a late 481. Worker only: allocated once at start, nothing after.
#pragma once

#include <cstdint>
#include <memory>

#include "common/address.h"
#include "common/slot_table.h"
#include "sip-fastpath/proxy_io.h"
#include "common/timer_wheel.h"

namespace sbc::sip {

/// At most this many such requests per worker wait for their answer at once (fewer when the
/// dialog table is smaller); more are relayed without a deadline and counted
/// (in_dialog_untracked). A second of BYEs toward a dead peer at a few thousand per second.
constexpr uint32_t max_pending_in_dialog = 4096;
/// Room for one request's start line and headers (its body is not needed), kept to write the
/// 408 from if its deadline comes: a copy costs less per call than writing an answer that is
/// almost never sent. A request whose headers do not fit is relayed without a deadline
/// (counted like a full table).
constexpr std::size_t pending_answer_size = 1024;

struct pending_table {
    struct entry {
        endpoint sender;      ///< the request's source: where the 408 goes
        endpoint local;       ///< our endpoint it arrived on: the 408 leaves from there
        endpoint next;        ///< where we relayed it (an ICMP error about it names this)
        uint64_t call = 0;    ///< its Call-ID hash
        uint16_t len = 0;     ///< the stored request headers' length
        bool bye = false;     ///< a BYE: its dialog and media end with the 408
    };

    explicit pending_table(uint32_t n)
        : table(n), timers(n), answers(new char[std::size_t{n == 0 ? 1 : n} * pending_answer_size])
    {
    }
    [[nodiscard]] char* request(uint32_t slot) noexcept { return &answers[std::size_t{slot} * pending_answer_size]; }
    void erase(uint32_t slot) noexcept
    {
        timers.cancel(slot);
        table.erase(slot);
    }

    slot_table<entry> table;  ///< by the key in our stateless branch (48 bits)
    timer_wheel timers;       ///< the peer's no-answer deadline per slot
    std::unique_ptr<char[]> answers;  ///< pending_answer_size bytes per slot: the request's headers
};

}  // namespace sbc::sip
