// dataplane/checksum.h against DPDK's own: the same one's complement sum for every length and
// alignment, and the same UDP checksum in a framed datagram (the 0 -> 0xffff rule included).
#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include <rte_ip.h>
#include <rte_udp.h>

#include "dataplane/checksum.h"

namespace sbc::dataplane {
namespace {

TEST(checksum, equals_rte_raw_cksum_for_every_length_and_alignment)
{
    std::mt19937 rng(7);
    std::vector<uint8_t> buf(2048 + 8);
    for (auto& b : buf) b = static_cast<uint8_t>(rng());
    for (std::size_t off = 0; off < 8; ++off)
        for (std::size_t len = 0; len <= 2048; ++len)
            ASSERT_EQ(raw_checksum(buf.data() + off, len), rte_raw_cksum(buf.data() + off, len))
                << "offset " << off << " length " << len;
}

TEST(checksum, carries_fold_back_in_when_every_byte_is_ff)
{
    const std::vector<uint8_t> ones(1501, 0xff);
    for (std::size_t len : {0u, 1u, 2u, 3u, 31u, 32u, 33u, 1500u, 1501u})
        EXPECT_EQ(raw_checksum(ones.data(), len), rte_raw_cksum(ones.data(), len)) << len;
    EXPECT_EQ(raw_checksum(ones.data(), 64, 0xffff), 0xffff);
}

TEST(checksum, udp_checksum_with_pseudo_header_equals_rte_ipv4_udptcp_cksum)
{
    std::mt19937 rng(11);
    std::array<uint8_t, sizeof(rte_ipv4_hdr) + sizeof(rte_udp_hdr) + 1472> pkt{};
    for (int round = 0; round < 2000; ++round) {
        const std::size_t payload = rng() % 1473;
        auto* ip = reinterpret_cast<rte_ipv4_hdr*>(pkt.data());
        std::memset(ip, 0, sizeof(*ip));
        ip->version_ihl = RTE_IPV4_VHL_DEF;
        ip->next_proto_id = IPPROTO_UDP;
        ip->total_length = rte_cpu_to_be_16(static_cast<uint16_t>(sizeof(rte_ipv4_hdr) + sizeof(rte_udp_hdr) + payload));
        ip->src_addr = rng();
        ip->dst_addr = rng();
        auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
        udp->src_port = static_cast<uint16_t>(rng());
        udp->dst_port = static_cast<uint16_t>(rng());
        udp->dgram_len = rte_cpu_to_be_16(static_cast<uint16_t>(sizeof(rte_udp_hdr) + payload));
        udp->dgram_cksum = 0;
        for (std::size_t i = 0; i < payload; ++i) pkt[sizeof(*ip) + sizeof(*udp) + i] = static_cast<uint8_t>(rng());
        const uint16_t sum = raw_checksum(udp, sizeof(*udp) + payload, rte_ipv4_phdr_cksum(ip, 0));
        const uint16_t ours = sum == 0xffff ? 0xffff : static_cast<uint16_t>(~sum);
        ASSERT_EQ(ours, rte_ipv4_udptcp_cksum(ip, udp)) << "round " << round << " payload " << payload;
        udp->dgram_cksum = ours;
        ASSERT_EQ(rte_ipv4_udptcp_cksum_verify(ip, udp), 0) << "a receiver accepts it";
    }
}

}  // namespace
}  // namespace sbc::dataplane

namespace sbc::dataplane {
namespace {

TEST(checksum, header_checksums_from_values_equal_dpdk_over_the_written_headers)
{
    std::mt19937 rng(13);
    std::vector<uint8_t> pkt(sizeof(rte_ipv4_hdr) + sizeof(rte_udp_hdr) + 1472 + 1);
    for (int round = 0; round < 5000; ++round) {
        const std::size_t payload = rng() % 1473;
        const uint32_t src = rng(), dst = rng();
        const auto sport = static_cast<uint16_t>(rng()), dport = static_cast<uint16_t>(rng());
        const auto id = static_cast<uint16_t>(rng());
        const auto total = static_cast<uint16_t>(sizeof(rte_ipv4_hdr) + sizeof(rte_udp_hdr) + payload);
        // Odd start on purpose: the payload may lie anywhere in the proxy's buffer.
        auto* ip = reinterpret_cast<rte_ipv4_hdr*>(pkt.data());
        std::memset(ip, 0, sizeof(*ip));
        ip->version_ihl = RTE_IPV4_VHL_DEF;
        ip->total_length = rte_cpu_to_be_16(total);
        ip->packet_id = rte_cpu_to_be_16(id);
        ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
        ip->time_to_live = 64;
        ip->next_proto_id = IPPROTO_UDP;
        ip->src_addr = rte_cpu_to_be_32(src);
        ip->dst_addr = rte_cpu_to_be_32(dst);
        ASSERT_EQ(ipv4_header_checksum(src, dst, total, id, RTE_IPV4_HDR_DF_FLAG, 64, IPPROTO_UDP), rte_ipv4_cksum(ip))
            << "round " << round;
        auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
        udp->src_port = rte_cpu_to_be_16(sport);
        udp->dst_port = rte_cpu_to_be_16(dport);
        udp->dgram_len = rte_cpu_to_be_16(static_cast<uint16_t>(sizeof(rte_udp_hdr) + payload));
        udp->dgram_cksum = 0;
        std::vector<uint8_t> body(payload + 1);
        for (auto& b : body) b = static_cast<uint8_t>(rng());
        std::memcpy(udp + 1, body.data() + 1, payload);
        ASSERT_EQ(udp4_checksum(src, dst, sport, dport, body.data() + 1, payload), rte_ipv4_udptcp_cksum(ip, udp))
            << "round " << round << " payload " << payload;
    }
}

}  // namespace
}  // namespace sbc::dataplane
