// Dialogs in the call core: an answered call becomes a dialog (point "dialog up": it takes
// over the call's admission counts, learns its parties and legs, and each stage in the call's
// set keeps what it needs), a BYE seen starts its end, and its end (point "dialog ended")
// hands its counts back and tells the stages. Worker only.
#include "sip-fastpath/call_core.h"
#include "sip-fastpath/call_targets.h"
#include "sip-fastpath/stage_cdr.h"
#include "sip-fastpath/stage_hiding.h"
#include "sip-fastpath/stage_media.h"

namespace sbc::sip {

void call_core::dialog_up(const msg_ctx& c, uint32_t slot) noexcept
{
    call_setup& s = setups_->at(slot);
    const uint32_t peer_id = s.peer_id;
    if (peer_id != no_peer) stats_->active_by_peer[peer_id].move(-1);
    s.peer_id = no_peer;
    // The dialog takes over the peer's node-wide count (not given back and taken again:
    // another worker could fill the peer in between) and the trunk's and node's.
    const uint32_t d = dialog_started(s.callid_hash, peer_id, s.trunk, s.admitted);
    if ((s.stages & stage::cdr) != 0 && cdr_) cdr::answered(*cdr_, slot, d, c.m->status, c.now);
    s.admitted = false;
    if (d == none_slot) return;  // the table was full: forward_in_dialog keeps the peer cases
    dialog_entry& de = dialogs_->table.at(d);
    de.caller = s.caller;  // with its connection: requests toward it reuse it
    de.caller_local = s.local;
    de.callee_local = s.out_local;
    // The parties in-dialog requests may go to besides the caller: each side's Contact (the
    // targets of the requests toward it, RFC 3261 12.1): the 2xx's, and the INVITE's that
    // new_invite kept.
    if (const std::optional<ip_address> ct = contact_address(*c.m)) de.callee_contact = *ct;
    de.caller_contact = s.caller_contact;
    de.stages = s.attempt_stages;
    if ((s.attempt_stages & stage::hiding) != 0) de.hide = hiding::on_dialog_up(*hiding_, s.attempt_stages, *c.m, d);
    if ((s.stages & stage::media) != 0 && media_) media::on_dialog_up(*media_, d, s, store_of(slot), *c.m);
}

uint32_t call_core::dialog_started(uint64_t callid_hash, uint32_t peer_id, uint16_t trunk, bool admitted) noexcept
{
    const uint32_t d = dialogs_->find(callid_hash) != none_slot ? none_slot : dialogs_->insert(callid_hash);
    if (d == none_slot) {
        // A call without dialog state of its own (the table was full, or its Call-ID has one):
        // nothing would end its admission counts, so they end here.
        if (peer_id != no_peer) adm_->give_peer(peer_id);
        if (admitted) adm_->release_call(trunk);
        return none_slot;
    }
    dialog_entry& de = dialogs_->table.at(d);
    de.peer_id = peer_id;
    de.trunk = trunk;
    de.admitted = admitted;
    stats_->add(proxy_counter::dialogs_created);
    stats_->dialogs_active.set(dialogs_->table.size());
    if (peer_id != no_peer) stats_->active_by_peer[peer_id].bump();
    return d;
}

void call_core::dialog_bye_seen(const proxy_tables& t, uint64_t callid_hash, uint64_t now, const endpoint& from) noexcept
{
    // The dialog ends with the BYE's 200, or bye_wait_ms after the BYE without one.
    const uint32_t d = dialogs_->find(callid_hash);
    if (d == none_slot || dialogs_->table.at(d).ending) return;
    dialog_entry& de = dialogs_->table.at(d);
    if ((de.stages & stage::cdr) != 0 && cdr_) cdr::bye(*cdr_, d, de, from, &t, now);
    de.ending = true;
    if (dialogs_->timers.now() == 0) dialogs_->timers.start(now);
    dialogs_->timers.schedule(d, now + bye_wait_ms);
}

void call_core::dialog_end(uint64_t callid_hash, cdr_end why, uint64_t now) noexcept
{
    const uint32_t d = dialogs_->find(callid_hash);
    if (d == none_slot) return;
    const dialog_entry& de = dialogs_->table.at(d);
    const uint64_t at = now != 0 ? now : timers_.now();
    // Before the media goes: its figures are in the record.
    if ((de.stages & stage::cdr) != 0 && cdr_) cdr::dialog_end(*cdr_, d, why, now, timers_.now());
    if (de.peer_id != no_peer) {
        stats_->active_by_peer[de.peer_id].move(-1);
        adm_->give_peer(de.peer_id);
    }
    if (de.admitted) adm_->release_call(de.trunk);
    dialogs_->erase(d);
    media_end(callid_hash, at);
    stats_->add(proxy_counter::dialogs_ended);
    stats_->dialogs_active.set(dialogs_->table.size());
}

media_leg call_core::media_leg_of(uint32_t dialog, const endpoint& ep, const proxy_tables* t) const noexcept
{
    if (dialog != none_slot) return dialogs_->table.at(dialog).caller == ep ? media_leg::a : media_leg::b;
    return t != nullptr && t->find_peer(ep.addr, ep.port) != no_peer ? media_leg::b : media_leg::a;
}

stage_mask call_core::dialog_stages(uint32_t d) const noexcept
{
    // Without a dialog entry (the table was full) a message may still carry the call's media.
    return d != none_slot ? dialogs_->table.at(d).stages : node().mask;
}

}  // namespace sbc::sip
