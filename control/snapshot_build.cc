// Snapshot build and RCU publication (see snapshot_build.h). Control core only.
#include "control/snapshot_build.h"

#include <cstring>

#include "dataplane/nd.h"
#include "dataplane/rtp_stage.h"

namespace sbc::control {

std::unique_ptr<dataplane::snapshot> build_snapshot(const config& cfg, const std::vector<dataplane::port_info>& ports,
                                                    uint64_t generation, std::string& error)
{
    auto s = std::make_unique<dataplane::snapshot>();
    s->generation = generation;
    s->ipv6_max_extension_headers = static_cast<uint8_t>(cfg.ipv6.max_extension_headers);
    s->icmp6_error_rate = cfg.ipv6.icmp_error_rate;
    s->icmp6_error_burst = cfg.ipv6.icmp_error_burst;
    for (const auto& ic : cfg.interfaces) {
        const dataplane::port_info* port = nullptr;
        for (const auto& p : ports)
            if (p.device == ic.device) port = &p;
        if (port == nullptr) {
            error = cfg.path + ":" + std::to_string(ic.line) + ": interface " + ic.name + ": device " + ic.device +
                    " was not started";
            return nullptr;
        }
        dataplane::interface_info ii;
        ii.name = ic.name;
        ii.port_id = port->port_id;
        ii.vlan = ic.vlan;
        ii.address = ic.address;  // as configured, host bits kept
        ii.gateway = ic.gateway.value_or(ip_address{});
        if (ic.address6) ii.address6 = *ic.address6;
        ii.gateway6 = ic.gateway6.value_or(ip_address{});
        ii.tos_sip = tos_of_dscp(ic.dscp_sip);
        ii.tos_rtp = tos_of_dscp(ic.dscp_rtp);
        std::memcpy(ii.mac.data(), port->mac.addr_bytes, 6);
        if (ii.has_v6()) ii.link_local6 = dataplane::link_local_of(ii.mac);
        s->interfaces.push_back(std::move(ii));
    }
    if (const std::size_t lost = s->index_interfaces(); lost != 0) {
        // The loader refuses such files; this is the last line of defence, never a silent drop.
        error = cfg.path + ": " + std::to_string(lost) + " interface(s) do not fit the dataplane's tables (at most " +
                std::to_string(max_interfaces) + " interfaces, " + std::to_string(max_interfaces_per_port) +
                " per port, port ids below " + std::to_string(max_ports) + ")";
        return nullptr;
    }
    if (std::string e; !dataplane::media_egress_of(cfg.media, s->interfaces, ports, s->media_egress, e)) {
        error = cfg.path + ":" + std::to_string(cfg.media.line) + ": media: " + e;
        return nullptr;
    }
    return s;
}

namespace {
void free_snapshot(rcu_head* head)
{
    // rcu is the first member of snapshot, so the head's address is the snapshot's.
    delete reinterpret_cast<dataplane::snapshot*>(head);
}
}  // namespace

void publish_snapshot(dataplane::snapshot_slot& slot, std::unique_ptr<dataplane::snapshot> fresh)
{
    dataplane::snapshot* old = dataplane::rcu::exchange(slot.current, fresh.release());
    if (old != nullptr) dataplane::rcu::defer(&old->rcu, free_snapshot);
}

void retire_snapshot(dataplane::snapshot_slot& slot)
{
    dataplane::snapshot* old = dataplane::rcu::exchange(slot.current, static_cast<dataplane::snapshot*>(nullptr));
    if (old != nullptr) dataplane::rcu::defer(&old->rcu, free_snapshot);
    dataplane::rcu::barrier();
}

}  // namespace sbc::control
