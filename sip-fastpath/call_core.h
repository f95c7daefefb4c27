// The call core of one worker's proxy (docs/sip-engine.md, "The call core and its stages"): call
// setups (INVITE server and client transactions, retry and failover across peers and regions),
// CANCEL, hop-by-hop ACK, in-dialog requests by loose routing, stateless relay of other
// responses, dialogs, in-dialog requests a peer has yet to answer, and the timers that drive
// them. Every feature (header and number rules, topology hiding, admission limits, overload
// shedding and RFC 7339, media anchoring, call records, route fallback) is a stage of its own
// (stage_*.h) that the core calls at named points of a call when the call's stage set holds it
// (stage.h). Each step is handed the message and the moment explicitly (msg_ctx, call_env):
// nothing of the message being handled is kept in members. Worker only: every table here
// belongs to the worker that created it; no heap after start, no locks, no system calls.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "sip-fastpath/admission.h"
#include "sip-fastpath/call_state.h"
#include "sip-fastpath/cdr_sink.h"
#include "sip-fastpath/media_hook.h"
#include "sip-fastpath/sip_editor.h"
#include "sip-fastpath/stage.h"

namespace sbc::sip {

struct rules_stage;     // stage_rules.h
struct hiding_stage;    // stage_hiding.h
struct media_stage;     // stage_media.h
struct cdr_stage;       // stage_cdr.h
struct guard_stage;     // stage_guard.h
struct oc_stage;        // stage_oc.h
struct pending_table;   // call_pending.h
struct large_store;     // call_large.h
struct th_scratch;      // topology_hiding.h

/// The INVITE as a new call took it, and the edits that made the setup's kept copy of it
/// (Max-Forwards down, the anchored offer): the first attempt, sent while both are still at
/// hand, is edited from them instead of from a parse of the kept copy. Worker only, on the stack.
struct invite_source {
    const message* m = nullptr;
    edits kept;
};

class call_core {
public:
    call_core(uint8_t worker, uint32_t setups, uint32_t dialogs, uint64_t seed);
    ~call_core();
    call_core(const call_core&) = delete;
    call_core& operator=(const call_core&) = delete;

    // The proxy's entry points (proxy.h says what each does).
    void on_message(const proxy_tables& t, const peer_health& h, const sip_input& in, const message& m,
                    outbox& out) noexcept;
    void on_icmp_unreachable(const proxy_tables& t, const peer_health& h, std::string_view quoted, const endpoint& to,
                             uint64_t now_ms, outbox& out) noexcept;
    void on_send_failed(const proxy_tables& t, const peer_health& h, std::string_view sent, const endpoint& to,
                        send_failure why, uint64_t now_ms, outbox& out) noexcept;
    void on_tick(const proxy_tables& t, const peer_health& h, uint64_t now_ms, outbox& out) noexcept;

    // Configuration, control core, before the worker runs.
    void set_large_setups(uint32_t n);
    void set_media(media_hook* m);
    void set_cdr_sink(cdr_sink* s);
    void set_admission(admission* a) noexcept;
    void cdr_drain(uint64_t now_ms) noexcept;
    /// Back to a fresh core's state: no setups, dialogs, pending requests or timers; counters
    /// and configuration kept (the fuzz target runs each input from there).
    void reset() noexcept;
    [[nodiscard]] uint32_t setups_unarmed() const noexcept;

    void set_overload(uint8_t percent) noexcept;
    [[nodiscard]] uint8_t overload() const noexcept;
    [[nodiscard]] const admission& admission_counts() const noexcept { return *adm_; }
    [[nodiscard]] const proxy_stats& stats() const noexcept { return *stats_; }
    [[nodiscard]] uint8_t worker() const noexcept { return worker_; }

private:
    // Dispatch (call_core.cc).
    call_env env(const proxy_tables& t, const peer_health& h, outbox& out, uint64_t now) noexcept;
    void on_request(msg_ctx& c) noexcept;
    void on_response(msg_ctx& c) noexcept;
    void on_ack(const msg_ctx& c) noexcept;
    void self_options(const msg_ctx& c) noexcept;
    /// An answer of our own to the message `c` handles, from where it arrived to its sender.
    void respond(const msg_ctx& c, uint16_t code, std::string_view reason, bool retry_after = false,
                 uint32_t retry_after_s = 0, std::string_view extra = {}) noexcept;
    void arm(uint32_t slot) noexcept;
    void release(uint32_t slot) noexcept;
    [[nodiscard]] uint32_t find_setup(uint64_t up_key) const noexcept { return setups_->find(up_key); }
    [[nodiscard]] node_stages node() const noexcept;

    // A new call (call_invite.cc).
    void new_invite(msg_ctx& c) noexcept;
    /// The checks that refuse a new INVITE before it takes a setup (each answered and
    /// counted); true when it was refused.
    bool refuse_new_invite(msg_ctx& c, uint16_t route) noexcept;
    /// Setup `slot` keeps the INVITE as every attempt sends it (Max-Forwards down, the offer
    /// anchored) with its index; false when it could not (answered).
    /// `src` then holds what the first attempt is edited from.
    bool keep_invite(msg_ctx& c, uint32_t slot, uint16_t route, invite_source& src) noexcept;
    void forward_out_of_dialog(msg_ctx& c) noexcept;
    /// The peer group of the route the message takes, or -1 after answering 404; `count` per
    /// route. `route_index`, when given, receives the route's index.
    int route_group(const msg_ctx& c, bool count, uint16_t* route_index = nullptr) noexcept;
    /// The next attempt of setup `slot` (`src`: the first one's source, keep_invite).
    void next_attempt(const call_env& e, uint32_t slot, failure_cause why, const invite_source* src = nullptr) noexcept;
    /// The INVITE of setup `slot`'s current attempt to its peer; false when not sent. One
    /// too big to send answers the caller 513 at once (the setup is then completed).
    bool send_invite(const call_env& e, uint32_t slot, const invite_source* src = nullptr) noexcept;
    /// The same for an attempt whose stages edit it (outbound rules, topology hiding): from
    /// `src` when given (the first attempt), else from a parse of the kept INVITE.
    write_result edit_invite(const call_env& e, uint32_t slot, std::string_view branch, edits& ed, out_message& d,
                             const invite_source* src) noexcept;
    /// The current attempt of setup `slot` failed (`why`, `code`): its peer event and counts.
    void failure(const call_env& e, uint32_t slot, failure_cause why, uint16_t code) noexcept;

    // Admission accounting (call_admission.cc): counts always kept, limits a stage.
    bool admit(const msg_ctx& c) noexcept;
    uint32_t pick_peer(const call_env& e, uint32_t slot, uint16_t region, bool ignore_down, bool& saw_full) noexcept;
    void peer_put(uint32_t& peer_id) noexcept;
    void call_done(uint32_t slot) noexcept;

    // What comes back to a setup (call_events.cc).
    void invite_response(msg_ctx& c, uint32_t slot) noexcept;
    void invite_provisional(msg_ctx& c, uint32_t slot) noexcept;
    void invite_answered(msg_ctx& c, uint32_t slot) noexcept;
    void invite_failed(msg_ctx& c, uint32_t slot) noexcept;
    /// The route's fallback group takes the call after final `code` (route_fallback.h); true when it did.
    bool fall_back(msg_ctx& c, uint32_t slot, uint16_t code) noexcept;
    bool fallback_exhausted(const call_env& e, uint32_t slot) noexcept;
    /// The edits that take a peer's response of setup `slot` to its caller: our Via off,
    /// topology hiding's restores, the anchored media's SDP. False: a hidden value did not
    /// decode (counted).
    bool upstream_edits(const msg_ctx& c, uint32_t slot, edits& e, th_scratch& th) noexcept;
    void relay_upstream(const msg_ctx& c, uint32_t slot) noexcept;
    void respond_upstream(const call_env& e, uint32_t slot, uint16_t code, bool retry_after, uint32_t retry_after_s,
                          std::string_view reason = {}) noexcept;
    /// After a final non-2xx went upstream: ends the call's counts and media, waits for its ACK.
    void await_ack(const call_env& e, uint32_t slot) noexcept;
    void send_to_peer_simple(const call_env& e, uint32_t slot, std::string_view method, std::string_view to_value) noexcept;
    void on_cancel(const msg_ctx& c) noexcept;
    void fire(const call_env& e, uint32_t slot) noexcept;

    // Dialogs and in-dialog requests (call_in_dialog.cc, call_dialog.cc).
    bool forward_in_dialog(msg_ctx& c) noexcept;
    /// An in-dialog request of a dialog topology hiding covers (`walk`: our Routes read,
    /// `dl` its dialog): routed as the hiding stage says; true when handled.
    bool forward_hidden(msg_ctx& c, const route_walk& walk, uint32_t dl) noexcept;
    /// The request of `c` relayed statelessly to `next` from our endpoint `local` with `e`
    /// (our Via pushed); the dialog's BYE noted, its media anchored, its answer awaited.
    void relay_request(msg_ctx& c, edits& e, const endpoint& local, const endpoint& next, uint64_t key,
                       uint64_t call, media_leg to, stage_mask stages) noexcept;
    bool relay_by_via(msg_ctx& c) noexcept;
    bool party_response(const msg_ctx& c) const noexcept;
    /// A call was answered (setup `slot`, the 2xx in `c`): the dialog takes over its counts
    /// and learns its parties and legs; the stages see the dialog up.
    void dialog_up(const msg_ctx& c, uint32_t slot) noexcept;
    /// The dialog of an answered call takes over its admission counts; none_slot when no
    /// dialog entry was made (they are given back).
    uint32_t dialog_started(uint64_t callid_hash, uint32_t peer_id, uint16_t trunk, bool admitted) noexcept;
    void dialog_bye_seen(const proxy_tables& t, uint64_t callid_hash, uint64_t now, const endpoint& from) noexcept;
    /// The dialog is over: `why` is its call record's end, at `now`.
    void dialog_end(uint64_t callid_hash, cdr_end why, uint64_t now) noexcept;
    [[nodiscard]] media_leg media_leg_of(uint32_t dialog, const endpoint& ep, const proxy_tables* t) const noexcept;
    /// The stages of the dialog in slot `d` (none_slot: what a message without one may need).
    [[nodiscard]] stage_mask dialog_stages(uint32_t d) const noexcept;
    [[nodiscard]] std::size_t write_stateless_branch(char* out, uint64_t key) const noexcept;

    // In-dialog requests awaiting a peer's answer (call_pending.cc).
    void pending_track(const msg_ctx& c, const endpoint& next, uint64_t key) noexcept;
    void pending_answered(std::string_view branch) noexcept;
    bool pending_unreachable(const call_env& e, std::string_view quoted, const endpoint& to) noexcept;
    void pending_expire(const call_env& e) noexcept;
    void pending_answer(const call_env& e, uint32_t slot) noexcept;

    // Messages above max_out_size (call_large.cc).
    char* store_of(uint32_t slot) noexcept;
    std::size_t store_room(uint32_t slot) noexcept;
    [[nodiscard]] bool large_free() const noexcept;
    bool take_large(uint32_t slot) noexcept;
    void give_back_large(uint32_t slot) noexcept;
    write_result edit_out(const message& m, const edits& e, outbox& out, out_message& d) noexcept;

    // Stage hooks the core calls at the points of a call; each a no-op unless the call's
    // stage set holds the stage (stage.h).
    bool media_body(const message& m, uint64_t call, media_leg to, stage_mask stages, edits& e, uint64_t now) noexcept;
    void media_end(uint64_t call, uint64_t now) noexcept;
    void cdr_refused(const msg_ctx& c, uint16_t code, uint16_t route = 0xffff) noexcept;
    void cdr_attempt_end(uint32_t slot, cdr_outcome o, uint16_t code, uint64_t now) noexcept;
    void cdr_final(uint32_t slot, uint16_t code, bool by_peer) noexcept;
    void cdr_setup_end(uint32_t slot, uint64_t now) noexcept;

    uint8_t worker_;
    uint32_t n_setups_;
    std::unique_ptr<setup_table> setups_;
    std::unique_ptr<char[]> buffers_;  ///< one max_out_size buffer per setup: its kept INVITE and final
    std::unique_ptr<large_store> large_;
    std::unique_ptr<dialog_table> dialogs_;
    timer_wheel timers_;
    select_state select_;
    std::unique_ptr<proxy_stats> stats_;
    std::unique_ptr<message> aux_;  ///< a message of our own parsed again (failure paths, stages that edit the INVITE)
    std::unique_ptr<pending_table> pending_;
    std::unique_ptr<admission> own_admission_;  ///< used until set_admission names the node's
    admission* adm_ = nullptr;
    // The stages' own state (stage_*.h).
    std::unique_ptr<rules_stage> rules_;
    std::unique_ptr<hiding_stage> hiding_;
    std::unique_ptr<media_stage> media_;  ///< null: no media hook
    std::unique_ptr<cdr_stage> cdr_;      ///< null: no sink, no records
    std::unique_ptr<guard_stage> guard_;
    std::unique_ptr<oc_stage> oc_;
};

}  // namespace sbc::sip
