// Media in the dataplane: bringing media anchoring up on a started dataplane (the shared flow
// table, how each media address leaves, each worker's sessions hooked into its SIP proxy),
// the RTP stage the UDP stage hands media datagrams to, and the per-iteration media work.
// start_media: control core, after start_dataplane and before launch_workers. rtp_stage and
// rtp_poll: worker only (no heap, locks, system calls or logging).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dataplane/runtime.h"
#include "dataplane/snapshot.h"
#include "rtp/media.h"

namespace sbc::dataplane {

/// How media leaves through each of `c`'s addresses (none when `c` is not enabled): the port,
/// VLAN, MAC, subnet and dscp_rtp of the interface that has the address, and whether that
/// port offloads checksums. False with a message when no interface has an address. Any thread
/// (control/snapshot_build.cc puts the result in every snapshot it builds).
bool media_egress_of(const rtp::media_config& c, const std::vector<interface_info>& interfaces,
                     const std::vector<port_info>& ports, rtp::media_egress_table& out, std::string& error);

/// Sets up media anchoring for `c` (enabled): the shared flow table, the relay's context and
/// each worker's sessions. How media leaves each address is not here but in every snapshot
/// (media_egress_of, which build_snapshot calls and which refuses an address no interface has).
/// False with a message for an address that is not IPv4.
bool start_media(dataplane_runtime& rt, const rtp::media_config& c, std::string& error);

/// Relays a sub-burst of validated UDP datagrams to media ports, out through the egress of
/// `snap` (the burst's); addr[i] is the media address index of packet i's destination.
/// Consumes every mbuf.
void rtp_stage(worker& w, const snapshot& snap, sub_burst& b, const uint8_t* addr) noexcept;

/// Per-iteration media work: quarantined ports whose time is up go back to the pool.
uint32_t rtp_poll(worker& w, uint64_t now_ms) noexcept;

}  // namespace sbc::dataplane
