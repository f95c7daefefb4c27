// The SIP stage's dispatch step (see sip_path.h): each decoded input goes to the worker that
// owns its transaction or dialog (named in the Via branch or Record-Route parameter we minted),
// through a single-producer ring that carries the mbuf with its decoded input in the headroom;
// inputs this worker owns go to its proxy in one call. Also the per-iteration poll of the
// handoff rings and the proxy's timers. Worker only: no heap, locks, system calls or logging.
#include <new>

#include <rte_ring.h>

#include "dataplane/capture.h"
#include "dataplane/overload.h"
#include "dataplane/sip_path.h"
#include "dataplane/sip_stage.h"
#include "dataplane/source_screen.h"
#include "sip-fastpath/proxy_ids.h"

namespace sbc::dataplane {

namespace {

/// Hands `m` with its decoded input `in` to worker `owner` when that is another worker with a
/// ring; true when it did (or dropped it on a full ring or for want of headroom, counted).
bool hand_off(worker& w, int owner, rte_mbuf* m, const sip_handoff& in, sip_tally& t) noexcept
{
    if (owner < 0 || static_cast<unsigned>(owner) == w.id || static_cast<std::size_t>(owner) >= w.handoff_out.size())
        return false;
    rte_ring* r = w.handoff_out[static_cast<std::size_t>(owner)];
    if (r == nullptr) return false;  // no such worker: handled here (finds no state, counted)
    sip_handoff* room = handoff_of(m);
    if (room == nullptr) {  // a PMD that leaves no headroom: nowhere to put the input
        rte_pktmbuf_free(m);
        ++t.unreadable;
        return true;
    }
    // Written before the enqueue, whose release makes it visible to the owner's dequeue.
    new (room) sip_handoff(in);
    if (rte_ring_sp_enqueue(r, m) != 0) {
        rte_pktmbuf_free(m);
        ++t.handoff_full;
    } else {
        ++t.handed_off;
    }
    return true;
}

/// The owner of what an ICMP error quotes, or -1: the attempt of our stateful branch, or the
/// worker waiting for the answer to an in-dialog request it relayed (our stateless branch),
/// whichever comes first in the quoted text (ours is its top Via).
int quote_owner(std::string_view quoted) noexcept
{
    const std::size_t b = quoted.find(sip::branch_stateful);
    const std::size_t l = quoted.find(sip::branch_stateless);
    if (l < b) return sip::stateless_owner(quoted.substr(l));
    sip::txn_id id;
    if (b == std::string_view::npos || !sip::read_branch(quoted.substr(b, sip::branch_stateful_len), id)) return -1;
    return id.worker;
}

void dispatch_unreachable(worker& w, const snapshot& snap, rte_mbuf* m, const sip_handoff& in, bool check_owner,
                          sip_tally& t) noexcept
{
    const std::string_view quoted{rte_pktmbuf_mtod_offset(m, const char*, in.off), in.len};
    if (check_owner && hand_off(w, quote_owner(quoted), m, in, t)) return;
    w.proxy->on_icmp_unreachable(*snap.proxy, w.shared->peer_health, quoted, in.src, in.now_ms, *w.outbox);
    rte_pktmbuf_free(m);
    flush_outbox(w, snap, t);
}

}  // namespace

void dispatch_input(worker& w, const snapshot& snap, rte_mbuf* m, const sip_handoff& in, bool check_owner,
                    sip_tally& t) noexcept
{
    if (in.what == sip_handoff::kind::unreachable) {
        dispatch_unreachable(w, snap, m, in, check_owner, t);
        return;
    }
    // The receive step found the trunk in this very snapshot; an input handed off by another
    // worker may have been decoded under an older one, whose trunk a new snapshot removed or moved.
    if (!check_owner && (in.trunk >= snap.proxy->trunks.size() ||
                         !snap.proxy->trunks[in.trunk].leg_local(in.local.proto, in.local.addr).same_place(in.local))) {
        rte_pktmbuf_free(m);
        ++t.not_trunk;
        return;
    }
    const std::string_view bytes = input_bytes(w, m, in, t);
    if (bytes.empty() && in.len != 0) {
        rte_pktmbuf_free(m);
        return;
    }
    glean_sender(w, snap, in);
    sip::message& msg = sip_state(w.id).message;
    const bool parsed = sip::parse(bytes, msg) == sip::error::none;
    if (!parsed) note_malformed(w, snap, in.src.addr, in.trunk);
    if (parsed && msg.is_response() && msg.has_top_via && take_probe_reply(w, snap, msg, in.src.addr)) {
        rte_pktmbuf_free(m);
        return;
    }
    // With one worker every message is its own: no owner to look for.
    if (check_owner && parsed && w.handoff_span > 1 && hand_off(w, sip::message_owner(msg), m, in, t)) return;
    // A running capture: matched here, by the owner, on the parsed message (capture.h).
    const capture_filter* capture = capture_now(w);
    if (capture != nullptr) capture_input(w, *capture, m, in, parsed ? &msg : nullptr);
    const sip::sip_input input{bytes, in.src, in.local, in.trunk, in.now_ms};
    w.proxy->on_message(*snap.proxy, w.shared->peer_health, input, msg, *w.outbox);
    // What the proxy saw of the sender (source_screen.h): a malformed message counts toward
    // its denial; a scanner signature under [scanner] deny reports it at once.
    // (An unparsed one was counted above.)
    if (parsed && w.outbox->fault == sip::source_fault::malformed) note_malformed(w, snap, in.src.addr, in.trunk);
    if (w.outbox->fault == sip::source_fault::scanner) report_source(w, in.src.addr, deny_reason::scanner);
    rte_pktmbuf_free(m);
    sip_worker_state& st = sip_state(w.id);
    st.answering = &in;
    flush_outbox(w, snap, t);
    st.answering = nullptr;  // `in` is the caller's; timers answer nobody in particular
    if (capture != nullptr) capture_input_done(w);
}

uint32_t sip_poll(worker& w, const snapshot& snap, uint64_t now_tsc, uint64_t now_ms) noexcept
{
    if (!snap.proxy || !w.proxy) return 0;
    overload_poll(w, snap, now_tsc);  // before the rings below are drained: their fill counts (overload.h)
    // The SIP work's cycles (overload.h) from the first input or tick on: an iteration with
    // neither, most of them, reads no clock here.
    uint64_t start = 0;
    sip_tally t;
    sip_worker_state& st = sip_state(w.id);
    st.now_ms = now_ms;
    uint32_t received = 0;
    std::array<rte_mbuf*, burst_size> pkts;
    for (unsigned r = 0; r < w.handoff_span; ++r) {
        if (w.handoff_in[r] == nullptr) continue;
        const unsigned n = rte_ring_sc_dequeue_burst(w.handoff_in[r], reinterpret_cast<void**>(pkts.data()), burst_size, nullptr);
        if (n == 0) continue;
        if (start == 0) start = rte_rdtsc();
        for (unsigned i = 0; i < n; ++i) {
            // The sender wrote the decoded input into the headroom before its enqueue; a copy
            // here, because the proxy may free the mbuf while the input is still in use.
            const sip_handoff in = *handoff_of(pkts[i]);
            dispatch_input(w, snap, pkts[i], in, false, t);
        }
        t.handed_in += n;
        received += n;
    }
    if (w.stream_in != nullptr) {
        // Messages the stream thread framed (and lost connections), decoded into the headroom.
        const unsigned n = rte_ring_sc_dequeue_burst(w.stream_in, reinterpret_cast<void**>(pkts.data()), burst_size, nullptr);
        if (n != 0 && start == 0) start = rte_rdtsc();
        for (unsigned i = 0; i < n; ++i) {
            sip_handoff in = *handoff_of(pkts[i]);
            in.now_ms = now_ms;
            dispatch_input(w, snap, pkts[i], in, true, t);
        }
        received += n;
    }
    if (received != 0) w.counters.entered(stage::sip, received);
    if (now_ms != st.last_tick_ms) {
        if (start == 0) start = rte_rdtsc();
        st.last_tick_ms = now_ms;
        w.proxy->on_tick(*snap.proxy, w.shared->peer_health, now_ms, *w.outbox);
        flush_outbox(w, snap, t);
    }
    if (start == 0) return 0;  // nothing came and no tick was due: nothing to tally
    t.commit(w);
    st.sip_cycles += rte_rdtsc() - start;
    return received + t.sent;
}

}  // namespace sbc::dataplane
