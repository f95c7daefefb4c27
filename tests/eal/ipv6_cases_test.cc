// Table-driven IPv6 packet cases through the production burst processing (packet_case.h):
// Neighbor Discovery answered and learned from (RFC 4861), ICMPv6 echo, the extension-header
// walk and its limits, the checksum over the upper-layer length, and what is dropped and
// counted. The untagged interface runs 2001:2:0:1::1/64 and its MAC's link-local address; the
// VLAN interface runs IPv4 only (tests/eal/harness.h).
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "control/config.h"
#include "control/snapshot_build.h"
#include "dataplane/frames.h"
#include "dataplane/nd.h"
#include "tests/eal/frame_builder.h"
#include "tests/eal/harness.h"
#include "tests/eal/packet_case.h"

namespace sbc::test {
namespace {

namespace dp = sbc::dataplane;

constexpr uint8_t ns_type = 135, na_type = 136, echo_req = 128, echo_rep = 129;
constexpr uint8_t opt_sll = 1, opt_tll = 2;
constexpr uint8_t flag_s = 0x40, flag_o = 0x20;

dp::event seen6(const ip6& ip, const mac& m)
{
    dp::event e{};
    e.kind = dp::event_kind::neighbour_seen;
    e.iface = untagged_iface;
    e.ip = ip_address::v6(ip);
    e.mac = m;
    return e;
}

/// An echo's body after type, code and checksum: identifier 0x1234, sequence `seq`, `n` bytes of data.
bytes echo_body_of(uint8_t seq, std::size_t n)
{
    bytes body{0x12, 0x34, 0, seq};
    const bytes data = pattern(n);
    body.insert(body.end(), data.begin(), data.end());
    return body;
}

/// The ICMPv6 error (type, code, 4-byte field `word`) we send about `quoted`, the datagram
/// the peer sent us (as much of it as we quote), in its frame back to the peer.
bytes error_reply(const mac& ours, const ip6& me, const ip6& peer, uint8_t type, uint8_t code, uint32_t word,
                  const bytes& quoted)
{
    bytes body{static_cast<uint8_t>(word >> 24), static_cast<uint8_t>(word >> 16), static_cast<uint8_t>(word >> 8),
               static_cast<uint8_t>(word)};
    body.insert(body.end(), quoted.begin(), quoted.end());
    return ethernet({peer_mac, ours, 0}, ethertype_ipv6, ipv6_packet({me, peer, proto_icmp6, 64}, icmp6_message(me, peer, type, code, body)));
}

/// The frame of an IPv6 datagram `payload` (extension headers included) from the peer's MAC.
bytes from_peer6(const mac& ours, const ipv6_fields& f, const bytes& payload, uint16_t vlan = 0)
{
    return ethernet({ours, peer_mac, vlan}, ethertype_ipv6, ipv6_packet(f, payload));
}

/// What we answer a solicitation for `target` with: a solicited NA from `target` to `to`.
bytes advert_reply(const mac& ours, const mac& eth_to, const ip6& target, const ip6& to, uint8_t flags)
{
    const bytes na = icmp6_message(target, to, na_type, 0, nd_body(flags, target, opt_tll, ours));
    return ethernet({eth_to, ours, 0}, ethertype_ipv6, ipv6_packet({target, to, proto_icmp6, 255}, na));
}

std::vector<packet_case> cases(const mac& ours)
{
    std::vector<packet_case> t;
    const ip6 me = ipv6(our_ip6_text), peer = ipv6(peer_ip6_text);
    const ip6 me_ll = dp::link_local_of(ours).v6_bytes();
    const ip6 peer_ll = ipv6("fe80::10");
    const ip6 my_group = dp::solicited_node(me.data());
    const ip6 all_nodes = dp::all_nodes;
    const auto ns = [&](const ip6& src, const ip6& dst, const ip6& target, uint8_t opt) {
        return icmp6_message(src, dst, ns_type, 0, nd_body(0, target, opt, peer_mac));
    };

    // Neighbor Solicitation
    {
        packet_case c{"answers_a_solicitation_for_its_address_and_learns_the_sender", {}, {}, {}, {}};
        c.input = from_peer6(ours, {peer, me, proto_icmp6, 255}, ns(peer, me, me, opt_sll));
        c.output = advert_reply(ours, peer_mac, me, peer, flag_s | flag_o);
        c.event = seen6(peer, peer_mac);
        t.push_back(c);
    }
    {
        packet_case c{"answers_a_solicitation_sent_to_its_solicited_node_group", {}, {}, {}, {}};
        c.input = ethernet({dp::multicast_mac6(my_group.data()), peer_mac, 0}, ethertype_ipv6,
                           ipv6_packet({peer, my_group, proto_icmp6, 255}, ns(peer, my_group, me, opt_sll)));
        c.output = advert_reply(ours, peer_mac, me, peer, flag_s | flag_o);
        c.event = seen6(peer, peer_mac);
        t.push_back(c);
    }
    {
        packet_case c{"answers_a_solicitation_for_its_link_local_address", {}, {}, {}, {}};
        const ip6 group = dp::solicited_node(me_ll.data());
        c.input = from_peer6(ours, {peer_ll, group, proto_icmp6, 255}, ns(peer_ll, group, me_ll, opt_sll));
        c.output = advert_reply(ours, peer_mac, me_ll, peer_ll, flag_s | flag_o);
        c.event = seen6(peer_ll, peer_mac);
        t.push_back(c);
    }
    {
        packet_case c{"defends_its_address_against_duplicate_address_detection", {}, {}, {}, {}};
        const ip6 unspecified{};
        c.input = from_peer6(ours, {unspecified, my_group, proto_icmp6, 255}, ns(unspecified, my_group, me, 0));
        // To every node, not solicited (RFC 4861 7.2.4), from the multicast MAC of all-nodes.
        c.output = advert_reply(ours, dp::multicast_mac6(all_nodes.data()), me, all_nodes, flag_o);
        t.push_back(c);
    }
    t.push_back({"drops_a_solicitation_with_hop_limit_254",
                 from_peer6(ours, {peer, me, proto_icmp6, 254}, ns(peer, me, me, opt_sll)), dp::drop_reason::nd_invalid,
                 {}, {}});
    t.push_back({"drops_a_solicitation_for_another_address",
                 from_peer6(ours, {peer, me, proto_icmp6, 255}, ns(peer, me, ipv6("2001:2:0:1::99"), opt_sll)),
                 dp::drop_reason::nd_not_for_us, {}, {}});
    {
        bytes bad = nd_body(0, me, opt_sll, peer_mac);
        bad[21] = 0;  // an option of length 0
        t.push_back({"drops_a_solicitation_with_a_zero_length_option",
                     from_peer6(ours, {peer, me, proto_icmp6, 255}, icmp6_message(peer, me, ns_type, 0, bad)),
                     dp::drop_reason::nd_invalid, {}, {}});
    }
    t.push_back({"drops_a_solicitation_from_the_unspecified_address_with_a_source_mac",
                 from_peer6(ours, {ip6{}, my_group, proto_icmp6, 255}, ns(ip6{}, my_group, me, opt_sll)),
                 dp::drop_reason::nd_invalid, {}, {}});

    // Neighbor Advertisement
    {
        packet_case c{"learns_the_target_of_an_advertisement", {}, {}, {}, {}};
        c.input = from_peer6(ours, {peer, me, proto_icmp6, 255},
                             icmp6_message(peer, me, na_type, 0, nd_body(flag_s | flag_o, peer, opt_tll, peer_mac)));
        c.event = seen6(peer, peer_mac);
        t.push_back(c);
    }
    t.push_back({"drops_a_solicited_advertisement_sent_to_all_nodes",
                 from_peer6(ours, {peer, all_nodes, proto_icmp6, 255},
                            icmp6_message(peer, all_nodes, na_type, 0, nd_body(flag_s, peer, opt_tll, peer_mac))),
                 dp::drop_reason::nd_invalid, {}, {}});
    t.push_back({"drops_an_advertisement_with_hop_limit_64",
                 from_peer6(ours, {peer, me, proto_icmp6, 64},
                            icmp6_message(peer, me, na_type, 0, nd_body(flag_s, peer, opt_tll, peer_mac))),
                 dp::drop_reason::nd_invalid, {}, {}});

    // Echo
    const bytes echo_body = echo_body_of(7, 56);
    const bytes reply = ethernet({peer_mac, ours, 0}, ethertype_ipv6,
                                 ipv6_packet({me, peer, proto_icmp6, 64}, icmp6_message(me, peer, echo_rep, 0, echo_body)));
    const bytes request = icmp6_message(peer, me, echo_req, 0, echo_body);
    t.push_back({"answers_an_echo_request", from_peer6(ours, {peer, me}, request), {}, reply, {}});
    {
        bytes padded = from_peer6(ours, {peer, me}, request);
        padded.resize(padded.size() + 8, 0);  // bytes beyond the payload length
        t.push_back({"answers_an_echo_request_without_the_frames_trailing_bytes", padded, {}, reply, {}});
    }
    {
        // Hop-by-hop, then destination options, then the echo: the checksum covers the echo
        // only (its upper-layer length), and the reply carries no extension headers.
        const bytes in = from_peer6(ours, {peer, me, 0}, ipv6_extension(60, 8, ipv6_extension(proto_icmp6, 16, request)));
        t.push_back({"answers_an_echo_request_behind_extension_headers", in, {}, reply, {}});
    }
    t.push_back({"answers_an_echo_request_to_all_nodes_from_its_global_address",
                 ethernet({dp::multicast_mac6(all_nodes.data()), peer_mac, 0}, ethertype_ipv6,
                          ipv6_packet({peer, all_nodes}, icmp6_message(peer, all_nodes, echo_req, 0, echo_body))),
                 {}, reply, {}});
    {
        bytes bad = request;
        bad[10] ^= 0x40;
        t.push_back({"drops_icmp6_with_a_bad_checksum", from_peer6(ours, {peer, me}, bad), dp::drop_reason::icmp6_bad_checksum,
                     {}, {}});
    }
    {
        // A checksum computed over the payload length (extension headers included) is wrong.
        bytes wrong = request;
        uint32_t acc = ones_sum(peer);
        acc = ones_sum(me, acc);
        wrong[2] = wrong[3] = 0;
        acc += static_cast<uint32_t>(wrong.size() + 8) + proto_icmp6;
        write16(wrong, 2, fold_checksum(ones_sum(wrong, acc)));
        t.push_back({"drops_icmp6_whose_checksum_counts_the_extension_headers",
                     from_peer6(ours, {peer, me, 60}, ipv6_extension(proto_icmp6, 8, wrong)),
                     dp::drop_reason::icmp6_bad_checksum, {}, {}});
    }

    // Extension headers
    {
        bytes chain = request;
        uint8_t next = proto_icmp6;
        for (int i = 0; i < 9; ++i) {
            chain = ipv6_extension(next, 8, chain);
            next = 60;
        }
        t.push_back({"drops_a_chain_of_nine_extension_headers_over_the_limit_of_eight",
                     from_peer6(ours, {peer, me, 60}, chain), dp::drop_reason::ipv6_extension_chain_too_long, {}, {}});
    }
    {
        bytes chain = request;
        uint8_t next = proto_icmp6;
        for (int i = 0; i < 8; ++i) {
            chain = ipv6_extension(next, 8, chain);
            next = 60;
        }
        t.push_back({"answers_through_a_chain_of_eight_extension_headers", from_peer6(ours, {peer, me, 60}, chain), {},
                     reply, {}});
    }
    t.push_back({"drops_a_hop_by_hop_header_that_is_not_first",
                 from_peer6(ours, {peer, me, 60}, ipv6_extension(0, 8, ipv6_extension(proto_icmp6, 8, request))),
                 dp::drop_reason::ipv6_bad_extension, {}, {}});
    {
        // Not a router: the routing type is one it cannot follow (RFC 8200 4.4), pointed at.
        const bytes dgram = ipv6_packet({peer, me, 43}, ipv6_extension(proto_icmp6, 24, request, 1));
        t.push_back({"answers_a_routing_header_with_segments_left_with_a_parameter_problem",
                     ethernet({ours, peer_mac, 0}, ethertype_ipv6, dgram), dp::drop_reason::ipv6_bad_extension,
                     error_reply(ours, me, peer, 4, 0, 42, dgram), {}});
    }
    {
        bytes cut = ipv6_extension(proto_icmp6, 64, {});  // says 64 bytes, the payload has 64: the ICMPv6 is missing
        cut.resize(16);  // and now the header runs past the payload
        t.push_back({"drops_an_extension_header_longer_than_the_payload", from_peer6(ours, {peer, me, 60}, cut),
                     dp::drop_reason::ipv6_bad_extension, {}, {}});
    }
    {
        bytes frag{proto_icmp6, 0, 0, 1, 0, 0, 0, 42};  // offset 0, more fragments
        frag.insert(frag.end(), request.begin(), request.end());
        t.push_back({"drops_a_fragment_behind_a_hop_by_hop_header", from_peer6(ours, {peer, me, 0}, ipv6_extension(44, 8, frag)),
                     dp::drop_reason::ipv6_fragment, {}, {}});
    }

    // Header and destination
    {
        // UDP to a port nobody listens on: the sender learns at once (RFC 4443 3.1).
        const bytes dgram = ipv6_packet({peer, me, proto_udp}, udp6_datagram(peer, me, 40000, 9, pattern(32)));
        t.push_back({"answers_udp_to_a_closed_port_with_port_unreachable",
                     ethernet({ours, peer_mac, 0}, ethertype_ipv6, dgram), dp::drop_reason::udp_port_closed,
                     error_reply(ours, me, peer, 1, 4, 0, dgram), {}});
        // The checksum covers the UDP length, not the payload length with the extension
        // headers in front: a right one behind a destination options header is accepted (the
        // closed port answers), a wrong one dropped before any answer, a zero one refused.
        const bytes behind = ipv6_packet({peer, me, 60}, ipv6_extension(proto_udp, 16, udp6_datagram(peer, me, 40000, 9, pattern(21))));
        t.push_back({"verifies_the_udp_checksum_over_the_udp_length_behind_extension_headers",
                     ethernet({ours, peer_mac, 0}, ethertype_ipv6, behind), dp::drop_reason::udp_port_closed,
                     error_reply(ours, me, peer, 1, 4, 0, behind), {}});
        bytes wrong = udp6_datagram(peer, me, 40000, 9, pattern(21));
        wrong[6] ^= 0x5a;
        t.push_back({"drops_udp_over_ipv6_with_a_wrong_checksum", from_peer6(ours, {peer, me, proto_udp}, wrong),
                     dp::drop_reason::udp_bad_checksum, {}, {}});
        bytes none = udp6_datagram(peer, me, 40000, 9, pattern(21));
        none[6] = none[7] = 0;
        t.push_back({"drops_udp_over_ipv6_without_a_checksum", from_peer6(ours, {peer, me, proto_udp}, none),
                     dp::drop_reason::udp6_no_checksum, {}, {}});
        bytes longer = udp6_datagram(peer, me, 40000, 9, pattern(21));
        write16(longer, 4, static_cast<uint16_t>(longer.size() + 1));
        t.push_back({"drops_a_udp_length_beyond_the_upper_layer", from_peer6(ours, {peer, me, proto_udp}, longer),
                     dp::drop_reason::udp_truncated, {}, {}});
        const bytes unknown = ipv6_packet({peer, me, 60}, ipv6_extension(253, 8, pattern(16)));
        t.push_back({"answers_an_unknown_next_header_with_a_parameter_problem_at_its_field",
                     ethernet({ours, peer_mac, 0}, ethertype_ipv6, unknown), dp::drop_reason::ipv6_protocol_unsupported,
                     error_reply(ours, me, peer, 4, 1, 40, unknown), {}});
        t.push_back({"never_answers_udp_to_a_group_with_an_error",
                     ethernet({dp::multicast_mac6(all_nodes.data()), peer_mac, 0}, ethertype_ipv6,
                              ipv6_packet({peer, all_nodes, proto_udp}, udp6_datagram(peer, all_nodes, 40000, 9, pattern(32)))),
                     dp::drop_reason::udp_port_closed, {}, {}});
        t.push_back({"hands_tcp_over_ipv6_to_the_tcp_stage_never_answering_it_with_an_error",
                     from_peer6(ours, {peer, me, 6}, pattern(40)), dp::drop_reason::tcp_no_streams, {}, {}});
        // A big datagram is quoted up to the minimum MTU: 1,280 bytes with our headers.
        const bytes big = ipv6_packet({peer, me, proto_udp}, udp6_datagram(peer, me, 40000, 9, pattern(1392)));
        t.push_back({"quotes_a_big_datagram_up_to_1280_bytes",
                     ethernet({ours, peer_mac, 0}, ethertype_ipv6, big), dp::drop_reason::udp_port_closed,
                     error_reply(ours, me, peer, 1, 4, 0, bytes(big.begin(), big.begin() + 1232)), {}});
    }
    t.push_back({"drops_a_datagram_for_another_address",
                 from_peer6(ours, {peer, ipv6("2001:2:0:1::99")}, icmp6_message(peer, ipv6("2001:2:0:1::99"), echo_req, 0, echo_body)),
                 dp::drop_reason::ipv6_not_for_us, {}, {}});
    t.push_back({"drops_ipv6_on_an_interface_without_ipv6", from_peer6(ours, {peer, me}, request, our_vlan),
                 dp::drop_reason::ipv6_not_for_us, {}, {}});
    t.push_back({"drops_a_multicast_source",
                 from_peer6(ours, {all_nodes, me}, icmp6_message(all_nodes, me, echo_req, 0, echo_body)),
                 dp::drop_reason::ipv6_bad_source, {}, {}});
    {
        bytes v4 = from_peer6(ours, {peer, me}, request);
        v4[14] = 0x40;
        t.push_back({"drops_version_4_under_the_ipv6_ethertype", v4, dp::drop_reason::ipv6_bad_version, {}, {}});
    }
    {
        bytes cut = from_peer6(ours, {peer, me}, request);
        cut.resize(cut.size() - 10);
        t.push_back({"drops_a_payload_length_beyond_the_frame", cut, dp::drop_reason::ipv6_truncated, {}, {}});
    }
    t.push_back({"drops_a_router_advertisement_as_unhandled",
                 from_peer6(ours, {peer_ll, all_nodes, proto_icmp6, 255},
                            icmp6_message(peer_ll, all_nodes, 134, 0, bytes(12, 0))),
                 dp::drop_reason::icmp6_unhandled, {}, {}});

    // Destination unreachable about a datagram we sent
    {
        const bytes udp_hdr{0x13, 0xc4, 0x13, 0xc5, 0, 16, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
        const bytes sent = ipv6_packet({me, peer, proto_udp}, udp_hdr);
        bytes body{0, 0, 0, 0};
        body.insert(body.end(), sent.begin(), sent.end());
        packet_case c{"reports_a_port_unreachable_about_our_datagram", {}, {}, {}, {}};
        c.input = from_peer6(ours, {peer, me}, icmp6_message(peer, me, 1, 4, body));
        dp::event e{};
        e.kind = dp::event_kind::icmp_unreachable;
        e.iface = untagged_iface;
        e.ip = ip_address::v6(peer);
        e.icmp_type = 1;
        e.icmp_code = 4;
        e.orig_dst = ip_address::v6(peer);
        e.orig_proto = proto_udp;
        e.orig_src_port = 5060;
        e.orig_dst_port = 5061;
        c.event = e;
        t.push_back(c);
    }
    // Packet Too Big from a router about our reply to a host beyond it
    {
        const ip6 router = ipv6("2001:2:0:1::fe"), far = ipv6("2001:2:0:9::30");
        const bytes ours_sent = ipv6_packet({me, far, proto_icmp6}, icmp6_message(me, far, echo_rep, 0, echo_body));
        bytes body{0, 0, 0x05, 0x00};  // MTU 1280
        body.insert(body.end(), ours_sent.begin(), ours_sent.end());
        packet_case c{"records_a_packet_too_big_about_our_datagram", {}, {}, {}, {}};
        c.input = from_peer6(ours, {router, me}, icmp6_message(router, me, 2, 0, body));
        dp::event e{};
        e.kind = dp::event_kind::packet_too_big;
        e.iface = untagged_iface;
        e.ip = ip_address::v6(router);
        e.orig_dst = ip_address::v6(far);
        e.code = 1280;
        c.event = e;
        t.push_back(c);
        // About someone else's datagram: nothing to record, nothing dropped.
        const bytes theirs = ipv6_packet({peer, far, proto_icmp6}, icmp6_message(peer, far, echo_rep, 0, echo_body));
        bytes other{0, 0, 0x05, 0x00};
        other.insert(other.end(), theirs.begin(), theirs.end());
        t.push_back({"ignores_a_packet_too_big_about_a_datagram_we_did_not_send",
                     from_peer6(ours, {router, me}, icmp6_message(router, me, 2, 0, other)), {}, {}, {}});
    }
    return t;
}

class eal_ipv6 : public ::testing::TestWithParam<std::string> {};

TEST_P(eal_ipv6, verdict) { run_named_case(cases, GetParam()); }

INSTANTIATE_TEST_SUITE_P(cases, eal_ipv6, ::testing::ValuesIn(case_names(cases)),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

/// The IPv6 fragments of the upper-layer datagram `data` (next header `next`), `chunk` bytes
/// each (a multiple of 8) but the last, with identification `id`.
std::vector<bytes> fragments6(const ipv6_fields& f, uint8_t next, const bytes& data, std::size_t chunk, uint32_t id)
{
    std::vector<bytes> out;
    for (std::size_t off = 0; off < data.size(); off += chunk) {
        const std::size_t n = std::min(chunk, data.size() - off);
        const bool more = off + n < data.size();
        bytes fh{next, 0, static_cast<uint8_t>(off >> 8), static_cast<uint8_t>((off & 0xf8) | (more ? 1 : 0)),
                 static_cast<uint8_t>(id >> 24), static_cast<uint8_t>(id >> 16), static_cast<uint8_t>(id >> 8),
                 static_cast<uint8_t>(id)};
        fh.insert(fh.end(), data.begin() + static_cast<long>(off), data.begin() + static_cast<long>(off + n));
        ipv6_fields g = f;
        g.next = 44;
        out.push_back(ipv6_packet(g, fh));
    }
    return out;
}

/// The upper-layer datagram the IPv6 fragments `sent` carry, checking on the way that each fits
/// `mtu`, goes from `src` to `dst` on the peer's MAC with hop limit 64, continues where the last
/// ended, says whether more follow, and shares one identification.
bytes reassembled(const sent_frames& sent, std::size_t mtu, const ip6& src, const ip6& dst)
{
    bytes whole;
    uint32_t id = 0;
    for (std::size_t i = 0; i < sent.size(); ++i) {
        const bytes f = linear_bytes(sent.mbufs[i]);
        EXPECT_LE(f.size(), 14u + mtu) << "fragment " << i << " within the MTU";
        if (f.size() < 14 + 48 || read16(f, 12) != ethertype_ipv6) {
            ADD_FAILURE() << "fragment " << i << " is no IPv6 fragment";
            return {};
        }
        EXPECT_TRUE(std::equal(peer_mac.begin(), peer_mac.end(), f.begin())) << "to the sender's MAC";
        const auto ip = std::span(f).subspan(14);
        EXPECT_EQ(ip[6], 44) << "a fragment header";
        EXPECT_EQ(ip[7], 64);
        EXPECT_TRUE(std::equal(ip.begin() + 8, ip.begin() + 24, src.begin()));
        EXPECT_TRUE(std::equal(ip.begin() + 24, ip.begin() + 40, dst.begin()));
        EXPECT_EQ(ip.size(), 40u + read16(ip, 4));
        const uint16_t off_flags = read16(ip, 42);
        EXPECT_EQ(off_flags & 0xfff8u, whole.size()) << "fragment " << i << " continues where the last ended";
        EXPECT_EQ((off_flags & 1u) != 0, i + 1 < sent.size()) << "more-fragments flag";
        if (i == 0) id = read32(ip, 44);
        EXPECT_EQ(read32(ip, 44), id) << "one identification";
        EXPECT_EQ(ip[40], proto_icmp6);
        whole.insert(whole.end(), ip.begin() + 48, ip.end());
    }
    return whole;
}

// An echo of 3,000 bytes in three fragments, the last first: reassembled, checked over the
// whole message, and answered in fragments of at most 1,500 bytes that put the reply back
// together exactly (routers never fragment IPv6: the sender of a big reply must).
TEST(ipv6_fragments, a_big_echo_in_fragments_out_of_order_is_answered_in_fragments)
{
    harness h;
    ASSERT_TRUE(h.ok()) << h.error();
    const mac ours = h.our_mac();
    const ip6 me = ipv6(our_ip6_text), peer = ipv6(peer_ip6_text);
    const bytes body = echo_body_of(9, 3000);
    const bytes request = icmp6_message(peer, me, echo_req, 0, body);
    auto frags = fragments6({peer, me}, proto_icmp6, request, 1232, 0x01020304);
    ASSERT_EQ(frags.size(), 3u);
    for (int i : {2, 0, 1}) ASSERT_TRUE(h.receive(ethernet({ours, peer_mac, 0}, ethertype_ipv6, frags[static_cast<std::size_t>(i)])));
    h.poll();
    const auto v = h.counters();
    EXPECT_EQ(v.drops_total(), 0u);
    EXPECT_EQ(v.stage_packets[static_cast<std::size_t>(dp::stage::frag6)], 3u);
    sent_frames sent = h.take_sent();
    ASSERT_GE(sent.size(), 3u);
    const bytes whole = reassembled(sent, 1500, me, peer);
    EXPECT_EQ(whole, icmp6_message(me, peer, echo_rep, 0, body)) << "the reply, checksum included";
    for (auto* m : sent.mbufs) rte_pktmbuf_free(m);
    sent.mbufs.clear();
    EXPECT_EQ(h.mbufs_in_use(), 0u) << "the fragments and the chain went back to the pool";
}

// Once a Packet Too Big lowered the path MTU toward a host to 1,280 (the control core records
// it in path_mtu_table; the test plays the control core), an echo that fits 1,500 but not 1,280
// is answered in fragments of at most 1,280 bytes.
TEST(ipv6_fragments, a_recorded_path_mtu_sizes_the_reply)
{
    harness h;
    ASSERT_TRUE(h.ok()) << h.error();
    const mac ours = h.our_mac();
    const ip6 me = ipv6(our_ip6_text), peer = ipv6(peer_ip6_text);
    const bytes body = echo_body_of(10, 1400);
    const bytes request = icmp6_message(peer, me, echo_req, 0, body);
    const bytes frame = ethernet({ours, peer_mac, 0}, ethertype_ipv6, ipv6_packet({peer, me}, request));

    ASSERT_TRUE(h.receive(frame));
    h.poll();
    {
        sent_frames one = h.take_sent();
        ASSERT_EQ(one.size(), 1u) << "1,448 bytes fit the link's 1,500 in one frame";
        for (auto* m : one.mbufs) rte_pktmbuf_free(m);
        one.mbufs.clear();
    }
    ASSERT_TRUE(h.runtime().shared->path_mtu.record(ip_address::v6(peer), 1280, 0));
    ASSERT_TRUE(h.receive(frame));
    h.poll();
    sent_frames sent = h.take_sent();
    ASSERT_EQ(sent.size(), 2u) << "the same reply over a 1,280-byte path";
    const bytes whole = reassembled(sent, 1280, me, peer);
    EXPECT_EQ(whole, icmp6_message(me, peer, echo_rep, 0, body));
    for (auto* m : sent.mbufs) rte_pktmbuf_free(m);
    sent.mbufs.clear();
}

// RFC 4443 2.4 f: the errors a worker sends are rate-limited by a token bucket ([ipv6]
// icmp_error_rate 100/s, icmp_error_burst 10): fifteen UDP datagrams at once get ten answers,
// and the other five are counted as suppressed; every one is counted as dropped.
TEST(ipv6_errors, a_burst_of_datagrams_gets_at_most_the_burst_of_errors)
{
    harness h;
    ASSERT_TRUE(h.ok()) << h.error();
    const ip6 me = ipv6(our_ip6_text), peer = ipv6(peer_ip6_text);
    const bytes frame = ethernet({h.our_mac(), peer_mac, 0}, ethertype_ipv6,
                                 ipv6_packet({peer, me, proto_udp}, udp6_datagram(peer, me, 40000, 9, pattern(32))));
    for (int i = 0; i < 15; ++i) ASSERT_TRUE(h.receive(frame));
    h.poll();
    const auto v = h.counters();
    EXPECT_EQ(v.icmp6_errors_sent, 10u);
    EXPECT_EQ(v.icmp6_errors_suppressed, 5u);
    EXPECT_EQ(v.drops[static_cast<std::size_t>(dp::drop_reason::udp_port_closed)], 15u);
    sent_frames sent = h.take_sent();
    EXPECT_EQ(sent.size(), 10u);
    for (auto* m : sent.mbufs) rte_pktmbuf_free(m);
    sent.mbufs.clear();
    EXPECT_EQ(h.mbufs_in_use(), 0u);
}

// What the config says reaches the dataplane's interface: the IPv6 address and gateway as
// written, the link-local address derived from the port's MAC, and the extension-header limit.
TEST(ipv6_snapshot, the_interfaces_ipv6_address_gateway_and_link_local_address_come_from_the_config_and_the_mac)
{
    harness h;
    ASSERT_TRUE(h.ok()) << h.error();
    const std::string device = h.runtime().ports.at(0).device;
    const auto r = control::parse_config("[ipv6]\nmax_extension_headers = 3\n\n[[interface]]\nname = \"core\"\ndevice = \"" +
                                             device +
                                             "\"\naddress = \"198.18.0.1/24\"\naddress6 = \"2001:2:0:1::1/64\"\n"
                                             "gateway6 = \"fe80::1\"\n",
                                         "v6.toml");
    ASSERT_TRUE(r.cfg) << (r.errors.empty() ? "" : r.errors[0].to_string());
    std::string error;
    const auto snap = control::build_snapshot(*r.cfg, h.runtime().ports, 2, error);
    ASSERT_TRUE(snap) << error;
    const auto& ifc = snap->interfaces.at(0);
    EXPECT_TRUE(ifc.has_v6());
    EXPECT_EQ(to_string(ifc.address6), "2001:2:0:1::1/64");
    EXPECT_EQ(to_string(ifc.gateway6), "fe80::1");
    EXPECT_EQ(ifc.link_local6, dp::link_local_of(h.our_mac()));
    EXPECT_EQ(snap->ipv6_max_extension_headers, 3);
    // Without address6 the interface runs no IPv6 at all.
    const auto four = control::parse_config("[[interface]]\nname = \"core\"\ndevice = \"" + device +
                                                "\"\naddress = \"198.18.0.1/24\"\n",
                                            "v4.toml");
    ASSERT_TRUE(four.cfg);
    const auto snap4 = control::build_snapshot(*four.cfg, h.runtime().ports, 3, error);
    ASSERT_TRUE(snap4) << error;
    EXPECT_FALSE(snap4->interfaces.at(0).has_v6());
    EXPECT_TRUE(snap4->interfaces.at(0).link_local6.is_unspecified());
}

// The solicitations and announcements the control core sends (dataplane/frames.h) are the
// frames this file builds from the RFC on its own.
TEST(ipv6_frames, the_control_cores_solicitation_and_announcement_match_the_rfc)
{
    const mac ours{0x02, 0, 0, 0, 0, 0x01};
    const ip6 me = ipv6(our_ip6_text), peer = ipv6(peer_ip6_text);
    std::array<uint8_t, 128> buf{};
    const auto ns = dp::neighbour_solicitation(ours, ip_address::v6(me), ip_address::v6(peer), 0);
    const std::size_t n = dp::build_nd(buf, ns);
    const ip6 group = dp::solicited_node(peer.data());
    const bytes want = ethernet({dp::multicast_mac6(group.data()), ours, 0}, ethertype_ipv6,
                                ipv6_packet({me, group, proto_icmp6, 255},
                                            icmp6_message(me, group, ns_type, 0, nd_body(0, peer, opt_sll, ours))));
    EXPECT_EQ(bytes(buf.begin(), buf.begin() + static_cast<long>(n)), want);

    const auto na = dp::unsolicited_advertisement(ours, ip_address::v6(me), our_vlan);
    const std::size_t m = dp::build_nd(buf, na);
    const bytes want_na = ethernet({dp::multicast_mac6(dp::all_nodes.data()), ours, our_vlan}, ethertype_ipv6,
                                   ipv6_packet({me, dp::all_nodes, proto_icmp6, 255},
                                               icmp6_message(me, dp::all_nodes, na_type, 0, nd_body(flag_o, me, opt_tll, ours))));
    EXPECT_EQ(bytes(buf.begin(), buf.begin() + static_cast<long>(m)), want_na);
    EXPECT_EQ(dp::build_nd(std::span<uint8_t>(buf.data(), 80), ns), 0u) << "too small a buffer is refused";
}

}  // namespace
}  // namespace sbc::test
