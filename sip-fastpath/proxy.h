// The stateful SIP proxy of one worker, as the dataplane and the tests see it: SIP inputs in
// (one call each, whatever transport carried them), messages tagged with their transport and
// connection (and events for the control core) out, through an outbox the dataplane sends
// (proxy_io.h), counters beside it (proxy_stats.h). Behind it is the call core (call_core.h)
// with its feature stages (stage.h): docs/sip-engine.md, "The call core and its stages".
// Worker only: every table belongs to the worker that created it; no heap after start, no
// locks, no system calls.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "sip-fastpath/admission.h"
#include "sip-fastpath/cdr_sink.h"
#include "sip-fastpath/media_hook.h"
#include "sip-fastpath/peer_select.h"
#include "sip-fastpath/proxy_ids.h"
#include "sip-fastpath/proxy_io.h"
#include "sip-fastpath/proxy_stats.h"
#include "sip-fastpath/proxy_tables.h"
#include "sip-fastpath/sip_message.h"

namespace sbc::sip {

class call_core;

class proxy {
public:
    /// Control core, at start: every table the worker will use (`setups` call setups,
    /// `dialogs` dialogs), allocated now; `seed` varies peer selection between workers.
    proxy(uint8_t worker, uint32_t setups, uint32_t dialogs, uint64_t seed);
    ~proxy();
    proxy(const proxy&) = delete;
    proxy& operator=(const proxy&) = delete;

    /// A SIP message arrived: parses `in.bytes` and handles it (answer, forward, or drop and
    /// count), putting what is to be sent into `out`.
    void on_input(const proxy_tables& t, const peer_health& h, const sip_input& in, outbox& out) noexcept;
    /// The same for a message the caller has parsed already (`m` parsed from `in.bytes`, for
    /// instance to find its owner worker with message_owner): nothing is parsed twice. `m`
    /// must stay valid for the call.
    void on_message(const proxy_tables& t, const peer_health& h, const sip_input& in, const message& m,
                    outbox& out) noexcept;
    /// An ICMP destination-unreachable quoting `quoted` (the start of a datagram we sent to
    /// `to`): the attempt it belongs to is failed over at once; an in-dialog request relayed
    /// to a peer and waiting for its answer gets its 408 to the sender at once.
    void on_icmp_unreachable(const proxy_tables& t, const peer_health& h, std::string_view quoted, const endpoint& to,
                             uint64_t now_ms, outbox& out) noexcept;
    /// A message this proxy produced (`sent`, its bytes as they were to leave, at least up to
    /// the end of the header block; `to`, its destination) could not be sent for a local
    /// reason `why`. The peer is never blamed: no peer event, no failure counted against it.
    /// When it is the INVITE of a call's current attempt (our branch of that attempt, the call
    /// still calling or proceeding), the caller gets its final answer at once: 513 for
    /// too_big, 503 otherwise, 487 when it was cancelled meanwhile. A request relayed
    /// statelessly that was too_big is answered 513 to its sender (named by our Via's
    /// sbc-src) when the sender's Via is below ours; ACKs, responses and anything else are
    /// only counted. Every call counts one send_failed_* counter. What it produces goes into
    /// `out`, to be sent once: a failure among those is only counted, never reported again.
    /// Worker only, by the worker that owns this proxy (a failure of another worker's message
    /// finds no call here: counted, nothing else).
    void on_send_failed(const proxy_tables& t, const peer_health& h, std::string_view sent, const endpoint& to,
                        send_failure why, uint64_t now_ms, outbox& out) noexcept;
    /// Runs the timers due by now_ms (retransmissions, no-response, clean-up).
    void on_tick(const proxy_tables& t, const peer_health& h, uint64_t now_ms, outbox& out) noexcept;

    [[nodiscard]] const proxy_stats& stats() const noexcept;
    [[nodiscard]] uint8_t worker() const noexcept;

    /// Control core, before the worker runs: `n` (1..max_large_setups) buffers for setups
    /// whose INVITE is larger than max_out_size instead of large_setups_per_worker ([limits]
    /// large_messages_per_worker; call_large.h).
    void set_large_setups(uint32_t n);
    /// Control core, before the worker runs: anchor the media of every call through `m`
    /// (SDP rewritten both ways, flows torn down with the call, silent calls ended with BYE).
    void set_media(media_hook* m);
    /// Control core, before the worker runs: every call this worker handles is handed to `s`
    /// as one sbc::call_record when it ends (stage_cdr.h); allocates the records of calls
    /// under way. Null (the default): no records, nothing allocated or done for them.
    void set_cdr_sink(cdr_sink* s);
    /// Worker only, after its loop ended: the calls still under way are handed over as ended
    /// by the drain (cdr_end::drain) at now_ms; each is handed over once. Nothing without a sink.
    void cdr_drain(uint64_t now_ms) noexcept;
    /// RFC 7339 (server): the percent of new requests this worker asks its clients to send
    /// elsewhere (0: not overloaded), stamped into responses to clients that advertised `oc`.
    /// Any thread (one relaxed store); the worker's overload detection calls it.
    void set_overload(uint8_t percent) noexcept;
    [[nodiscard]] uint8_t overload() const noexcept;
    /// Control core, before the worker runs: admit calls against the node-wide counts `a`
    /// (sip-fastpath/admission.h), shared by every worker; null: this proxy's own counts
    /// (alone in the node, as in tests).
    void set_admission(admission* a) noexcept;
    /// The counts this proxy admits against.
    [[nodiscard]] const admission& admission_counts() const noexcept;
    /// Back to a fresh proxy's state: no setups, dialogs, pending requests or timers (the
    /// fuzz target runs every input from there); counters and configuration kept.
    void reset() noexcept;
    /// Call setups in use with no timer armed: 0 unless one leaked (every setup ends by an
    /// event or, at the latest, its timer), so the tests and the fuzz target check it after
    /// each message instead of running every timer out. O(setups); never on the packet path.
    [[nodiscard]] uint32_t setups_unarmed() const noexcept;

private:
    std::unique_ptr<call_core> core_;
    std::unique_ptr<message> own_;  ///< what on_input parses into
};

}  // namespace sbc::sip
