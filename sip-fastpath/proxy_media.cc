// The proxy's side of media anchoring: SDP bodies handed to the media hook with the leg they
// go to, teardown when a call ends, and calls whose media went silent ended with a BYE to
// each side. Worker only; nothing here runs without a media hook (set_media).
#include <cstring>

#include "sip-fastpath/proxy_ids.h"
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

media_leg proxy::media_leg_of(uint64_t call, const endpoint& ep, const proxy_tables* t) const noexcept
{
    const uint32_t d = dialogs_->find(call);
    if (d != none_slot) return dialogs_->table.at(d).caller == ep ? media_leg::a : media_leg::b;
    return t != nullptr && t->find_peer(ep.addr, ep.port) != no_peer ? media_leg::b : media_leg::a;
}

void proxy::media_end(uint64_t call) noexcept
{
    if (media_ != nullptr) media_->call_ended(call, timers_.now());
}

void proxy::set_media(media_hook* m)
{
    media_ = m;
    if (!sdp_buf_) sdp_buf_ = std::make_unique<std::array<char, max_udp_message>>();
    if (!media_dialogs_) media_dialogs_.reset(new media_dialog[dialogs_->table.capacity()]);
}

void proxy::media_dialog_started(uint32_t slot) noexcept
{
    if (media_ == nullptr) return;
    const setup& s = setups_->at(slot);
    const uint32_t d = dialogs_->find(s.callid_hash);
    if (d == none_slot) return;
    media_dialog& md = media_dialogs_[d];
    md.valid = false;
    const std::string_view stored(store_of(slot), s.invite_len);
    if (parse(stored, *aux_) != error::none) return;
    const message& inv = *aux_;
    const message& ok = *msg_;
    if (inv.h_from == no_header || ok.h_to == no_header || inv.h_call_id == no_header) return;
    // Targets: each side's Contact, else what we know of it (Request-URI, From URI).
    auto contact = [](const message& m, std::string_view fallback) {
        const name_addr* na = first_contact(m);  // parsed once per message
        return na != nullptr ? m.text(na->uri_text) : fallback;
    };
    const std::array<std::string_view, media_dialog::count_> values{
        inv.call_id(), inv.text(inv.headers[inv.h_from].value), ok.text(ok.headers[ok.h_to].value),
        contact(inv, inv.text(inv.from.uri_text)), contact(ok, inv.text(inv.request_uri))};
    std::size_t at = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (at + values[i].size() > md.text.size()) return;  // too long to keep: no BYE from us
        std::memcpy(md.text.data() + at, values[i].data(), values[i].size());
        md.off[i] = static_cast<uint16_t>(at);
        md.len[i] = static_cast<uint16_t>(values[i].size());
        at += values[i].size();
    }
    md.a = s.caller;
    md.b = s.peer;
    md.local = s.local;
    md.b_local = s.out_local;
    md.cseq = inv.cseq;
    md.valid = true;
}

void proxy::media_bye(uint32_t d, bool to_a, outbox& out) noexcept
{
    const media_dialog& md = media_dialogs_[d];
    out_message* dg = out.next();
    if (dg == nullptr) {
        stats_->add(proxy_counter::outbox_full);
        return;
    }
    // As the other side would send it: To A, From is B's identity (its tag) and vice versa.
    // Our Via carries a stateless branch: the 200 comes back to us and is absorbed there.
    char branch[32];
    const uint64_t key = dialogs_->table.key(d) ^ (to_a ? 0xa : 0xb);
    const std::size_t branch_len = write_stateless_branch(branch, key);
    char via[max_via_size];
    const endpoint& target = to_a ? md.a : md.b;
    const endpoint local = leg_local(to_a ? md.local : md.b_local, target);
    const std::size_t via_len = write_via(via, local, {branch, branch_len}, target);
    writer w(dg->data);
    w.put("BYE ");
    w.put(md.get(to_a ? media_dialog::a_target : media_dialog::b_target));
    w.put(" SIP/2.0\r\nVia: ");
    w.put({via, via_len});
    w.put("\r\nMax-Forwards: 70\r\nFrom: ");
    w.put(md.get(to_a ? media_dialog::to : media_dialog::from));
    w.put("\r\nTo: ");
    w.put(md.get(to_a ? media_dialog::from : media_dialog::to));
    w.put("\r\nCall-ID: ");
    w.put(md.get(media_dialog::call_id));
    w.put("\r\nCSeq: ");
    w.put_uint(md.cseq + 1);
    w.put(" BYE\r\nReason: SIP;cause=408;text=\"media inactivity\"\r\nContent-Length: 0\r\n\r\n");
    const write_result r = w.result();
    if (r.ok()) out.commit(local, target, r.len);
}

void proxy::media_silence(uint64_t now_ms, outbox& out) noexcept
{
    if (media_ == nullptr) return;
    std::array<uint64_t, 8> calls;
    // Two BYEs per call: ask only for as many calls as the outbox has room for.
    const std::size_t room = out.n + 2 * calls.size() <= outbox_capacity ? calls.size() : (outbox_capacity - out.n) / 2;
    const uint32_t n = media_->silent_calls(now_ms, {calls.data(), room});
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t d = dialogs_->find(calls[i]);
        if (d == none_slot) continue;  // still being set up (ringing without early media)
        if (media_dialogs_[d].valid) {
            media_bye(d, false, out);
            media_bye(d, true, out);
        }
        dialog_end(calls[i], sbc::cdr_end::media_timeout, now_ms);  // tears the media down too
    }
}

}  // namespace sbc::sip
