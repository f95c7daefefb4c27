// The io benchmark's forwarding stage, shared by tests/bench/io_bench.cc (two net_ring ports,
// the same 64 frames circulating) and tests/bench/flood_bench.cc (`--mix forward`: fresh frames
// from the generator on one port). Worker lcore only: testpmd's macswap, each frame's MAC
// addresses swapped and the frame sent with tx_enqueue out of the other port (out of the same
// port where the worker has one). No heap, locks or system calls.
#pragma once

#include <cstdint>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "dataplane/worker.h"

namespace sbc::bench {

struct macswap_stage {
    uint32_t poll(dataplane::worker&, const dataplane::snapshot&, uint64_t) const noexcept { return 0; }
    void burst(dataplane::worker& w, const dataplane::snapshot&, uint16_t port, rte_mbuf** pkts, uint16_t n) const noexcept
    {
        const uint16_t out = w.n_ports < 2 ? port : port == w.ports[0] ? w.ports[1] : w.ports[0];
        for (uint16_t i = 0; i < n; ++i) {
            auto* eth = rte_pktmbuf_mtod(pkts[i], rte_ether_hdr*);
            const rte_ether_addr a = eth->src_addr;
            eth->src_addr = eth->dst_addr;
            eth->dst_addr = a;
            dataplane::tx_enqueue(w, out, pkts[i]);
        }
    }
};

}  // namespace sbc::bench
