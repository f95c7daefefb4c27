// Builds the proxy's read-only tables (sip::proxy_tables: trunks, peers, regions, peer groups,
// routes with their compiled Hyperscan matcher, retry policy) from a validated config
// and the snapshot's interfaces, and keeps each peer's id stable across reloads (peer_ids).
// Control core only: allocates, compiles patterns; the result goes into the next snapshot.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "control/config.h"
#include "dataplane/snapshot.h"
#include "sip-fastpath/proxy_tables.h"

namespace sbc::control {

/// Stable ids for peers (indices into sip::peer_health), kept across reloads: a peer keeps its
/// id as long as it stays in the config under the same region and address:port; ids of peers
/// that vanish are freed and reused last (the id freed longest ago is taken first), so that a
/// worker still holding an old id in a call in flight rarely meets it on another peer.
/// Control core only.
class peer_ids {
public:
    /// The identity of a peer: "<region>/<a.b.c.d>:<port>".
    static std::string key(std::string_view region, const ip_address& address, uint16_t port);

    /// Gives ids to exactly `keys` (every peer of a new config): keys seen before keep theirs,
    /// new keys get free ones, ids of keys not in `keys` are freed. `ids[i]` is the id of
    /// `keys[i]`. With more than sip::max_peers distinct keys: false with `error`, nothing changed.
    bool assign(const std::vector<std::string>& keys, std::vector<uint32_t>& ids, std::string& error);

    /// The id of `key`, if it has one.
    [[nodiscard]] std::optional<uint32_t> find(std::string_view key) const;
    /// Peers holding an id.
    [[nodiscard]] std::size_t size() const noexcept { return by_key_.size(); }
    /// Ids given to new keys by the last assign(): the caller clears their health words.
    [[nodiscard]] const std::vector<uint32_t>& added() const noexcept { return added_; }
    /// Ids freed by the last assign().
    [[nodiscard]] const std::vector<uint32_t>& freed() const noexcept { return freed_; }

private:
    std::map<std::string, uint32_t, std::less<>> by_key_;
    std::deque<uint32_t> free_;  ///< FIFO; filled with 0..max_peers-1 on first use
    bool started_ = false;
    std::vector<uint32_t> added_;
    std::vector<uint32_t> freed_;
};

/// Peers of one `srv` region, learned from DNS (control/dns.h). `current` take new calls;
/// `retired` are gone from DNS and stay in the table, outside the region's rotation, only
/// while calls on them go on (their in-dialog requests and responses are still accepted).
struct learned_region {
    std::vector<peer_config> current;
    std::vector<peer_config> retired;
};

/// The proxy tables for `cfg`. `interfaces` are the snapshot's interfaces (trunks take their
/// index and address by interface name); `workers` sizes the route matcher's scratch. The
/// peers of an `srv` region are `(*learned)[region index]` (none while nullptr or shorter:
/// the region is empty until DNS answers). `ids` is updated only on success. nullptr with
/// `error` ("FILE:LINE: what") when a trunk's interface is not in `interfaces`, a pattern
/// does not compile, or there are more than sip::max_peers peers.
std::shared_ptr<const sip::proxy_tables> build_proxy_tables(const config& cfg,
                                                            const std::vector<dataplane::interface_info>& interfaces,
                                                            unsigned workers, peer_ids& ids, std::string& error,
                                                            const std::vector<learned_region>* learned = nullptr);

/// The retry bitset and timers of `rc` (also used on its own by tests and tools).
sip::retry_policy make_retry_policy(const retry_config& rc);

}  // namespace sbc::control
