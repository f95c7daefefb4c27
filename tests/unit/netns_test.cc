// sbcd's network namespace and the exception interface's rtnetlink setup, against the real
// kernel: namespaces mounted under /run/netns, a TAP device, and `ip -n` reading back what an
// operator would see. Needs root and /dev/net/tun (skipped otherwise). Test thread only.
#include "transport/netns.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

using sbc::streams::configure_link;
using sbc::streams::link_setup;
using sbc::streams::netns;

/// Why these tests cannot run here, or empty when they can.
std::string missing_prerequisite()
{
    if (::geteuid() != 0) return "needs root";
    if (::access("/dev/net/tun", R_OK | W_OK) != 0) return "needs /dev/net/tun";
    if (std::system("command -v ip >/dev/null 2>&1") != 0) return "needs iproute2's ip";
    return {};
}

#define SBC_NEEDS_ROOT_AND_TUN()                                  \
    do {                                                          \
        if (const std::string why = missing_prerequisite(); !why.empty()) GTEST_SKIP() << why; \
    } while (0)

std::string unique_name()
{
    static int counter = 0;
    return "sbc-test-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

std::string run_dir_path(const std::string& name) { return "/run/netns/" + name; }

bool exists(const std::string& path)
{
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

/// The namespace inode the calling thread is in.
ino_t current_netns_inode()
{
    struct stat st {};
    if (::stat("/proc/thread-self/ns/net", &st) != 0) return 0;
    return st.st_ino;
}

ino_t fd_inode(int fd)
{
    struct stat st {};
    if (::fstat(fd, &st) != 0) return 0;
    return st.st_ino;
}

std::vector<std::string> interface_names()
{
    std::vector<std::string> names;
    struct if_nameindex* list = ::if_nameindex();
    if (list == nullptr) return names;
    for (const struct if_nameindex* i = list; i->if_index != 0; ++i) names.emplace_back(i->if_name);
    ::if_freenameindex(list);
    return names;
}

/// Output of a shell command (stdout and stderr).
std::string command_output(const std::string& cmd)
{
    std::string out;
    FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
    if (p == nullptr) return out;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
    ::pclose(p);
    return out;
}

/// The flags between '<' and '>' of `ip link show`'s first line, each between commas
/// (",NOARP,UP,LOWER_UP,"), so that ",UP," does not match LOWER_UP.
std::string link_flags(const std::string& ip_link_output)
{
    const auto open = ip_link_output.find('<');
    const auto close = ip_link_output.find('>', open);
    if (open == std::string::npos || close == std::string::npos) return {};
    return "," + ip_link_output.substr(open + 1, close - open - 1) + ",";
}

/// A file descriptor closed at scope exit.
struct unique_fd {
    int fd = -1;
    explicit unique_fd(int f) : fd(f) {}
    ~unique_fd()
    {
        if (fd >= 0) ::close(fd);
    }
    unique_fd(const unique_fd&) = delete;
    unique_fd& operator=(const unique_fd&) = delete;
};

/// A TAP device named `name` in the calling thread's namespace; it goes when the fd closes.
int open_tap(const char* name)
{
    const int fd = ::open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (fd < 0) return -1;
    ifreq ifr{};
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    std::strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
    if (::ioctl(fd, TUNSETIFF, &ifr) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

sbc::ip_prefix prefix(const char* text)
{
    const auto p = sbc::parse_prefix(text);
    EXPECT_TRUE(p.has_value()) << text;
    return p.value_or(sbc::ip_prefix{});
}

link_setup exception_link()
{
    link_setup s;
    s.ifname = "sbcx0";
    s.mac = {0x02, 0x00, 0x5e, 0x00, 0x53, 0x01};
    s.addresses = {prefix("198.18.0.1/24"), prefix("198.19.0.1/16")};
    s.mtu = 1400;  // not the TAP's default 1500, so that the test sees it set
    return s;
}

TEST(netns, is_mounted_for_operators_and_removed_when_destroyed)
{
    SBC_NEEDS_ROOT_AND_TUN();
    const std::string name = unique_name();
    const ino_t before = current_netns_inode();
    std::string error;
    {
        auto ns = netns::create(name, error);
        ASSERT_NE(ns, nullptr) << error;
        EXPECT_EQ(ns->name(), name);
        // The mount is the namespace itself, not the host's, and the caller did not move.
        struct stat st {};
        ASSERT_EQ(::stat(run_dir_path(name).c_str(), &st), 0) << std::strerror(errno);
        EXPECT_EQ(st.st_ino, fd_inode(ns->fd()));
        EXPECT_NE(st.st_ino, before);
        EXPECT_EQ(current_netns_inode(), before);
        // What an operator runs: it sees only the namespace's loopback.
        const std::string links = command_output("ip netns exec " + name + " ip -o link show");
        EXPECT_NE(links.find(": lo:"), std::string::npos) << links;
        EXPECT_EQ(links.find("\n2:"), std::string::npos) << links;
    }
    EXPECT_FALSE(exists(run_dir_path(name)));
}

TEST(netns, scope_moves_the_calling_thread_in_and_back_out)
{
    SBC_NEEDS_ROOT_AND_TUN();
    std::string error;
    auto ns = netns::create(unique_name(), error);
    ASSERT_NE(ns, nullptr) << error;
    const ino_t host = current_netns_inode();
    const std::vector<std::string> host_links = interface_names();
    {
        netns::scope in(*ns, error);
        ASSERT_TRUE(in.ok()) << error;
        EXPECT_EQ(current_netns_inode(), fd_inode(ns->fd()));
        // A socket made here (if_nameindex makes one) sees only the namespace's loopback.
        EXPECT_EQ(interface_names(), std::vector<std::string>{"lo"});
        for (const std::string& n : host_links) {
            if (n != "lo") {
                EXPECT_EQ(::if_nametoindex(n.c_str()), 0u) << n;
            }
        }
    }
    EXPECT_EQ(current_netns_inode(), host);
    EXPECT_EQ(interface_names(), host_links);
}

TEST(netns, create_replaces_a_mount_left_by_a_crashed_process)
{
    SBC_NEEDS_ROOT_AND_TUN();
    const std::string name = unique_name();
    const std::string path = run_dir_path(name);
    ::mkdir("/run/netns", 0755);
    // What a crashed sbcd leaves: the host's namespace still bound on the name.
    const int f = ::open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL, 0);
    ASSERT_GE(f, 0) << std::strerror(errno);
    ::close(f);
    ASSERT_EQ(::mount("/proc/thread-self/ns/net", path.c_str(), "none", MS_BIND, nullptr), 0)
        << std::strerror(errno);

    std::string error;
    auto ns = netns::create(name, error);
    if (ns == nullptr) {
        ::umount2(path.c_str(), MNT_DETACH);
        ::unlink(path.c_str());
    }
    ASSERT_NE(ns, nullptr) << error;
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_ino, fd_inode(ns->fd()));
    EXPECT_NE(st.st_ino, current_netns_inode());
    ns.reset();
    EXPECT_FALSE(exists(path));
}

TEST(netns, create_refuses_a_name_with_a_slash)
{
    std::string error;
    EXPECT_EQ(netns::create("../etc", error), nullptr);
    EXPECT_NE(error.find("../etc"), std::string::npos) << error;
}

TEST(configure_link, sets_mac_mtu_noarp_addresses_and_default_route)
{
    SBC_NEEDS_ROOT_AND_TUN();
    std::string error;
    auto ns = netns::create(unique_name(), error);
    ASSERT_NE(ns, nullptr) << error;
    const link_setup s = exception_link();
    {
        netns::scope in(*ns, error);
        ASSERT_TRUE(in.ok()) << error;
        unique_fd tap(open_tap(s.ifname.c_str()));
        ASSERT_GE(tap.fd, 0) << std::strerror(errno);
        ASSERT_TRUE(configure_link(s, error)) << error;

        // Read back from the host's namespace, as an operator would.
        const std::string n = ns->name();
        const std::string link = command_output("ip -n " + n + " link show " + s.ifname);
        EXPECT_NE(link.find("link/ether 02:00:5e:00:53:01"), std::string::npos) << link;
        EXPECT_NE(link.find("mtu 1400 "), std::string::npos) << link;
        const std::string flags = link_flags(link);
        EXPECT_NE(flags.find(",NOARP,"), std::string::npos) << link;
        EXPECT_NE(flags.find(",UP,"), std::string::npos) << link;

        const std::string lo = command_output("ip -n " + n + " link show lo");
        EXPECT_NE(link_flags(lo).find(",UP,"), std::string::npos) << lo;

        const std::string addr = command_output("ip -n " + n + " -o -4 addr show dev " + s.ifname);
        EXPECT_NE(addr.find("inet 198.18.0.1/24 "), std::string::npos) << addr;
        EXPECT_NE(addr.find("inet 198.19.0.1/16 "), std::string::npos) << addr;

        const std::string route = command_output("ip -n " + n + " -4 route show default");
        EXPECT_NE(route.find("default dev sbcx0 "), std::string::npos) << route;
        EXPECT_NE(route.find("scope link"), std::string::npos) << route;
        EXPECT_EQ(route.find(" via "), std::string::npos) << route;
    }
}

TEST(configure_link, reports_the_step_and_the_kernels_errno)
{
    SBC_NEEDS_ROOT_AND_TUN();
    std::string error;
    auto ns = netns::create(unique_name(), error);
    ASSERT_NE(ns, nullptr) << error;
    netns::scope in(*ns, error);
    ASSERT_TRUE(in.ok()) << error;
    const link_setup s = exception_link();
    unique_fd tap(open_tap(s.ifname.c_str()));
    ASSERT_GE(tap.fd, 0) << std::strerror(errno);
    ASSERT_TRUE(configure_link(s, error)) << error;
    // The addresses are there already.
    EXPECT_FALSE(configure_link(s, error));
    EXPECT_NE(error.find("rtnetlink: add address 198.18.0.1/24 to sbcx0: File exists"), std::string::npos)
        << error;
}

TEST(configure_link, fails_naming_a_missing_interface)
{
    SBC_NEEDS_ROOT_AND_TUN();
    std::string error;
    auto ns = netns::create(unique_name(), error);
    ASSERT_NE(ns, nullptr) << error;
    netns::scope in(*ns, error);
    ASSERT_TRUE(in.ok()) << error;
    link_setup s = exception_link();
    s.ifname = "sbc-missing0";
    EXPECT_FALSE(configure_link(s, error));
    EXPECT_NE(error.find("sbc-missing0"), std::string::npos) << error;
    EXPECT_NE(error.find(std::strerror(ENODEV)), std::string::npos) << error;
}

TEST(configure_link, gives_ipv6_addresses_without_link_local_dad_or_solicitations)
{
    SBC_NEEDS_ROOT_AND_TUN();
    std::string error;
    auto ns = netns::create(unique_name(), error);
    ASSERT_NE(ns, nullptr) << error;
    netns::scope in(*ns, error);
    ASSERT_TRUE(in.ok()) << error;
    link_setup s = exception_link();
    s.addresses.push_back(prefix("2001:db8::1/64"));
    unique_fd tap(open_tap(s.ifname.c_str()));
    ASSERT_GE(tap.fd, 0) << std::strerror(errno);
    ASSERT_TRUE(configure_link(s, error)) << error;

    const std::string n = ns->name();
    const std::string addr = command_output("ip -n " + n + " -o -6 addr show dev " + s.ifname);
    EXPECT_NE(addr.find("inet6 2001:db8::1/64 "), std::string::npos) << addr;
    // Not tentative (no DAD to wait for), and no link-local address of the kernel's own: the
    // fast path is the only Neighbor Discovery speaker on the wire.
    EXPECT_EQ(addr.find("tentative"), std::string::npos) << addr;
    EXPECT_EQ(addr.find("fe80:"), std::string::npos) << addr;
    const std::string route = command_output("ip -n " + n + " -6 route show default");
    EXPECT_NE(route.find("default dev sbcx0 "), std::string::npos) << route;
    EXPECT_EQ(route.find(" via "), std::string::npos) << route;
    // The IPv4 side is as without IPv6.
    const std::string addr4 = command_output("ip -n " + n + " -o -4 addr show dev " + s.ifname);
    EXPECT_NE(addr4.find("inet 198.18.0.1/24 "), std::string::npos) << addr4;
    const std::string ra = command_output("ip netns exec " + n + " sysctl -n net.ipv6.conf." + s.ifname + ".accept_ra");
    EXPECT_EQ(ra.substr(0, 1), "0") << ra;
}

TEST(configure_link, refuses_an_ipv6_prefix_longer_than_128_before_changing_anything)
{
    SBC_NEEDS_ROOT_AND_TUN();
    std::string error;
    auto ns = netns::create(unique_name(), error);
    ASSERT_NE(ns, nullptr) << error;
    netns::scope in(*ns, error);
    ASSERT_TRUE(in.ok()) << error;
    link_setup s = exception_link();
    sbc::ip_prefix bad = prefix("2001:db8::1/64");
    bad.len = 129;
    s.addresses.push_back(bad);
    unique_fd tap(open_tap(s.ifname.c_str()));
    ASSERT_GE(tap.fd, 0) << std::strerror(errno);
    EXPECT_FALSE(configure_link(s, error));
    EXPECT_NE(error.find("invalid address"), std::string::npos) << error;
    // Not even lo was brought up.
    const std::string lo = command_output("ip -n " + ns->name() + " link show lo");
    EXPECT_EQ(link_flags(lo).find(",UP,"), std::string::npos) << lo;
}

}  // namespace
