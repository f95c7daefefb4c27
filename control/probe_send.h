// Sending one UDP datagram that the control core originates (an OPTIONS probe) out of a
// dataplane port: framed by the dataplane's one UDP framer (dataplane/udp_frame.h) in a buffer
// of the control pool, and handed to a worker's inject ring, so that it leaves by the same
// port, source address and port as calls. Control core only; never touches a worker's mbuf.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/address.h"
#include "dataplane/neighbour.h"
#include "dataplane/runtime.h"
#include "dataplane/snapshot.h"

namespace sbc::control {

enum class send_result : uint8_t { sent, no_buffer, too_big, ring_full };

/// Frames `payload` from `src` (an address of `ifc`) to `dst` via `next_hop_mac`.
send_result send_udp(dataplane::dataplane_runtime& rt, const dataplane::interface_info& ifc,
                     const dataplane::mac_addr& next_hop_mac, const endpoint& src, const endpoint& dst,
                     std::string_view payload, uint16_t ip_id);

/// Hands `payload` to the stream thread for the TCP/TLS peer at `dst` (its persistent
/// connection). False when there is no stream thread, no buffer, or its ring is full.
bool send_stream(dataplane::dataplane_runtime& rt, const endpoint& src, const endpoint& dst,
                 std::string_view payload);

}  // namespace sbc::control
