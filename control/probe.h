// OPTIONS probing on the control core: which peer is due for a probe, the probe's text, which
// probe a reply answers (and its RTT), and which probes failed. One probe at a time per
// peer. A probe fails only when its timeout has passed AND no reply came before the next one
// is due (a loaded machine that handles a reply late must not take a healthy peer down); a
// reply after the timeout but before the next probe is "late", an answer all the same. Each
// probe may carry its own timeout (set_timeout: the peer's learned no-answer timer); it is
// held to at most the interval. Besides its rhythm, a probed peer may be probed early
// (probe_now), and a peer that is not probed may get one-off probes whose replies are only
// matched, never timed out. Times are microseconds on any monotonic clock the caller
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
    uint32_t id = 0;    ///< peer id
    uint32_t seq = 0;   ///< goes into the branch; a reply must carry it back
    bool once = false;  ///< a one-off probe of a peer that is not probed (probe_now)
};

/// A reply matched to the probe it answers.
struct probe_answer {
    uint64_t rtt_us = 0;
    bool late = false;  ///< after the probe's timeout, before the next probe
    bool once = false;  ///< answers a one-off probe: says the peer is alive, nothing more
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

    /// Appends the probes due by `now_us` (one-off ones included) and marks them sent at
    /// `now_us`, each with the scheduler's timeout until set_timeout says otherwise.
    void due(uint64_t now_us, std::vector<probe_due>& out);
    /// The timeout of the probe of `id` just sent (at most the interval; 0: the default).
    void set_timeout(uint32_t id, uint64_t timeout_us) noexcept;
    /// Probe `id` at the next due(): for a probed peer, its next probe now, unless one is
    /// outstanding (its reply or failure comes within an interval anyway), the rhythm going
    /// on from there; for any other peer, a one-off probe. False when nothing was scheduled.
    bool probe_now(uint32_t id, uint64_t now_us);
    /// A reply to probe `seq` of peer `id` received at `rx_us`: matched when it answers the
    /// probe outstanding for that peer (on time or late) or its last one-off probe; nullopt
    /// (counted stale) otherwise: after the next probe was sent, twice, or a foreign one.
    std::optional<probe_answer> on_reply(uint32_t id, uint32_t seq, uint64_t rx_us);
    /// Appends the peers whose outstanding probe failed by `now_us`: its timeout has passed
    /// and its successor is due (call before due() with the same time).
    void expired(uint64_t now_us, std::vector<uint32_t>& out);

    [[nodiscard]] bool probed(uint32_t id) const noexcept { return id < slots_.size() && slots_[id].active; }
    [[nodiscard]] uint64_t sent(uint32_t id) const noexcept { return id < slots_.size() ? slots_[id].sent : 0; }
    /// Replies that matched no probe (after the next one was sent, twice, or not ours).
    [[nodiscard]] uint64_t stale_replies() const noexcept { return stale_; }

private:
    struct slot {
        bool active = false;
        bool outstanding = false;
        bool once_pending = false;  ///< a one-off probe to send at the next due()
        bool once_open = false;     ///< the last one-off probe is still unanswered
        uint32_t seq = 0;
        uint32_t once_seq = 0;      ///< sequence of the last one-off probe
        uint64_t next_us = 0;       ///< when the next probe is due
        uint64_t sent_us = 0;       ///< when the outstanding one was sent
        uint64_t once_sent_us = 0;  ///< when the last one-off one was sent
        uint64_t timeout_us = 0;    ///< of the outstanding one
        uint64_t sent = 0;          ///< probes sent, in total (one-off ones included)
    };
    slot& at(uint32_t id);
    uint64_t interval_us_;
    uint64_t timeout_us_;
    std::vector<slot> slots_;      ///< by peer id
    std::vector<uint32_t> active_; ///< ids with active slots
    std::vector<uint32_t> once_;   ///< ids with a one-off probe pending
    uint64_t stale_ = 0;
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
