// The eal tier's test bench (see harness.h). Test thread only.
#include "tests/eal/harness.h"

#include <cstring>

#include <rte_bus_vdev.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "control/snapshot_build.h"
#include "dataplane/nd.h"
#include "dataplane/rtp_stage.h"
#include "dataplane/stages.h"

namespace sbc::test {

namespace dp = sbc::dataplane;

sent_frames::~sent_frames()
{
    for (auto* m : mbufs) rte_pktmbuf_free(m);
}

bytes linear_bytes(const rte_mbuf* m)
{
    bytes b(rte_pktmbuf_pkt_len(m));
    if (b.empty()) return b;
    const void* p = rte_pktmbuf_read(m, 0, static_cast<uint32_t>(b.size()), b.data());
    if (p != b.data()) std::memcpy(b.data(), p, b.size());
    return b;
}

harness::harness(unsigned mbufs, unsigned workers, bool streams)
{
    static unsigned seq = 0;
    name_ = "sbc_t" + std::to_string(seq++);
    const int socket = static_cast<int>(rte_socket_id());
    for (unsigned q = 0; q < workers; ++q) {
        const std::string n = name_ + "_" + std::to_string(q);
        rx_.push_back(rte_ring_create((n + "_rx").c_str(), 1024, socket, RING_F_SP_ENQ | RING_F_SC_DEQ));
        tx_.push_back(rte_ring_create((n + "_tx").c_str(), 1024, socket, RING_F_SP_ENQ | RING_F_SC_DEQ));
        if (rx_.back() == nullptr || tx_.back() == nullptr) {
            error_ = "cannot create the test rings: " + std::string(rte_strerror(rte_errno));
            return;
        }
    }
    // No per-lcore cache, so that mbufs_in_use() is exact whichever lcore freed them.
    pool_ = rte_pktmbuf_pool_create((name_ + "_pool").c_str(), mbufs, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, socket);
    if (pool_ == nullptr) {
        error_ = "cannot create the test pool: " + std::string(rte_strerror(rte_errno));
        return;
    }
    const int port = rte_eth_from_rings(name_.c_str(), rx_.data(), workers, tx_.data(), workers,
                                        static_cast<unsigned>(socket));
    if (port < 0) {
        error_ = "rte_eth_from_rings failed: " + std::string(rte_strerror(rte_errno));
        return;
    }
    port_ = static_cast<uint16_t>(port);
    // rte_eth_from_rings names its port "net_ring_<name>": that is the device DPDK knows.
    dp::port_options po;
    po.workers = workers;
    po.mbufs_per_worker = 4096;
    po.setups_per_worker = 1024;
    po.dialogs_per_worker = 1024;
    po.streams = streams;
    po.stream_mbufs = 511;
    po.stream_message_bytes = 4096;
    auto rt = dp::start_dataplane({"net_ring_" + name_}, po, error_);
    if (rt == nullptr) return;
    std::memcpy(mac_.data(), rt->ports[0].mac.addr_bytes, 6);

    auto snap = std::make_unique<dp::snapshot>();
    snap->generation = 1;
    dp::interface_info untagged;
    untagged.name = "access";
    untagged.port_id = port_;
    untagged.address = {ip_address::v4(our_ip), 24};
    untagged.gateway = ip_address::v4(our_gateway);
    untagged.mac = mac_;
    untagged.address6 = {*parse_address(our_ip6_text), 64};
    untagged.link_local6 = dp::link_local_of(mac_);
    snap->interfaces.push_back(untagged);
    dp::interface_info tagged = untagged;
    tagged.name = "core";
    tagged.vlan = our_vlan;
    tagged.address = {ip_address::v4(our_vlan_ip), 24};
    tagged.gateway = {};  // none
    tagged.address6 = {};  // IPv4 only
    tagged.link_local6 = {};
    snap->interfaces.push_back(tagged);
    snap->index_interfaces();
    control::publish_snapshot(rt->shared->snap, std::move(snap));
    rt_ = std::move(rt);
}

harness::~harness()
{
    if (rt_ != nullptr) {
        dp::stop_dataplane(*rt_);
        control::retire_snapshot(rt_->shared->snap);
        rt_.reset();
    }
    for (auto* r : rx_) {
        rte_mbuf* m = nullptr;
        while (r != nullptr && rte_ring_dequeue(r, reinterpret_cast<void**>(&m)) == 0) rte_pktmbuf_free(m);
    }
    for (auto* r : tx_) {
        rte_mbuf* m = nullptr;
        while (r != nullptr && rte_ring_dequeue(r, reinterpret_cast<void**>(&m)) == 0) rte_pktmbuf_free(m);
    }
    rte_vdev_uninit(("net_ring_" + name_).c_str());
    for (auto* r : rx_) rte_ring_free(r);
    for (auto* r : tx_) rte_ring_free(r);
    rte_mempool_free(pool_);
}

bool harness::receive(std::span<const uint8_t> frame, unsigned queue)
{
    rte_mbuf* m = rte_pktmbuf_alloc(pool_);
    if (m == nullptr) return false;
    char* p = rte_pktmbuf_append(m, static_cast<uint16_t>(frame.size()));
    if (p == nullptr) {
        rte_pktmbuf_free(m);
        return false;
    }
    std::memcpy(p, frame.data(), frame.size());
    // Like net_ring itself, leave m->port and the offload flags as the pool made them: the
    // dataplane must not rely on a PMD filling them.
    if (rte_ring_enqueue(rx_[queue], m) != 0) {
        rte_pktmbuf_free(m);
        return false;
    }
    return true;
}

void harness::poll(unsigned wi)
{
    auto& w = worker(wi);
    const dp::snapshot* snap = rt_->shared->snap.current;
    std::array<rte_mbuf*, dp::burst_size> pkts;
    for (;;) {
        const uint16_t n = rte_eth_rx_burst(port_, static_cast<uint16_t>(wi), pkts.data(), dp::burst_size);
        if (n == 0) break;
        dp::process_burst(w, *snap, port_, pkts.data(), n);
        dp::tx_flush(w);
    }
}

uint32_t harness::poll_worker(unsigned wi, uint64_t now_tsc)
{
    auto& w = worker(wi);
    const uint32_t n = dp::poll_worker(w, *rt_->shared->snap.current, now_tsc != 0 ? now_tsc : rte_rdtsc());
    dp::tx_flush(w);
    return n;
}

void harness::set_proxy(std::shared_ptr<const sip::proxy_tables> tables)
{
    const dp::snapshot& cur = *rt_->shared->snap.current;
    auto snap = std::make_unique<dp::snapshot>();
    snap->generation = cur.generation + 1;
    snap->interfaces = cur.interfaces;
    snap->proxy = std::move(tables);
    snap->media_egress = cur.media_egress;
    snap->index_interfaces();
    control::publish_snapshot(rt_->shared->snap, std::move(snap));
}

bool harness::set_media_egress(const rtp::media_config& media, std::string& error)
{
    const dp::snapshot& cur = *rt_->shared->snap.current;
    auto snap = std::make_unique<dp::snapshot>();
    snap->generation = cur.generation + 1;
    snap->interfaces = cur.interfaces;
    snap->proxy = cur.proxy;
    snap->index_interfaces();
    if (!dp::media_egress_of(media, snap->interfaces, rt_->ports, snap->media_egress, error)) return false;
    control::publish_snapshot(rt_->shared->snap, std::move(snap));
    return true;
}

sent_frames harness::take_sent()
{
    sent_frames s;
    rte_mbuf* m = nullptr;
    for (auto* r : tx_)
        while (rte_ring_dequeue(r, reinterpret_cast<void**>(&m)) == 0) s.mbufs.push_back(m);
    return s;
}

std::vector<dp::event> harness::take_events()
{
    std::vector<dp::event> out;
    std::array<dp::event, 64> buf;
    for (;;) {
        const unsigned n = rte_ring_sc_dequeue_burst_elem(rt_->events, buf.data(), sizeof(dp::event),
                                                          static_cast<unsigned>(buf.size()), nullptr);
        if (n == 0) break;
        out.insert(out.end(), buf.begin(), buf.begin() + n);
    }
    return out;
}

dp::counters_view harness::counters(unsigned w) const { return dp::snapshot_of(rt_->workers[w]->counters); }

unsigned harness::mbufs_in_use() const { return rte_mempool_in_use_count(pool_); }

}  // namespace sbc::test
