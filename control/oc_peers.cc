// RFC 7339 client state per peer (see oc_peers.h). Control core only.
#include "control/oc_peers.h"

namespace sbc::control {

void oc_peers::publish(uint32_t id, uint8_t reduction)
{
    // Relaxed: one byte that publishes no other data; a worker that reads it one call late
    // only diverts one call more or less (peer_health::oc_reduction).
    health_.oc_reduction[id].store(reduction, std::memory_order_relaxed);
}

void oc_peers::on_feedback(uint32_t id, uint8_t reduction, uint32_t validity_ms, bool has_seq, uint64_t seq,
                           uint64_t now_ms, const name_fn& name)
{
    if (id >= peers_.size()) return;
    state& s = peers_[id];
    // RFC 7339 section 5.1: only the latest feedback counts. An older oc-seq (a response that
    // overtook another) is ignored while the latest one's validity lasts; after that, any
    // value is taken (the peer may have restarted and counts from low again).
    if (has_seq && s.has_seq && now_ms < s.seq_until_ms && seq < s.seq) {
        ++s.stale;
        return;
    }
    ++s.feedbacks;
    s.has_seq = has_seq;
    s.seq = seq;
    s.seq_until_ms = now_ms + (validity_ms != 0 ? validity_ms : sip::oc_default_validity_ms);
    const uint8_t was = s.reduction;
    const uint8_t r = validity_ms == 0 ? 0 : (reduction > 100 ? 100 : reduction);
    s.reduction = r;
    s.until_ms = r != 0 ? now_ms + validity_ms : 0;
    if (r != was) publish(id, r);
    if (was == 0 && r != 0) {
        ++in_force_;
        log_("peer " + name(id) + ": overload control: " + std::to_string(r) + "% of new calls sent elsewhere for " +
             std::to_string(validity_ms) + " ms (RFC 7339 feedback)");
    } else if (was != 0 && r == 0) {
        --in_force_;
        log_("peer " + name(id) + ": overload control ended by the peer");
    }
}

void oc_peers::tick(uint64_t now_ms, const name_fn& name)
{
    if (in_force_ == 0) return;
    for (uint32_t id = 0; id < peers_.size(); ++id) {
        state& s = peers_[id];
        if (s.reduction == 0 || now_ms < s.until_ms) continue;
        s.reduction = 0;
        s.until_ms = 0;
        publish(id, 0);
        --in_force_;
        log_("peer " + name(id) + ": overload control expired (no new feedback within its oc-validity)");
    }
}

void oc_peers::reset(uint32_t id)
{
    if (id >= peers_.size()) return;
    if (peers_[id].reduction != 0) --in_force_;
    peers_[id] = state{};
    publish(id, 0);
}

}  // namespace sbc::control
