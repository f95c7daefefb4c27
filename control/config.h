// The operator's config file (sbc.toml) as plain structs with named defaults, and its loader.
// Control core only (and sbcctl/tests): allocates, never called by a worker.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sbc::control {

/// IPv4 address in host byte order.
using ipv4_addr = uint32_t;

struct ipv4_prefix {
    ipv4_addr addr = 0;
    uint8_t len = 0;
};

/// One `[[interface]]`: a DPDK port (or a VLAN on one) with an address.
struct interface_config {
    std::string name;
    std::string device;                ///< PCI address ("0000:3b:00.0") or vdev string ("net_af_packet0,iface=x")
    ipv4_prefix address;               ///< own address and prefix length
    std::optional<ipv4_addr> gateway;  ///< default gateway; none: only on-link destinations
    uint16_t vlan = 0;                 ///< 802.1Q VLAN id, 0 = untagged
    uint16_t media_port_min = 20000;
    uint16_t media_port_max = 59999;
    int line = 0;                      ///< line of the table in the file, for later messages
};

constexpr unsigned default_workers = 1;
constexpr unsigned max_workers = 64;
constexpr const char* default_control_socket = "/run/sbc/sbcd.sock";
constexpr const char* default_management_http = "127.0.0.1:9090";
constexpr unsigned default_memory_mb = 1024;
constexpr unsigned default_mbufs_per_worker = 16384;
constexpr unsigned default_rx_ring = 1024;
constexpr unsigned default_tx_ring = 1024;
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
};

struct arp_config {
    unsigned timeout_s = default_arp_timeout_s;  ///< a learned entry is refreshed after this
    unsigned retry_ms = 1000;                    ///< resend an unanswered request after this
    unsigned retries = 3;                        ///< then give up until traffic asks again
};

/// The whole file. Sections later issues add (trunks, regions, routes, ...) go here too.
struct config {
    std::string path;  ///< where it was read from
    node_config node;
    dpdk_config dpdk;
    arp_config arp;
    std::vector<interface_config> interfaces;
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

/// Formats an address in dotted quad.
std::string format_ipv4(ipv4_addr a);
/// Parses a dotted quad; nullopt when it is not one.
std::optional<ipv4_addr> parse_ipv4(std::string_view s);

/// Formats a prefix as "a.b.c.d/n".
std::string format_prefix(const ipv4_prefix& p);
/// Parses "a.b.c.d/n" with n in 1..32; nullopt when it is not one.
std::optional<ipv4_prefix> parse_prefix(std::string_view s);

/// A "host:port" split into its parts ("[v6]:port" keeps the brackets off the host).
struct host_port {
    std::string host;
    uint16_t port = 0;
};
/// Parses "host:port" with port 1..65535 and a non-empty host; nullopt otherwise.
/// Used for node.management_http by the loader and by metrics_http.
std::optional<host_port> parse_host_port(std::string_view s);

}  // namespace sbc::control
