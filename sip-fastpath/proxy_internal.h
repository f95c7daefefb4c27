// Internal state of the proxy shared by its .cc files: the call-setup slot and the dialog
// table. Worker only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "common/counter.h"
#include "common/slot_table.h"
#include "sip-fastpath/proxy.h"

namespace sbc::sip {

constexpr uint32_t none_slot = 0xffffffff;
constexpr uint32_t timer_t1_ms = 500;
constexpr uint32_t timer_t2_ms = 4000;
constexpr uint32_t timer_b_ms = 32'000;      ///< whole INVITE client transaction without a provisional
constexpr uint32_t timer_c_ms = 180'000;     ///< ringing without a final
constexpr uint32_t final_wait_ack_ms = 32'000;  ///< Timer H: retransmit a final until ACK
constexpr uint32_t linger_ms = 5000;          ///< absorb retransmissions after the end
constexpr uint32_t bye_wait_ms = 32'000;      ///< a BYE without 200 ends the dialog after this
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

/// The host of a message's Contact when it is an address literal (a name, or no Contact:
/// nullopt). Defined in proxy.cc.
std::optional<ip_address> contact_address(const message& m) noexcept;
/// The sbc-th parameter of one of our Route URIs (topology hiding), read with the same parse.
struct route_th {
    std::string_view value;
    bool found = false;
};
/// Whether a Route URI is one of our Record-Routes; `local` gets our endpoint it names and,
/// when asked, `th` its sbc-th parameter. Defined in proxy.cc (its our_route).
bool is_our_route(const proxy_tables& t, std::string_view raw, span uri_text, endpoint& local,
                  route_th* th = nullptr) noexcept;
/// A URI's host (an address literal), port and transport as an endpoint; false for a name.
/// Defined in proxy.cc.
bool uri_target(std::string_view raw, span uri_text, endpoint& ep) noexcept;

/// "Service Unavailable (trunk call limit)": the standard phrase of `code` and why admission
/// refused, written into `buf` (cut to fit). Defined in proxy_admission.cc.
std::string_view admission_reason(std::span<char, 64> buf, uint16_t code, std::string_view why) noexcept;

/// Single-writer add to a gauge other threads read (relaxed: each value stands alone).
inline void bump(std::atomic<uint32_t>& a, int d) noexcept
{
    sw_move(a, d);
}

/// proxy::setup::large when the setup keeps its INVITE in its own slot of buffers_.
constexpr uint16_t no_large = 0xffff;

enum class setup_state : uint8_t {
    free,
    calling,     ///< INVITE sent to the current peer, nothing heard yet
    proceeding,  ///< 100 Trying heard
    ringing,     ///< a provisional other than 100 relayed: no more retries
    completed,   ///< a final non-2xx sent upstream, waiting for the ACK
    lingering,   ///< done; absorbs retransmissions until released
};

/// One INVITE server transaction and its client attempts; its key in the setups table is the
/// upstream key (upstream_key: the caller's branch and source).
struct proxy::setup {
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
    /// 0: it has not): the group's attempts count from here. In padding: the size is unchanged.
    uint8_t fallback_base = 0;
    uint16_t invite_len = 0;
    uint16_t final_len = 0;    ///< final response stored after the INVITE, for retransmission
    uint32_t peer_id = no_peer;
    uint32_t rt_interval = 0;
    uint64_t t_retransmit = 0;
    uint64_t t_no_response = 0;
    uint64_t t_give_up = 0;
    uint64_t t_release = 0;
    uint64_t callid_hash = 0;
    uint64_t canary_mask = 0;  ///< canary slots the INVITE matched (peer_select.h)
    endpoint caller;           ///< where responses go: the request's source, with its connection
    endpoint local;            ///< our endpoint the call arrived on; responses leave from it
    endpoint peer;             ///< the current attempt's peer (connection 0: the stream thread's)
    endpoint out_local;        ///< our endpoint toward it: its trunk, its transport
    ip_address caller_contact; ///< the INVITE's Contact host (unspecified: a name or none), a dialog party
    uint16_t trunk = 0;        ///< the trunk the call arrived on (its FQDN in our Record-Route)
    uint16_t route = no_fallback;  ///< the route it took, while it may still fall back; then no_fallback
    std::array<uint32_t, max_tried> tried{};
    /// When the current attempt's INVITE first left (ms), for its response time; 0 once its
    /// first response was reported. Read once per attempt: outside the hot first line.
    uint64_t t_attempt_sent = 0;
    /// Counted against its trunk (`trunk`) and the node (admission.h) until it ends or its
    /// dialog takes the count over.
    bool admitted = false;
    /// The current attempt's peer side is topology-hidden (proxy_hiding.cc): our CANCEL and ACK
    /// toward it name no caller either.
    bool th_hidden = false;
    /// The large buffer holding its INVITE (proxy_large.cc), or no_large: its slot of
    /// buffers_. In padding: the size is unchanged.
    uint16_t large = no_large;
};

/// Whether our final response to the caller is repeated until its ACK (Timer G): on UDP only,
/// a stream delivers it (RFC 3261 17.2.1).
inline bool retransmits_final(const proxy::setup& s) noexcept
{
    return s.final_len != 0 && !is_stream(s.caller.proto);
}

struct proxy::setup_table : slot_table<setup> {
    using slot_table<setup>::slot_table;
};

/// What ending a call from the middle takes (media inactivity): a BYE to each side as the
/// other side would send it. Kept per dialog slot when media is anchored.
struct proxy::media_dialog {
    enum field : uint8_t { call_id, from, to, a_target, b_target, count_ };
    endpoint a;        ///< the caller's signalling address
    endpoint b;        ///< the callee's (the peer that answered)
    endpoint local;    ///< our endpoint on the caller's leg
    endpoint b_local;  ///< our endpoint on the callee's leg
    uint32_t cseq = 0; ///< the INVITE's
    std::array<uint16_t, count_> off{};
    std::array<uint16_t, count_> len{};
    std::array<char, 440> text{};
    bool valid = false;
    [[nodiscard]] std::string_view get(field f) const noexcept { return {text.data() + off[f], len[f]}; }
};

/// Dialogs of active calls in the slot table, by Call-ID hash, with a timer wheel for the ones
/// a BYE is ending.
struct proxy::dialog_table {
    struct entry {
        uint32_t peer_id = no_peer;
        endpoint caller{};    ///< the caller's signalling address: tells leg A from leg B; on a
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
        /// Topology hiding (proxy_hiding.cc): th_caller, the caller's side is hidden (its
        /// trunk hides); th_callee, the callee's (its peer's trunk hides).
        uint8_t hide = 0;
        static constexpr uint8_t th_caller = 1, th_callee = 2;

        /// Whether `a` is a party of the dialog: the caller's signalling address or either
        /// side's Contact host (by address: a Contact may move to another port of its host).
        [[nodiscard]] bool party(const ip_address& a) const noexcept
        {
            return !a.is_unspecified() && (a == caller.addr || a == caller_contact || a == callee_contact);
        }
    };
    explicit dialog_table(uint32_t n) : table(n), timers(n) {}

    [[nodiscard]] uint32_t find(uint64_t key) const noexcept { return table.find(key); }
    /// A fresh entry for `key`; none_slot when full.
    uint32_t insert(uint64_t key) noexcept
    {
        const uint32_t s = table.insert(key);
        if (s != none_slot) table.at(s) = entry{};
        return s;
    }
    void erase(uint32_t slot) noexcept
    {
        timers.cancel(slot);
        table.erase(slot);
    }

    slot_table<entry> table;
    timer_wheel timers;
};
static_assert(slot_table<proxy::dialog_table::entry>::none == none_slot, "one 'no slot' value");

}  // namespace sbc::sip
