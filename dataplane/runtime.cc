// Dataplane bring-up and shutdown (see runtime.h). Main lcore only.
#include "dataplane/runtime.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "dataplane/events.h"
#include "dataplane/nd.h"
#include "dataplane/stages.h"

namespace sbc::dataplane {

namespace {

bool is_pci_address(const std::string& d)
{
    // "0000:3b:00.0" or "3b:00.0"; vdev names start with "net_" and never contain ':' first.
    return d.find(':') != std::string::npos && d.rfind("net_", 0) != 0;
}

void tx_error_callback(rte_mbuf** unsent, uint16_t count, void* userdata)
{
    rte_pktmbuf_free_bulk(unsent, count);
    static_cast<worker*>(userdata)->pending_tx_dropped += count;
}

std::string rte_error(const char* what, int err)
{
    return std::string(what) + ": " + rte_strerror(err < 0 ? -err : err);
}

/// The rings between every worker and the stream thread, the control core's ring to it, and
/// the pool of stream message buffers (dataplane/stream_ring.h).
bool create_stream_rings(dataplane_runtime& rt, const port_options& o, int socket, std::string& error)
{
    const auto room = static_cast<uint16_t>(o.stream_message_bytes + RTE_PKTMBUF_HEADROOM);
    rt.stream_pool = rte_pktmbuf_pool_create("sbc_stream_pool", o.stream_mbufs, 128, 0, room, socket);
    if (rt.stream_pool == nullptr) {
        error = rte_error("cannot create the stream message pool", rte_errno);
        return false;
    }
    auto ring = [&](const std::string& name) -> rte_ring* {
        rte_ring* r = rte_ring_create(name.c_str(), o.stream_ring, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
        if (r == nullptr) error = rte_error(("cannot create the stream ring " + name).c_str(), rte_errno);
        else rt.handoff.push_back(r);
        return r;
    };
    rt.control_out = ring("sbc_ctl_stream");
    if (rt.control_out == nullptr) return false;
    for (auto& w : rt.workers) {
        const std::string n = std::to_string(w->id);
        w->stream_pool = rt.stream_pool;
        w->kernel_out = ring("sbc_kout_w" + n);
        w->kernel_in = ring("sbc_kin_w" + n);
        w->stream_in = ring("sbc_sin_w" + n);
        w->stream_out = ring("sbc_sout_w" + n);
        if (w->kernel_out == nullptr || w->kernel_in == nullptr || w->stream_in == nullptr || w->stream_out == nullptr)
            return false;
    }
    return true;
}

/// Every worker's pool of mbufs large enough for a whole frame of its net_af_packet ports
/// (af_packet.h): the kernel hands them reassembled datagrams, which the PMD copies into one
/// mbuf. None without such ports.
bool create_af_packet_pools(dataplane_runtime& rt, const std::vector<std::string>& devices, const port_options& o,
                            int socket, std::string& error)
{
    uint32_t room = 0;
    for (const auto& d : devices) {
        if (!is_af_packet(d)) continue;
        const uint32_t r = af_packet_mbuf_room(af_packet_devargs(d, o.af_packet_max_datagram), o.af_packet_max_datagram);
        if (r == 0) {
            error = "device " + d + ": its framesz needs a larger mbuf than DPDK has (at most " +
                    std::to_string(af_packet_max_datagram_limit) + "-byte datagrams)";
            return false;
        }
        room = r > room ? r : room;
    }
    if (room <= RTE_MBUF_DEFAULT_BUF_SIZE) return true;  // the worker's own pool holds a frame
    for (const auto& w : rt.workers) {
        const std::string name = "sbc_afp_w" + std::to_string(w->id);
        rte_mempool* p = rte_pktmbuf_pool_create(name.c_str(), o.af_packet_mbufs, 64, 0, static_cast<uint16_t>(room), socket);
        if (p == nullptr) {
            error = rte_error(("cannot create the af_packet RX pool " + name).c_str(), rte_errno);
            return false;
        }
        rt.af_packet_pools.push_back(p);
    }
    return true;
}

}  // namespace

std::vector<std::string> eal_arguments(const eal_options& o)
{
    std::vector<std::string> a{o.program};
    const unsigned lcores = o.workers + 1;
    unsigned cpus = o.cpus != 0 ? o.cpus : static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN));
    if (cpus == 0) cpus = 1;
    if (lcores <= cpus) {
        a.push_back("-l");
        a.push_back(lcores == 1 ? "0" : "0-" + std::to_string(lcores - 1));
    } else {
        // More lcores than CPUs: share the CPUs (works, but a busy-polling worker then competes
        // with another; fine for tests, not for production).
        std::string map;
        for (unsigned l = 0; l < lcores; ++l) {
            if (!map.empty()) map += ',';
            map += std::to_string(l) + "@" + std::to_string(l % cpus);
        }
        a.push_back("--lcores=" + map);
    }
    if (o.no_huge) a.push_back("--no-huge");
    a.push_back("-m");
    a.push_back(std::to_string(o.memory_mb));
    bool any_pci = false;
    for (const auto& d : o.devices) {
        if (is_pci_address(d)) {
            any_pci = true;
            a.push_back("-a");
        } else {
            a.push_back("--vdev");
        }
        a.push_back(af_packet_devargs(d, o.af_packet_max_datagram));
    }
    if (!any_pci) a.push_back("--no-pci");
    a.push_back("--file-prefix=" + o.file_prefix);
    a.push_back("--log-level=*:warning");
    a.push_back("--no-telemetry");
    for (const auto& e : o.extra) a.push_back(e);
    return a;
}

bool eal_start(const eal_options& o, std::string& error)
{
    std::vector<std::string> args = eal_arguments(o);
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    if (rte_eal_init(static_cast<int>(args.size()), argv.data()) < 0) {
        std::string cmd;
        for (auto& s : args) cmd += " " + s;
        error = rte_error("EAL init failed", rte_errno) + " (arguments:" + cmd + ")";
        return false;
    }
    return true;
}

std::string device_port_name(const std::string& device)
{
    return device.substr(0, device.find(','));
}

const port_info* dataplane_runtime::port_of(const std::string& device) const
{
    for (const auto& p : ports)
        if (p.device == device) return &p;
    return nullptr;
}

dataplane_runtime::~dataplane_runtime()
{
    if (launched || !ports.empty()) stop_dataplane(*this);
    for (auto* r : handoff) {
        void* m = nullptr;
        while (rte_ring_dequeue(r, &m) == 0) rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
        rte_ring_free(r);
    }
    for (auto& w : workers) {
        for (auto* b : w->tx) rte_free(b);
        if (w->frag_table != nullptr) rte_ip_frag_table_destroy(w->frag_table);
        if (w->inject != nullptr) rte_ring_free(w->inject);
        if (w->cdr_out != nullptr) rte_ring_free(w->cdr_out);  // records, not mbufs: nothing to free in it
        if (w->pool != nullptr) rte_mempool_free(w->pool);
    }
    if (events != nullptr) rte_ring_free(events);
    if (stream_pool != nullptr) rte_mempool_free(stream_pool);
    for (auto* p : af_packet_pools) rte_mempool_free(p);
    if (control_pool != nullptr) rte_mempool_free(control_pool);
}

namespace {

/// The event ring every worker posts to and the control core's pool of frames to send.
bool create_control_rings(dataplane_runtime& rt, int socket, std::string& error)
{
    rt.events = rte_ring_create_elem("sbc_events", sizeof(event), event_ring_size, socket, RING_F_SC_DEQ);
    rt.control_pool = rte_pktmbuf_pool_create("sbc_ctl_pool", 4095, 64, 0, RTE_MBUF_DEFAULT_BUF_SIZE, socket);
    if (rt.events != nullptr && rt.control_pool != nullptr) return true;
    error = rte_error("cannot create the control ring or pool", rte_errno);
    return false;
}

/// Worker `i` on `lcore`, with everything it will ever allocate: its mbuf pool, inject ring,
/// fragment table, SIP proxy (every table it uses), outbox and flood screening table.
std::unique_ptr<worker> create_worker(dataplane_runtime& rt, unsigned i, unsigned lcore, const port_options& o,
                                      int socket, std::string& error)
{
    auto w = std::make_unique<worker>();
    w->id = i;
    w->lcore = lcore;
    w->shared = rt.shared.get();
    w->events = rt.events;
    const std::string n = std::to_string(i);
    w->pool = rte_pktmbuf_pool_create(("sbc_pool_w" + n).c_str(), o.mbufs_per_worker, 256, 0,
                                      RTE_MBUF_DEFAULT_BUF_SIZE, socket);
    w->inject = rte_ring_create(("sbc_inject_w" + n).c_str(), 1024, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
    const uint64_t frag_cycles = rte_get_tsc_hz() / 1000 * o.frag_timeout_ms;
    w->frag_table = rte_ip_frag_table_create(1024, 16, 1024 * 16, frag_cycles, socket);
    if (w->pool == nullptr || w->inject == nullptr || w->frag_table == nullptr) {
        error = rte_error(("cannot create pool, ring or fragment table for worker " + n).c_str(), rte_errno);
        rt.workers.push_back(std::move(w));  // what it did create is freed with the runtime
        return nullptr;
    }
    w->proxy = std::make_unique<sip::proxy>(static_cast<uint8_t>(i), o.setups_per_worker, o.dialogs_per_worker,
                                            rte_rdtsc());
    w->proxy->set_admission(&rt.shared->admission);  // one set of call counts for the node
    if (o.large_setups_per_worker != sip::large_setups_per_worker) w->proxy->set_large_setups(o.large_setups_per_worker);
    w->outbox = std::make_unique<sip::outbox>();
    w->guard = std::make_unique<source_guard>();  // flood screening's per-source table, allocated once
    w->tsc_per_ms = rte_get_tsc_hz() / 1000 != 0 ? rte_get_tsc_hz() / 1000 : 1;
    return w;
}

/// One worker per lcore after the main one.
bool create_workers(dataplane_runtime& rt, const port_options& o, int socket, std::string& error)
{
    if (o.workers > std::tuple_size_v<decltype(worker::handoff_out)>) {
        error = "at most " + std::to_string(std::tuple_size_v<decltype(worker::handoff_out)>) + " workers";
        return false;
    }
    unsigned lcore = rte_get_next_lcore(static_cast<unsigned>(-1), 1, 0);
    for (unsigned i = 0; i < o.workers; ++i) {
        if (lcore >= RTE_MAX_LCORE) {
            error = "not enough lcores for " + std::to_string(o.workers) + " workers (EAL has " +
                    std::to_string(rte_lcore_count()) + " including the main lcore)";
            return false;
        }
        std::unique_ptr<worker> w = create_worker(rt, i, lcore, o, socket, error);
        if (w == nullptr) return false;
        rt.workers.push_back(std::move(w));
        lcore = rte_get_next_lcore(lcore, 1, 0);
    }
    return true;
}

/// One single-producer, single-consumer ring per ordered pair of workers: SIP datagrams that
/// land on a worker other than the owner of their transaction or dialog.
bool create_handoff_rings(dataplane_runtime& rt, const port_options& o, int socket, std::string& error)
{
    for (unsigned i = 0; i < o.workers; ++i) {
        for (unsigned j = 0; j < o.workers; ++j) {
            if (i == j) continue;
            const std::string name = "sbc_ho_" + std::to_string(i) + "_" + std::to_string(j);
            rte_ring* r = rte_ring_create(name.c_str(), o.handoff_ring, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
            if (r == nullptr) {
                error = rte_error(("cannot create the SIP handoff ring " + name).c_str(), rte_errno);
                return false;
            }
            rt.handoff.push_back(r);
            rt.workers[i]->handoff_out[j] = r;
            rt.workers[j]->handoff_in[i] = r;
        }
    }
    for (auto& w : rt.workers) w->handoff_span = static_cast<uint16_t>(o.workers);
    return true;
}

/// Each worker's ring of SIP frame copies to the capture thread (dataplane/capture_filter.h):
/// always there, empty and never touched while no capture runs; and, when call records are on,
/// its ring of call records to the control core (dataplane/cdr_out.h), which the proxy hands
/// every ended call to.
bool create_record_rings(dataplane_runtime& rt, const port_options& o, int socket, std::string& error)
{
    for (auto& w : rt.workers) {
        const std::string n = std::to_string(w->id);
        w->capture_out =
            rte_ring_create(("sbc_cap_w" + n).c_str(), capture_ring_size, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
        if (w->capture_out == nullptr) {
            error = rte_error("cannot create the capture ring", rte_errno);
            return false;
        }
        rt.handoff.push_back(w->capture_out);
        if (o.cdr_ring == 0) continue;
        w->cdr_out = rte_ring_create_elem(("sbc_cdr_w" + n).c_str(), sizeof(sbc::call_record), o.cdr_ring, socket,
                                          RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
        if (w->cdr_out == nullptr) {
            error = rte_error("cannot create the call record ring", rte_errno);
            return false;
        }
        w->cdr_sink.attach(w->cdr_out, &w->counters);
        w->proxy->set_cdr_sink(&w->cdr_sink);
    }
    return true;
}

/// A device's DPDK port: found by name, checked for a queue pair per worker, configured (RSS
/// over the workers when it can, the checksum offloads it has), each worker's RX and TX queue
/// and TX buffer set up, started.
bool start_port(dataplane_runtime& rt, const std::string& device, const port_options& o, int socket,
                std::string& error)
{
    const auto queues = static_cast<uint16_t>(o.workers);
    port_info p;
    p.device = device;
    const std::string name = device_port_name(device);
    if (rte_eth_dev_get_port_by_name(name.c_str(), &p.port_id) != 0) {
        error = "device " + device + ": no DPDK port named " + name + " (is the device string right?)";
        return false;
    }
    if (p.port_id >= max_ports) {
        error = "device " + device + ": port id beyond " + std::to_string(max_ports);
        return false;
    }
    rte_eth_dev_info info{};
    if (int rc = rte_eth_dev_info_get(p.port_id, &info); rc != 0) {
        error = rte_error(("device " + device).c_str(), rc);
        return false;
    }
    if (info.max_rx_queues < queues || info.max_tx_queues < queues) {
        error = "device " + device + " has " + std::to_string(info.max_rx_queues) + " RX and " +
                std::to_string(info.max_tx_queues) + " TX queues; " + std::to_string(queues) +
                " workers need one of each per worker (fewer workers, or more queues, e.g. qpairs=N)";
        return false;
    }
    rte_eth_conf conf{};
    if (queues > 1 && (info.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP)) != 0) {
        conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
        conf.rx_adv_conf.rss_conf.rss_hf = info.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP);
        p.rss = true;
    }
    const uint64_t rx_want = RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
    conf.rxmode.offloads = info.rx_offload_capa & rx_want;
    // Checksum offload for the media relay (rtp_stage.cc asks for it per packet).
    const uint64_t tx_want = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
    conf.txmode.offloads = info.tx_offload_capa & tx_want;
    p.tx_offloads = conf.txmode.offloads;
    if (int rc = rte_eth_dev_configure(p.port_id, queues, queues, &conf); rc != 0) {
        error = rte_error(("device " + device + ": configure").c_str(), rc);
        return false;
    }
    uint16_t rxd = static_cast<uint16_t>(o.rx_ring), txd = static_cast<uint16_t>(o.tx_ring);
    rte_eth_dev_adjust_nb_rx_tx_desc(p.port_id, &rxd, &txd);
    for (uint16_t q = 0; q < queues; ++q) {
        auto& w = *rt.workers[q];
        rte_mempool* rx_pool = is_af_packet(device) && q < rt.af_packet_pools.size() ? rt.af_packet_pools[q] : w.pool;
        if (int rc = rte_eth_rx_queue_setup(p.port_id, q, rxd, static_cast<unsigned>(socket), nullptr, rx_pool); rc != 0) {
            error = rte_error(("device " + device + ": RX queue " + std::to_string(q)).c_str(), rc);
            return false;
        }
        if (int rc = rte_eth_tx_queue_setup(p.port_id, q, txd, static_cast<unsigned>(socket), nullptr); rc != 0) {
            error = rte_error(("device " + device + ": TX queue " + std::to_string(q)).c_str(), rc);
            return false;
        }
        auto* buf = static_cast<rte_eth_dev_tx_buffer*>(
            rte_zmalloc_socket("sbc_txbuf", RTE_ETH_TX_BUFFER_SIZE(burst_size), 0, socket));
        if (buf == nullptr) {
            error = "cannot allocate a TX buffer";
            return false;
        }
        rte_eth_tx_buffer_init(buf, burst_size);
        rte_eth_tx_buffer_set_err_callback(buf, tx_error_callback, &w);
        w.tx[p.port_id] = buf;
        w.ports[w.n_ports++] = p.port_id;
    }
    if (int rc = rte_eth_dev_start(p.port_id); rc != 0) {
        error = rte_error(("device " + device + ": start").c_str(), rc);
        return false;
    }
    rte_eth_macaddr_get(p.port_id, &p.mac);
    p.rx_queues = p.tx_queues = queues;
    rt.ports.push_back(p);
    return true;
}

}  // namespace

std::unique_ptr<dataplane_runtime> start_dataplane(const std::vector<std::string>& devices,
                                                   const port_options& o, std::string& error)
{
    auto rt = std::make_unique<dataplane_runtime>();
    rt->shared = std::make_unique<shared_state>();
    const int socket = static_cast<int>(rte_socket_id());
    // In order: what a worker needs before it exists, the workers, the rings between them and
    // toward the other threads, then the ports (whose RX queues take the workers' pools).
    if (!create_control_rings(*rt, socket, error) || !create_workers(*rt, o, socket, error) ||
        !create_handoff_rings(*rt, o, socket, error) || !create_record_rings(*rt, o, socket, error))
        return nullptr;
    if (o.streams && !create_stream_rings(*rt, o, socket, error)) return nullptr;
    if (!create_af_packet_pools(*rt, devices, o, socket, error)) return nullptr;
    for (const auto& device : devices)
        if (!start_port(*rt, device, o, socket, error)) return nullptr;
    return rt;
}

bool launch_workers(dataplane_runtime& rt, std::string& error)
{
    if (rt.shared->snap.current == nullptr) {
        error = "no snapshot published: workers would have nothing to read";
        return false;
    }
    for (auto& w : rt.workers) {
        int rc = rte_eal_remote_launch(
            [](void* arg) -> int {
                auto* wk = static_cast<worker*>(arg);
                run_loop(*wk, production{});
                cdr_drain_worker(*wk);  // calls still up: their records, for the control core to drain
                return 0;
            },
            w.get(), w->lcore);
        if (rc != 0) {
            error = rte_error(("cannot launch worker " + std::to_string(w->id)).c_str(), rc);
            return false;
        }
    }
    rt.launched = true;
    return true;
}

void stop_dataplane(dataplane_runtime& rt)
{
    rt.shared->stop.store(true, std::memory_order_relaxed);
    if (rt.launched) {
        for (auto& w : rt.workers) rte_eal_wait_lcore(w->lcore);
        rt.launched = false;
    }
    for (auto& p : rt.ports) {
        rte_eth_dev_stop(p.port_id);
        rte_eth_dev_close(p.port_id);
    }
    rt.ports.clear();
}

stream_rings stream_rings_of(dataplane_runtime& rt)
{
    stream_rings r;
    for (const auto& w : rt.workers) r.workers.push_back({w->kernel_out, w->kernel_in, w->stream_in, w->stream_out});
    r.control_out = rt.control_out;
    r.events = rt.events;
    r.pool = rt.stream_pool;
    r.snap = &rt.shared->snap;
    r.neighbours = &rt.shared->neighbours;
    return r;
}

bool inject_frame(dataplane_runtime& rt, rte_mbuf* m, unsigned w)
{
    static unsigned next = 0;
    if (rt.workers.empty()) {
        rte_pktmbuf_free(m);
        return false;
    }
    if (w >= rt.workers.size()) w = next++ % static_cast<unsigned>(rt.workers.size());
    if (rte_ring_sp_enqueue(rt.workers[w]->inject, m) != 0) {
        rte_pktmbuf_free(m);
        return false;
    }
    return true;
}

std::vector<std::string> accept_ipv6_multicast(dataplane_runtime& rt, const std::vector<interface_info>& ifcs)
{
    std::vector<std::string> problems;
    for (const port_info& p : rt.ports) {
        std::vector<rte_ether_addr> groups;
        const auto add = [&groups](const std::array<uint8_t, 6>& mac) {
            rte_ether_addr a;
            std::memcpy(a.addr_bytes, mac.data(), 6);
            for (const auto& g : groups)
                if (rte_is_same_ether_addr(&g, &a)) return;
            groups.push_back(a);
        };
        for (const interface_info& ifc : ifcs) {
            if (ifc.port_id != p.port_id || !ifc.has_v6()) continue;
            add(multicast_mac6(all_nodes.data()));
            for (const ip_address& a : {ifc.address6.addr, ifc.link_local6})
                add(multicast_mac6(solicited_node(a.v6_bytes().data()).data()));
        }
        if (groups.empty()) continue;
        const int rc = rte_eth_dev_set_mc_addr_list(p.port_id, groups.data(), static_cast<uint32_t>(groups.size()));
        if (rc == 0) continue;
        const int all = rte_eth_allmulticast_enable(p.port_id);
        if (all != 0 && all != -ENOTSUP)
            problems.push_back("device " + p.device + ": IPv6 multicast groups not set (" + std::strerror(-rc) +
                               ") nor all-multicast (" + std::strerror(-all) + "): Neighbor Discovery may not arrive");
    }
    return problems;
}

}  // namespace sbc::dataplane
