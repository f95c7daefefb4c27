// Sizing net_af_packet ports for reassembled datagrams (dataplane/af_packet.h): the devargs
// sbcd gives the PMD, the mbuf it needs, and that an operator's own sizes win. Pure, no EAL.
#include <gtest/gtest.h>

#include <string>

#include "dataplane/af_packet.h"
#include "dataplane/runtime.h"

namespace dp = sbc::dataplane;

TEST(af_packet, frames_hold_the_largest_datagram_and_their_mbuf_fits_dpdks_16_bit_data_room)
{
    for (uint32_t d : {1500u, 4000u, 9000u, 30000u, dp::af_packet_max_datagram_limit}) {
        const uint32_t f = dp::af_packet_frame_size(d);
        EXPECT_GE(f, d + 80u);
        // The block sbcd asks for is whole pages and whole frames, at most 16 of them.
        const std::string args = dp::af_packet_devargs("net_af_packet0,iface=x", d);
        const uint32_t block = static_cast<uint32_t>(std::stoul(args.substr(args.find("blocksz=") + 8)));
        EXPECT_EQ(block % 4096, 0u) << d;
        EXPECT_EQ(block % f, 0u) << d;
        EXPECT_LE(block / f, 16u) << d;
        EXPECT_EQ(256 % (block / f), 0u) << "framecnt=256 fills whole blocks";
    }
    const uint32_t frame = dp::af_packet_frame_size(dp::af_packet_max_datagram_limit);
    EXPECT_EQ(frame % 256, 0u);
    EXPECT_GE(frame, dp::af_packet_max_datagram_limit + 80u) << "80 bytes of TPACKET_V2 header and Ethernet before IPv4";
    const uint32_t room = dp::af_packet_mbuf_room("net_af_packet0,iface=x", dp::af_packet_max_datagram_limit);
    EXPECT_GT(room, 0u);
    EXPECT_LE(room, 65535u);
    EXPECT_GE(room - 128, frame - 32) << "what the PMD's rx_queue_setup checks";
    EXPECT_EQ(dp::af_packet_mbuf_room("net_af_packet0,iface=x", dp::af_packet_max_datagram_limit + 100), 0u)
        << "beyond the limit no mbuf holds the frame";
}

TEST(af_packet, sbcd_appends_frame_block_and_count_unless_the_operator_set_one)
{
    // 65,280-byte frames, 16 to a block of 255 pages: the PMD's i * framesz is the kernel's frame i.
    EXPECT_EQ(dp::af_packet_devargs("net_af_packet0,iface=veth0", 65200),
              "net_af_packet0,iface=veth0,framesz=65280,blocksz=1044480,framecnt=256");
    EXPECT_EQ(dp::af_packet_devargs("net_af_packet0,iface=veth0", 4016), "net_af_packet0,iface=veth0,framesz=4096,blocksz=4096,framecnt=256");
    EXPECT_EQ(dp::af_packet_devargs("net_af_packet1,iface=v,framesz=4096", 65344), "net_af_packet1,iface=v,framesz=4096");
    EXPECT_EQ(dp::af_packet_devargs("net_af_packet1,iface=v,framecnt=64", 65344), "net_af_packet1,iface=v,framecnt=64");
    EXPECT_EQ(dp::af_packet_devargs("net_ring0", 65344), "net_ring0");
    EXPECT_EQ(dp::af_packet_devargs("0000:3b:00.0", 65344), "0000:3b:00.0");
    // An operator's framesz sizes the mbuf; a framecnt alone keeps the PMD's 2 KiB frames.
    EXPECT_EQ(dp::af_packet_mbuf_room("net_af_packet1,iface=v,framesz=4096", 65344), 4096u - 32 + 128);
    EXPECT_EQ(dp::af_packet_mbuf_room("net_af_packet1,iface=v,framecnt=64", 65344), 2048u - 32 + 128);
    EXPECT_EQ(dp::af_packet_mbuf_room("net_ring0", 65344), 0u);
}

TEST(af_packet, the_eal_arguments_carry_the_sized_vdev_string)
{
    dp::eal_options o;
    o.devices = {"net_af_packet0,iface=veth0"};
    o.af_packet_max_datagram = 9000;
    const auto a = dp::eal_arguments(o);
    bool found = false;
    for (const auto& s : a) found = found || s == "net_af_packet0,iface=veth0,framesz=9216,blocksz=36864,framecnt=256";
    EXPECT_TRUE(found);
}
