// Transmit side of a worker: TX buffer flush, frames injected by the control core, events to
// the control core, and writing our L2 header. Worker only.
#include <cstring>

#include <rte_ether.h>

#include "dataplane/events.h"
#include "packet/l2.h"
#include "dataplane/stages.h"

namespace sbc::dataplane {

uint16_t tx_flush(worker& w) noexcept
{
    if (w.pending_tx_packets == 0) return 0;
    for (uint16_t i = 0; i < w.n_ports; ++i) {
        const uint16_t port = w.ports[i];
        rte_eth_tx_buffer_flush(port, static_cast<uint16_t>(w.id), w.tx[port]);
    }
    const uint64_t queued = w.pending_tx_packets;
    const uint64_t dropped = w.pending_tx_dropped;
    w.counters.tx_packets.add(queued - dropped);
    w.counters.tx_bytes.add(w.pending_tx_bytes);
    if (dropped != 0) w.counters.drop(drop_reason::tx_full, dropped);
    w.pending_tx_packets = w.pending_tx_bytes = w.pending_tx_dropped = 0;
    return static_cast<uint16_t>(queued);
}

namespace {
uint16_t drain_frames(worker& w, rte_ring* r) noexcept
{
    std::array<rte_mbuf*, burst_size> pkts;
    const unsigned n = rte_ring_sc_dequeue_burst(r, reinterpret_cast<void**>(pkts.data()), burst_size, nullptr);
    for (unsigned i = 0; i < n; ++i) tx_enqueue(w, pkts[i]->port, pkts[i]);
    return static_cast<uint16_t>(n);
}
}  // namespace

uint16_t drain_inject(worker& w) noexcept
{
    uint16_t n = 0;
    if (w.inject != nullptr) n = drain_frames(w, w.inject);
    if (w.kernel_in != nullptr) n = static_cast<uint16_t>(n + drain_frames(w, w.kernel_in));
    return n;
}

void free_dropped(rte_mbuf* const* pkts, unsigned n) noexcept
{
    std::array<void*, burst_size> run;  // consecutive fast ones of one pool
    unsigned k = 0;
    rte_mempool* pool = nullptr;
    for (unsigned i = 0; i < n; ++i) {
        rte_mbuf* m = pkts[i];
        // All first-cache-line fields: refcnt and nb_segs (rearm_data), ol_flags, pool.
        if (rte_mbuf_refcnt_read(m) != 1 || m->nb_segs != 1 || !RTE_MBUF_DIRECT(m)) {
            rte_pktmbuf_free(m);
            continue;
        }
        __rte_mbuf_raw_sanity_check(m);  // DPDK's debug builds check next == NULL here
        if (m->pool != pool || k == run.size()) {
            if (k != 0) rte_mempool_put_bulk(pool, run.data(), k);
            pool = m->pool;
            k = 0;
        }
        run[k++] = m;
    }
    if (k != 0) rte_mempool_put_bulk(pool, run.data(), k);
}

void post_event(worker& w, const event& e) noexcept
{
    if (rte_ring_mp_enqueue_elem(w.events, const_cast<event*>(&e), sizeof(event)) == 0)
        w.counters.events_sent.add(1);
    else
        w.counters.drop(drop_reason::event_ring_full);
}

void drop_all(worker& w, sub_burst& b, drop_reason r) noexcept
{
    if (b.n == 0) return;
    rte_pktmbuf_free_bulk(b.pkts.data(), b.n);
    w.counters.drop(r, b.n);
    b.n = 0;
}

bool write_l2(rte_mbuf* m, const interface_info& ifc, const uint8_t* dst_mac, uint16_t ethertype) noexcept
{
    return packet::write_l2(m, ifc.vlan, ifc.mac.data(), dst_mac, ethertype);
}

}  // namespace sbc::dataplane
