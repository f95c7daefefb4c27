// OPTIONS probing on the control core: which peer is due for a probe, the probe's text, which
// probe a reply answers (and its RTT), and which probes timed out. One probe at a time per
// peer: the timeout is at most the interval (the config refuses more), so a probe has timed
// out before the next one is due. Times are microseconds on any monotonic clock the caller
// chooses. Pure (no EAL); control/probe_send.cc frames and sends the probes. Control core only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "common/address.h"

namespace sbc::control {

struct probe_due {
    uint32_t id = 0;   ///< peer id
    uint32_t seq = 0;  ///< goes into the branch; a reply must carry it back
};

class probe_scheduler {
public:
    probe_scheduler(uint64_t interval_us, uint64_t timeout_us) : interval_us_(interval_us), timeout_us_(timeout_us) {}

    void set_timing(uint64_t interval_us, uint64_t timeout_us)
    {
        interval_us_ = interval_us;
        timeout_us_ = timeout_us;
    }
    /// The peers to probe from now on. Peers already probed keep their rhythm; new ones get
    /// their first probe spread over one interval from `now_us`; the others are forgotten
    /// (a late reply from them is stale).
    void set_peers(std::span<const uint32_t> ids, uint64_t now_us);

    /// Appends the probes due by `now_us` and marks them sent at `now_us`.
    void due(uint64_t now_us, std::vector<probe_due>& out);
    /// A reply to probe `seq` of peer `id` received at `rx_us`: its RTT when it answers the
    /// probe outstanding for that peer; nullopt (counted late) otherwise.
    std::optional<uint64_t> on_reply(uint32_t id, uint32_t seq, uint64_t rx_us);
    /// Appends the peers whose outstanding probe got no reply within the timeout by `now_us`.
    void expired(uint64_t now_us, std::vector<uint32_t>& out);

    [[nodiscard]] bool probed(uint32_t id) const noexcept { return id < slots_.size() && slots_[id].active; }
    [[nodiscard]] uint64_t sent(uint32_t id) const noexcept { return id < slots_.size() ? slots_[id].sent : 0; }
    [[nodiscard]] uint64_t late_replies() const noexcept { return late_; }

private:
    struct slot {
        bool active = false;
        bool outstanding = false;
        uint32_t seq = 0;
        uint64_t next_us = 0;  ///< when the next probe is due
        uint64_t sent_us = 0;  ///< when the outstanding one was sent
        uint64_t sent = 0;     ///< probes sent, in total
    };
    uint64_t interval_us_;
    uint64_t timeout_us_;
    std::vector<slot> slots_;      ///< by peer id
    std::vector<uint32_t> active_; ///< ids with active slots
    uint64_t late_ = 0;
};

struct probe_text_args {
    endpoint local;         ///< the trunk's address and port calls to the peer leave from (its transport)
    endpoint peer;
    uint32_t peer_id = 0;
    uint32_t seq = 0;
    /// The name the SBC presents to this peer (the region's fqdn, else its trunk's): From and
    /// Contact carry it instead of our address, since TLS peers check names. "": the address.
    std::string_view fqdn{};
};

/// Writes the OPTIONS request of one probe into `out` (Via with the probe branch and rport,
/// Max-Forwards 70, From with a tag, To, Call-ID and CSeq unique per probe, Content-Length 0);
/// returns its length, 0 when `out` is too small (1024 bytes always suffice, FQDNs of 253 characters included).
std::size_t write_probe_options(std::span<char> out, const probe_text_args& a) noexcept;

}  // namespace sbc::control
