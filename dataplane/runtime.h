// Bringing the dataplane up and down: EAL arguments and init, ports with one RX and one TX
// queue per worker, mbuf pools, rings (events, inject, SIP handoff between every ordered pair
// of workers), worker contexts with their SIP proxy, launching and stopping the worker lcores.
// Main lcore (control core) only, at start and at shutdown.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <rte_ether.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "common/limits.h"
#include "dataplane/af_packet.h"
#include "dataplane/stream_ring.h"
#include "dataplane/worker.h"

namespace sbc::dataplane {

struct eal_options {
    std::string program = "sbcd";
    unsigned workers = 1;
    unsigned cpus = 0;                  ///< CPUs to spread lcores on; 0: ask the system
    bool no_huge = true;
    unsigned memory_mb = default_memory_mb;
    std::string file_prefix = "sbc";
    std::vector<std::string> devices;   ///< PCI addresses or vdev strings, each once
    std::vector<std::string> extra;     ///< operator's EAL arguments, appended last
    /// Largest IPv4 datagram a net_af_packet port delivers whole ([dpdk] af_packet_max_datagram):
    /// its frame size goes into the vdev string (dataplane/af_packet.h).
    uint32_t af_packet_max_datagram = default_af_packet_max_datagram;
};

/// The EAL argument vector for `o` (pure; the unit tier tests it).
std::vector<std::string> eal_arguments(const eal_options& o);

/// Runs rte_eal_init with eal_arguments(o). False with a message on failure.
bool eal_start(const eal_options& o, std::string& error);

/// The port name DPDK gives `device` ("net_ring0,nodeaction=..." -> "net_ring0").
std::string device_port_name(const std::string& device);

struct port_options {
    unsigned workers = 1;
    unsigned rx_ring = default_rx_ring;
    unsigned tx_ring = default_tx_ring;
    unsigned mbufs_per_worker = default_mbufs_per_worker;
    unsigned frag_timeout_ms = 2000;
    /// SIP call setups under way (and lingering) per worker: [limits] transactions_per_worker.
    uint32_t setups_per_worker = default_transactions_per_worker;
    uint32_t dialogs_per_worker = default_dialogs_per_worker;  ///< established calls per worker
    unsigned handoff_ring = handoff_ring_size;  ///< entries of each worker-to-worker SIP handoff ring
    /// SIP over TCP/TLS: the rings to and from the stream thread (dataplane/stream_ring.h) and
    /// the pool of stream message buffers, each holding `stream_message_bytes`.
    bool streams = false;
    unsigned stream_message_bytes = default_stream_message_bytes;
    unsigned stream_mbufs = 8191;
    unsigned stream_ring = default_stream_ring;
    /// net_af_packet ports: the largest datagram they deliver (as eal_options) and the mbufs,
    /// each big enough for one, of every worker's pool for their RX queues (af_packet.h).
    uint32_t af_packet_max_datagram = default_af_packet_max_datagram;
    unsigned af_packet_mbufs = 512;
    /// Setups per worker that may hold an INVITE over 4 KiB ([limits] large_messages_per_worker).
    uint32_t large_setups_per_worker = sip::large_setups_per_worker;
    /// Call records: entries of each worker's ring of records to the control core
    /// (worker::cdr_out, dataplane/cdr_out.h); 0: no call records (no ring, no sink).
    unsigned cdr_ring = 0;
};

struct port_info {
    uint16_t port_id = 0;
    std::string device;
    rte_ether_addr mac{};
    uint16_t rx_queues = 0;
    uint16_t tx_queues = 0;
    bool rss = false;
    uint64_t tx_offloads = 0;  ///< TX offloads enabled (IPv4 and UDP checksums where the port has them)
};

/// Everything the dataplane owns once started. Lives on the main lcore; workers get pointers.
struct dataplane_runtime {
    std::unique_ptr<shared_state> shared;
    std::vector<std::unique_ptr<worker>> workers;
    std::vector<port_info> ports;
    rte_ring* events = nullptr;          ///< workers -> control core
    rte_mempool* control_pool = nullptr; ///< frames the control core builds
    std::vector<rte_ring*> handoff;      ///< every SIP handoff ring (and stream ring), for freeing
    rte_mempool* stream_pool = nullptr;  ///< stream message buffers (null without streams)
    /// Per worker: the pool of large mbufs its net_af_packet RX queues copy frames into (empty
    /// without such ports; af_packet.h).
    std::vector<rte_mempool*> af_packet_pools;
    rte_ring* control_out = nullptr;     ///< the control core's probes to stream peers (SP/SC)
    bool launched = false;

    ~dataplane_runtime();
    [[nodiscard]] const port_info* port_of(const std::string& device) const;
};

/// Finds the ports of `devices` (after eal_start), sets them up with a queue pair per worker,
/// and creates pools, rings and worker contexts. Returns nullptr with a message on failure.
std::unique_ptr<dataplane_runtime> start_dataplane(const std::vector<std::string>& devices,
                                                   const port_options& o, std::string& error);

/// Launches run_loop(process_burst) on every worker lcore.
bool launch_workers(dataplane_runtime& rt, std::string& error);

/// Sets stop, waits for every worker to leave its loop, then stops and closes the ports.
void stop_dataplane(dataplane_runtime& rt);

/// The stream thread's ends of `rt` (dataplane/stream_ring.h): every worker's stream rings,
/// the control core's probe ring, the events ring, the stream pool, the snapshot slot and the
/// neighbour table. Main lcore, after start_dataplane; valid while `rt` lives.
stream_rings stream_rings_of(dataplane_runtime& rt);

/// Tells each port which IPv6 multicast groups to deliver (all-nodes, and the solicited-node
/// group of every IPv6 address of its interfaces, dataplane/nd.h): a NIC filters multicast
/// frames otherwise, and Neighbor Discovery would never reach the IPv6 stage. A port that takes
/// no list is put in all-multicast mode. Control core. Returns a line per port that took
/// neither (a virtual device that delivers everything anyway is not reported).
std::vector<std::string> accept_ipv6_multicast(dataplane_runtime& rt, const std::vector<interface_info>& ifcs);

/// Queues a frame the control core built for transmission by worker `w` (round robin when
/// w is out of range). Frees it and returns false when the worker's ring is full.
bool inject_frame(dataplane_runtime& rt, rte_mbuf* m, unsigned w = ~0u);

}  // namespace sbc::dataplane
