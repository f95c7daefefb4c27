// The call core's per-call state: a call setup (the INVITE server transaction and its client
// attempts, with the INVITE kept as every attempt sends it) and a dialog (an answered call),
// each in a slot table of the worker; the SIP timers they run on; the keys they are found by.
// Internal to the call core and its stages. Worker only.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/counter.h"
#include "common/slot_table.h"
#include "sip-fastpath/peer_select.h"
#include "sip-fastpath/retarget.h"
#include "sip-fastpath/route_fallback.h"
#include "sip-fastpath/stage.h"
#include "common/timer_wheel.h"

namespace sbc::sip {

constexpr uint32_t none_slot = 0xffffffff;
constexpr uint32_t timer_t1_ms = 500;
constexpr uint32_t timer_t2_ms = 4000;
constexpr uint32_t timer_b_ms = 32'000;         ///< whole INVITE client transaction without a provisional
constexpr uint32_t timer_c_ms = 180'000;        ///< ringing without a final
constexpr uint32_t final_wait_ack_ms = 32'000;  ///< Timer H: retransmit a final until ACK
constexpr uint32_t linger_ms = 5000;            ///< absorb retransmissions after the end
constexpr uint32_t bye_wait_ms = 32'000;        ///< a BYE without 200 ends the dialog after this
constexpr uint8_t max_tried = 16;

/// The upstream transaction of a request: its top Via branch and its source (RFC 3261
/// 17.2.3 matching, with the source standing in for sent-by).
inline uint64_t upstream_key(const message& m, endpoint src) noexcept
{
    return hash_bytes(m.text(m.top_via.branch)) ^ src.hash();
}

/// Our endpoint on the leg toward `remote`: the trunk address and port `local` the call uses,
/// with the remote's transport and connection (Via, Record-Route and framing follow the leg).
inline endpoint leg_local(const endpoint& local, const endpoint& remote) noexcept
{
    return endpoint{local.addr, local.port, remote.proto, remote.conn};
}

/// setup::large when the setup keeps its INVITE in its own slot of the store.
constexpr uint16_t no_large = 0xffff;

enum class setup_state : uint8_t {
    free,
    calling,     ///< INVITE sent to the current peer, nothing heard yet
    proceeding,  ///< 100 Trying heard
    ringing,     ///< a provisional other than 100 relayed: no more retries
    completed,   ///< a final non-2xx sent upstream, waiting for the ACK
    lingering,   ///< done; absorbs retransmissions until released
};

/// Where the parts of the kept INVITE are (offsets into the setup's store, written once when
/// the INVITE is taken): an attempt splices our Via and Record-Route in at via_at and rr_at,
/// a CANCEL or ACK toward the peer and the BYEs of media inactivity are written from the
/// rest, so the kept INVITE is never parsed again on the way of a call.
struct invite_index {
    span request_uri;
    span from;         ///< the From header's value
    span from_uri;
    span to;           ///< the To header's value
    span call_id;
    span contact_uri;  ///< the first Contact's URI; empty when none
    uint32_t cseq = 0;
    uint16_t via_at = 0;  ///< where our Via goes: the first Via line (or the first header)
    uint16_t rr_at = 0;   ///< where our Record-Route goes: the first Record-Route line (or the first header)
    /// The caller's Vias, from the first value to the end of the last, when their lines are
    /// one run (what topology hiding gives back to a response); empty otherwise.
    span vias;
    /// The Request-URI's parts an attempt retargets it from, when it names the SBC (retarget.h).
    ruri_parts ruri;
};

/// One INVITE server transaction and its client attempts; its key in the setups table is the
/// upstream key (upstream_key: the caller's branch and source).
struct call_setup {
    // What nearly every message of the call reads first (state, generation, attempt, timers),
    // in the cache line the setup table's key shares; addresses and the tried list after it.
    setup_state state = setup_state::free;
    uint8_t n_tried = 0;
    uint8_t attempt = 0;
    uint8_t region_pos = 0;
    uint16_t group = 0;
    uint16_t gen = 0;
    bool provisional = false;  ///< a provisional other than 100 arrived on this call
    bool cancelled = false;
    bool cancel_sent = false;
    /// Attempts made before the call moved to its route's fallback group (route_fallback.h;
    /// 0: it has not): the group's attempts count from here.
    uint8_t fallback_base = 0;
    uint16_t invite_len = 0;   ///< the kept INVITE, as every attempt sends it but for our Via and Record-Route
    uint16_t final_len = 0;    ///< final response stored after the INVITE, for retransmission
    uint32_t peer_id = no_peer;
    uint32_t rt_interval = 0;
    uint64_t t_retransmit = 0;
    uint64_t t_no_response = 0;
    uint64_t t_give_up = 0;
    uint64_t t_release = 0;
    uint64_t callid_hash = 0;
    uint64_t canary_mask = 0;   ///< canary slots the INVITE matched (peer_select.h)
    stage_mask stages = 0;      ///< the call's stages (stage.h)
    stage_mask attempt_stages = 0;  ///< the current attempt's: the call's and its peer's
    endpoint caller;            ///< where responses go: the request's source, with its connection
    endpoint local;             ///< our endpoint the call arrived on; responses leave from it
    endpoint peer;              ///< the current attempt's peer (connection 0: the stream thread's)
    endpoint out_local;         ///< our endpoint toward it: its trunk, its transport
    ip_address caller_contact;  ///< the INVITE's Contact host (unspecified: a name or none), a dialog party
    uint16_t trunk = 0;         ///< the trunk the call arrived on (its FQDN in our Record-Route)
    uint16_t route = no_fallback;  ///< the route it took, while it may still fall back; then no_fallback
    std::array<uint32_t, max_tried> tried{};
    /// When the current attempt's INVITE first left (ms), for its response time; 0 once its
    /// first response was reported. Read once per attempt: outside the hot first line.
    uint64_t t_attempt_sent = 0;
    /// Counted against its trunk (`trunk`) and the node (admission.h) until it ends or its
    /// dialog takes the count over.
    bool admitted = false;
    /// The current attempt's peer side is topology-hidden (stage_hiding.h): our CANCEL and ACK
    /// toward it name no caller either.
    bool th_hidden = false;
    /// The large buffer holding its INVITE (call_large.cc), or no_large: its slot of the store.
    uint16_t large = no_large;
    invite_index inv;
};

/// Whether our final response to the caller is repeated until its ACK (Timer G): on UDP only,
/// a stream delivers it (RFC 3261 17.2.1).
inline bool retransmits_final(const call_setup& s) noexcept
{
    return s.final_len != 0 && !is_stream(s.caller.proto);
}

using setup_table = slot_table<call_setup>;

/// An answered call, by Call-ID hash.
struct dialog_entry {
    uint32_t peer_id = no_peer;
    endpoint caller{};        ///< the caller's signalling address: tells leg A from leg B; on a
                              ///< stream, with the connection requests toward it reuse
    endpoint caller_local{};  ///< our endpoint on the caller's leg (port 0: unknown)
    endpoint callee_local{};  ///< our endpoint on the callee's leg
    /// The hosts of each side's Contact (the INVITE's, the 2xx's); unset when it had none
    /// or named a host by name. With `caller`, the parties in-dialog requests may go to.
    ip_address caller_contact{};
    ip_address callee_contact{};
    bool ending = false;
    bool admitted = false;  ///< holds its call's trunk and node counts (admission.h)
    uint16_t trunk = 0;     ///< the trunk the call arrived on (its count)
    stage_mask stages = 0;  ///< the call's stages, with the answering attempt's
    /// Topology hiding (stage_hiding.h): th_caller, the caller's side is hidden (its trunk
    /// hides); th_callee, the callee's (its peer's trunk hides).
    uint8_t hide = 0;
    static constexpr uint8_t th_caller = 1, th_callee = 2;

    /// Whether `a` is a party of the dialog: the caller's signalling address or either
    /// side's Contact host (by address: a Contact may move to another port of its host).
    [[nodiscard]] bool party(const ip_address& a) const noexcept
    {
        return !a.is_unspecified() && (a == caller.addr || a == caller_contact || a == callee_contact);
    }
};

/// Dialogs of active calls in the slot table, by Call-ID hash, with a timer wheel for the ones
/// a BYE is ending.
struct dialog_table {
    explicit dialog_table(uint32_t n) : table(n), timers(n) {}

    [[nodiscard]] uint32_t find(uint64_t key) const noexcept { return table.find(key); }
    /// A fresh entry for `key`; none_slot when full.
    uint32_t insert(uint64_t key) noexcept
    {
        const uint32_t s = table.insert(key);
        if (s != none_slot) table.at(s) = dialog_entry{};
        return s;
    }
    void erase(uint32_t slot) noexcept
    {
        timers.cancel(slot);
        table.erase(slot);
    }

    slot_table<dialog_entry> table;
    timer_wheel timers;
};
static_assert(slot_table<dialog_entry>::none == none_slot, "one 'no slot' value");

/// Our Route entries at the top of an in-dialog request, read once (call_in_dialog.cc).
struct route_walk {
    unsigned ours = 0;        ///< consecutive Route values on top that are our Record-Routes
    endpoint via_local;       ///< our endpoint the last of them names: the leg the request leaves on
    endpoint next;            ///< the Route after ours, when it names an address
    bool have_next = false;
    bool route_left = false;  ///< a Route after ours (usable only when it is an address)
    std::string_view th;      ///< the last ;sbc-th= among ours (topology hiding: the route set it hid)
    bool th_found = false;
};

/// "Service Unavailable (trunk call limit)": the standard phrase of `code` and why admission
/// refused, written into `buf` (cut to fit). Defined in call_admission.cc.
std::string_view admission_reason(std::span<char, 64> buf, uint16_t code, std::string_view why) noexcept;

}  // namespace sbc::sip
