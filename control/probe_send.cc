// Framing and injecting a UDP datagram from the control core (see probe_send.h). Control core only.
#include "control/probe_send.h"

#include <cstring>

#include "dataplane/stream_ring.h"

#include <rte_mbuf.h>

#include "dataplane/udp_frame.h"

namespace sbc::control {

send_result send_udp(dataplane::dataplane_runtime& rt, const dataplane::interface_info& ifc,
                     const dataplane::mac_addr& next_hop_mac, const endpoint& src, const endpoint& dst,
                     std::string_view payload, uint16_t ip_id)
{
    if (dataplane::udp_headers(src.addr) + payload.size() > dataplane::ipv4_mtu) return send_result::too_big;
    rte_mbuf* m = rte_pktmbuf_alloc(rt.control_pool);
    if (m == nullptr) return send_result::no_buffer;
    if (!dataplane::frame_udp(m, ifc, next_hop_mac.data(), src, dst, payload, ip_id)) {
        rte_pktmbuf_free(m);
        return send_result::no_buffer;
    }
    m->port = ifc.port_id;
    return dataplane::inject_frame(rt, m) ? send_result::sent : send_result::ring_full;
}

bool send_stream(dataplane::dataplane_runtime& rt, const endpoint& src, const endpoint& dst,
                 std::string_view payload)
{
    if (rt.control_out == nullptr || rt.stream_pool == nullptr) return false;
    rte_mbuf* m = rte_pktmbuf_alloc(rt.stream_pool);
    char* data = m != nullptr ? rte_pktmbuf_append(m, static_cast<uint16_t>(payload.size())) : nullptr;
    if (data == nullptr) {
        if (m != nullptr) rte_pktmbuf_free(m);
        return false;
    }
    std::memcpy(data, payload.data(), payload.size());
    dataplane::stream_send* h = dataplane::stream_send_of(m);
    *h = dataplane::stream_send{};
    h->src = src;
    h->dst = dst;
    h->len = static_cast<uint32_t>(payload.size());
    h->from_control = 1;
    if (rte_ring_sp_enqueue(rt.control_out, m) != 0) {
        rte_pktmbuf_free(m);
        return false;
    }
    return true;
}

}  // namespace sbc::control
