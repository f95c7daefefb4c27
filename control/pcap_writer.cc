// Classic pcap writer (see pcap_writer.h). The thread that owns the writer.
#include "control/pcap_writer.h"

#include <cerrno>
#include <cstring>

namespace sbc::control {

namespace {

// The file's own byte order (the host's): readers recognise it from the magic number.
struct file_header {
    uint32_t magic;
    uint16_t version_major = 2;
    uint16_t version_minor = 4;
    int32_t thiszone = 0;
    uint32_t sigfigs = 0;
    uint32_t snaplen = pcap_snaplen;
    uint32_t linktype = pcap_linktype_ethernet;
};
static_assert(sizeof(file_header) == pcap_file_header_size);

struct record_header {
    uint32_t ts_sec;
    uint32_t ts_frac;  ///< microseconds or nanoseconds, as the magic says
    uint32_t incl_len;
    uint32_t orig_len;
};
static_assert(sizeof(record_header) == pcap_record_header_size);

constexpr std::size_t file_buffer = 1 << 20;

}  // namespace

bool pcap_writer::open(const std::string& path, precision p, std::string& error)
{
    close();
    f_ = std::fopen(path.c_str(), "wb");
    if (f_ == nullptr) {
        error = path + ": " + std::strerror(errno);
        return false;
    }
    std::setvbuf(f_, nullptr, _IOFBF, file_buffer);
    precision_ = p;
    bytes_ = records_ = 0;
    error_.clear();
    file_header h{};
    h.magic = p == precision::nano ? pcap_magic_nano : pcap_magic_micro;
    if (!put(&h, sizeof h)) {
        error = path + ": " + error_;
        close();
        return false;
    }
    return true;
}

bool pcap_writer::put(const void* data, std::size_t len)
{
    if (len == 0) return true;
    // One thread owns the writer: stdio's per-call locking is only overhead here.
    if (fwrite_unlocked(data, 1, len, f_) != len) {
        error_ = std::strerror(errno);
        return false;
    }
    bytes_ += len;
    return true;
}

bool pcap_writer::write(uint64_t unix_ns, std::span<const pcap_part> parts)
{
    if (f_ == nullptr) return false;
    std::size_t total = 0;
    for (const pcap_part& p : parts) total += p.len;
    record_header r{};
    r.ts_sec = static_cast<uint32_t>(unix_ns / 1'000'000'000);
    const uint64_t ns = unix_ns % 1'000'000'000;
    r.ts_frac = static_cast<uint32_t>(precision_ == precision::nano ? ns : ns / 1000);
    r.orig_len = static_cast<uint32_t>(total);
    r.incl_len = static_cast<uint32_t>(total < pcap_snaplen ? total : pcap_snaplen);
    if (!put(&r, sizeof r)) return false;
    std::size_t left = r.incl_len;
    for (const pcap_part& p : parts) {
        const std::size_t k = p.len < left ? p.len : left;
        if (!put(p.data, k)) return false;
        left -= k;
        if (left == 0) break;
    }
    ++records_;
    return true;
}

bool pcap_writer::flush()
{
    if (f_ == nullptr) return false;
    if (std::fflush(f_) != 0) {
        error_ = std::strerror(errno);
        return false;
    }
    return true;
}

void pcap_writer::close()
{
    if (f_ == nullptr) return;
    std::fclose(f_);
    f_ = nullptr;
}

}  // namespace sbc::control
