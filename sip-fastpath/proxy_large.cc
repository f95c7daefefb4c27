// SIP messages larger than the proxy's fixed 4 KiB buffers (max_out_size), up to
// max_udp_message (one UDP datagram). The common path keeps its fixed buffers: one per setup
// slot (buffers_, 4 KiB x up to millions of slots) and one per outbox message. A setup whose
// INVITE is larger takes one of a few per-worker large buffers for its life and gives it back
// when released; a message that the proxy writes larger than 4 KiB goes into one of the
// outbox's few large buffers, named by out_message::large, until the outbox is sent and
// cleared. Either pool empty: the message is refused (a new INVITE gets 503, RFC 3261 21.5.4:
// a temporary condition) and counted large_busy. Worker only; no heap after start.
#include <cstring>

#include "sip-fastpath/proxy.h"
#include "sip-fastpath/proxy_internal.h"
#include "sip-fastpath/sip_editor.h"

namespace sbc::sip {

std::span<char> outbox::take_large() noexcept
{
    if (large_used >= outbox_large_capacity || !large_store) return {};
    return {large_store.get() + std::size_t{large_used++} * max_udp_message, max_udp_message};
}

void proxy::init_large(uint32_t n)
{
    n = n == 0 ? 1 : n > max_large_setups ? max_large_setups : n;
    // Uninitialised: a buffer costs memory only once a large INVITE has used it.
    large_.reset(new char[std::size_t{n} * max_udp_message]);
    large_free_.reset(new uint16_t[n]);
    for (uint32_t i = 0; i < n; ++i) large_free_[i] = static_cast<uint16_t>(n - 1 - i);
    n_large_free_ = n;
}

char* proxy::store_of(uint32_t slot) noexcept
{
    const uint16_t l = setups_->at(slot).large;
    if (l != no_large) return &large_[std::size_t{l} * max_udp_message];
    return &buffers_[std::size_t{slot} * max_out_size];
}

std::size_t proxy::store_room(uint32_t slot) noexcept
{
    return setups_->at(slot).large != no_large ? max_udp_message : max_out_size;
}

bool proxy::take_large(uint32_t slot, std::size_t len) noexcept
{
    setup& s = setups_->at(slot);
    if (len <= max_out_size) return true;
    if (n_large_free_ == 0) {
        stats_->add(proxy_counter::large_busy);
        return false;
    }
    s.large = large_free_[--n_large_free_];
    return true;
}

void proxy::give_back_large(uint32_t slot) noexcept
{
    setup& s = setups_->at(slot);
    if (s.large == no_large) return;
    large_free_[n_large_free_++] = s.large;
    s.large = no_large;
}

write_result proxy::edit_out(const message& m, const edits& e, outbox& out, out_message& d) noexcept
{
    // What edits add to a message (Via, Record-Routes, a rewritten SDP) is well under 1 KiB:
    // a message that leaves that much room is written into its fixed buffer at once.
    constexpr std::size_t growth = 1024;
    if (m.raw.size() + e.body.size() + growth <= max_out_size) {
        const write_result r = edit(m, e, d.data);
        if (r.err != error::no_space) return r;
    }
    const std::span<char> big = out.take_large();
    if (big.empty()) {
        stats_->add(proxy_counter::large_busy);
        return {error::no_space, 0};
    }
    const write_result r = edit(m, e, big);
    if (r.ok() && r.len <= max_out_size) {
        std::memcpy(d.data.data(), big.data(), r.len);  // fits after all: the large buffer stays free
        --out.large_used;
    } else if (r.ok()) {
        d.large = big.data();
    } else {
        --out.large_used;
    }
    return r;
}

}  // namespace sbc::sip
