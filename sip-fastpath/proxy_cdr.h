// The proxy's call records while calls are under way (proxy_cdr.cc): one record per call
// setup slot while the call is being set up, moved to a record per dialog slot when it is
// answered, handed to the cdr_sink when the call ends. Only allocated when a sink is set
// (set_cdr_sink), so that a worker without call records spends neither memory nor time on
// them. Worker only: allocated by the control core before the worker runs, nothing after.
#pragma once

#include <cstdint>
#include <memory>

#include "common/call_record.h"
#include "sip-fastpath/cdr_sink.h"
#include "sip-fastpath/proxy.h"

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

struct proxy::cdr_state {
    cdr_state(cdr_sink* s, uint32_t setups, uint32_t dialogs)
        : sink(s), n_setups(setups), n_dialogs(dialogs), setups(alloc.allocate(setups == 0 ? 1 : setups)),
          dialogs(alloc.allocate(dialogs == 0 ? 1 : dialogs)), refused(new uint64_t[cdr_refused_keys]())
    {
        // Records are constructed when a call takes the slot (untouched pages cost no memory
        // until then); the live flags are what a scan at the worker's end reads, for slots
        // the tables say are used, each of which a call constructed.
    }
    ~cdr_state()
    {
        alloc.deallocate(setups, n_setups == 0 ? 1 : n_setups);
        alloc.deallocate(dialogs, n_dialogs == 0 ? 1 : n_dialogs);
    }
    cdr_state(const cdr_state&) = delete;
    cdr_state& operator=(const cdr_state&) = delete;

    std::allocator<cdr_call> alloc;
    cdr_sink* sink;
    uint32_t n_setups;
    uint32_t n_dialogs;
    cdr_call* setups;   ///< by setup slot
    cdr_call* dialogs;  ///< by dialog slot
    std::unique_ptr<uint64_t[]> refused;
};

}  // namespace sbc::sip
