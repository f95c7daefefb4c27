// Next hops without a published MAC, worker side (see neighbour_wait.h). Worker only: no heap,
// locks, system calls or logging.
#include "dataplane/neighbour_wait.h"

#include <cstring>

#include <rte_ether.h>

#include "dataplane/events.h"
#include "dataplane/sip_stage.h"

namespace sbc::dataplane {

const uint8_t* hop_mac(worker& w, uint32_t hop, uint16_t iface, uint64_t now_ms, mac_addr& buf) noexcept
{
    if (const auto known = w.shared->neighbours.lookup(ip_address::v4(hop))) {
        buf = *known;
        return buf.data();
    }
    if (const mac_addr* seen = w.learned.find(hop, iface, now_ms)) return seen->data();
    return nullptr;
}

const uint8_t* hop_mac(worker& w, const ip_address& hop, uint16_t iface, uint64_t now_ms, mac_addr& buf) noexcept
{
    if (!hop.is_v6()) return hop_mac(w, hop.v4_host(), iface, now_ms, buf);
    if (const auto known = w.shared->neighbours.lookup(hop)) {
        buf = *known;
        return buf.data();
    }
    if (const mac_addr* seen = w.learned6.find(hop.v6_bytes(), iface, now_ms)) return seen->data();
    return nullptr;
}

bool hold_for_hop(worker& w, rte_mbuf* m, uint16_t iface, uint16_t port, const ip_address& hop, held_kind kind,
                  uint64_t now_ms) noexcept
{
    const hold_result r = w.held.hold(hop, iface, port, m, kind, now_ms);
    if (r == hold_result::full) {
        rte_pktmbuf_free(m);
        w.counters.drop(drop_reason::neighbour_hold_full);
        return false;
    }
    w.counters.neighbour_held.add(1);
    if (r == hold_result::new_hop) {
        event e{};
        e.kind = event_kind::neighbour_needed;
        e.worker = static_cast<uint8_t>(w.id);
        e.iface = iface;
        e.ip = hop;
        post_event(w, e);
    }
    return true;
}

uint32_t release_held(worker& w, const snapshot& snap, uint64_t now_ms) noexcept
{
    if (w.held.held() == 0) return 0;
    uint32_t released = 0, expired = 0, media_expired = 0;
    mac_addr buf;
    // Half the no-response time (an INVITE stuck here is answered 503 before its peer could be
    // blamed for silence), at most max_hold_ms.
    uint64_t hold_ms = decltype(w.held)::max_hold_ms;
    if (snap.proxy && snap.proxy->retry.no_response_ms / 2 < hold_ms) hold_ms = snap.proxy->retry.no_response_ms / 2;
    const uint32_t done = w.held.poll(
        now_ms, hold_ms, [&](const ip_address& hop, uint16_t iface) { return hop_mac(w, hop, iface, now_ms, buf); },
        [&](rte_mbuf* m, uint16_t port, const uint8_t* mac) {
            std::memcpy(rte_pktmbuf_mtod(m, rte_ether_hdr*)->dst_addr.addr_bytes, mac, RTE_ETHER_ADDR_LEN);
            tx_enqueue(w, port, m);
            ++released;
        },
        [&](rte_mbuf* m, held_kind kind) {
            if (kind == held_kind::sip)
                sip_unsent(w, snap, m, now_ms);
            else
                ++media_expired;
            rte_pktmbuf_free(m);
            ++expired;
        });
    if (released != 0) w.counters.neighbour_released.add(released);
    // Media is counted with the relay's drops, SIP with the worker's.
    if (expired != media_expired) w.counters.drop(drop_reason::neighbour_unknown, expired - media_expired);
    if (media_expired != 0)
        w.media_counters.drops[static_cast<std::size_t>(rtp::relay_drop::no_neighbour)].add(media_expired);
    return done;
}

}  // namespace sbc::dataplane
