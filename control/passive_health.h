// Passive health of peers: failures the workers report on real calls (408/503/504, silence,
// ICMP unreachable) mark a peer down after N in a row; a down peer gets a trial after the
// retest interval, and the first call it answers brings it back. The verdict is written as
// the peer's atomic health word, so every worker sees it at its next call, with no snapshot.
// A peer probed with OPTIONS (set_probed) is only counted here: reaching the threshold is
// reported to the caller, whose probe state machine (control/probe_health.h) owns that
// peer's down bit; no trial calls for it.
// Suspect: one silence or ICMP unreachable on a call (the first failure, before any threshold)
// sets the peer's suspect bit, unless it is down already: workers then give it no new calls
// while another peer of its region is available and not suspect (sip-fastpath/peer_select.h),
// and the on_suspect hook asks for a probe at once. Anything the peer answers (a final or
// provisional response to a call, a reply to any probe: heard_from) clears it; so does the
// retest interval passing with nothing heard (a peer that never answers OPTIONS would else
// stay shunned), after which its next silence marks it again; and its going down (the down
// line in the log says more; tick drops the mark). Down and up thresholds do not
// look at it. Each mark and clear is counted and logged once. Control core only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sip-fastpath/proxy.h"
#include "sip-fastpath/proxy_tables.h"

namespace sbc::control {

struct passive_policy {
    unsigned down_after = 3;       ///< consecutive failures
    uint64_t retest_ms = 30'000;   ///< a down peer gets trial calls after this
};

class passive_health {
public:
    using log_fn = std::function<void(const std::string&)>;
    using suspect_fn = std::function<void(uint32_t)>;

    passive_health(sip::peer_health& words, passive_policy p, log_fn log)
        : words_(words), policy_(p), log_(std::move(log)), state_(sip::max_peers)
    {
    }

    void set_policy(passive_policy p) noexcept { policy_ = p; }
    /// Forgets the history of `id` (a peer id that was given to another peer).
    void reset(uint32_t id)
    {
        if (id < state_.size()) state_[id] = peer_state{};
    }
    /// Whether `id` is probed with OPTIONS (see above); false for every id at first.
    void set_probed(uint32_t id, bool probed)
    {
        if (id < state_.size()) state_[id].probed = probed;
    }
    /// Called with the peer id each time a peer becomes suspect (the control loop probes it
    /// at once). None at first.
    void on_suspect(suspect_fn f) { on_suspect_ = std::move(f); }
    /// A worker's report about a call attempt; `name` is for the log. True when a probed
    /// peer has just reached the threshold: the caller takes it down. A kind other than
    /// `failed` that is not `answered` (say, a provisional response) only clears suspect: the
    /// peer is alive, but the call has no verdict yet.
    bool on_event(const sip::peer_event& e, const std::string& name, uint64_t now_ms);
    /// The peer answered something outside calls (`what`, for the log: "probe answered 200"):
    /// clears its suspect bit. True when it was suspect.
    bool heard_from(uint32_t id, const std::string& what, const std::string& name);
    /// A TCP/TLS peer's connection failed or was lost (`why`): a peer not probed is down at
    /// once (a trial after the retest interval, as for failed calls); true when it is probed,
    /// so that the caller's probe state machine takes it down instead.
    bool on_connection_failed(uint32_t id, const std::string& why, const std::string& name, uint64_t now_ms);
    /// A connection to a TCP/TLS peer is up again: a peer not probed is up (its connection is
    /// what failed it); a probed one waits for its probes.
    void on_connection_up(uint32_t id, const std::string& name);
    /// Starts trials of peers that have been down long enough.
    void tick(uint64_t now_ms, const std::function<std::string(uint32_t)>& name_of);

    struct view {
        bool down = false;
        bool trial = false;
        unsigned consecutive = 0;
        uint64_t failures = 0;
        std::string why;  ///< last failure, e.g. "503", "timeout", "icmp"
        uint64_t changes = 0;  ///< state changes made here (down, trial, up, trial failed)
        bool suspect = false;  ///< the suspect bit as set here
        uint64_t suspect_marks = 0;  ///< times it became suspect
    };
    [[nodiscard]] const view& of(uint32_t id) const { return state_[id].v; }

private:
    struct peer_state {
        view v;
        uint64_t down_since = 0;
        uint64_t suspect_since = 0;
        bool probed = false;
    };
    void set_down(uint32_t id, bool down);
    void set_bit(uint32_t id, uint32_t bit, bool on);
    void mark_suspect(uint32_t id, const std::string& name, uint64_t now_ms);

    sip::peer_health& words_;
    passive_policy policy_;
    log_fn log_;
    suspect_fn on_suspect_;
    std::vector<peer_state> state_;
};

}  // namespace sbc::control
