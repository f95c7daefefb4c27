// Passive health of peers: failures the workers report on real calls (408/503/504, silence,
// ICMP unreachable) mark a peer down after N in a row; a down peer gets a trial after the
// retest interval, and the first call it answers brings it back. The verdict is written as
// the peer's atomic health word, so every worker sees it at its next call, with no snapshot.
// A peer probed with OPTIONS (set_probed) is only counted here: reaching the threshold is
// reported to the caller, whose probe state machine (control/probe_health.h) owns that
// peer's down bit; no trial calls for it. Control core only.
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
    /// A worker's report about a call attempt; `name` is for the log. True when a probed
    /// peer has just reached the threshold: the caller takes it down.
    bool on_event(const sip::peer_event& e, const std::string& name, uint64_t now_ms);
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
    };
    [[nodiscard]] const view& of(uint32_t id) const { return state_[id].v; }

private:
    struct peer_state {
        view v;
        uint64_t down_since = 0;
        bool probed = false;
    };
    void set_down(uint32_t id, bool down);

    sip::peer_health& words_;
    passive_policy policy_;
    log_fn log_;
    std::vector<peer_state> state_;
};

}  // namespace sbc::control
