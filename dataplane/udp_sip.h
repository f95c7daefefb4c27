// The SIP part of the UDP stages (udp.cc for IPv4, udp6.cc for IPv6), written once: datagrams
// found to be to a trunk are flood-screened (source_screen.h) before their checksum is
// verified, so that a flood costs a lookup, not a pass over its payload; what is kept goes on
// to the SIP stage. Worker only: no heap, locks, system calls or logging.
#pragma once

#include <array>
#include <cstdint>

#include "dataplane/source_screen.h"
#include "dataplane/stages.h"

namespace sbc::dataplane {

/// Screens `sip` (datagrams to trunk `trunks[i]`), then drops those whose checksum
/// `checksum_ok(m)` refuses; keeps the rest in `sip`, in order, with their trunk in `trunks`.
/// Returns how many had a bad checksum (the caller counts them with its own).
template <class ChecksumOk>
uint32_t screen_sip(worker& w, const snapshot& snap, sub_burst& sip, uint16_t* trunks, ChecksumOk&& checksum_ok) noexcept
{
    std::array<uint16_t, burst_size> screened;
    screen_sources(w, snap, sip, trunks, screened.data());
    uint32_t bad = 0;
    uint16_t n = 0;
    for (uint16_t i = 0; i < sip.n; ++i) {
        rte_mbuf* m = sip.pkts[i];
        if (!checksum_ok(m)) {
            rte_pktmbuf_free(m);
            ++bad;
            continue;
        }
        trunks[n] = screened[i];
        sip.pkts[n] = m;
        sip.iface[n] = sip.iface[i];
        ++n;
    }
    sip.n = n;
    return bad;
}

}  // namespace sbc::dataplane
