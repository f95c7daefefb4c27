// Neighbour resolution policy of the control core, for ARP (IPv4) and Neighbor Discovery
// (IPv6, RFC 4861) alike: learns what workers report, resolves gateways and the next hops workers
// ask for, retries unanswered requests, refreshes and expires entries, announces our addresses
// (gratuitous ARP, unsolicited NA). The RFC's neighbour states map onto it: a next hop being
// resolved is INCOMPLETE (pending), a fresh entry REACHABLE, one past the timeout is PROBEd
// (re-asked while it stays usable) and removed when the retries run out. Control core only;
// frames go out through the `send` callbacks so that the unit tier can drive it without EAL.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "dataplane/frames.h"
#include "dataplane/neighbour.h"
#include "dataplane/snapshot.h"

namespace sbc::control {

struct neighbour_policy {
    uint64_t timeout_ms = 300'000;   ///< refresh an entry older than this
    uint64_t retry_ms = 1000;        ///< resend an unanswered request after this
    unsigned retries = 3;            ///< then: a refreshed entry is removed; a new one backs off
    uint64_t backoff_ms = 10'000;    ///< wait before trying an unresolved next hop again
};

struct neighbour_counters {
    uint64_t requests_sent = 0;
    uint64_t learned = 0;
    uint64_t expired = 0;
    uint64_t table_full = 0;
};

class neighbour_manager {
public:
    using send_fn = std::function<void(uint16_t iface, const dataplane::arp_fields&)>;
    using send_nd_fn = std::function<void(uint16_t iface, const dataplane::nd_fields&)>;

    neighbour_manager(dataplane::neighbour_table& table, neighbour_policy policy, send_fn send, send_nd_fn send_nd = {})
        : table_(table), policy_(policy), send_(std::move(send)), send_nd_(std::move(send_nd))
    {
    }

    /// Interfaces changed (new snapshot): announce ourselves and start resolving gateways.
    void set_interfaces(const std::vector<dataplane::interface_info>& ifcs, uint64_t now_ms);
    /// A worker saw ARP or ND from ip/mac on interface iface.
    void seen(uint16_t iface, const ip_address& ip, const dataplane::mac_addr& mac, uint64_t now_ms);
    /// A worker had a packet for next hop ip and no MAC.
    void needed(uint16_t iface, const ip_address& ip, uint64_t now_ms);
    /// Retries, refreshes and expiry; call a few times a second.
    void tick(uint64_t now_ms);

    [[nodiscard]] const neighbour_counters& counters() const noexcept { return counters_; }
    /// Next hops being resolved right now (for sbcctl status).
    [[nodiscard]] std::size_t pending() const noexcept { return pending_.size(); }

private:
    struct pending_entry {
        uint16_t iface;
        ip_address ip;
        unsigned attempts;
        uint64_t next_ms;
        bool refresh;  ///< an existing entry being re-confirmed
    };
    pending_entry* find_pending(const ip_address& ip);
    [[nodiscard]] bool is_gateway(const ip_address& ip) const;
    void request(pending_entry& p, uint64_t now_ms);

    dataplane::neighbour_table& table_;
    neighbour_policy policy_;
    send_fn send_;
    send_nd_fn send_nd_;
    std::vector<dataplane::interface_info> ifcs_;
    std::vector<pending_entry> pending_;
    neighbour_counters counters_;
};

}  // namespace sbc::control
