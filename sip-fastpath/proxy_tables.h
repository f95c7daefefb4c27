// The proxy's read-only tables: trunks, peers grouped in regions and peer groups, routes and
// the retry policy. Built by the control core from the config (control/proxy_build.cc), held
// in the dataplane snapshot, read by workers under RCU. Peer health is NOT here: it lives in
// peer_health (an array of atomic words the control core flips without a new snapshot).
// Any thread reads; only the control core builds.
#pragma once

#include <array>
#include <atomic>
#include <bitset>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/limits.h"
#include "common/address.h"
#include "sip-fastpath/overload_control.h"
#include "sip-fastpath/admission.h"
#include "sip-fastpath/overload_shed.h"
#include "sip-fastpath/route_fallback.h"

namespace sbc::sip {

class route_matcher;  // Hyperscan databases, sip-fastpath/route_match.h
class canary_matcher;  // canary selectors, sip-fastpath/canary_match.h
class scanner_matcher;  // scanner signatures, sip-fastpath/scanner_match.h
struct rule_tables;  // header and number rules, sip-fastpath/sip_rules.h

/// A named SIP interface: where calls come in, and whom it takes them from.
struct trunk {
    std::string name;
    uint16_t iface = 0;         ///< index into the snapshot's interfaces
    ip_address address;         ///< the interface's IPv4 address
    /// The interface's IPv6 address (unspecified: the interface runs no IPv6): the trunk
    /// listens there on the same ports, and a leg toward an IPv6 remote is ours from it.
    ip_address address6;
    uint16_t port = 5060;       ///< local UDP port
    transport proto = transport::udp;  ///< transport of local()
    uint16_t tcp_port = 0;      ///< local TCP port (the stream thread listens); 0: no TCP
    uint16_t tls_port = 0;      ///< local TLS port; 0: no TLS
    std::string fqdn;           ///< name the SBC presents on this trunk (Record-Route, Contact); "": the address
    std::vector<ip_prefix> allow;      ///< canonical (host bits clear)
    /// Its sources are trusted ([[trunk]] trusted): flood limits rate-limit them but never deny them.
    bool trusted = false;
    /// [[trunk]] untrusted_trunk_rate / _burst: its own values for the bucket its untrusted
    /// sources share (dataplane/source_screen.cc); from_flood: [flood]'s.
    static constexpr uint32_t from_flood = UINT32_MAX;
    uint32_t untrusted_trunk_rate = from_flood;
    uint32_t untrusted_trunk_burst = from_flood;
    /// [[trunk]] topology_hiding: what leaves toward this trunk's side carries nothing of the
    /// other side of the call (sip-fastpath/topology_hiding.h).
    bool topology_hiding = false;
    // Call admission (sip-fastpath/admission.h); 0: no limit.
    uint32_t max_calls = 0;         ///< concurrent calls that arrived on it
    uint32_t calls_per_second = 0;  ///< new calls per second (GCRA)
    uint32_t calls_burst = 1;       ///< new calls at once after a quiet time

    /// Whether `a` is one of its addresses (IPv4 or IPv6).
    [[nodiscard]] bool owns(const ip_address& a) const noexcept
    {
        return a.is_v6() ? a == address6 && address6.is_v6() : a == address;
    }
    /// Its address of the family of `remote` (the IPv4 one for anything not IPv6). Unspecified
    /// for an IPv6 remote when the trunk runs no IPv6.
    [[nodiscard]] const ip_address& address_for(const ip_address& remote) const noexcept
    {
        return remote.is_v6() ? address6 : address;
    }
    /// Our endpoint on this trunk.
    [[nodiscard]] endpoint local() const noexcept { return endpoint{address, port, proto, 0}; }
    /// Our endpoint on this trunk for transport `p` (port 0 when the trunk does not take it),
    /// at its address of the family of `remote`.
    [[nodiscard]] endpoint local(transport p, const ip_address& remote = {}) const noexcept
    {
        const uint16_t at = p == transport::udp ? port : p == transport::tcp ? tcp_port : tls_port;
        return endpoint{address_for(remote), at, p, 0};
    }
    /// Our endpoint on a leg of transport `p` from this trunk toward `remote` (its family picks
    /// the address): local(p), or, when the trunk does not listen on `p` (a TLS peer reached
    /// from a UDP-only trunk: our side of that connection is a client), the UDP port with
    /// transport `p` (what Via and Record-Route then name).
    [[nodiscard]] endpoint leg_local(transport p, const ip_address& remote = {}) const noexcept
    {
        endpoint e = local(p, remote);
        if (e.port == 0) e.port = port;
        return e;
    }
    /// Whether `p` is one of its ports, whatever the transport (a Route naming us).
    [[nodiscard]] bool has_port(uint16_t p) const noexcept
    {
        return p != 0 && (p == port || p == tcp_port || p == tls_port);
    }
    [[nodiscard]] bool allows(const ip_address& ip) const noexcept
    {
        for (const auto& n : allow)
            if (n.contains(ip)) return true;
        return false;
    }
};

using sbc::max_peers;
constexpr uint32_t no_peer = 0xffffffff;
/// Canary peers at once: a call's matching canaries are one 64-bit mask.
using sbc::max_canaries;
constexpr uint8_t no_canary = 0xff;

struct peer {
    std::string name;           ///< "region1/198.18.1.11:5060" or the configured name
    uint32_t id = 0;            ///< stable index into peer_health, kept across snapshots
    ip_address address;
    uint16_t port = 5060;
    transport proto = transport::udp;
    uint16_t priority = 0;      ///< RFC 2782: lower first
    uint16_t weight = 0;        ///< RFC 2782: share within a priority
    uint16_t region = 0;        ///< index into proxy_tables::regions
    uint16_t trunk = 0;         ///< the trunk (local address and port) calls to it leave from
    uint8_t canary = no_canary; ///< slot of its canary pattern (bit in a call's canary mask), or no_canary
    std::string server_name;    ///< TLS: the name its certificate must carry (SRV target or configured); "": none checked
    uint32_t max_calls = 0;     ///< concurrent calls on it (attempts and dialogs); 0: no limit; full: skipped
    /// HOST:PORT as a Request-URI retargeted to it names it (retarget.h): a TLS peer's
    /// server_name, else its address ("[v6]" bracketed), and its port; written once when the
    /// tables are built, so that an attempt copies it instead of formatting the address. "":
    /// not built (hand-made tables); the attempt formats it.
    std::string uri_host;

    /// Where its calls go.
    [[nodiscard]] endpoint remote() const noexcept { return endpoint{address, port, proto, 0}; }
};

enum class selector : uint8_t { srv, round_robin, least_calls, hash_call_id };

struct region {
    std::string name;
    std::vector<uint32_t> peers;  ///< indices into proxy_tables::peers, by priority then weight
    std::string fqdn{};           ///< name the SBC presents to its peers; "": the trunk's fqdn, else the address
};

struct peer_group {
    std::string name;
    std::vector<uint16_t> regions;  ///< local region first
    selector sel = selector::srv;
};

enum class match_field : uint8_t { ruri_user, from_user, to_user, trunk };
constexpr std::size_t match_field_count = 4;

struct route {
    std::string name;
    match_field field = match_field::ruri_user;
    std::string pattern;        ///< Hyperscan (PCRE subset) expression; empty: never matched (the default route)
    uint16_t peer_group = 0;
    route_fallback fallback{};  ///< another group for some final codes (route_fallback.h)
};

struct retry_policy {
    std::bitset<700> codes;            ///< final responses that move the call to the next peer
    uint32_t no_response_ms = 1000;    ///< silence this long moves it too (the most a learned timer may be)
    uint32_t min_no_response_ms = 200; ///< the least a peer's learned no-answer timer may be
    bool after_provisional = false;    ///< retry even after a provisional other than 100
    uint8_t max_attempts = 4;          ///< peers tried per call, all regions together
    uint32_t retry_after_s = 30;       ///< Retry-After of the 503 sent when all failed

    [[nodiscard]] bool retry_on(uint16_t code) const noexcept { return code < codes.size() && codes.test(code); }
};

/// How OPTIONS to the SBC itself are answered while it should get no new calls.
struct self_policy {
    uint16_t healthy_code = 200;      ///< while it takes calls
    uint16_t unavailable_code = 503;  ///< while draining or overloaded; 0: no answer at all
};

/// Health word of a peer. Bits, so that one store flips one aspect without a lock.
namespace peer_state {
constexpr uint32_t down = 1u << 0;       ///< failed probes or passive failures
constexpr uint32_t draining = 1u << 1;   ///< operator: no new calls, existing ones go on
constexpr uint32_t disabled = 1u << 2;   ///< operator: out of service
constexpr uint32_t canary = 1u << 3;     ///< only calls matching its canary pattern
/// One silence or ICMP unreachable, and nothing heard from it since: no new calls while
/// another peer of its region is available and not suspect (a selection preference, not
/// "unavailable"); cleared by anything it answers. Written by the control core.
constexpr uint32_t suspect = 1u << 4;
constexpr uint32_t unavailable = down | draining | disabled;
}  // namespace peer_state

/// The atomic health words, one per peer id; lives as long as the process (shared_state).
/// Written by the control core, read by workers: relaxed is enough, a flip that a worker sees
/// one call late changes which peer that call tries first, never correctness.
struct peer_health {
    std::array<std::atomic<uint32_t>, max_peers> word{};
    /// The SBC's own state: node_draining makes every worker refuse new calls (503 with
    /// Retry-After) and answer OPTIONS to the SBC with 503, so upstream balancers move away.
    std::atomic<uint32_t> node{0};
    static constexpr uint32_t node_draining = 1;
    /// Over [self] overload_calls: only the answer to OPTIONS changes; calls are still taken.
    static constexpr uint32_t node_overloaded = 2;
    [[nodiscard]] bool draining() const noexcept { return (node.load(std::memory_order_relaxed) & node_draining) != 0; }
    [[nodiscard]] bool overloaded() const noexcept
    {
        return (node.load(std::memory_order_relaxed) & node_overloaded) != 0;
    }

    /// The no-answer timer in force per peer id, in ms: learned by the control core from the
    /// peer's response times (control/peer_timer.h, RFC 6298) and clamped to
    /// [retry.min_no_response_ms, retry.no_response_ms]; 0 while nothing is learned (then
    /// retry.no_response_ms applies). Written by the control core only, read relaxed.
    std::array<std::atomic<uint32_t>, max_peers> no_response_ms{};
    [[nodiscard]] uint32_t no_response_for(uint32_t id, uint32_t fallback_ms) const noexcept
    {
        const uint32_t v = id < max_peers ? no_response_ms[id].load(std::memory_order_relaxed) : 0;
        return v != 0 ? v : fallback_ms;
    }
    /// RFC 7339 feedback from each peer (loss algorithm): the percent of new calls to send to
    /// other peers while one is available (peer_select.h), by peer id; 0: none. Written by the
    /// control core only (control/oc_peers.h: the latest oc-seq per peer, cleared when its
    /// oc-validity runs out), read relaxed: a worker that sees a change one call late only
    /// diverts one call more or less.
    std::array<std::atomic<uint8_t>, max_peers> oc_reduction{};
    [[nodiscard]] uint8_t oc_reduction_of(uint32_t id) const noexcept
    {
        return id < max_peers ? oc_reduction[id].load(std::memory_order_relaxed) : 0;
    }
    [[nodiscard]] bool suspect(uint32_t id) const noexcept
    {
        return (word[id].load(std::memory_order_relaxed) & peer_state::suspect) != 0;
    }

    [[nodiscard]] bool available(uint32_t id) const noexcept
    {
        return (word[id].load(std::memory_order_relaxed) & peer_state::unavailable) == 0;
    }
    /// Last resort when every peer is down: "down" is a guess from failures, while draining
    /// and disabled are the operator's word.
    [[nodiscard]] bool usable_when_all_down(uint32_t id) const noexcept
    {
        return (word[id].load(std::memory_order_relaxed) & (peer_state::draining | peer_state::disabled)) == 0;
    }
};

struct proxy_tables {
    std::vector<trunk> trunks;
    std::vector<peer> peers;
    std::vector<region> regions;
    std::vector<peer_group> groups;
    std::vector<route> routes;           ///< in priority order; the first that matches wins
    int default_route = -1;              ///< route taken when none matches; -1: answer 404
    retry_policy retry;
    self_policy self;
    oc_policy oc;                        ///< RFC 7339 overload control ([overload_control])
    admission_policy admission;          ///< node-wide call admission ([admission])
    std::shared_ptr<const route_matcher> matcher;  ///< compiled routes (null: no routes)
    std::shared_ptr<const canary_matcher> canaries;  ///< compiled canary patterns (null: no canary)
    std::shared_ptr<const scanner_matcher> scanner;  ///< [scanner] signatures and action (null: none)
    overload_policy overload;            ///< [overload]: when a worker sheds new requests
    std::shared_ptr<const rule_tables> rules;  ///< header and number rules (null: none), sip-fastpath/sip_rules.h
    /// Masks what topology hiding encodes (sip-fastpath/topology_hiding.h): random, made once
    /// per process and kept across reloads (dialogs outlive snapshots).
    uint64_t hiding_key = 0;

    /// Index of the trunk listening on (address, port), or -1. Trunks are few (one per local
    /// address and port); the receive step calls this once per message.
    [[nodiscard]] int find_trunk(const ip_address& address, uint16_t port) const noexcept
    {
        if (address.is_v6()) return find_trunk6(address, port);
        for (std::size_t i = 0; i < trunks.size(); ++i)
            if (trunks[i].port == port && trunks[i].address == address) return static_cast<int>(i);
        return -1;
    }
    /// find_trunk for an IPv6 address (its own loop: the IPv4 one stays one compare a trunk).
    [[nodiscard]] int find_trunk6(const ip_address& address, uint16_t port) const noexcept
    {
        for (std::size_t i = 0; i < trunks.size(); ++i)
            if (trunks[i].port == port && trunks[i].address6 == address) return static_cast<int>(i);
        return -1;
    }
    /// Whether any peer has this address (in-dialog requests come from peers too): a hash
    /// lookup (index_peers must have run).
    [[nodiscard]] bool is_peer_address(const ip_address& address) const noexcept
    {
        return is_peer_address(address, address.hash());
    }
    /// The same, with `hash` = address.hash() already at hand.
    [[nodiscard]] bool is_peer_address(const ip_address& address, uint64_t hash) const noexcept
    {
        return lookup(by_address_, hash, [&](const peer& p) { return p.address == address; }) != no_peer;
    }
    /// Index of the peer at (address, port), or no_peer: a hash lookup (index_peers must have run).
    [[nodiscard]] uint32_t find_peer(const ip_address& address, uint16_t port) const noexcept
    {
        return lookup(by_endpoint_, address.hash() ^ port,
                      [&](const peer& p) { return p.port == port && p.address == address; });
    }
    /// Builds the peer indexes from `peers`; the builder calls it once after filling peers.
    void index_peers();

private:
    /// Open addressing over peer indices (no_peer: empty), power-of-two sized, at most half full.
    std::vector<uint32_t> by_address_;
    std::vector<uint32_t> by_endpoint_;

    template <class Match>
    [[nodiscard]] uint32_t lookup(const std::vector<uint32_t>& index, uint64_t h, Match match) const noexcept
    {
        if (index.empty()) return no_peer;
        const std::size_t mask = index.size() - 1;
        for (std::size_t i = h & mask;; i = (i + 1) & mask) {
            const uint32_t p = index[i];
            if (p == no_peer) return no_peer;
            if (match(peers[p])) return p;
        }
    }
};

}  // namespace sbc::sip
