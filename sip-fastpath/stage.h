// The proxy as a call core with feature stages (docs/sip-engine.md, "The call core and its
// stages"): the vocabulary they share. A call's stages are chosen once, when its INVITE is
// taken (call_stages), from what the snapshot's trunk, route and the node configure, and once
// more per attempt from the attempt's peer (attempt_stages); the set is kept with the call's
// setup and, once answered, its dialog. At each named point of a call (request in, before an
// attempt is sent, response in, dialog up, dialog ended) the core calls the stages in the set,
// in a fixed order, as plain functions, handing each the message and the call explicitly: a
// stage nobody configured costs the core one bit test at that point, and a stage knows nothing
// of another's state. Worker only.
#pragma once

#include <cstdint>

#include "sip-fastpath/proxy_io.h"
#include "sip-fastpath/proxy_stats.h"
#include "sip-fastpath/proxy_tables.h"
#include "sip-fastpath/sip_message.h"

namespace sbc::sip {

/// One bit per stage a call may run. Chosen per call and attempt; never per message.
using stage_mask = uint16_t;
namespace stage {
constexpr stage_mask rules_in = 1u << 0;     ///< inbound header and number rules (trunk, source region)
constexpr stage_mask rules_out = 1u << 1;    ///< outbound rules toward the attempt's peer (its region, its trunk)
constexpr stage_mask hide_caller = 1u << 2;  ///< topology hiding toward the caller (its trunk hides)
constexpr stage_mask hide_callee = 1u << 3;  ///< topology hiding toward the callee (the peer's trunk hides)
constexpr stage_mask media = 1u << 4;        ///< media anchoring (the worker has a media hook)
constexpr stage_mask cdr = 1u << 5;          ///< call records (the worker has a sink)
constexpr stage_mask fallback = 1u << 6;     ///< route fallback (the call's route names a fallback group)
constexpr stage_mask canary = 1u << 7;       ///< canary peers exist: the call's matching canaries are known
constexpr stage_mask hiding = hide_caller | hide_callee;
}  // namespace stage

/// The stages the worker itself provides to every call (media hook, call record sink).
struct node_stages {
    stage_mask mask = 0;
};

/// A new call's stages, from the trunk it arrived on (`trunk`, its index), the route it takes
/// (`route`, its index or an out-of-range value for none) and what the node provides.
stage_mask call_stages(const proxy_tables& t, uint16_t trunk, uint16_t route, node_stages node) noexcept;
/// What an attempt toward peer index `p` adds to its call's stages.
stage_mask attempt_stages(const proxy_tables& t, uint32_t p) noexcept;

/// What every core step and stage is handed about the moment: the snapshot's tables, peer
/// health, the outbox being filled, the worker's counters, the time. Explicit, never kept.
struct call_env {
    const proxy_tables& t;
    const peer_health& h;
    outbox& out;
    proxy_stats& stats;
    uint64_t now;
    uint8_t worker;
};

/// The same for one SIP message being handled: the input as it arrived and the message parsed
/// from it (once). `m` is the message the call goes on with: the inbound rules may point it at
/// their rewrite of the input.
struct msg_ctx : call_env {
    const sip_input& in;
    const message* m;
};

}  // namespace sbc::sip
