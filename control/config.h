// The operator's config file (sbc.toml) as plain structs with named defaults, and its loader.
// Control core only (and sbcctl/tests): allocates, never called by a worker.
//
// The structs speak the runtime's vocabulary: addresses are sbc::ip_address (common/address.h),
// choices are the enums the proxy and the relay run with (sip::selector, sip::match_field,
// rtp::latching), and table sizes and their defaults come from common/limits.h, so that what
// the file says reaches the dataplane without a translation. Only IPv4 runs today: the loader
// refuses IPv6 addresses (docs/config.md), so every address here is IPv4. SIP over TCP and TLS
// is set with the transport layer's own structs (transport/stream_config.h): `[tls]` and its
// per-trunk and per-region overrides, and `[streams]` (control/config_tls.cc reads them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/address.h"
#include "common/limits.h"
#include "control/config_admission.h"
#include "control/config_cdr.h"
#include "control/config_fallback.h"
#include "control/config_flood.h"
#include "control/config_scanner.h"
#include "control/config_oc.h"
#include "control/config_rules.h"
#include "rtp/media.h"
#include "sip-fastpath/proxy_tables.h"
#include "transport/stream_config.h"

namespace sbc::control {

/// DSCP defaults (RFC 4594): CS3 for call signalling, EF for telephony media.

/// A DSCP as the config writes it: a number 0..63 or a name (CS0..CS7, AF11..AF43, EF, VA,
/// LE; any case). Nothing when it is neither (control/config_dscp.cc).
std::optional<uint8_t> parse_dscp(std::string_view text);

/// One `[[interface]]`: a DPDK port (or a VLAN on one) with an address.
struct interface_config {
    std::string name;
    std::string device;                ///< PCI address ("0000:3b:00.0") or vdev string ("net_af_packet0,iface=x")
    ip_prefix address;                 ///< own address and prefix length, host bits kept (IPv4)
    std::optional<ip_address> gateway; ///< default gateway; none: only on-link destinations
    std::optional<ip_prefix> address6; ///< own IPv6 address and prefix length, host bits kept; none: no IPv6 here
    std::optional<ip_address> gateway6; ///< IPv6 default gateway (link-local or inside address6's prefix)
    uint16_t vlan = 0;                 ///< 802.1Q VLAN id, 0 = untagged
    uint16_t media_port_min = rtp::default_port_min;
    uint16_t media_port_max = rtp::default_port_max;
    uint8_t dscp_sip = default_dscp_sip;  ///< DSCP of SIP sbcd sends from here (UDP, TCP, TLS, probes)
    uint8_t dscp_rtp = default_dscp_rtp;  ///< DSCP of RTP and RTCP relayed out of here
    int line = 0;                      ///< line of the table in the file, for later messages
};

constexpr unsigned default_workers = 1;  ///< at most sbc::max_workers (common/limits.h)
constexpr const char* default_control_socket = "/run/sbc/sbcd.sock";
constexpr const char* default_management_http = "127.0.0.1:9090";
constexpr unsigned default_arp_timeout_s = 300;

struct node_config {
    std::string name = "sbc";
    unsigned workers = default_workers;                 ///< worker lcores; the main lcore runs the control loop
    std::string control_socket = default_control_socket;
    std::string management_http = default_management_http;  ///< "host:port"; "" disables HTTP
};

struct dpdk_config {
    bool no_huge = true;                    ///< false: hugepages
    unsigned memory_mb = default_memory_mb;
    unsigned mbufs_per_worker = default_mbufs_per_worker;
    unsigned rx_ring = default_rx_ring;     ///< descriptors per RX queue
    unsigned tx_ring = default_tx_ring;     ///< descriptors per TX queue
    std::string file_prefix;                ///< EAL --file-prefix; empty: "sbc-<node name>"
    std::vector<std::string> eal_args;      ///< passed to EAL unchanged, before command-line EAL args
    /// Largest IPv4 datagram a net_af_packet port delivers whole (its kernel reassembles
    /// fragments first: dataplane/af_packet.h); 1500..65200.
    unsigned af_packet_max_datagram = 65200;
};

struct arp_config {
    unsigned timeout_s = default_arp_timeout_s;  ///< a learned entry is refreshed after this
    unsigned retry_ms = 1000;                    ///< resend an unanswered request after this
    unsigned retries = 3;                        ///< then give up until traffic asks again
};

/// `[ipv6]`: how the IPv6 stage treats what it receives.
struct ipv6_config {
    unsigned max_extension_headers = 8;  ///< a longer chain before the upper layer is dropped and counted
    unsigned icmp_error_rate = 100;      ///< ICMPv6 errors each worker sends per second at most; 0: none
    unsigned icmp_error_burst = 10;      ///< and in one burst
};

constexpr uint16_t default_sip_port = 5060;
constexpr uint16_t default_sips_port = 5061;  ///< RFC 3261 §26.2: SIP over TLS

/// One `[[trunk]]`: a local SIP address (an interface's address and a port per transport) and
/// the source prefixes allowed to send on it.
struct trunk_config {
    std::string name;
    std::string interface;             ///< name of an [[interface]]
    uint16_t port = default_sip_port;  ///< local UDP port; (interface, transport, port) unique across trunks
    std::vector<transport> transports{transport::udp};  ///< what it listens with: each once, at least one, file order
    uint16_t tcp_port = default_sip_port;   ///< local TCP port; not in the file: `port`
    uint16_t tls_port = default_sips_port;  ///< local TLS port
    std::string fqdn;                  ///< DNS name the SBC presents on this trunk; "": its address
    /// `[tls]` with the trunk's own `tls` table over it (server side); set only when
    /// `transports` has "tls".
    std::optional<streams::tls_settings> tls;
    std::vector<ip_prefix> allow;      ///< at least one, canonical; a plain address is a /32; "0.0.0.0/0" allows anyone
    int line = 0;
    trunk_admission_config admission;  ///< max_calls, max_calls_per_second, calls_burst (config_admission.h)
    bool trusted = false;              ///< its sources are only rate-limited by [flood], never denied
    /// Its own [flood] untrusted_trunk_rate / _burst (the bucket its untrusted sources share);
    /// unset: [flood]'s. Only on a trunk that is not trusted.
    std::optional<uint32_t> untrusted_trunk_rate, untrusted_trunk_burst;
    std::vector<rule_config> rules;    ///< [[trunk.rule]]: header and number rules, file order (config_rules.h)
    bool topology_hiding = false;      ///< what leaves toward its side carries nothing of the other side (sip-fastpath/topology_hiding.h)

    [[nodiscard]] bool takes(transport t) const
    {
        for (transport x : transports)
            if (x == t) return true;
        return false;
    }
};

constexpr uint16_t default_peer_priority = 10;
constexpr uint16_t default_peer_weight = 100;

/// One entry of a region's static `peers` list.
struct peer_config {
    std::string name;                  ///< configured name; "" means "<region>/<a.b.c.d:port>"
    ip_address address;                ///< IPv4
    uint16_t port = 5060;
    uint16_t priority = default_peer_priority;  ///< RFC 2782: lower first
    uint16_t weight = default_peer_weight;      ///< RFC 2782: share within a priority
    int line = 0;
    // After `line`, so that peer_config{name, address, port, priority, weight, line} still reads.
    transport proto = transport::udp;  ///< how calls reach it ("transport"; an SRV peer: its name's label)
    /// TLS: the name its certificate must carry ("server_name"; an SRV peer: the target);
    /// "": the certificate is checked against its IP address (proxy_build puts the address in
    /// sip::peer::server_name).
    std::string server_name{};
    unsigned max_calls = 0;  ///< concurrent calls on it; 0: the region's peer_max_calls (0: no limit)
};

enum class probe_mode : uint8_t { options, none };

/// One `[[region]]`: peers given statically (`peers`) or by a DNS SRV name (`srv`), exactly one.
struct region_config {
    std::string name;
    std::string srv;                   ///< "_sip._udp.x", "_sip._tcp.x", "_sip._tls.x": peers come from DNS (control/dns.h); "" when `peers` is given
    transport srv_proto = transport::udp;  ///< the transport `srv` names (its peers use it)
    /// address_family: the families the SRV targets resolve to (A, AAAA or both).
    family_choice family = family_choice::ipv4;
    std::vector<peer_config> peers;    ///< static list, in file order
    probe_mode probe = probe_mode::options;
    std::string trunk;                 ///< trunk calls to its peers leave from; "": chosen by address (docs/config.md)
    std::string fqdn;                  ///< DNS name the SBC presents to its peers; "": the trunk's fqdn, else the address
    /// `[tls]` with the region's own `tls` table over it (client side); set only when its peers
    /// use TLS (an srv "_sip._tls." name, or a static peer with transport "tls").
    std::optional<streams::tls_settings> tls;
    int line = 0;
    unsigned peer_max_calls = 0;       ///< concurrent calls on each of its peers that sets no max_calls; 0: no limit
    std::vector<rule_config> rules;    ///< [[region.rule]]: header and number rules, file order (config_rules.h)

    /// Whether calls to its peers use TLS.
    [[nodiscard]] bool uses_tls() const
    {
        if (!srv.empty()) return srv_proto == transport::tls;
        for (const auto& p : peers)
            if (p.proto == transport::tls) return true;
        return false;
    }
};

/// One `[[peer_group]]`: ordered regions (local first) and how a peer is chosen in a region.
struct peer_group_config {
    std::string name;
    std::vector<std::string> regions;  ///< names of [[region]]s, at least one, no repeats
    sip::selector selector = sip::selector::srv;
    int line = 0;
};

/// One `[[route]]`. Routes are tried in file order; the one without `match` is the default.
struct route_config {
    std::string name;
    bool has_match = false;            ///< false: the default route (taken when no other matches)
    sip::match_field field = sip::match_field::ruri_user;
    std::string pattern;               ///< Hyperscan expression (compiled when sbcd builds its tables)
    std::string peer_group;            ///< name of a [[peer_group]]
    route_fallback_config fallback;    ///< fallback_group and fallback_codes (config_fallback.h)
    int line = 0;
    int pattern_line = 0;              ///< line of `match`, for pattern errors found at build time
};

struct retry_config {
    std::vector<uint16_t> codes{408, 503, 504};  ///< final responses that move a call to the next peer, 400..699
    unsigned no_response_ms = 1000;    ///< 100..32000; also the longest a peer's learned timer may be
    /// The shortest a peer's learned no-answer timer may be, 50..32000, at most no_response_ms;
    /// when not given, 200 or no_response_ms if that is less.
    unsigned min_no_response_ms = 200;
    bool after_provisional = false;    ///< retry even after a provisional other than 100
    unsigned max_attempts = 4;         ///< peers tried per call, 1..16
    unsigned retry_after_s = 30;       ///< Retry-After of the 503 sent when every peer failed, 0..86400
};

/// `[limits]`: the sizes of each worker's SIP tables, allocated at start.
struct limits_config {
    unsigned transactions_per_worker = default_transactions_per_worker;  ///< 1024..4194304
    unsigned dialogs_per_worker = default_dialogs_per_worker;            ///< 1024..4194304
    /// Call setups whose INVITE is larger than 4 KiB, at once, per worker (one 64 KiB buffer
    /// each, sip-fastpath/call_large.cc); 1..4096.
    unsigned large_messages_per_worker = 256;
};

struct health_config {
    unsigned options_interval_ms = 2000;   ///< 100..600000
    unsigned options_timeout_ms = 1000;    ///< 50..60000, at most options_interval_ms
    unsigned down_after = 2;               ///< consecutive failed probes, 1..100
    unsigned up_after = 2;                 ///< consecutive good probes, 1..100
    std::vector<uint16_t> accepted_codes{200};  ///< probe replies that count as up, 100..699
    unsigned passive_down_after = 3;       ///< consecutive 408/503/504/silence/ICMP on calls, 1..100
    unsigned retest_interval_ms = 30000;   ///< probe = "none": one trial call after this, 1000..3600000
};

/// `[self]`: how the SBC answers OPTIONS addressed to itself (its health, for the load
/// balancers in front of it) when it should not get new calls.
struct self_config {
    unsigned healthy_code = 200;      ///< answered while it takes calls, 200..299
    unsigned draining_code = 503;     ///< answered while draining or overloaded, 400..699; 0 ("none"): no answer
    unsigned drain_timeout_s = 600;   ///< grace period of a drain that names none, 1..86400
    unsigned overload_calls = 0;      ///< active calls (all workers) at which it counts as overloaded; 0: never
};

/// `[dns]`: the DNS servers that resolve `srv` regions, and how their answers are kept.
struct dns_config {
    std::vector<std::string> servers;  ///< "A.B.C.D" (port 53) or "A.B.C.D:PORT", tried in order; empty: /etc/resolv.conf
    unsigned timeout_ms = 1000;        ///< per try, 100..30000
    unsigned tries = 2;                ///< per server, 1..10
    unsigned min_refresh_ms = 1000;    ///< floor of the refresh at 3/4 of the TTL, 100..3600000
    unsigned retry_ms = 1000;          ///< next try after a failed refresh, 100..600000
    bool serve_stale = true;           ///< keep the last good answer while refreshes fail, past its TTL too
};

/// `[media]`: media anchoring (control/config_media.cc). Absent: SDP passes unchanged.
/// The dataplane's own media config (one type, one set of defaults), as read from the file:
/// `enabled` when the section is present; `address`/`addresses` (each an interface's address),
/// `port_min` (even, 1024..65534), `port_max` (above it), `latching` (`mode`),
/// `inactivity_timeout_s` (0..86400; 0: never), `quarantine_ms` (1000..600000), and
/// `sessions_per_worker` (16..4194304), checked by control/config_media.cc.
struct media_config_section : rtp::media_config {
    int line = 0;  ///< of the [media] table, for later messages
};

/// The whole file.
struct config {
    std::string path;  ///< where it was read from
    node_config node;
    dpdk_config dpdk;
    arp_config arp;
    ipv6_config ipv6;
    std::vector<interface_config> interfaces;
    std::vector<trunk_config> trunks;
    std::vector<region_config> regions;
    std::vector<peer_group_config> peer_groups;
    std::vector<route_config> routes;  ///< in priority order (file order)
    int default_route = -1;            ///< index into routes of the route without `match`; -1: none (404)
    retry_config retry;
    limits_config limits;
    health_config health;
    dns_config dns;
    media_config_section media;
    self_config self;
    /// `[tls]`: the defaults of every trunk's and region's TLS settings (line 0: no [tls]).
    ::sbc::streams::tls_settings tls;
    ::sbc::streams::stream_settings streams;  ///< `[streams]` (line 0: absent, all defaults)
    admission_config admission;  ///< `[admission]` (control/config_admission.h; line 0: absent, no node limit)
    flood_config flood;  ///< `[flood]` (control/config_flood.h; line 0: absent, all defaults)
    scanner_config scanner;    ///< `[scanner]` (control/config_scanner.h; line 0: absent, all defaults)
    overload_config overload;  ///< `[overload]` (control/config_scanner.h; line 0: absent, all defaults)
    oc_config overload_control;  ///< `[overload_control]`: RFC 7339 (control/config_oc.h; line 0: absent)
    cdr_config cdr;  ///< `[cdr]`: call detail records (control/config_cdr.h; line 0: absent, off)
};

/// A problem in the file: where it is and what is wrong with it.
struct config_error {
    std::string file;
    int line = 0;     ///< 1-based; 0 when the problem has no single place (e.g. a missing section)
    std::string key;  ///< dotted path, e.g. "interface[1].address"
    std::string message;

    /// "FILE:LINE: KEY: MESSAGE", the form sbcd prints before exiting with code 2.
    [[nodiscard]] std::string to_string() const;
};

struct load_result {
    std::optional<config> cfg;          ///< set only when errors is empty
    std::vector<config_error> errors;   ///< every problem found, in file order
};

/// Parses and validates `text` as if read from `path`. Unknown keys are errors (they are
/// almost always typos). Never throws.
load_result parse_config(std::string_view text, std::string_view path);

/// Reads and validates the file at `path`. An unreadable file is one error with line 0.
load_result load_config(const std::string& path);

/// A "host:port" split into its parts ("[v6]:port" keeps the brackets off the host).
struct host_port {
    std::string host;
    uint16_t port = 0;
};
/// Parses "host:port" with port 1..65535 and a non-empty host; nullopt otherwise.
/// Used for node.management_http by the loader and by metrics_http.
std::optional<host_port> parse_host_port(std::string_view s);

/// Whether `s` is a DNS host name as the file may give one (a trunk's or region's `fqdn`, a
/// peer's `server_name`): 1..253 characters, labels of 1..63 letters, digits and '-' (not first
/// or last) separated by '.', no trailing dot.
bool is_dns_name(std::string_view s);

/// The transport an SRV name asks for by its second label: "_sip._udp.x" udp, "_sip._tcp.x"
/// tcp, "_sip._tls.x" tls (case-insensitive); nullopt for anything else.
std::optional<transport> srv_transport(std::string_view srv);

/// The peer an SRV answer of region `rc` gives: one address of `target` with the record's
/// port, priority and weight; its transport from the region's SRV name and, for TLS, the target
/// as the name its certificate must carry (RFC 3263 §4: the host name, not the domain asked).
peer_config srv_peer(const region_config& rc, const ip_address& address, uint16_t port, uint16_t priority,
                     uint16_t weight, std::string_view target);

}  // namespace sbc::control
