// Messages above max_out_size (call_large.h). Part of the call core. Worker only; no heap
// after start.
#include "sip-fastpath/call_large.h"

#include <cstring>

#include "sip-fastpath/call_core.h"

namespace sbc::sip {

std::span<char> outbox::take_large() noexcept
{
    if (large_used >= outbox_large_capacity || !large_store) return {};
    return {large_store.get() + std::size_t{large_used++} * max_udp_message, max_udp_message};
}

large_store::large_store(uint32_t n)
{
    n = n == 0 ? 1 : n > max_large_setups ? max_large_setups : n;
    bufs.reset(new char[std::size_t{n} * max_udp_message]);
    free.reset(new uint16_t[n]);
    for (uint32_t i = 0; i < n; ++i) free[i] = static_cast<uint16_t>(n - 1 - i);
    n_free = n;
}

void call_core::set_large_setups(uint32_t n)
{
    large_ = std::make_unique<large_store>(n);
}

char* call_core::store_of(uint32_t slot) noexcept
{
    const uint16_t l = setups_->at(slot).large;
    if (l != no_large) return large_->buffer(l);
    return &buffers_[std::size_t{slot} * max_out_size];
}

std::size_t call_core::store_room(uint32_t slot) noexcept
{
    return setups_->at(slot).large != no_large ? max_udp_message : max_out_size;
}

bool call_core::large_free() const noexcept
{
    return large_->n_free != 0;
}

bool call_core::take_large(uint32_t slot) noexcept
{
    call_setup& s = setups_->at(slot);
    if (s.large != no_large) return true;
    if (large_->n_free == 0) {
        stats_->add(proxy_counter::large_busy);
        return false;
    }
    s.large = large_->free[--large_->n_free];
    return true;
}

void call_core::give_back_large(uint32_t slot) noexcept
{
    call_setup& s = setups_->at(slot);
    if (s.large == no_large) return;
    large_->free[large_->n_free++] = s.large;
    s.large = no_large;
}

write_result call_core::edit_out(const message& m, const edits& e, outbox& out, out_message& d) noexcept
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
