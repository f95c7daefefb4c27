// The narrow interface through which the proxy anchors media: it hands each SDP body it
// forwards to a media_hook (rtp::media_sessions implements it) and says when a call is over;
// the hook tells it which calls' media went silent. Keeps the proxy free of mbufs, ports and
// flow tables. Worker only: one hook per worker, called by that worker's proxy.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "common/call_record.h"

namespace sbc::sip {

/// The leg a message is forwarded to: A is the caller's side (upstream), B the callee's.
enum class media_leg : uint8_t { a = 0, b = 1 };

/// Result of rewrite_sdp.
enum class sdp_verdict : uint8_t {
    unchanged,  ///< forward the body as it is (no SDP, or nothing to anchor)
    rewritten,  ///< forward the returned body instead (Content-Length follows it)
    refused,    ///< no media ports or call state left: refuse the offer (the proxy answers 503/488)
};

class media_hook {
public:
    /// `body` (with Content-Type `content_type`) travels from the other leg to leg `to` in a
    /// message of call `call` (the Call-ID hash). Records the sender's media address and
    /// ports, allocates (once per m-line) our ports facing `to`, and writes the body `to`
    /// must see into `out`, setting `out_len`. Any offer or answer, in either direction.
    virtual sdp_verdict rewrite_sdp(uint64_t call, media_leg to, std::string_view content_type,
                                    std::string_view body, std::span<char> out, std::size_t& out_len,
                                    uint64_t now_ms) noexcept = 0;
    /// The call is over (BYE answered, CANCEL, failed setup): its flows are torn down and
    /// its ports go to quarantine. Unknown calls are ignored.
    virtual void call_ended(uint64_t call, uint64_t now_ms) noexcept = 0;
    /// Calls whose media has been silent in both directions for the inactivity timeout:
    /// writes up to calls.size() Call-ID hashes, returns how many. A call is reported again
    /// after each further timeout until call_ended: the proxy ends established calls (BYE to
    /// both sides, then call_ended) and leaves calls still being set up for a later look.
    virtual uint32_t silent_calls(uint64_t now_ms, std::span<uint64_t> calls) noexcept = 0;
    /// Call `call`'s media so far, for its call record, asked just before call_ended: [0] the
    /// flow arriving from the caller (leg A), [1] from the callee (leg B), of its first
    /// anchored m-line's RTP (packets, bytes, loss, jitter, the payload type of its first
    /// packet). False, `out` untouched, when the call has no anchored media (the default).
    virtual bool call_figures(uint64_t /*call*/, std::span<sbc::cdr_media, 2> /*out*/) noexcept { return false; }

protected:
    ~media_hook() = default;
};

}  // namespace sbc::sip
