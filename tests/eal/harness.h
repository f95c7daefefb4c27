// The eal tier's test bench: a net_ring port made of rings the test owns, one RX and one TX
// ring per worker queue (frames enqueued on rx ring q arrive as received on queue q, what
// worker q transmits lands on tx ring q), a started dataplane with one worker (or more) on it,
// and a published snapshot with two interfaces on that port: 198.18.0.1/24 untagged (gateway
// .254; IPv6 2001:2:0:1::1/64 and the link-local address of the port's MAC) and 198.18.100.1/24
// on VLAN 100 (IPv4 only); set_proxy() republishes it with SIP proxy tables.
// Test thread only; either drive bursts with poll() or launch the real worker loop.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dataplane/counters.h"
#include "dataplane/events.h"
#include "dataplane/runtime.h"
#include "rtp/media.h"
#include "tests/eal/frame_builder.h"

namespace sbc::test {

constexpr uint32_t our_ip = ipv4(198, 18, 0, 1);
constexpr uint32_t our_gateway = ipv4(198, 18, 0, 254);
constexpr uint32_t our_vlan_ip = ipv4(198, 18, 100, 1);
constexpr uint16_t our_vlan = 100;
constexpr uint16_t untagged_iface = 0;  ///< index in the snapshot
constexpr uint16_t vlan_iface = 1;
constexpr uint32_t peer_ip = ipv4(198, 18, 0, 10);
/// The untagged interface's IPv6 address (in the benchmarking range 2001:2::/48, RFC 5180) and
/// its peer's.
constexpr const char* our_ip6_text = "2001:2:0:1::1";
constexpr const char* peer_ip6_text = "2001:2:0:1::10";
constexpr uint32_t vlan_peer_ip = ipv4(198, 18, 100, 10);
constexpr mac peer_mac{0x02, 0x00, 0x00, 0x00, 0x00, 0x0a};

/// Owns the mbufs the worker transmitted; frees them when it goes.
struct sent_frames {
    std::vector<rte_mbuf*> mbufs;
    sent_frames() = default;
    sent_frames(const sent_frames&) = delete;
    sent_frames& operator=(const sent_frames&) = delete;
    sent_frames(sent_frames&& o) noexcept : mbufs(std::move(o.mbufs)) { o.mbufs.clear(); }
    sent_frames& operator=(sent_frames&&) = delete;
    ~sent_frames();
    [[nodiscard]] std::size_t size() const noexcept { return mbufs.size(); }
};

/// The whole packet of `m` as contiguous bytes, over every segment.
bytes linear_bytes(const rte_mbuf* m);

/// The SIP trunk the SIP tests call in on: "access", our untagged address, port 5060, open to
/// 198.18.0.0/24.
inline sip::trunk access_trunk()
{
    sip::trunk tr;
    tr.name = "access";
    tr.iface = untagged_iface;
    tr.address = ip_address::v4(our_ip);
    tr.port = 5060;
    tr.allow.push_back(ip_prefix{ip_address::v4(ipv4(198, 18, 0, 0)), 24});
    return tr;
}

class harness {
public:
    /// Sets everything up; check ok() (and error()) before use. Each worker's SIP proxy gets
    /// small tables (1024 setups and dialogs).
    /// `streams`: the dataplane gets its rings to and from a stream thread (dataplane/stream_ring.h),
    /// which the test plays itself.
    explicit harness(unsigned mbufs = 2047, unsigned workers = 1, bool streams = false);
    ~harness();
    harness(const harness&) = delete;
    harness& operator=(const harness&) = delete;

    [[nodiscard]] bool ok() const noexcept { return rt_ != nullptr; }
    [[nodiscard]] const std::string& error() const noexcept { return error_; }

    /// Queues `frame` as received on the port's queue `queue`. False when the pool or ring is
    /// exhausted.
    bool receive(std::span<const uint8_t> frame, unsigned queue = 0);
    /// Runs the production burst processing of worker `w` on the test thread until its queue
    /// is drained: rx burst, process_burst, tx_flush.
    void poll(unsigned w = 0);
    /// Runs the production per-iteration work of worker `w` once (poll_worker, then tx_flush)
    /// at TSC `now_tsc` (0: now); returns what poll_worker returned.
    uint32_t poll_worker(unsigned w = 0, uint64_t now_tsc = 0);
    /// Republishes the snapshot with how media leaves each of `media`'s addresses, as
    /// build_snapshot does for sbcd (dataplane::media_egress_of); false with its message.
    bool set_media_egress(const rtp::media_config& media, std::string& error);
    /// Republishes the snapshot with `tables` as its SIP proxy tables.
    void set_proxy(std::shared_ptr<const sip::proxy_tables> tables);
    /// Takes what the workers transmitted so far (every TX ring, worker 0 first).
    sent_frames take_sent();
    /// Takes the events the worker posted so far.
    std::vector<dataplane::event> take_events();

    /// Worker 0's counters, or worker w's.
    [[nodiscard]] dataplane::counters_view counters(unsigned w = 0) const;
    [[nodiscard]] uint16_t port() const noexcept { return port_; }
    [[nodiscard]] const mac& our_mac() const noexcept { return mac_; }
    [[nodiscard]] dataplane::dataplane_runtime& runtime() noexcept { return *rt_; }
    [[nodiscard]] dataplane::worker& worker(unsigned w = 0) noexcept { return *rt_->workers[w]; }
    /// mbufs of the test pool not yet returned (in flight or leaked).
    [[nodiscard]] unsigned mbufs_in_use() const;
    [[nodiscard]] rte_ring* tx_ring(unsigned q = 0) const noexcept { return tx_[q]; }

private:
    std::string name_;
    std::string error_;
    std::vector<rte_ring*> rx_;
    std::vector<rte_ring*> tx_;
    rte_mempool* pool_ = nullptr;
    uint16_t port_ = 0;
    mac mac_{};
    std::unique_ptr<dataplane::dataplane_runtime> rt_;
};

}  // namespace sbc::test
