// The exception port (see exception_port.h): bring-up by the main lcore, the pump by the
// stream thread.
#include "transport/exception_port.h"

#include <cstring>

#include <rte_bus_vdev.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ip.h>

#include "common/counter.h"
#include "common/limits.h"
#include "dataplane/events.h"
#include "dataplane/neighbour.h"
#include "dataplane/snapshot.h"
#include "packet/l2.h"
#include "dataplane/udp_frame.h"

namespace sbc::streams {

namespace {
std::string rte_error(const std::string& what, int err)
{
    return what + ": " + rte_strerror(err < 0 ? -err : err);
}

/// The addresses of a frame the kernel sent, when it is one to carry: IPv4, or TCP over IPv6
/// (the kernel's MLD reports stay inside: the fast path speaks for the SBC on the wire; NOARP
/// and configure_link's sysctls keep the kernel from soliciting neighbours or routers).
bool kernel_addresses(const rte_mbuf* m, ip_address& src, ip_address& dst) noexcept
{
    const auto* eth = rte_pktmbuf_mtod(m, const rte_ether_hdr*);
    const uint32_t len = rte_pktmbuf_data_len(m);
    if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)) {
        if (len < sizeof(rte_ether_hdr) + sizeof(rte_ipv4_hdr)) return false;
        const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, sizeof(rte_ether_hdr));
        src = ip_address::v4(rte_be_to_cpu_32(ip->src_addr));
        dst = ip_address::v4(rte_be_to_cpu_32(ip->dst_addr));
        return true;
    }
    if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6) || len < sizeof(rte_ether_hdr) + sizeof(rte_ipv6_hdr))
        return false;
    const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv6_hdr*, sizeof(rte_ether_hdr));
    if (ip->proto != IPPROTO_TCP) return false;
    src = ip_address::v6(std::span<const uint8_t, 16>(ip->src_addr, 16));
    dst = ip_address::v6(std::span<const uint8_t, 16>(ip->dst_addr, 16));
    return true;
}
}  // namespace

bool open_exception_port(const netns& ns, const std::string& ifname, const rte_ether_addr& mac,
                         const std::vector<ip_prefix>& addresses, exception_port& out, std::string& error)
{
    netns::scope inside(ns, error);
    if (!inside.ok()) return false;
    const std::string name = "net_tap_" + ifname;
    out.ifname = ifname;
    out.device = name + ",iface=" + ifname;
    if (int rc = rte_dev_probe(out.device.c_str()); rc != 0) {
        error = rte_error("exception port " + out.device, rc);
        return false;
    }
    if (rte_eth_dev_get_port_by_name(name.c_str(), &out.port_id) != 0) {
        error = "exception port " + out.device + ": no DPDK port named " + name;
        return false;
    }
    out.pool = rte_pktmbuf_pool_create(("sbc_exc_" + ifname).c_str(), 4095, 128, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                       static_cast<int>(rte_socket_id()));
    if (out.pool == nullptr) {
        error = rte_error("exception port pool", rte_errno);
        return false;
    }
    rte_eth_conf conf{};
    conf.intr_conf.rxq = 1;  // an fd that wakes the stream thread when the kernel sends
    int rc = rte_eth_dev_configure(out.port_id, 1, 1, &conf);
    if (rc != 0) {
        conf.intr_conf.rxq = 0;  // a PMD without RX interrupts: the stream thread polls it
        rc = rte_eth_dev_configure(out.port_id, 1, 1, &conf);
    }
    if (rc != 0) {
        error = rte_error("exception port configure", rc);
        return false;
    }
    if (int rc = rte_eth_rx_queue_setup(out.port_id, 0, 1024, rte_socket_id(), nullptr, out.pool); rc != 0) {
        error = rte_error("exception port RX queue", rc);
        return false;
    }
    if (int rc = rte_eth_tx_queue_setup(out.port_id, 0, 1024, rte_socket_id(), nullptr); rc != 0) {
        error = rte_error("exception port TX queue", rc);
        return false;
    }
    if (int rc = rte_eth_dev_start(out.port_id); rc != 0) {
        error = rte_error("exception port start", rc);
        return false;
    }
    out.started = true;
    if (conf.intr_conf.rxq != 0 && rte_eth_dev_rx_intr_enable(out.port_id, 0) == 0)
        out.rx_fd = rte_eth_dev_rx_intr_ctl_q_get_fd(out.port_id, 0);
    link_setup ls;
    ls.ifname = ifname;
    std::memcpy(ls.mac.data(), mac.addr_bytes, ls.mac.size());
    ls.addresses = addresses;
    if (!configure_link(ls, error)) return false;
    out.kernel_mac = mac;
    return true;
}

void close_exception_port(exception_port& p)
{
    if (p.started) {
        rte_eth_dev_stop(p.port_id);
        rte_eth_dev_close(p.port_id);
        p.started = false;
    }
    if (p.pool != nullptr) {
        rte_mempool_free(p.pool);
        p.pool = nullptr;
    }
}

unsigned pump_to_kernel(exception_port& p, const dataplane::stream_rings& rings, pump_counters& c) noexcept
{
    std::array<rte_mbuf*, burst_size> pkts;
    unsigned total = 0;
    for (const auto& w : rings.workers) {
        const unsigned n = rte_ring_sc_dequeue_burst(w.kernel_out, reinterpret_cast<void**>(pkts.data()), burst_size, nullptr);
        if (n == 0) continue;
        // The kernel interface takes frames for its own MAC only (the NIC ports' may differ).
        for (unsigned i = 0; i < n; ++i)
            rte_ether_addr_copy(&p.kernel_mac, &rte_pktmbuf_mtod(pkts[i], rte_ether_hdr*)->dst_addr);
        const uint16_t sent = rte_eth_tx_burst(p.port_id, 0, pkts.data(), static_cast<uint16_t>(n));
        if (sent < n) {
            rte_pktmbuf_free_bulk(pkts.data() + sent, n - sent);
            c.tx_failed.add(static_cast<uint64_t>(n - sent));
        }
        c.to_kernel.add(static_cast<uint64_t>(sent));
        total += n;
    }
    return total;
}

unsigned pump_from_kernel(exception_port& p, const dataplane::stream_rings& rings, const dataplane::snapshot& snap,
                          pump_counters& c) noexcept
{
    std::array<rte_mbuf*, burst_size> pkts;
    const uint16_t n = rte_eth_rx_burst(p.port_id, 0, pkts.data(), burst_size);
    std::array<uint16_t, burst_size> to;  // the worker of each frame kept, pkts[0, ready)
    uint16_t ready = 0;
    for (uint16_t i = 0; i < n; ++i) {
        rte_mbuf* m = pkts[i];
        ip_address src, dst;
        if (!kernel_addresses(m, src, dst)) {
            rte_pktmbuf_free(m);
            c.other.bump();
            continue;
        }
        const dataplane::next_hop nh = dataplane::route_packet(snap.interfaces, src, dst);
        if (!nh.found()) {
            rte_pktmbuf_free(m);
            c.no_route.bump();
            continue;
        }
        const auto mac = rings.neighbours->lookup(nh.hop);
        if (!mac) {
            // The control core resolves it (ARP); TCP retransmits meanwhile.
            dataplane::event e{};
            e.kind = dataplane::event_kind::neighbour_needed;
            e.iface = nh.iface;
            e.ip = nh.hop;
            rte_ring_mp_enqueue_elem(rings.events, &e, sizeof(e));
            rte_pktmbuf_free(m);
            c.no_neighbour.bump();
            continue;
        }
        const dataplane::interface_info& ifc = snap.interfaces[nh.iface];
        m->l2_len = sizeof(rte_ether_hdr);
        const uint16_t ethertype = src.is_v6() ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4;
        if (!packet::write_l2(m, ifc.vlan, ifc.mac.data(), mac->data(), ethertype)) {
            rte_pktmbuf_free(m);
            c.tx_failed.bump();
            continue;
        }
        m->port = ifc.port_id;
        // One worker per remote host, so that a connection's segments leave in order.
        to[ready] = static_cast<uint16_t>(dst.hash() % rings.workers.size());
        pkts[ready++] = m;
    }
    // One enqueue per worker: it sends the burst's frames in one transmit, not one each.
    std::array<rte_mbuf*, burst_size> mine;
    for (std::size_t w = 0; w < rings.workers.size() && ready != 0; ++w) {
        unsigned k = 0;
        for (uint16_t i = 0; i < ready; ++i)
            if (to[i] == w) mine[k++] = pkts[i];
        if (k == 0) continue;
        const unsigned put = rte_ring_sp_enqueue_burst(rings.workers[w].kernel_in, reinterpret_cast<void* const*>(mine.data()), k, nullptr);
        if (put < k) {
            rte_pktmbuf_free_bulk(mine.data() + put, k - put);
            c.ring_full.add(static_cast<uint64_t>(k - put));
        }
        c.from_kernel.add(static_cast<uint64_t>(put));
    }
    return n;
}

}  // namespace sbc::streams
