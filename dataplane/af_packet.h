// Sizing net_af_packet ports for datagrams larger than one Ethernet frame. DPDK 22.11's
// af_packet PMD joins its sockets to a PACKET_FANOUT group with PACKET_FANOUT_FLAG_DEFRAG
// (hard-wired in drivers/net/af_packet), so the kernel reassembles IPv4 fragments before the
// PMD sees them and hands over one datagram as large as 64 KiB. With the PMD's default
// 2048-byte TPACKET_V2 frames that datagram is cut to the frame (tp_snaplen) and copied, so
// cut, into a single mbuf: the IPv4 stage then counts ipv4_bad_total_length and the fragment
// stage never sees a fragment. The cure is to make every frame, and every mbuf the PMD copies
// a frame into, hold the largest reassembled datagram we accept; ports of other kinds deliver
// fragments as they came and the fragment stage reassembles them (dataplane/ipv4.cc).
// Control core only, at start (pure functions; the unit tier tests them).
#pragma once

#include <cstdint>
#include <string>

namespace sbc::dataplane {

/// Bytes of a TPACKET_V2 frame in front of the IPv4 header: the kernel puts the network
/// header at TPACKET_ALIGN(TPACKET2_HDRLEN + max(16, MAC header)) = 80 for an Ethernet
/// header with or without one 802.1Q tag.
constexpr uint32_t af_packet_frame_overhead = 80;
/// What the PMD's rx_queue_setup demands of the mbuf beyond what a frame carries:
/// framesz - (TPACKET2_HDRLEN - sizeof(sockaddr_ll)) must fit the mbuf's data room.
constexpr uint32_t af_packet_pmd_reserve = 32;
/// The largest IPv4 datagram an af_packet port can deliver whole: its frame's mbuf data room
/// (a uint16_t, less the headroom) bounds the frame (65,280: 255 units of 256, see
/// af_packet_frame_size), the frame bounds the datagram.
constexpr uint32_t af_packet_max_datagram_limit = 65200;
/// [dpdk] af_packet_max_datagram's default: the limit (SIP messages of up to ~63.8 KiB).
constexpr uint32_t default_af_packet_max_datagram = af_packet_max_datagram_limit;
/// Frames per ring when sbcd chooses the frame size (the PMD's own default is 512 of 2 KiB).
constexpr uint32_t af_packet_frames = 256;

/// Whether `device` is a net_af_packet (or eth_af_packet) vdev string.
bool is_af_packet(const std::string& device);

/// The TPACKET_V2 frame size that holds an Ethernet frame (with or without one 802.1Q tag)
/// carrying an IPv4 datagram of `max_datagram` bytes: a multiple of 256, so that a block of at
/// most 16 frames is a whole number of 4 KiB pages with no gap. The PMD finds frame i at
/// i * framesz from the start of the ring while the kernel starts every block on its own, so
/// the frames of a block must fill it exactly (a 65,424-byte frame in a 64 KiB block stalls
/// the ring after its first frame).
uint32_t af_packet_frame_size(uint32_t max_datagram);

/// `device` with framesz, blocksz (the fewest frames that fill whole pages) and framecnt appended
/// for `max_datagram`; unchanged when it is not af_packet or already sets any of the three
/// (the operator's sizes win).
std::string af_packet_devargs(const std::string& device, uint32_t max_datagram);

/// The mbuf data room (headroom included, as rte_pktmbuf_pool_create takes it) that the PMD
/// accepts for `device`'s RX queues: sized from its framesz (ours or the operator's).
/// 0 when `device` is not af_packet or its framesz needs more than an mbuf holds.
uint32_t af_packet_mbuf_room(const std::string& device, uint32_t max_datagram);

}  // namespace sbc::dataplane
