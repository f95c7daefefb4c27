// Sizing net_af_packet ports for reassembled datagrams (see af_packet.h). Control core only,
// at start.
#include "dataplane/af_packet.h"

#include <rte_mbuf_core.h>

namespace sbc::dataplane {

namespace {

constexpr uint32_t page = 4096;

/// The value of `key=` among the comma-separated arguments of `device`, or "" when absent.
std::string devarg(const std::string& device, const std::string& key)
{
    std::size_t at = device.find(',');
    while (at != std::string::npos) {
        const std::size_t start = at + 1;
        const std::size_t end = device.find(',', start);
        const std::string arg = device.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (arg.rfind(key + "=", 0) == 0) return arg.substr(key.size() + 1);
        at = end;
    }
    return {};
}

}  // namespace

bool is_af_packet(const std::string& device)
{
    return device.rfind("net_af_packet", 0) == 0 || device.rfind("eth_af_packet", 0) == 0;
}

uint32_t af_packet_frame_size(uint32_t max_datagram)
{
    return (max_datagram + af_packet_frame_overhead + 255) / 256 * 256;
}

std::string af_packet_devargs(const std::string& device, uint32_t max_datagram)
{
    if (!is_af_packet(device) || !devarg(device, "framesz").empty() || !devarg(device, "blocksz").empty() ||
        !devarg(device, "framecnt").empty())
        return device;
    const uint32_t frame = af_packet_frame_size(max_datagram);
    // frame = 256 n: page / gcd(frame, page) frames (1..16) fill whole pages exactly.
    uint32_t a = frame, b = page;
    while (b != 0) {
        const uint32_t r = a % b;
        a = b;
        b = r;
    }
    const uint32_t block = frame * (page / a);
    // af_packet_frames is a multiple of 16: whole blocks, as the kernel requires.
    return device + ",framesz=" + std::to_string(frame) + ",blocksz=" + std::to_string(block) +
           ",framecnt=" + std::to_string(af_packet_frames);
}

uint32_t af_packet_mbuf_room(const std::string& device, uint32_t max_datagram)
{
    if (!is_af_packet(device)) return 0;
    const std::string given = devarg(device, "framesz");
    uint32_t frame = 2048;  // the PMD's default
    if (!given.empty()) {
        try {
            frame = static_cast<uint32_t>(std::stoul(given));
        } catch (...) {
            return 0;
        }
    } else if (devarg(device, "blocksz").empty() && devarg(device, "framecnt").empty()) {
        frame = af_packet_frame_size(max_datagram);
    }
    const uint64_t room = uint64_t{frame} - af_packet_pmd_reserve + RTE_PKTMBUF_HEADROOM;
    return room > UINT16_MAX ? 0 : static_cast<uint32_t>(room);
}

}  // namespace sbc::dataplane
