// The Via branch of the SBC's own OPTIONS probes: "z9hG4bKsP" + peer id (4 hex) + sequence
// number (8 hex). The control core mints it (control/probe.cc); a worker recognises a reply
// by this prefix on the top Via before any transaction lookup and hands (peer, sequence,
// status) to the control core (dataplane/sip_dispatch.cc, take_probe_reply in sip_rx.cc). Any thread; pure, no allocation.
#pragma once

#include <cstdint>
#include <string_view>

#include "sip-fastpath/proxy_ids.h"

namespace sbc::sip {

constexpr std::string_view branch_probe = "z9hG4bKsP";
constexpr std::size_t branch_probe_len = 9 + 4 + 8;

struct probe_id {
    uint32_t peer = 0;  ///< peer id (index into peer_health), < 65536
    uint32_t seq = 0;   ///< the probe's sequence number for that peer
};

/// Writes the probe branch into out (branch_probe_len bytes).
inline void write_probe_branch(char* out, const probe_id& id) noexcept
{
    for (std::size_t i = 0; i < branch_probe.size(); ++i) out[i] = branch_probe[i];
    char* p = put_hex(out + branch_probe.size(), id.peer, 4);
    put_hex(p, id.seq, 8);
}

/// Cheap test on the hot path: whether `branch` has the probe prefix at all.
[[nodiscard]] inline bool is_probe_branch(std::string_view branch) noexcept
{
    return branch.size() >= branch_probe.size() && branch.substr(0, branch_probe.size()) == branch_probe;
}

/// Reads a probe branch; false when `branch` is not exactly one of ours.
inline bool read_probe_branch(std::string_view branch, probe_id& id) noexcept
{
    if (branch.size() != branch_probe_len || !is_probe_branch(branch)) return false;
    uint64_t peer, seq;
    if (!get_hex(branch.substr(branch_probe.size(), 4), peer) || !get_hex(branch.substr(branch_probe.size() + 4, 8), seq))
        return false;
    id = {static_cast<uint32_t>(peer), static_cast<uint32_t>(seq)};
    return true;
}

}  // namespace sbc::sip
