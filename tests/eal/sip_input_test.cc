// The SIP stage's receive step on real mbufs: a UDP datagram to a trunk decodes into the
// transport-neutral input the proxy takes (source and local endpoints, trunk, interface, the
// payload's place, the sender's MAC), untagged and 802.1Q; the mbuf's headroom has room to carry
// it across a handoff ring.
#include <cstring>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include <rte_mbuf.h>

#include "dataplane/sip_path.h"
#include "tests/eal/frame_builder.h"
#include "tests/eal/harness.h"

namespace sbc::test {
namespace {

namespace dp = sbc::dataplane;

constexpr std::string_view options = "OPTIONS sip:198.18.0.1 SIP/2.0\r\nContent-Length: 0\r\n\r\n";

struct decode_case {
    std::string name;
    uint16_t vlan;
    uint16_t l2_len;
};

class eal_sip_input : public ::testing::TestWithParam<decode_case> {};

TEST_P(eal_sip_input, decodes_a_datagram_into_endpoints_trunk_and_payload)
{
    harness h;
    ASSERT_TRUE(h.ok()) << h.error();
    rte_mempool* pool = rte_pktmbuf_pool_create(("sip_input_" + GetParam().name).c_str(), 63, 0, 0,
                                                RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    ASSERT_NE(pool, nullptr);
    const mac sender{0x02, 0, 0, 0, 0, 0x10};
    const bytes payload(options.begin(), options.end());
    const bytes frame = ethernet({h.our_mac(), sender, GetParam().vlan}, ethertype_ipv4,
                                 ipv4_packet({peer_ip, our_ip, proto_udp},
                                             udp_datagram(peer_ip, our_ip, 5080, 5060, payload)));
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    ASSERT_NE(m, nullptr);
    std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(frame.size())), frame.data(), frame.size());
    m->l2_len = GetParam().l2_len;
    m->l3_len = 20;

    ASSERT_NE(dp::handoff_of(m), nullptr) << "a fresh mbuf has room for the decoded input in its headroom";
    dp::sip_handoff decoded;
    dp::sip_handoff* in = &decoded;
    dp::decode_datagram(m, 3, 2, 1234, *in);

    EXPECT_EQ(in->what, dp::sip_handoff::kind::message);
    EXPECT_EQ(in->src, endpoint::udp4(peer_ip, 5080));
    EXPECT_EQ(in->local, endpoint::udp4(our_ip, 5060));
    EXPECT_EQ(in->src.proto, transport::udp);
    EXPECT_EQ(in->src.conn, 0u);
    EXPECT_EQ(in->trunk, 2);
    EXPECT_EQ(in->iface, 3);
    EXPECT_EQ(in->now_ms, 1234u);
    EXPECT_EQ(in->src_mac, sender);
    EXPECT_EQ(in->off, GetParam().l2_len + 28u);
    EXPECT_EQ(in->len, options.size());
    dp::sip_tally t;
    EXPECT_EQ(dp::input_bytes(h.worker(), m, *in, t), options);
    EXPECT_EQ(t.unreadable, 0u);
    // The frame itself is untouched.
    EXPECT_EQ(bytes(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_mtod(m, const uint8_t*) + frame.size()), frame);

    // An mbuf whose headroom cannot hold the record gets none (the stage counts it).
    m->data_off = static_cast<uint16_t>(sizeof(dp::sip_handoff) - 1);
    EXPECT_EQ(dp::handoff_of(m), nullptr);
    m->data_off = RTE_PKTMBUF_HEADROOM;
    rte_pktmbuf_free(m);
    rte_mempool_free(pool);
}

INSTANTIATE_TEST_SUITE_P(frames, eal_sip_input,
                         ::testing::Values(decode_case{"untagged", 0, 14}, decode_case{"vlan", 100, 18}),
                         [](const auto& i) { return i.param.name; });

}  // namespace
}  // namespace sbc::test
