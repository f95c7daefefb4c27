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

namespace sbc::test {
namespace {

namespace dp = sbc::dataplane;

/// Filled in by the test once the port's MAC is known (it is the frames' destination).
struct packet_case {
    std::string name;
    bytes input;
    std::optional<dp::drop_reason> drop;   ///< verdict "dropped": the reason counted
    std::optional<bytes> output;            ///< verdict "sent": the exact frame transmitted
    std::optional<dp::event> event;         ///< verdict "event": what the control core gets
};

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
    t.push_back({"drops_ipv6_as_unsupported_ethertype", ethernet(from_peer, ethertype_ipv6, pattern(60)),
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

/// Checks every checksum of an IPv4 frame we sent, with this file's own arithmetic.
void expect_valid_checksums(const bytes& f)
{
    std::size_t l2 = 14;
    if (read16(f, 12) == ethertype_vlan) l2 = 18;
    if (read16(f, l2 - 2) != ethertype_ipv4) return;
    const auto ip = std::span(f).subspan(l2);
    const std::size_t ihl = (ip[0] & 0xf) * 4u;
    EXPECT_EQ(internet_checksum(ip.first(ihl)), 0) << "IPv4 header checksum";
    const auto l4 = ip.subspan(ihl, read16(ip, 2) - ihl);
    if (ip[9] == proto_icmp) {
        EXPECT_EQ(internet_checksum(l4), 0) << "ICMP checksum";
    }
    if (ip[9] == proto_udp) {
        EXPECT_EQ(udp_checksum(read32(ip, 12), read32(ip, 16), l4), 0) << "UDP checksum";
    }
}

void expect_event(const dp::event& got, const dp::event& want)
{
    EXPECT_EQ(static_cast<int>(got.kind), static_cast<int>(want.kind));
    EXPECT_EQ(got.worker, 0);
    EXPECT_EQ(got.iface, want.iface);
    EXPECT_EQ(got.ip, want.ip);
    if (want.kind == dp::event_kind::neighbour_seen) {
        EXPECT_EQ(got.mac, want.mac);
    }
    if (want.kind == dp::event_kind::icmp_unreachable) {
        EXPECT_EQ(got.icmp_type, want.icmp_type);
        EXPECT_EQ(got.icmp_code, want.icmp_code);
        EXPECT_EQ(got.orig_dst, want.orig_dst);
        EXPECT_EQ(got.orig_proto, want.orig_proto);
        EXPECT_EQ(got.orig_src_port, want.orig_src_port);
        EXPECT_EQ(got.orig_dst_port, want.orig_dst_port);
    }
}

class eal_packets : public ::testing::TestWithParam<std::string> {};

TEST_P(eal_packets, verdict)
{
    harness h;
    ASSERT_TRUE(h.ok()) << h.error();
    const auto all = cases(h.our_mac());
    const auto it = std::find_if(all.begin(), all.end(), [&](const packet_case& c) { return c.name == GetParam(); });
    ASSERT_NE(it, all.end());
    const packet_case& c = *it;

    ASSERT_TRUE(h.receive(c.input));
    h.poll();
    const auto v = h.counters();
    sent_frames sent = h.take_sent();
    const auto events = h.take_events();

    EXPECT_EQ(v.rx_packets, 1u);
    EXPECT_EQ(v.rx_bytes, c.input.size());
    if (c.drop) {
        EXPECT_EQ(v.drops[static_cast<std::size_t>(*c.drop)], 1u) << "drop reason " << dp::drop_reason_name(*c.drop);
        EXPECT_EQ(v.drops_total(), 1u) << "counted under one reason only";
    } else {
        for (std::size_t r = 0; r < dp::drop_reason_count; ++r)
            EXPECT_EQ(v.drops[r], 0u) << "unexpected drop " << dp::drop_reason_name(static_cast<dp::drop_reason>(r));
    }
    if (c.output) {
        ASSERT_EQ(sent.size(), 1u);
        EXPECT_EQ(v.tx_packets, 1u);
        const bytes out = linear_bytes(sent.mbufs[0]);
        EXPECT_EQ(out, *c.output);
        expect_valid_checksums(out);
    } else {
        EXPECT_EQ(sent.size(), 0u);
        EXPECT_EQ(v.tx_packets, 0u);
    }
    if (c.event) {
        ASSERT_EQ(events.size(), 1u);
        EXPECT_EQ(v.events_sent, 1u);
        expect_event(events[0], *c.event);
    } else {
        EXPECT_EQ(events.size(), 0u);
    }
    for (auto* m : sent.mbufs) rte_pktmbuf_free(m);
    sent.mbufs.clear();
    EXPECT_EQ(h.mbufs_in_use(), 0u) << "every mbuf went back to its pool";
}

std::vector<std::string> case_names()
{
    std::vector<std::string> names;
    for (const auto& c : cases(mac{})) names.push_back(c.name);
    return names;
}

INSTANTIATE_TEST_SUITE_P(cases, eal_packets, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace sbc::test
