// What the benchmark executables in tests/bench share: the median of samples, CPU seconds of a
// thread, process RSS, and (DPDK benchmarks only) EAL start-up from the arguments after "--",
// a dataplane on the two net_ring ports and the burst injected on each before the loop starts. rtpengine_drive uses no DPDK: it defines
// SBC_BENCH_NO_DPDK before including this header.
#pragma once

#include <unistd.h>

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#ifndef SBC_BENCH_NO_DPDK
#include <array>
#include <cstring>
#include <memory>
#include <string>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "dataplane/runtime.h"
#include "dataplane/worker.h"
#endif

namespace sbc::bench {

/// The median of `v` (the mean of the middle two for an even count); 0 when empty.
inline double median(std::vector<double> v)
{
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

/// CPU seconds thread `t` has run (the machine may be shared: wall time overstates); 0 when
/// its clock cannot be read.
inline double thread_cpu_s(pthread_t t)
{
    clockid_t cid;
    timespec ts{};
    if (pthread_getcpuclockid(t, &cid) != 0 || clock_gettime(cid, &ts) != 0) return 0;
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// Resident set size of this process, in bytes (/proc/self/statm).
inline uint64_t rss_bytes()
{
    long pages = 0, resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        std::fclose(f);
    }
    return static_cast<uint64_t>(resident) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

#ifndef SBC_BENCH_NO_DPDK

/// Starts the EAL with argv[0] and the arguments after argv[dashdash] (the "--" that ends the
/// benchmark's own options, or argc). On failure prints "NAME: EAL init failed: ..." and
/// returns false.
inline bool eal_init(const char* name, int argc, char** argv, int dashdash)
{
    static std::vector<char*> eal;  // the EAL may keep pointers into it: lives as long as the process
    eal.assign(1, argv[0]);
    for (int i = dashdash + 1; i < argc; ++i) eal.push_back(argv[i]);
    eal.push_back(nullptr);
    if (rte_eal_init(static_cast<int>(eal.size() - 1), eal.data()) < 0) {
        std::fprintf(stderr, "%s: EAL init failed: %s\n", name, rte_strerror(rte_errno));
        return false;
    }
    return true;
}

/// The dataplane (one worker) on exactly two ports, the two net_ring vdevs of the EAL
/// arguments. On failure prints "NAME: ..." and returns nullptr.
inline std::unique_ptr<sbc::dataplane::dataplane_runtime> start_two_ring_ports(const char* name)
{
    if (rte_eth_dev_count_avail() != 2) {
        std::fprintf(stderr, "%s: needs exactly two ports (two net_ring vdevs), found %u\n", name,
                     rte_eth_dev_count_avail());
        return nullptr;
    }
    std::vector<std::string> devices;
    uint16_t pid = 0;
    RTE_ETH_FOREACH_DEV(pid)
    {
        char dev[RTE_ETH_NAME_MAX_LEN];
        rte_eth_dev_get_name_by_port(pid, dev);
        devices.emplace_back(dev);
    }
    std::string error;
    sbc::dataplane::port_options po;
    po.workers = 1;
    auto rt = sbc::dataplane::start_dataplane(devices, po, error);
    if (rt == nullptr) std::fprintf(stderr, "%s: %s\n", name, error.c_str());
    return rt;
}

/// One burst of `size`-byte frames (zeroed but for the Ethernet header, IPv4 ether type) sent on
/// `port` before the loop starts.
inline bool inject_burst(rte_mempool* pool, uint16_t port, uint16_t size)
{
    std::array<rte_mbuf*, sbc::dataplane::burst_size> pkts;
    if (rte_pktmbuf_alloc_bulk(pool, pkts.data(), sbc::dataplane::burst_size) != 0) return false;
    for (auto* m : pkts) {
        char* p = rte_pktmbuf_append(m, size);
        std::memset(p, 0, size);
        auto* eth = reinterpret_cast<rte_ether_hdr*>(p);
        const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x01}, src[6] = {0x02, 0, 0, 0, 0, 0x02};
        std::memcpy(eth->dst_addr.addr_bytes, dst, 6);
        std::memcpy(eth->src_addr.addr_bytes, src, 6);
        eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
    }
    const uint16_t sent = rte_eth_tx_burst(port, 0, pkts.data(), sbc::dataplane::burst_size);
    if (sent < sbc::dataplane::burst_size) rte_pktmbuf_free_bulk(pkts.data() + sent, sbc::dataplane::burst_size - sent);
    return sent == sbc::dataplane::burst_size;
}

#endif  // SBC_BENCH_NO_DPDK

}  // namespace sbc::bench
