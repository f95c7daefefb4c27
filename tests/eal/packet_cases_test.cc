// Table-driven packet cases through the production burst processing (process_burst on the
// test thread over a net_ring port): each case is one received frame and the verdict a user
// would see: the frame sent back (compared byte for byte, checksums verified independently),
// the drop reason counted, or the event posted to the control core.
#include <algorithm>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "dataplane/counters.h"
#include "dataplane/events.h"
#include "tests/eal/frame_builder.h"
#include "tests/eal/harness.h"
#include "tests/eal/packet_case.h"

namespace sbc::test {
namespace {

namespace dp = sbc::dataplane;

dp::event neighbour_seen(uint16_t iface, uint32_t ip, const mac& m)
{
    dp::event e{};
    e.kind = dp::event_kind::neighbour_seen;
    e.iface = iface;
    e.ip = ip_address::v4(ip);
    e.mac = m;
    return e;
}

const bytes echo_data = pattern(56);

/// An echo request from the peer to `dst` and the reply we must send for it.
std::pair<bytes, bytes> echo_exchange(const mac& ours, uint16_t vlan, uint32_t peer, uint32_t dst,
                                      const bytes& data, bool pad = false)
{
    ipv4_fields req{peer, dst, proto_icmp, 57, 0x10, 0x4242, ip_flag_df};
    bytes in = ethernet({ours, peer_mac, vlan}, ethertype_ipv4,
                        ipv4_packet(req, icmp_echo(8, 0x77, 3, data)));
    if (pad) in = pad_to_minimum(in);
    ipv4_fields rep{dst, peer, proto_icmp, 64, 0x10, 0x4242, ip_flag_df};
    bytes out = ethernet({peer_mac, ours, vlan}, ethertype_ipv4, ipv4_packet(rep, icmp_echo(0, 0x77, 3, data)));
    return {in, out};
}

std::vector<packet_case> cases(const mac& ours)
{
    std::vector<packet_case> t;
    const l2_fields from_peer{ours, peer_mac, 0};
    const mac zero{};
    const mac broadcast{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

    // ARP
    {
        packet_case c{"answers_arp_request_for_its_address", {}, {}, {}, {}};
        c.input = pad_to_minimum(ethernet({broadcast, peer_mac, 0}, ethertype_arp, arp(1, peer_mac, peer_ip, zero, our_ip)));
        // Answered in place: the reply keeps the request's frame length (padding included).
        c.output = pad_to_minimum(ethernet({peer_mac, ours, 0}, ethertype_arp, arp(2, ours, our_ip, peer_mac, peer_ip)));
        c.event = neighbour_seen(untagged_iface, peer_ip, peer_mac);
        t.push_back(c);
    }
    {
        packet_case c{"answers_arp_request_on_its_vlan_with_the_tag", {}, {}, {}, {}};
        c.input = ethernet({broadcast, peer_mac, our_vlan}, ethertype_arp, arp(1, peer_mac, vlan_peer_ip, zero, our_vlan_ip));
        c.output = ethernet({peer_mac, ours, our_vlan}, ethertype_arp, arp(2, ours, our_vlan_ip, peer_mac, vlan_peer_ip));
        c.event = neighbour_seen(vlan_iface, vlan_peer_ip, peer_mac);
        t.push_back(c);
    }
    t.push_back({"drops_arp_request_for_another_address",
                 ethernet({broadcast, peer_mac, 0}, ethertype_arp, arp(1, peer_mac, peer_ip, zero, ipv4(198, 18, 0, 99))),
                 dp::drop_reason::arp_not_for_us, {}, {}});
    {
        const mac gw_mac{0x02, 0, 0, 0, 0, 0xfe};
        packet_case c{"reports_arp_reply_as_neighbour_seen", {}, {}, {}, {}};
        c.input = ethernet({ours, gw_mac, 0}, ethertype_arp, arp(2, gw_mac, our_gateway, ours, our_ip));
        c.event = neighbour_seen(untagged_iface, our_gateway, gw_mac);
        t.push_back(c);
    }
    t.push_back({"drops_arp_that_is_not_ethernet_ipv4",
                 ethernet(from_peer, ethertype_arp,
                          [&] {
                              bytes a = arp(1, peer_mac, peer_ip, zero, our_ip);
                              a[1] = 0x06;  // hardware type 6 (IEEE 802)
                              return a;
                          }()),
                 dp::drop_reason::arp_malformed, {}, {}});

    // ICMP echo
    {
        auto [in, out] = echo_exchange(ours, 0, peer_ip, our_ip, echo_data);
        t.push_back({"answers_icmp_echo_with_correct_checksums", in, {}, out, {}});
    }
    {
        auto [in, out] = echo_exchange(ours, our_vlan, vlan_peer_ip, our_vlan_ip, echo_data);
        t.push_back({"answers_echo_on_its_vlan_with_the_same_tag", in, {}, out, {}});
    }
    {
        auto [in, out] = echo_exchange(ours, 0, peer_ip, our_ip, bytes{}, true);
        t.push_back({"answers_padded_echo_without_echoing_the_padding", in, {}, out, {}});
    }
    {
        auto [in, out] = echo_exchange(ours, our_vlan, vlan_peer_ip, our_ip, echo_data);
        t.push_back({"drops_echo_on_a_vlan_for_the_untagged_address", in, dp::drop_reason::ipv4_not_for_us, {}, {}});
    }
    {
        bytes icmp = icmp_echo(8, 1, 1, echo_data);
        icmp[10] ^= 0xff;  // payload changed after the checksum was computed
        t.push_back({"drops_icmp_with_a_bad_checksum",
                     ethernet(from_peer, ethertype_ipv4, ipv4_packet({peer_ip, our_ip, proto_icmp}, icmp)),
                     dp::drop_reason::icmp_bad_checksum, {}, {}});
    }
    t.push_back({"drops_icmp_types_it_does_not_handle",
                 ethernet(from_peer, ethertype_ipv4, ipv4_packet({peer_ip, our_ip, proto_icmp}, icmp_echo(13, 1, 1, {}))),
                 dp::drop_reason::icmp_unhandled, {}, {}});
    {
        // A UDP datagram we sent to the peer, quoted back by its port unreachable.
        const bytes sent = ipv4_packet({our_ip, peer_ip, proto_udp},
                                       udp_datagram(our_ip, peer_ip, 5060, 5080, pattern(40)));
        packet_case c{"reports_icmp_port_unreachable_as_an_event", {}, {}, {}, {}};
        c.input = ethernet(from_peer, ethertype_ipv4,
                           ipv4_packet({peer_ip, our_ip, proto_icmp}, icmp_unreachable(3, std::span(sent).first(28))));
        dp::event e{};
        e.kind = dp::event_kind::icmp_unreachable;
        e.iface = untagged_iface;
        e.ip = ip_address::v4(peer_ip);
        e.icmp_type = 3;
        e.icmp_code = 3;
        e.orig_dst = ip_address::v4(peer_ip);
        e.orig_proto = proto_udp;
        e.orig_src_port = 5060;
        e.orig_dst_port = 5080;
        c.event = e;
        t.push_back(c);
    }

    // IPv4 validation
    {
        bytes ip = ipv4_packet({peer_ip, our_ip, proto_icmp}, icmp_echo(8, 1, 1, echo_data));
        ip[10] ^= 0x01;
        t.push_back({"drops_ipv4_with_a_bad_header_checksum", ethernet(from_peer, ethertype_ipv4, ip),
                     dp::drop_reason::ipv4_bad_checksum, {}, {}});
    }
    t.push_back({"drops_frame_shorter_than_ethernet", bytes(ours.begin(), ours.end()),
                 dp::drop_reason::eth_truncated, {}, {}});
    {
        bytes f = ethernet({ours, peer_mac, our_vlan}, ethertype_ipv4, {});
        f.resize(16);  // the 802.1Q TPID, then the frame ends
        t.push_back({"drops_frame_cut_inside_its_vlan_tag", f, dp::drop_reason::eth_truncated, {}, {}});
    }
    {
        bytes ip = ipv4_packet({peer_ip, our_ip, proto_icmp}, icmp_echo(8, 1, 1, echo_data));
        ip.resize(12);
        t.push_back({"drops_frame_cut_inside_the_ipv4_header", ethernet(from_peer, ethertype_ipv4, ip),
                     dp::drop_reason::ipv4_truncated, {}, {}});
    }
    {
        bytes ip = ipv4_packet({peer_ip, our_ip, proto_icmp}, icmp_echo(8, 1, 1, echo_data));
        ip.resize(ip.size() - 10);  // total_length now claims 10 bytes the frame lacks
        t.push_back({"drops_ipv4_whose_total_length_exceeds_the_frame", ethernet(from_peer, ethertype_ipv4, ip),
                     dp::drop_reason::ipv4_bad_total_length, {}, {}});
    }
    {
        bytes ip = ipv4_packet({peer_ip, our_ip, proto_icmp}, icmp_echo(8, 1, 1, echo_data));
        ip[0] = 0x65;
        write16(ip, 10, 0);
        write16(ip, 10, internet_checksum(std::span(ip).first(20)));
        t.push_back({"drops_ip_version_other_than_4", ethernet(from_peer, ethertype_ipv4, ip),
                     dp::drop_reason::ipv4_bad_version, {}, {}});
    }
    t.push_back({"drops_ipv4_for_another_address",
                 ethernet(from_peer, ethertype_ipv4,
                          ipv4_packet({peer_ip, ipv4(198, 18, 0, 2), proto_icmp}, icmp_echo(8, 1, 1, echo_data))),
                 dp::drop_reason::ipv4_not_for_us, {}, {}});
    t.push_back({"drops_ip_protocols_other_than_icmp_udp_and_tcp",
                 ethernet(from_peer, ethertype_ipv4, ipv4_packet({peer_ip, our_ip, 47}, pattern(20))),
                 dp::drop_reason::ipv4_protocol_unsupported, {}, {}});
    t.push_back({"drops_tcp_while_no_trunk_or_peer_uses_a_stream",
                 ethernet(from_peer, ethertype_ipv4, ipv4_packet({peer_ip, our_ip, 6}, pattern(20))),
                 dp::drop_reason::tcp_no_streams, {}, {}});

    // Ethernet and VLAN
    t.push_back({"drops_frame_on_an_unknown_vlan",
                 ethernet({ours, peer_mac, 200}, ethertype_ipv4,
                          ipv4_packet({peer_ip, our_ip, proto_icmp}, icmp_echo(8, 1, 1, echo_data))),
                 dp::drop_reason::vlan_unknown, {}, {}});
    t.push_back({"drops_lldp_as_unsupported_ethertype", ethernet(from_peer, 0x88cc, pattern(60)),
                 dp::drop_reason::ethertype_unsupported, {}, {}});

    // UDP
    {
        bytes udp = udp_datagram(peer_ip, our_ip, 5060, 5060, pattern(100));
        udp[20] ^= 0x5a;
        t.push_back({"drops_udp_with_a_bad_checksum",
                     ethernet(from_peer, ethertype_ipv4, ipv4_packet({peer_ip, our_ip, proto_udp}, udp)),
                     dp::drop_reason::udp_bad_checksum, {}, {}});
    }
    t.push_back({"counts_good_udp_as_port_closed",
                 ethernet(from_peer, ethertype_ipv4,
                          ipv4_packet({peer_ip, our_ip, proto_udp}, udp_datagram(peer_ip, our_ip, 5060, 5060, pattern(100)))),
                 dp::drop_reason::udp_port_closed, {}, {}});
    {
        bytes udp = udp_datagram(peer_ip, our_ip, 5060, 5060, pattern(100));
        write16(udp, 4, 200);  // UDP length beyond the IPv4 payload
        t.push_back({"drops_udp_longer_than_its_ipv4_payload",
                     ethernet(from_peer, ethertype_ipv4, ipv4_packet({peer_ip, our_ip, proto_udp}, udp)),
                     dp::drop_reason::udp_truncated, {}, {}});
    }
    return t;
}

class eal_packets : public ::testing::TestWithParam<std::string> {};

TEST_P(eal_packets, verdict) { run_named_case(cases, GetParam()); }

INSTANTIATE_TEST_SUITE_P(cases, eal_packets, ::testing::ValuesIn(case_names(cases)),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace sbc::test
