// Framing and injecting a UDP datagram from the control core (see probe_send.h). Control core only.
#include "control/probe_send.h"

#include <rte_mbuf.h>

#include "dataplane/udp_frame.h"

namespace sbc::control {

send_result send_udp(dataplane::dataplane_runtime& rt, const dataplane::interface_info& ifc,
                     const dataplane::mac_addr& next_hop_mac, const endpoint& src, const endpoint& dst,
                     std::string_view payload, uint16_t ip_id)
{
    if (dataplane::udp4_headers + payload.size() > dataplane::ipv4_mtu) return send_result::too_big;
    rte_mbuf* m = rte_pktmbuf_alloc(rt.control_pool);
    if (m == nullptr) return send_result::no_buffer;
    if (!dataplane::frame_udp4(m, ifc, next_hop_mac.data(), src, dst, payload, ip_id)) {
        rte_pktmbuf_free(m);
        return send_result::no_buffer;
    }
    m->port = ifc.port_id;
    return dataplane::inject_frame(rt, m) ? send_result::sent : send_result::ring_full;
}

}  // namespace sbc::control
