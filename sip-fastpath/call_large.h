// Part of the call core: SIP messages larger than the core's fixed 4 KiB buffers
// (max_out_size), up to max_udp_message (one UDP datagram). The common path keeps its fixed
// buffers: one per setup slot (4 KiB x up to millions of slots) and one per outbox message. A
// setup whose INVITE is larger takes one of a few per-worker large buffers for its life and
// gives it back when released; a message that the core writes larger than 4 KiB goes into one
// of the outbox's few large buffers, named by out_message::large, until the outbox is sent and
// cleared. Either pool empty: the message is refused (a new INVITE gets 503, RFC 3261 21.5.4:
// a temporary condition) and counted large_busy. Worker only; no heap after start.
#pragma once

#include <cstdint>
#include <memory>

#include "sip-fastpath/proxy_io.h"

namespace sbc::sip {

struct large_store {
    /// n (clamped to 1..max_large_setups) buffers of max_udp_message and the stack of free ones.
    explicit large_store(uint32_t n);
    [[nodiscard]] char* buffer(uint16_t i) noexcept { return &bufs[std::size_t{i} * max_udp_message]; }

    std::unique_ptr<char[]> bufs;  ///< uninitialised: a buffer costs memory once a large INVITE used it
    std::unique_ptr<uint16_t[]> free;
    uint32_t n_free = 0;
};

}  // namespace sbc::sip
