// Reads a raw DNS response (RFC 1035 wire format) into the SRV, A and AAAA records the peer tables
// need, each with its TTL. c-ares 1.18 parses SRV replies without their TTL
// (struct ares_srv_reply has none), and TTLs are what decide when a region is refreshed, so
// the answer is read here instead. Pure functions, no c-ares and no sockets: the unit tier
// feeds them hand-built packets. Control core only (and tests).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/address.h"

namespace sbc::control::dns {

constexpr uint16_t type_a = 1;
constexpr uint16_t type_cname = 5;
constexpr uint16_t type_aaaa = 28;
constexpr uint16_t type_srv = 33;
constexpr uint16_t class_in = 1;

/// RFC 2181 section 8: a TTL with the top bit set is read as 0.
constexpr uint32_t max_ttl = 0x7fffffff;

struct srv_record {
    std::string target;     ///< lower case, no trailing dot; "." (no service) is ""
    uint16_t priority = 0;
    uint16_t weight = 0;
    uint16_t port = 0;
    uint32_t ttl = 0;       ///< seconds
};

/// An A or AAAA record.
struct a_record {
    std::string name;       ///< owner name, lower case, no trailing dot
    ip_address address;     ///< IPv4 (A) or IPv6 (AAAA)
    uint32_t ttl = 0;
};

/// What one response says. Records of the answer section only; CNAMEs are followed for A
/// and AAAA (a record of any owner in the answer section counts, as the resolver asked for
/// one name). `a` holds the A and AAAA records, each of its family.
struct answer {
    uint8_t rcode = 0;             ///< 0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN, ...
    bool truncated = false;        ///< TC bit (c-ares retries over TCP itself)
    std::vector<srv_record> srv;
    std::vector<a_record> a;
    uint32_t cname_ttl = max_ttl;  ///< smallest TTL of the CNAMEs on the way (max_ttl: none)
};

/// Parses `msg`. nullopt with `error` (what is wrong, and where) when the packet is not a
/// well-formed response: short header or record, a name that loops or runs off the end, an
/// SRV, A or AAAA whose rdata has the wrong length. Records of other types are skipped.
std::optional<answer> parse_answer(std::span<const uint8_t> msg, std::string& error);

/// Lower-cases `name` and removes one trailing dot ("A.Example.NET." -> "a.example.net").
std::string normalize_name(std::string_view name);

}  // namespace sbc::control::dns
