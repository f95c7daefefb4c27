// The exception port: a DPDK port facing a kernel interface in sbcd's own namespace
// (net_tap here; net_virtio_user on /dev/vhost-net where the host has it), through which TCP
// for the SBC's addresses reaches the kernel's TCP stack, and the kernel's segments leave
// through the NIC. The kernel interface carries the SBC's addresses and the NIC's MAC, with
// IFF_NOARP: the fast path stays the only ARP speaker and picks every outgoing frame's next
// hop from its own neighbour table (docs/architecture.md, "Streams").
// open_exception_port: main lcore at start. pump_*: the stream thread only (the port's one
// RX and one TX queue are its own).
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <rte_ether.h>
#include <rte_mempool.h>

#include "common/address.h"
#include "common/counter.h"
#include "dataplane/stream_ring.h"
#include "transport/netns.h"

namespace sbc::dataplane {
struct snapshot;
}

namespace sbc::streams {

struct exception_port {
    uint16_t port_id = 0;
    std::string ifname;          ///< the kernel interface, in sbcd's namespace
    std::string device;          ///< the vdev string it was probed with
    rte_ether_addr kernel_mac{}; ///< the kernel interface's MAC (frames to it carry it)
    rte_mempool* pool = nullptr; ///< what its RX queue fills
    int rx_fd = -1;              ///< readable when the kernel has sent frames (RX interrupt); -1: none
    bool started = false;
};

/// Counters of the pump, written by the stream thread (single_writer, common/counter.h), read by the
/// control core (relaxed).
struct pump_counters {
    sbc::single_writer<uint64_t> to_kernel;        ///< frames written to the kernel
    sbc::single_writer<uint64_t> from_kernel;      ///< frames the kernel sent, passed to a worker
    sbc::single_writer<uint64_t> no_route;         ///< kernel frames for no interface's reach
    sbc::single_writer<uint64_t> no_neighbour;     ///< kernel frames for a next hop without MAC (ARP asked)
    sbc::single_writer<uint64_t> other;            ///< kernel frames neither IPv4 nor TCP over IPv6 (dropped)
    sbc::single_writer<uint64_t> ring_full;        ///< kernel frames lost on a full worker ring
    sbc::single_writer<uint64_t> tx_failed;        ///< frames the exception port did not take
};

/// Creates the kernel interface `ifname` inside `ns` (the PMD is probed from within it, so that
/// its own ioctls keep working), starts the port with one queue pair, and sets the interface
/// up with `mac`, the SBC's `addresses`, NOARP and a default route (netns.h configure_link).
bool open_exception_port(const netns& ns, const std::string& ifname, const rte_ether_addr& mac,
                         const std::vector<ip_prefix>& addresses, exception_port& out, std::string& error);
/// Stops and closes the port (the interface goes with it). Main lcore at exit.
void close_exception_port(exception_port& p);

/// Stream thread: the TCP frames every worker queued for the kernel, written to the port.
unsigned pump_to_kernel(exception_port& p, const dataplane::stream_rings& rings, pump_counters& c) noexcept;
/// Stream thread: frames the kernel sent, given their Ethernet header for the next hop the
/// fast path knows (ARP asked of the control core when it does not) and queued on a worker.
unsigned pump_from_kernel(exception_port& p, const dataplane::stream_rings& rings, const dataplane::snapshot& snap,
                          pump_counters& c) noexcept;

}  // namespace sbc::streams
