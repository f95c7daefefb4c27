// The Internet checksum (RFC 1071) over a buffer, eight bytes a step: what every IPv4/UDP
// datagram the SBC originates (SIP messages, probes) is checksummed with. DPDK 22.11's
// rte_raw_cksum adds one 16-bit word per step; on a SIP message of ~700 bytes that loop was the
// largest single cost of framing (perf over scripts/bench/cps.sh), so this one accumulates
// 32-bit halves of 64-bit loads into a 64-bit sum and folds once. The one's complement sum does
// not depend on the word size it is computed in (RFC 1071 2(B)), so the result is bit for bit
// rte_raw_cksum's (tests/unit/checksum_test.cc). Any thread; pure, inline, no heap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sbc::dataplane {

/// The one's complement sum of `len` bytes at `buf` plus `sum`, folded to 16 bits, in host
/// order as rte_raw_cksum returns it (not inverted).
[[nodiscard]] inline uint16_t raw_checksum(const void* buf, std::size_t len, uint32_t sum = 0) noexcept
{
    const auto* p = static_cast<const uint8_t*>(buf);
    uint64_t acc = sum;
    while (len >= 32) {
        uint64_t w[4];
        std::memcpy(w, p, 32);
        for (uint64_t v : w) acc += (v & 0xffffffffu) + (v >> 32);
        p += 32;
        len -= 32;
    }
    while (len >= 4) {
        uint32_t v;
        std::memcpy(&v, p, 4);
        acc += v;
        p += 4;
        len -= 4;
    }
    if (len >= 2) {
        uint16_t v;
        std::memcpy(&v, p, 2);
        acc += v;
        p += 2;
        len -= 2;
    }
    if (len != 0) acc += *p;  // the odd last byte as the low byte of a host-order word, as DPDK does
    // Fold 64 -> 32 -> 16 bits, adding the carries back in.
    acc = (acc & 0xffffffffu) + (acc >> 32);
    acc = (acc & 0xffffffffu) + (acc >> 32);
    acc = (acc & 0xffffu) + (acc >> 16);
    acc = (acc & 0xffffu) + (acc >> 16);
    return static_cast<uint16_t>(acc);
}

}  // namespace sbc::dataplane
