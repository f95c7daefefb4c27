// The node's deny list: sources whose UDP SIP every worker drops before parsing, each with why
// and until when. The control core is its only writer (reports from workers, `sbcctl deny`,
// expiry); workers see it as the immutable set published with the flood limits
// (dataplane/flood_policy.h). Trusted sources are never on it: a report about one is ignored
// and counted, an operator's add refused. Also what /metrics says about it (flood_report).
// Control core only (the unit tier too): allocates; no DPDK types.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/address.h"
#include "dataplane/source_guard.h"

namespace sbc::control {

struct deny_entry {
    ip_address addr;
    dataplane::deny_reason reason = dataplane::deny_reason::rate;
    std::string note;         ///< the operator's --reason text, or what the control core knows ("worker 0")
    uint64_t since_ms = 0;    ///< the control core's steady clock (expiry)
    uint64_t until_ms = 0;
    int64_t since_unix = 0;   ///< wall clock, for people
    int64_t until_unix = 0;
};

/// What add() did.
enum class deny_outcome : uint8_t {
    added,            ///< a new entry (the caller logs it)
    updated,          ///< already denied: reason, note and expiry replaced (operator) or kept (report)
    refused_trusted,  ///< a trusted source: not denied (a report is counted as ignored)
    refused_full,     ///< max_entries sources are denied already: not added (counted)
};

class deny_list {
public:
    /// Most sources denied at once: spoofed sources on an open untrusted trunk could otherwise
    /// grow the list (and each publication) without bound. Past it, new denials are refused and
    /// counted (refused_full()); the sources stay rate-limited.
    static constexpr std::size_t max_entries = 65536;

    /// Denies `addr` for `seconds` from now (`now_ms` steady, `now_unix` wall clock), unless
    /// `trusted`. A report (`reason` not by_operator) about a source already denied changes
    /// nothing; the operator's add replaces the reason, note and expiry.
    deny_outcome add(const ip_address& addr, dataplane::deny_reason reason, std::string note, uint64_t seconds,
                     bool trusted, uint64_t now_ms, int64_t now_unix);
    /// Takes `addr` off the list; false when it was not on it.
    bool remove(const ip_address& addr);
    /// Removes and returns every entry whose time is up at `now_ms`.
    std::vector<deny_entry> expire(uint64_t now_ms);
    /// Removes and returns every entry `trusted` says is trusted now (after a reload).
    template <class Trusted>
    std::vector<deny_entry> drop_trusted(Trusted&& trusted)
    {
        std::vector<deny_entry> out;
        for (auto it = entries_.begin(); it != entries_.end();) {
            if (trusted(it->first)) {
                out.push_back(std::move(it->second));
                it = entries_.erase(it);
            } else {
                ++it;
            }
        }
        return out;
    }

    [[nodiscard]] const std::map<ip_address, deny_entry>& entries() const noexcept { return entries_; }
    [[nodiscard]] std::vector<ip_address> addresses() const;
    /// Denials made, by reason (each add() that returned added).
    [[nodiscard]] const std::array<uint64_t, dataplane::deny_reason_count>& denials() const noexcept { return denials_; }
    /// Reports about trusted sources, ignored.
    [[nodiscard]] uint64_t ignored_trusted() const noexcept { return ignored_trusted_; }
    [[nodiscard]] uint64_t expired() const noexcept { return expired_; }
    /// Denials refused because the list held max_entries sources.
    [[nodiscard]] uint64_t refused_full() const noexcept { return refused_full_; }

private:
    std::map<ip_address, deny_entry> entries_;
    std::array<uint64_t, dataplane::deny_reason_count> denials_{};
    uint64_t ignored_trusted_ = 0;
    uint64_t expired_ = 0;
    uint64_t refused_full_ = 0;
};

/// Flood protection as /metrics shows it (control/deny_text.cc renders it).
struct flood_report {
    bool enabled = false;
    uint64_t denied = 0;                 ///< sources denied now
    std::array<uint64_t, dataplane::deny_reason_count> denials{};
    uint64_t ignored_trusted = 0;
    uint64_t expired = 0;
    uint64_t refused_full = 0;           ///< denials refused: the list was full
    std::vector<uint64_t> evictions;     ///< per worker: source table entries overwritten
    std::vector<uint64_t> reports;       ///< per worker: sources reported for denial
    /// Per untrusted trunk (name), summed over workers: messages its shared bucket refused.
    std::vector<std::pair<std::string, uint64_t>> trunk_drops;
};

}  // namespace sbc::control
