// The proxy's side of media anchoring: SDP bodies handed to the media hook with the leg they
// go to, teardown when a call ends, and calls whose media went silent ended with a BYE to
// each side. Worker only; nothing here runs without a media hook (set_media).
#include <cstring>

#include "sip-fastpath/proxy_internal.h"
#include "sip-fastpath/sip_editor.h"

namespace sbc::sip {

bool proxy::media_body(const message& m, uint64_t call, media_leg to, edits& e) noexcept
{
    if (media_ == nullptr || m.body.len == 0) return true;
    const std::string_view ct = m.h_content_type != no_header ? m.text(m.headers[m.h_content_type].value) : std::string_view{};
    std::size_t len = 0;
    switch (media_->rewrite_sdp(call, to, ct, m.text(m.body), {sdp_buf_->data(), sdp_buf_->size()}, len,
                                timers_.now())) {
    case sdp_verdict::rewritten:
        e.replace_body = true;
        e.body = std::string_view(sdp_buf_->data(), len);
        return true;
    case sdp_verdict::refused: return false;
    case sdp_verdict::unchanged: return true;
    }
    return true;
}

media_leg proxy::media_leg_of(uint64_t call, endpoint dst) const noexcept
{
    const uint32_t d = dialogs_->find(call);
    if (d != none_slot && dialogs_->entries[d].caller == dst) return media_leg::a;
    return d != none_slot ? media_leg::b : media_leg::a;
}

void proxy::media_end(uint64_t call) noexcept
{
    if (media_ != nullptr) media_->call_ended(call, timers_.now());
}

void proxy::media_silence(uint64_t now_ms, outbox& out) noexcept
{
    if (media_ == nullptr) return;
    std::array<uint64_t, 8> calls;
    const uint32_t n = media_->silent_calls(now_ms, {calls.data(), out.room(2 * calls.size()) ? calls.size() : 0});
    for (uint32_t i = 0; i < n; ++i) {
        media_end(calls[i]);
        dialog_end(calls[i]);
    }
}

}  // namespace sbc::sip
