// ARP resolution policy of the control core: learns what workers report, resolves gateways and
// the next hops workers ask for, retries unanswered requests, refreshes and expires entries,
// announces our addresses with gratuitous ARP. Control core only; frames go out through the
// `send` callback so that the unit tier can drive it without EAL.
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

    neighbour_manager(dataplane::neighbour_table& table, neighbour_policy policy, send_fn send)
        : table_(table), policy_(policy), send_(std::move(send))
    {
    }

    /// Interfaces changed (new snapshot): announce ourselves and start resolving gateways.
    void set_interfaces(const std::vector<dataplane::interface_info>& ifcs, uint64_t now_ms);
    /// A worker saw ARP from ip/mac on interface iface.
    void seen(uint16_t iface, uint32_t ip, const dataplane::mac_addr& mac, uint64_t now_ms);
    /// A worker had a packet for next hop ip and no MAC.
    void needed(uint16_t iface, uint32_t ip, uint64_t now_ms);
    /// Retries, refreshes and expiry; call a few times a second.
    void tick(uint64_t now_ms);

    [[nodiscard]] const neighbour_counters& counters() const noexcept { return counters_; }
    /// Next hops being resolved right now (for sbcctl status).
    [[nodiscard]] std::size_t pending() const noexcept { return pending_.size(); }

private:
    struct pending_entry {
        uint16_t iface;
        uint32_t ip;
        unsigned attempts;
        uint64_t next_ms;
        bool refresh;  ///< an existing entry being re-confirmed
    };
    pending_entry* find_pending(uint32_t ip);
    void request(pending_entry& p, uint64_t now_ms);

    dataplane::neighbour_table& table_;
    neighbour_policy policy_;
    send_fn send_;
    std::vector<dataplane::interface_info> ifcs_;
    std::vector<pending_entry> pending_;
    neighbour_counters counters_;
};

}  // namespace sbc::control
