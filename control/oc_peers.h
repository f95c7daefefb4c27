// RFC 7339 overload control as a client: what each peer's feedback asks of us. Workers read
// a peer's oc value from our Via in its responses and post it as an event; this keeps the
// latest one per peer (by oc-seq), writes the reduction into peer_health::oc_reduction (read by
// peer selection on every worker) and clears it when its oc-validity runs out. Control core
// only: the one writer of oc_reduction.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "sip-fastpath/proxy_tables.h"

namespace sbc::control {

class oc_peers {
public:
    using log_fn = std::function<void(const std::string&)>;
    using name_fn = std::function<std::string(uint32_t)>;

    /// What we hold for one peer id.
    struct state {
        uint8_t reduction = 0;     ///< percent of new calls sent elsewhere now (as published)
        uint64_t until_ms = 0;     ///< when it ends (control clock); 0: none in force
        uint64_t seq = 0;          ///< the latest oc-seq heard (10^-5 units)
        bool has_seq = false;
        uint64_t seq_until_ms = 0; ///< older oc-seq values are ignored until then
        uint64_t feedbacks = 0;    ///< feedback events taken
        uint64_t stale = 0;        ///< feedback ignored: an oc-seq older than the latest
    };

    oc_peers(sip::peer_health& h, log_fn log) : health_(h), log_(std::move(log)) {}

    /// A peer's feedback (an event from a worker) at `now_ms`: taken unless its oc-seq is older
    /// than the latest one still in force; a reduction of 0 or a validity of 0 ends the
    /// reduction at once, else it holds for `validity_ms` from now.
    void on_feedback(uint32_t id, uint8_t reduction, uint32_t validity_ms, bool has_seq, uint64_t seq, uint64_t now_ms,
                     const name_fn& name);
    /// Clears the reductions whose validity ran out by `now_ms`.
    void tick(uint64_t now_ms, const name_fn& name);
    /// A peer id was freed or given to a new peer: nothing of the old one holds.
    void reset(uint32_t id);
    [[nodiscard]] const state& of(uint32_t id) const noexcept { return peers_[id < peers_.size() ? id : 0]; }
    /// Milliseconds left of peer `id`'s reduction at `now_ms` (0: none).
    [[nodiscard]] uint64_t left_ms(uint32_t id, uint64_t now_ms) const noexcept
    {
        const state& s = of(id);
        return s.reduction != 0 && s.until_ms > now_ms ? s.until_ms - now_ms : 0;
    }

private:
    void publish(uint32_t id, uint8_t reduction);

    sip::peer_health& health_;
    log_fn log_;
    std::array<state, sip::max_peers> peers_{};
    uint32_t in_force_ = 0;  ///< peers with a reduction: tick() has nothing to do while 0
};

}  // namespace sbc::control
