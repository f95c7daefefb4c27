// Writes a classic pcap file (the libpcap format tshark, Wireshark, tcpdump and sngrep read):
// the global header (LINKTYPE_ETHERNET, snaplen 65535, microsecond or nanosecond timestamps)
// then one record per packet, whole Ethernet frames. Buffered stdio; the capture thread
// (control/capture_service.cc) is its only user in sbcd, tests write and parse files back.
// One thread per writer; no DPDK.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

namespace sbc::control {

/// pcap constants (https://www.tcpdump.org/manpages/pcap-savefile.5.txt).
inline constexpr uint32_t pcap_magic_micro = 0xa1b2c3d4;
inline constexpr uint32_t pcap_magic_nano = 0xa1b23c4d;
inline constexpr uint32_t pcap_linktype_ethernet = 1;
inline constexpr uint32_t pcap_snaplen = 65535;
inline constexpr std::size_t pcap_file_header_size = 24;
inline constexpr std::size_t pcap_record_header_size = 16;

/// One piece of a packet (a segment of an mbuf chain, or the whole frame).
struct pcap_part {
    const void* data;
    std::size_t len;
};

class pcap_writer {
public:
    enum class precision : uint8_t { micro, nano };

    pcap_writer() = default;
    ~pcap_writer() { close(); }
    pcap_writer(const pcap_writer&) = delete;
    pcap_writer& operator=(const pcap_writer&) = delete;

    /// Creates (truncates) `path` and writes the file header. false with `error` (the path and
    /// the system's reason) when it cannot.
    bool open(const std::string& path, precision p, std::string& error);

    /// Appends one packet made of `parts` (in order) captured at `unix_ns` (nanoseconds since
    /// 1970). A packet over the snaplen is cut there (its record says its original length).
    /// false when the write failed (error() then says why; the file stays open).
    bool write(uint64_t unix_ns, std::span<const pcap_part> parts);
    /// The same for one contiguous frame.
    bool write(uint64_t unix_ns, const void* frame, std::size_t len)
    {
        const pcap_part p{frame, len};
        return write(unix_ns, std::span<const pcap_part>(&p, 1));
    }

    /// Pushes buffered records to the file (stop, and now and then so a reader sees them).
    bool flush();
    /// Flushes and closes; a closed writer ignores writes. Idempotent.
    void close();

    [[nodiscard]] bool is_open() const noexcept { return f_ != nullptr; }
    /// Bytes in the file so far, headers included (buffered ones counted).
    [[nodiscard]] uint64_t bytes() const noexcept { return bytes_; }
    [[nodiscard]] uint64_t records() const noexcept { return records_; }
    [[nodiscard]] const std::string& error() const noexcept { return error_; }

private:
    bool put(const void* data, std::size_t len);

    std::FILE* f_ = nullptr;
    precision precision_ = precision::micro;
    uint64_t bytes_ = 0;
    uint64_t records_ = 0;
    std::string error_;
};

}  // namespace sbc::control
