// The media anchoring stage (stage_media.h). Worker only: no heap.
#include "sip-fastpath/stage_media.h"

#include <cstring>

#include "sip-fastpath/proxy_ids.h"

namespace sbc::sip::media {

bool body(media_stage& s, const message& m, uint64_t call, media_leg to, edits& ed, uint64_t now) noexcept
{
    if (m.body.len == 0) return true;
    const std::string_view ct = m.h_content_type != no_header ? m.text(m.headers[m.h_content_type].value) : std::string_view{};
    std::size_t len = 0;
    switch (s.hook->rewrite_sdp(call, to, ct, m.text(m.body), {s.sdp->data(), s.sdp->size()}, len, now)) {
    case sdp_verdict::rewritten:
        ed.replace_body = true;
        ed.body = std::string_view(s.sdp->data(), len);
        return true;
    case sdp_verdict::refused: return false;
    case sdp_verdict::unchanged: return true;
    }
    return true;
}

void on_dialog_up(media_stage& s, uint32_t d, const call_setup& st, const char* store, const message& ok) noexcept
{
    media_dialog& md = s.dialogs[d];
    md.valid = false;
    const invite_index& ix = st.inv;
    auto kept = [&](span sp) { return std::string_view(store + sp.off, sp.len); };
    if (ix.from.len == 0 || ok.h_to == no_header || ix.call_id.len == 0) return;
    // Targets: each side's Contact, else what we know of it (Request-URI, From URI).
    const name_addr* ok_contact = first_contact(ok);  // parsed once per message
    const std::array<std::string_view, media_dialog::count_> values{
        kept(ix.call_id), kept(ix.from), ok.text(ok.headers[ok.h_to].value),
        ix.contact_uri.len != 0 ? kept(ix.contact_uri) : kept(ix.from_uri),
        ok_contact != nullptr ? ok.text(ok_contact->uri_text) : kept(ix.request_uri)};
    std::size_t at = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (at + values[i].size() > md.text.size()) return;  // too long to keep: no BYE from us
        std::memcpy(md.text.data() + at, values[i].data(), values[i].size());
        md.off[i] = static_cast<uint16_t>(at);
        md.len[i] = static_cast<uint16_t>(values[i].size());
        at += values[i].size();
    }
    md.a = st.caller;
    md.b = st.peer;
    md.local = st.local;
    md.b_local = st.out_local;
    md.cseq = ix.cseq;
    md.valid = true;
}

namespace {

void bye(const media_dialog& md, uint64_t dialog_key, bool to_a, uint8_t worker, outbox& out, proxy_stats& st) noexcept
{
    out_message* dg = out.next();
    if (dg == nullptr) {
        st.add(proxy_counter::outbox_full);
        return;
    }
    // As the other side would send it: To A, From is B's identity (its tag) and vice versa.
    // Our Via carries a stateless branch: the 200 comes back to us and is absorbed there.
    char branch[32];
    const std::size_t branch_len = write_stateless_branch(branch, worker, dialog_key ^ (to_a ? 0xa : 0xb));
    char via[max_via_size];
    const endpoint& target = to_a ? md.a : md.b;
    const endpoint local{(to_a ? md.local : md.b_local).addr, (to_a ? md.local : md.b_local).port, target.proto,
                         target.conn};
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

}  // namespace

void byes(const media_stage& s, uint32_t d, uint64_t dialog_key, uint8_t worker, outbox& out, proxy_stats& st) noexcept
{
    const media_dialog& md = s.dialogs[d];
    if (!md.valid) return;
    bye(md, dialog_key, false, worker, out, st);
    bye(md, dialog_key, true, worker, out, st);
}

}  // namespace sbc::sip::media
