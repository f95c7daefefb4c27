// Canary peers: the operator's `sbcctl peer canary NAME --match FIELD:PATTERN` and `promote`.
// A canary peer takes only the INVITEs whose field (Request-URI, From or To user) matches its
// pattern, and takes all of those it can (they are the calls the operator wants to test it
// with), until it is promoted to normal rotation. The registry keeps the canaries by peer name
// across snapshots and reloads; apply() puts them into the proxy tables of the next snapshot
// (compiled patterns, a slot per peer) and sets the canary bit of their health words.
// Control core only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sip-fastpath/proxy_tables.h"

namespace sbc::control {

struct canary_entry {
    std::string peer;     ///< the peer's name as `sbcctl peers` shows it
    sip::match_field field = sip::match_field::from_user;
    std::string pattern;
    uint8_t slot = 0;     ///< bit in a call's canary mask; kept while the canary exists
    /// "from:^\+15550100": what the operator typed, normalised.
    [[nodiscard]] std::string describe() const;
};

class canary_registry {
public:
    /// Makes `peer` a canary for `match` ("FIELD:PATTERN", FIELD one of ruri, from, to), or
    /// changes its pattern. False with `error` (and nothing changed) when the field is unknown,
    /// the pattern is empty or does not compile (Hyperscan's reason), or 64 canaries exist.
    bool set(const std::string& peer, std::string_view match, unsigned workers, std::string& error);
    /// Forgets the canary of `peer` (promote); false when it had none.
    bool remove(std::string_view peer);
    [[nodiscard]] const canary_entry* find(std::string_view peer) const noexcept;
    [[nodiscard]] const std::vector<canary_entry>& entries() const noexcept { return entries_; }

    /// The tables of the next snapshot: a copy of `tables` whose canary peers carry their slot,
    /// with the compiled patterns; `tables` itself when there is no canary at all. Sets the
    /// canary bit in `health` for every canary peer of the copy and clears it for every other
    /// peer, so call this just before the snapshot is published (a new canary is kept from
    /// other calls before its pattern arrives; a promoted one is in rotation before its pattern
    /// goes). Canaries whose peer is not in `tables` (gone after a reload) are forgotten and
    /// their names added to `dropped`. nullptr with `error` when the patterns do not compile,
    /// before anything is changed.
    std::shared_ptr<const sip::proxy_tables> apply(std::shared_ptr<const sip::proxy_tables> tables, unsigned workers,
                                                   sip::peer_health& health, std::vector<std::string>& dropped,
                                                   std::string& error);

private:
    std::vector<canary_entry> entries_;
};

}  // namespace sbc::control
