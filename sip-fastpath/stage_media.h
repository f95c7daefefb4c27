// The media anchoring stage ([media]; the media itself is rtp/, behind sip-fastpath/media_hook.h):
// every SDP body a call carries is handed to the media hook with the leg it goes to (the offer
// once when the INVITE is taken, point "request in"; each answer and re-offer as it passes,
// "response in" and in-dialog), the call's media torn down when it ends ("dialog ended", and a
// setup that fails), and calls whose media went silent ended with a BYE to each side (at the
// worker's tick). Its own state: the hook, a buffer for a rewritten body, and per dialog slot
// what a BYE to each side needs. On a call's stage set only when the worker has a hook.
// Worker only: no heap after start.
#pragma once

#include <array>
#include <memory>

#include "sip-fastpath/call_state.h"
#include "sip-fastpath/media_hook.h"
#include "sip-fastpath/sip_editor.h"

namespace sbc::sip {

/// What ending a call from the middle takes (media inactivity): a BYE to each side as the
/// other side would send it. Kept per dialog slot.
struct media_dialog {
    enum field : uint8_t { call_id, from, to, a_target, b_target, count_ };
    endpoint a;        ///< the caller's signalling address
    endpoint b;        ///< the callee's (the peer that answered)
    endpoint local;    ///< our endpoint on the caller's leg
    endpoint b_local;  ///< our endpoint on the callee's leg
    uint32_t cseq = 0; ///< the INVITE's
    std::array<uint16_t, count_> off{};
    std::array<uint16_t, count_> len{};
    std::array<char, 440> text{};
    bool valid = false;
    [[nodiscard]] std::string_view get(field f) const noexcept { return {text.data() + off[f], len[f]}; }
};

struct media_stage {
    media_stage(media_hook* h, uint32_t dialogs)
        : hook(h), sdp(std::make_unique<std::array<char, max_udp_message>>()), dialogs(new media_dialog[dialogs])
    {
    }
    media_hook* hook;
    std::unique_ptr<std::array<char, max_udp_message>> sdp;  ///< a rewritten SDP body
    std::unique_ptr<media_dialog[]> dialogs;                  ///< by dialog slot
};

namespace media {

/// Puts the body leg `to` of call `call` must see into `ed` (unchanged when `m` has no SDP);
/// false when refused (no media ports or call state left).
bool body(media_stage& s, const message& m, uint64_t call, media_leg to, edits& ed, uint64_t now) noexcept;
/// Dialog up (slot `d`): keeps what a BYE to each side needs, from the kept INVITE `inv`
/// (`store`, indexed by `ix`) and the 2xx `ok`.
void on_dialog_up(media_stage& s, uint32_t d, const call_setup& st, const char* store, const message& ok) noexcept;
/// The BYEs to both sides of the dialog in slot `d` (key `dialog_key`), from our stateless
/// branch (`worker`); nothing when it kept nothing.
void byes(const media_stage& s, uint32_t d, uint64_t dialog_key, uint8_t worker, outbox& out, proxy_stats& st) noexcept;

}  // namespace media
}  // namespace sbc::sip
