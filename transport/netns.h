// sbcd's own network namespace, where the exception port's kernel interface and the stream
// thread's sockets live (docs/architecture.md, "Streams"), and the rtnetlink calls that set
// that interface up. Main lcore at start and exit; enter() also by the stream thread at its start.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/address.h"

// Not sbc::transport: that name is the SIP transport enum of common/address.h, which this
// header needs for ip_prefix; a namespace and an enum of one name cannot both exist in sbc.
namespace sbc::streams {

class netns {
public:
    /// Creates a new network namespace named `name`, bind-mounted at /run/netns/<name> so that
    /// operators can look inside with `ip netns exec <name> ss -tn`; an existing mount of that
    /// name (left by a crashed sbcd) is replaced. The calling thread stays where it was.
    static std::unique_ptr<netns> create(const std::string& name, std::string& error);
    /// Unmounts and removes /run/netns/<name>; the namespace goes when its last user does.
    ~netns();
    netns(const netns&) = delete;
    netns& operator=(const netns&) = delete;

    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] int fd() const noexcept { return fd_; }
    /// Moves the calling thread into this namespace for good (the stream thread).
    bool enter(std::string& error) const;

    /// While alive, the calling thread is in `ns`; the destructor returns it to where it was.
    class scope {
    public:
        scope(const netns& ns, std::string& error);
        ~scope();
        scope(const scope&) = delete;
        scope& operator=(const scope&) = delete;
        [[nodiscard]] bool ok() const noexcept { return ok_; }
    private:
        int back_ = -1;
        bool ok_ = false;
    };

private:
    netns() = default;
    std::string name_;
    int fd_ = -1;
};

/// How the exception port's kernel interface is set up.
struct link_setup {
    std::string ifname;
    std::array<uint8_t, 6> mac{};       ///< the NIC's MAC
    std::vector<ip_prefix> addresses;   ///< the SBC's addresses, with their prefix lengths
    unsigned mtu = 1500;
};

/// In the calling thread's namespace: brings `lo` up; sets `s.ifname`'s MAC, MTU and IFF_NOARP
/// (the kernel never sends or answers ARP, nor solicits IPv6 neighbours: the fast path is the
/// only ARP and Neighbor Discovery speaker and picks each frame's next hop itself), adds the
/// addresses, brings it up, and adds a default route per family through it with no gateway
/// (every frame the kernel sends leaves through the exception port). With an IPv6 address the
/// interface gets IPv6 without a link-local address, DAD, router solicitations or
/// advertisements taken (sysctls under /proc/sys/net/ipv6/conf/<ifname>).
/// rtnetlink and those sysctls only; false with a message naming the step and errno's text.
bool configure_link(const link_setup& s, std::string& error);

}  // namespace sbc::streams
