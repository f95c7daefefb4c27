// sbcd's network namespace (created on a helper thread, so that no caller's thread moves for
// good) and the rtnetlink requests that set the exception port's kernel interface up. Main
// lcore at start and exit; netns::enter() also by the stream thread at its start. Control
// path only: system calls, no heap on any hot path.
#include "transport/netns.h"

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string_view>

#include <fcntl.h>
#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sbc::streams {

namespace {

constexpr const char* netns_run_dir = "/run/netns";

bool fail(std::string& error, std::string_view step, int err)
{
    error.assign(step);
    error += ": ";
    error += std::strerror(err);
    return false;
}

bool make_dir(const char* path, std::string& error)
{
    if (::mkdir(path, 0755) == 0 || errno == EEXIST) return true;
    return fail(error, std::string("netns: mkdir ") + path, errno);
}

/// Makes /run/netns a shared mount point, as `ip netns add` does, so that a namespace mounted
/// later shows up in mount namespaces that were copied from ours (an operator's `unshare -m`).
/// Best effort: without it the namespace still works, only other mount namespaces miss it.
void make_run_dir_shared()
{
    if (::mount("", netns_run_dir, "none", MS_SHARED | MS_REC, nullptr) == 0) return;
    if (errno != EINVAL) return;
    // Not a mount point yet: make it one, then try again.
    if (::mount(netns_run_dir, netns_run_dir, "none", MS_BIND | MS_REC, nullptr) != 0) return;
    (void)::mount("", netns_run_dir, "none", MS_SHARED | MS_REC, nullptr);
}

/// What the helper thread hands back: the new namespace's fd, or the step that failed.
struct unshare_result {
    int fd = -1;
    const char* step = nullptr;
    int err = 0;
};

/// Runs on a short-lived thread: unshare(CLONE_NEWNET) moves only that thread, which ends
/// right after; the fd it opens keeps the namespace alive for the caller.
void* unshare_thread(void* arg)
{
    auto* r = static_cast<unshare_result*>(arg);
    if (::unshare(CLONE_NEWNET) != 0) {
        r->step = "netns: unshare(CLONE_NEWNET)";
        r->err = errno;
        return nullptr;
    }
    r->fd = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        r->step = "netns: open /proc/thread-self/ns/net";
        r->err = errno;
    }
    return nullptr;
}

/// Removes a mount or file at `path` that a crashed sbcd left; false only when something is
/// there and cannot be removed.
bool remove_stale(const std::string& path, std::string& error)
{
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return true;
        return fail(error, "netns: stat " + path, errno);
    }
    // EINVAL: a plain file, not a mount point; nothing to unmount.
    if (::umount2(path.c_str(), MNT_DETACH) != 0 && errno != EINVAL)
        return fail(error, "netns: umount " + path, errno);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
        return fail(error, "netns: unlink " + path, errno);
    return true;
}

// ---- rtnetlink ----------------------------------------------------------------------------

/// One rtnetlink request being built: a netlink header, the family header, then attributes,
/// each padded to 4 bytes. Large enough for any request configure_link sends.
class nl_request {
public:
    template <typename Family>
    nl_request(uint16_t type, uint16_t flags, const Family& family) noexcept
    {
        auto* h = header();
        h->nlmsg_type = type;
        h->nlmsg_flags = static_cast<uint16_t>(flags | NLM_F_REQUEST | NLM_F_ACK);
        h->nlmsg_len = NLMSG_LENGTH(sizeof(Family));
        std::memcpy(buf_ + NLMSG_HDRLEN, &family, sizeof(Family));
        h->nlmsg_len = static_cast<uint32_t>(NLMSG_ALIGN(h->nlmsg_len));
    }

    /// Appends attribute `type` with `len` bytes of `data`; false when it does not fit.
    bool add(uint16_t type, const void* data, std::size_t len) noexcept
    {
        auto* h = header();
        const std::size_t at = h->nlmsg_len;
        const std::size_t total = RTA_LENGTH(len);
        if (at + RTA_ALIGN(total) > sizeof(buf_)) return false;
        rtattr a{};
        a.rta_type = type;
        a.rta_len = static_cast<uint16_t>(total);
        std::memcpy(buf_ + at, &a, sizeof(a));
        if (len != 0) std::memcpy(buf_ + at + RTA_LENGTH(0), data, len);
        std::memset(buf_ + at + total, 0, RTA_ALIGN(total) - total);
        h->nlmsg_len = static_cast<uint32_t>(at + RTA_ALIGN(total));
        return true;
    }
    bool add_u32(uint16_t type, uint32_t v) noexcept { return add(type, &v, sizeof(v)); }

    [[nodiscard]] nlmsghdr* header() noexcept { return reinterpret_cast<nlmsghdr*>(buf_); }
    [[nodiscard]] const char* data() const noexcept { return buf_; }

private:
    alignas(nlmsghdr) char buf_[512]{};
};

/// A NETLINK_ROUTE socket bound to the calling thread's namespace when it was opened.
class rtnl_socket {
public:
    rtnl_socket() noexcept
    {
        fd_ = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (fd_ < 0) return;
        // The kernel's own words on a refused request (e.g. "Nexthop device is not up"), and
        // acks that do not echo the request back.
        const int one = 1;
        (void)::setsockopt(fd_, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
        (void)::setsockopt(fd_, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
        sockaddr_nl local{};
        local.nl_family = AF_NETLINK;
        if (::bind(fd_, reinterpret_cast<const sockaddr*>(&local), sizeof(local)) != 0) {
            const int err = errno;
            ::close(fd_);
            fd_ = -1;
            errno = err;
        }
    }
    ~rtnl_socket()
    {
        if (fd_ >= 0) ::close(fd_);
    }
    rtnl_socket(const rtnl_socket&) = delete;
    rtnl_socket& operator=(const rtnl_socket&) = delete;

    [[nodiscard]] bool ok() const noexcept { return fd_ >= 0; }

    /// Sends `req` and waits for its ack; false with "rtnetlink: <step>: <errno text>" (and
    /// the kernel's extended message when it gave one).
    bool transact(nl_request& req, const std::string& step, std::string& error)
    {
        auto* h = req.header();
        h->nlmsg_seq = ++seq_;
        h->nlmsg_pid = 0;
        sockaddr_nl kernel{};
        kernel.nl_family = AF_NETLINK;
        ssize_t sent;
        do {
            sent = ::sendto(fd_, req.data(), h->nlmsg_len, 0, reinterpret_cast<const sockaddr*>(&kernel),
                            sizeof(kernel));
        } while (sent < 0 && errno == EINTR);
        if (sent < 0) return fail(error, "rtnetlink: " + step + ": send", errno);

        alignas(nlmsghdr) char buf[8192];
        for (;;) {
            const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
            if (n < 0) {
                if (errno == EINTR) continue;
                return fail(error, "rtnetlink: " + step + ": receive", errno);
            }
            std::size_t off = 0;
            const auto size = static_cast<std::size_t>(n);
            while (off + sizeof(nlmsghdr) <= size) {
                nlmsghdr m;
                std::memcpy(&m, buf + off, sizeof(m));
                if (m.nlmsg_len < sizeof(nlmsghdr) || off + m.nlmsg_len > size) break;
                if (m.nlmsg_seq == seq_ && m.nlmsg_type == NLMSG_ERROR) {
                    return check_ack(buf + off, m, step, error);
                }
                off += NLMSG_ALIGN(m.nlmsg_len);
            }
        }
    }

private:
    static bool check_ack(const char* msg, const nlmsghdr& m, const std::string& step, std::string& error)
    {
        if (m.nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr))) {
            error = "rtnetlink: " + step + ": short acknowledgement";
            return false;
        }
        nlmsgerr e;
        std::memcpy(&e, msg + NLMSG_HDRLEN, sizeof(e));
        if (e.error == 0) return true;
        fail(error, "rtnetlink: " + step, -e.error);
        // Extended ack attributes follow the error (the request is not echoed: NETLINK_CAP_ACK).
        if ((m.nlmsg_flags & NLM_F_ACK_TLVS) == 0) return false;
        std::size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(nlmsgerr));
        if ((m.nlmsg_flags & NLM_F_CAPPED) == 0) off += NLMSG_ALIGN(e.msg.nlmsg_len) - NLMSG_HDRLEN;
        while (off + sizeof(rtattr) <= m.nlmsg_len) {
            rtattr a;
            std::memcpy(&a, msg + off, sizeof(a));
            if (a.rta_len < sizeof(rtattr) || off + a.rta_len > m.nlmsg_len) break;
            if (a.rta_type == NLMSGERR_ATTR_MSG && a.rta_len > RTA_LENGTH(0)) {
                const char* text = msg + off + RTA_LENGTH(0);
                const std::size_t max = a.rta_len - RTA_LENGTH(0);
                error += " (";
                error.append(text, ::strnlen(text, max));
                error += ")";
                break;
            }
            off += RTA_ALIGN(a.rta_len);
        }
        return false;
    }

    int fd_ = -1;
    uint32_t seq_ = 0;
};

bool set_link_flags(rtnl_socket& nl, int index, unsigned flags, unsigned change, const std::string& step,
                    std::string& error)
{
    ifinfomsg ifi{};
    ifi.ifi_family = AF_UNSPEC;
    ifi.ifi_index = index;
    ifi.ifi_flags = flags;
    ifi.ifi_change = change;
    nl_request req(RTM_NEWLINK, 0, ifi);
    return nl.transact(req, step, error);
}

/// A default route of `family` through `index`, with no gateway (IPv4: scope link). NOARP
/// makes every next hop the interface's own MAC, for IPv6 neighbours as for IPv4 ones.
bool add_default_route(rtnl_socket& nl, unsigned char family, unsigned index, const std::string& ifname,
                       std::string& error)
{
    rtmsg rt{};
    rt.rtm_family = family;
    rt.rtm_dst_len = 0;
    rt.rtm_table = RT_TABLE_MAIN;
    rt.rtm_protocol = RTPROT_STATIC;
    rt.rtm_scope = family == AF_INET ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE;
    rt.rtm_type = RTN_UNICAST;
    nl_request req(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE, rt);
    if (family == AF_INET6) {
        const std::array<uint8_t, 16> any{};
        req.add(RTA_DST, any.data(), any.size());
    }
    req.add_u32(RTA_OIF, index);
    return nl.transact(req, std::string("add ") + (family == AF_INET ? "IPv4" : "IPv6") + " default route via " + ifname,
                       error);
}

/// Writes `value` to /proc/sys/net/ipv6/conf/<ifname>/<key>, which names the calling
/// thread's namespace.
bool write_ipv6_conf(const std::string& ifname, const char* key, const char* value, std::string& error)
{
    const std::string path = "/proc/sys/net/ipv6/conf/" + ifname + "/" + key;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return fail(error, "sysctl: open " + path, errno);
    const std::size_t len = std::strlen(value);
    const bool ok = ::write(fd, value, len) == static_cast<ssize_t>(len);
    const int err = errno;
    ::close(fd);
    return ok || fail(error, std::string("sysctl: write ") + value + " to " + path, err);
}

/// IPv6 on `ifname`, but silent: no link-local address of its own, no router solicitations,
/// no Duplicate Address Detection and no router advertisements taken. The fast path is the
/// only speaker of Neighbor Discovery on the wire (the pump drops what the kernel would say).
bool quiet_ipv6(const std::string& ifname, std::string& error)
{
    return write_ipv6_conf(ifname, "disable_ipv6", "0", error) && write_ipv6_conf(ifname, "accept_ra", "0", error) &&
           write_ipv6_conf(ifname, "autoconf", "0", error) && write_ipv6_conf(ifname, "accept_dad", "0", error) &&
           write_ipv6_conf(ifname, "router_solicitations", "0", error) &&
           write_ipv6_conf(ifname, "addr_gen_mode", "1", error);
}

}  // namespace

// ---- netns --------------------------------------------------------------------------------

std::unique_ptr<netns> netns::create(const std::string& name, std::string& error)
{
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
        name.size() > NAME_MAX) {
        error = "netns: invalid namespace name '" + name + "'";
        return nullptr;
    }
    if (!make_dir("/run", error) || !make_dir(netns_run_dir, error)) return nullptr;
    make_run_dir_shared();

    const std::string path = std::string(netns_run_dir) + "/" + name;
    if (!remove_stale(path, error)) return nullptr;

    // The mount point: an empty file that the namespace's nsfs inode is bound onto.
    const int mp = ::open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
    if (mp < 0) {
        fail(error, "netns: create " + path, errno);
        return nullptr;
    }
    ::close(mp);

    unshare_result r;
    pthread_t t;
    if (const int rc = ::pthread_create(&t, nullptr, unshare_thread, &r); rc != 0) {
        ::unlink(path.c_str());
        fail(error, "netns: start the unshare thread", rc);
        return nullptr;
    }
    ::pthread_join(t, nullptr);
    if (r.fd < 0) {
        ::unlink(path.c_str());
        fail(error, r.step, r.err);
        return nullptr;
    }

    // The helper thread is gone; its namespace lives on through r.fd, reachable by path.
    const std::string source = "/proc/self/fd/" + std::to_string(r.fd);
    if (::mount(source.c_str(), path.c_str(), "none", MS_BIND, nullptr) != 0) {
        const int err = errno;
        ::close(r.fd);
        ::unlink(path.c_str());
        fail(error, "netns: bind-mount the namespace on " + path, err);
        return nullptr;
    }

    std::unique_ptr<netns> ns(new netns());
    ns->name_ = name;
    ns->fd_ = r.fd;
    return ns;
}

netns::~netns()
{
    const std::string path = std::string(netns_run_dir) + "/" + name_;
    (void)::umount2(path.c_str(), MNT_DETACH);
    (void)::unlink(path.c_str());
    if (fd_ >= 0) ::close(fd_);
}

bool netns::enter(std::string& error) const
{
    if (::setns(fd_, CLONE_NEWNET) != 0) return fail(error, "netns: setns into " + name_, errno);
    return true;
}

netns::scope::scope(const netns& ns, std::string& error)
{
    back_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (back_ < 0) {
        fail(error, "netns: open /proc/thread-self/ns/net", errno);
        return;
    }
    if (::setns(ns.fd(), CLONE_NEWNET) != 0) {
        fail(error, "netns: setns into " + ns.name(), errno);
        ::close(back_);
        back_ = -1;
        return;
    }
    ok_ = true;
}

netns::scope::~scope()
{
    if (back_ < 0) return;
    // Cannot fail for a namespace fd we opened ourselves with the privileges we entered with.
    (void)::setns(back_, CLONE_NEWNET);
    ::close(back_);
}

// ---- configure_link -----------------------------------------------------------------------

bool configure_link(const link_setup& s, std::string& error)
{
    // Refuse what we cannot do before touching anything.
    bool any_v6 = false;
    for (const ip_prefix& p : s.addresses) {
        const bool ok = p.addr.is_v4() ? p.len <= 32 : p.addr.is_v6() && p.len <= 128;
        if (!ok) {
            error = "rtnetlink: invalid address " + to_string(p) + " for " + s.ifname;
            return false;
        }
        any_v6 = any_v6 || p.addr.is_v6();
    }
    if (any_v6 && ::access("/proc/sys/net/ipv6", F_OK) != 0) {
        error = "rtnetlink: " + s.ifname + ": this kernel runs without IPv6 (booted with ipv6.disable=1?): "
                "TCP and TLS over IPv6 need it";
        return false;
    }

    rtnl_socket nl;
    if (!nl.ok()) return fail(error, "rtnetlink: open a NETLINK_ROUTE socket", errno);

    const unsigned lo = ::if_nametoindex("lo");
    if (lo == 0) return fail(error, "rtnetlink: find lo", errno);
    if (!set_link_flags(nl, static_cast<int>(lo), IFF_UP, IFF_UP, "bring lo up", error)) return false;

    const unsigned index = ::if_nametoindex(s.ifname.c_str());
    if (index == 0) return fail(error, "rtnetlink: find " + s.ifname, errno);
    const int ifindex = static_cast<int>(index);

    // A TAP refuses a new MAC while up (no IFF_LIVE_ADDR_CHANGE), hence down first.
    if (!set_link_flags(nl, ifindex, 0, IFF_UP, "take " + s.ifname + " down", error)) return false;
    {
        ifinfomsg ifi{};
        ifi.ifi_family = AF_UNSPEC;
        ifi.ifi_index = ifindex;
        nl_request req(RTM_NEWLINK, 0, ifi);
        const uint32_t mtu = s.mtu;
        req.add(IFLA_ADDRESS, s.mac.data(), s.mac.size());
        req.add_u32(IFLA_MTU, mtu);
        if (!nl.transact(req, "set MAC and MTU " + std::to_string(mtu) + " on " + s.ifname, error)) return false;
    }
    if (any_v6 && !quiet_ipv6(s.ifname, error)) return false;

    for (const ip_prefix& p : s.addresses) {
        const bool v6 = p.addr.is_v6();
        ifaddrmsg ifa{};
        ifa.ifa_family = v6 ? AF_INET6 : AF_INET;
        ifa.ifa_prefixlen = p.len;
        ifa.ifa_scope = RT_SCOPE_UNIVERSE;
        // No Duplicate Address Detection: the kernel side never speaks on the wire.
        ifa.ifa_flags = v6 ? IFA_F_NODAD : 0;
        ifa.ifa_index = index;
        nl_request req(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, ifa);
        if (v6) {
            const auto a = p.addr.v6_bytes();
            req.add(IFA_LOCAL, a.data(), a.size());
            req.add(IFA_ADDRESS, a.data(), a.size());
        } else {
            const uint32_t a = htonl(p.addr.v4_host());
            req.add(IFA_LOCAL, &a, sizeof(a));
            req.add(IFA_ADDRESS, &a, sizeof(a));
        }
        if (!nl.transact(req, "add address " + to_string(p) + " to " + s.ifname, error)) return false;
    }

    if (!set_link_flags(nl, ifindex, IFF_UP | IFF_NOARP, IFF_UP | IFF_NOARP,
                        "bring " + s.ifname + " up with NOARP", error))
        return false;

    // Replace: whatever default route was there, the exception port is now the way out.
    if (!add_default_route(nl, AF_INET, index, s.ifname, error)) return false;
    return !any_v6 || add_default_route(nl, AF_INET6, index, s.ifname, error);
}

}  // namespace sbc::streams
