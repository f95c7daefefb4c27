// Keeps the peer sets of DNS SRV names: SRV name -> targets (priority, weight, port) -> A
// records, refreshed at 3/4 of the smallest TTL of the answer (with a floor), keeping the
// last good answer when a refresh fails (serve stale, logged once per failure streak,
// counted). Queries go through a `transport` that never blocks (control/dns.cc drives c-ares;
// the unit tier a fake), so nothing here waits. Control core only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "control/dns_answer.h"
#include "control/dns_report.h"

namespace sbc::control::dns {

/// One query's outcome as the transport reports it.
struct query_result {
    bool ok = false;    ///< a response arrived and parsed (its rcode may still say no)
    std::string error;  ///< when !ok: "timeout", "connection refused", ...
    answer ans;
};

/// Sends queries without waiting. Control core only.
class transport {
public:
    using callback = std::function<void(query_result)>;
    virtual ~transport() = default;
    /// Starts a query for `name` (class IN) of `type`; `done` runs later from poll() (or
    /// from query() itself when the query cannot even start).
    virtual void query(const std::string& name, uint16_t type, callback done) = 0;
    /// Handles what arrived or timed out since the last call, without waiting.
    virtual void poll() = 0;
};

/// A target of an SRV answer with its addresses.
struct target {
    std::string host;
    uint16_t priority = 0;
    uint16_t weight = 0;
    uint16_t port = 0;
    std::vector<ip_address> addresses;  ///< of the family the name's family_choice picked, sorted
    // While a refresh is under way: what its A and AAAA answers said.
    std::vector<ip_address> v4, v6;
    std::string error;  ///< the first failed lookup of this target ("" when one answered)
};

/// A peer learned from DNS: one address and port of one target.
struct learned_peer {
    ip_address address;
    uint16_t port = 0;
    uint16_t priority = 0;
    uint16_t weight = 0;
    std::string target;  ///< the SRV target it came from

    friend bool operator==(const learned_peer&, const learned_peer&) = default;
};

/// The peers of `targets`: one per (address, port), the first target (lowest priority) that
/// names it wins; a target with several addresses shares its weight among them, rounded up
/// so that a non-zero weight never becomes 0. Sorted by address then port.
std::vector<learned_peer> peers_of(const std::vector<target>& targets);

/// What changed between two peer sets (each sorted as peers_of returns them).
struct peer_diff {
    std::vector<learned_peer> added;    ///< address:port not in the old set
    std::vector<learned_peer> removed;  ///< address:port not in the new set
    std::vector<learned_peer> changed;  ///< same address:port, other priority, weight or target (new values)
    [[nodiscard]] bool empty() const { return added.empty() && removed.empty() && changed.empty(); }
};
peer_diff diff(const std::vector<learned_peer>& before, const std::vector<learned_peer>& after);

/// "198.18.1.11:5060 198.18.1.12:5060" (for logs); "none" when empty.
std::string describe(const std::vector<learned_peer>& peers);

struct policy {
    uint32_t min_refresh_ms = 1000;      ///< floor of the refresh interval (TTL 0 and 1 s answers)
    uint32_t max_refresh_ms = 3600000;   ///< ceiling (a TTL of days still gets checked hourly)
    uint32_t retry_ms = 1000;            ///< next try after a failed refresh
    bool serve_stale = true;             ///< false: peers are dropped once a failing answer's TTL ran out
};

/// When to refresh an answer whose smallest TTL is `ttl_s`, received at `now_ms`: at 3/4 of
/// the TTL, within [min_refresh_ms, max_refresh_ms].
uint64_t refresh_at(uint64_t now_ms, uint32_t ttl_s, const policy& p);

class srv_resolver {
public:
    using log_fn = std::function<void(const std::string&)>;

    /// `t` must outlive the resolver or be destroyed first (late callbacks are ignored).
    srv_resolver(transport& t, policy p, log_fn log);
    ~srv_resolver();
    srv_resolver(const srv_resolver&) = delete;
    srv_resolver& operator=(const srv_resolver&) = delete;

    void set_policy(const policy& p) { policy_ = p; }
    /// Makes `srv` (normalized) known, its targets resolved to the families `family` names
    /// (a name already known takes the new choice from its next refresh); its first query goes
    /// out at the next tick.
    void add(std::string_view srv, family_choice family = family_choice::ipv4);
    /// Forgets every name not in `keep` (normalized); their answers in flight are ignored.
    void retain(const std::vector<std::string>& keep);

    /// Starts the refreshes that are due and handles answers (transport::poll).
    void tick(uint64_t now_ms);
    /// True once after the peer set of any name changed (also: first answer, dropped).
    bool take_changed();

    /// The peers of `srv` now (empty before the first answer); nullptr for an unknown name.
    [[nodiscard]] const std::vector<learned_peer>* peers(std::string_view srv) const;
    /// Report line of `srv` (region left empty) at `now_ms`; state "waiting" for unknown names.
    [[nodiscard]] dns_name_report status(std::string_view srv, uint64_t now_ms) const;

private:
    struct name_state {
        std::string srv;
        family_choice family = family_choice::ipv4;
        // The answer in use.
        bool have_answer = false;
        std::vector<target> targets;
        std::vector<learned_peer> peers;
        uint32_t ttl_s = 0;
        uint64_t answered_ms = 0;
        uint64_t expires_ms = 0;
        uint64_t next_ms = 0;  ///< next refresh
        // The refresh under way.
        uint64_t serial = 0;   ///< answers carrying another serial are late and ignored
        bool in_flight = false;
        std::vector<target> pending;
        std::size_t a_outstanding = 0;
        uint32_t pending_ttl = max_ttl;
        std::string pending_error;  ///< first failed A lookup of this refresh
        // Counters and the failure streak.
        uint64_t queries = 0;
        uint64_t failures = 0;
        uint64_t stale_served = 0;
        bool failing = false;
        unsigned streak = 0;
        std::string last_error;
    };

    void start(name_state& n);
    void on_srv(const std::string& srv, uint64_t serial, const query_result& r);
    void on_a(const std::string& srv, uint64_t serial, std::size_t index, uint16_t type, const query_result& r);
    void finish(name_state& n);
    void fail(name_state& n, const std::string& why);
    void set_peers(name_state& n, std::vector<learned_peer> peers);
    name_state* find(const std::string& srv, uint64_t serial);

    transport& transport_;
    policy policy_;
    log_fn log_;
    std::map<std::string, name_state, std::less<>> names_;
    uint64_t now_ms_ = 0;
    bool changed_ = false;
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);  ///< callbacks hold a weak_ptr
};

}  // namespace sbc::control::dns
