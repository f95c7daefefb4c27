// IPv4 reassembly through the production burst processing: an ICMP echo of ~3000 bytes sent
// as three fragments, in order and out of order, must be answered with one reply of the whole
// size whose checksums hold over the multi-segment mbuf.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <rte_ip.h>
#include <rte_mbuf.h>

#include "tests/eal/frame_builder.h"
#include "tests/eal/harness.h"

namespace sbc::test {
namespace {

namespace dp = sbc::dataplane;

struct order_case {
    std::string name;
    std::vector<std::size_t> order;
};

class eal_fragments : public ::testing::TestWithParam<order_case> {};

TEST_P(eal_fragments, reassembles_an_echo_request_and_answers_it_whole)
{
    harness h;
    ASSERT_TRUE(h.ok()) << h.error();
    const bytes data = pattern(2992 - 8, 11);  // ICMP message of 2992 bytes: 3 fragments of <= 1200
    const bytes request = icmp_echo(8, 0x99, 7, data);
    const ipv4_fields req{peer_ip, our_ip, proto_icmp, 57, 0, 0x5151, 0};
    const auto frags = ipv4_fragments(req, request, 1200);
    ASSERT_EQ(frags.size(), 3u);

    const l2_fields from_peer{h.our_mac(), peer_mac, 0};
    for (std::size_t i : GetParam().order) ASSERT_TRUE(h.receive(ethernet(from_peer, ethertype_ipv4, frags[i])));
    h.poll();

    const auto v = h.counters();
    EXPECT_EQ(v.rx_packets, 3u);
    EXPECT_EQ(v.stage_packets[static_cast<std::size_t>(dp::stage::frag)], 3u);
    EXPECT_EQ(v.drops_total(), 0u);
    sent_frames sent = h.take_sent();
    ASSERT_EQ(sent.size(), 1u) << "one reply for the reassembled datagram";
    const rte_mbuf* m = sent.mbufs[0];
    EXPECT_GT(m->nb_segs, 1) << "reassembly chains the fragments' mbufs";

    const uint32_t l2 = 14, ihl = 20;
    const uint32_t icmp_len = static_cast<uint32_t>(request.size());
    ASSERT_EQ(rte_pktmbuf_pkt_len(m), l2 + ihl + icmp_len);
    std::array<uint8_t, 20> iph{};
    const auto* ip = static_cast<const uint8_t*>(rte_pktmbuf_read(m, l2, ihl, iph.data()));
    ASSERT_NE(ip, nullptr);
    const std::span<const uint8_t> ips(ip, ihl);
    EXPECT_EQ(read16(ips, 2), ihl + icmp_len) << "total length of the whole datagram";
    EXPECT_EQ(read16(ips, 6) & 0x3fff, 0) << "no MF flag, no offset";
    EXPECT_EQ(internet_checksum(ips), 0) << "IPv4 header checksum";
    // The ICMP checksum over every segment, with DPDK's multi-segment sum.
    uint16_t raw = 0;
    ASSERT_EQ(rte_raw_cksum_mbuf(m, l2 + ihl, icmp_len, &raw), 0);
    EXPECT_EQ(raw, 0xffff) << "ICMP checksum over the chained segments";

    // Byte for byte: the reply we expect, written with this tier's own builders.
    const ipv4_fields rep{our_ip, peer_ip, proto_icmp, 64, 0, 0x5151, 0};
    const bytes want = ethernet({peer_mac, h.our_mac(), 0}, ethertype_ipv4, ipv4_packet(rep, icmp_echo(0, 0x99, 7, data)));
    EXPECT_EQ(linear_bytes(m), want);
    for (auto* x : sent.mbufs) rte_pktmbuf_free(x);
    sent.mbufs.clear();
    EXPECT_EQ(h.mbufs_in_use(), 0u) << "every fragment's mbuf went back to its pool";
}

INSTANTIATE_TEST_SUITE_P(orders, eal_fragments,
                         ::testing::Values(order_case{"in_order", {0, 1, 2}}, order_case{"last_first", {2, 0, 1}},
                                           order_case{"reversed", {2, 1, 0}}),
                         [](const ::testing::TestParamInfo<order_case>& i) { return i.param.name; });

TEST(eal_fragments_alone, keeps_an_incomplete_datagram_without_answering)
{
    harness h;
    ASSERT_TRUE(h.ok()) << h.error();
    const bytes request = icmp_echo(8, 0x99, 8, pattern(2000));
    const auto frags = ipv4_fragments({peer_ip, our_ip, proto_icmp, 57, 0, 0x6161, 0}, request, 1200);
    ASSERT_EQ(frags.size(), 2u);
    ASSERT_TRUE(h.receive(ethernet({h.our_mac(), peer_mac, 0}, ethertype_ipv4, frags[1])));
    h.poll();
    EXPECT_EQ(h.take_sent().size(), 0u);
    EXPECT_EQ(h.counters().drops_total(), 0u) << "a fragment waiting for the rest is not a drop";
}

}  // namespace
}  // namespace sbc::test
