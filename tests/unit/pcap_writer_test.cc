// The pcap writer (control/pcap_writer.h): files parsed back field by field, as tshark and
// sngrep read them: the file header, each record's timestamp, lengths and bytes.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

#include "control/pcap_writer.h"

namespace {

using sbc::control::pcap_part;
using sbc::control::pcap_writer;

struct record {
    uint32_t sec, frac, incl, orig;
    std::string data;
};

struct parsed {
    uint32_t magic = 0, snaplen = 0, linktype = 0;
    uint16_t major = 0, minor = 0;
    std::vector<record> records;
    bool trailing_garbage = false;
};

uint32_t u32(const std::string& s, std::size_t at)
{
    uint32_t v;
    std::memcpy(&v, s.data() + at, 4);
    return v;
}

parsed read_back(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    const std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    parsed p;
    if (s.size() < 24) return p;
    p.magic = u32(s, 0);
    std::memcpy(&p.major, s.data() + 4, 2);
    std::memcpy(&p.minor, s.data() + 6, 2);
    p.snaplen = u32(s, 16);
    p.linktype = u32(s, 20);
    std::size_t at = 24;
    while (at + 16 <= s.size()) {
        record r{u32(s, at), u32(s, at + 4), u32(s, at + 8), u32(s, at + 12), {}};
        at += 16;
        if (at + r.incl > s.size()) {
            p.trailing_garbage = true;
            break;
        }
        r.data = s.substr(at, r.incl);
        at += r.incl;
        p.records.push_back(r);
    }
    if (at != s.size()) p.trailing_garbage = true;
    return p;
}

std::string temp_path(const char* name) { return "/tmp/sbc_pcap_test_" + std::to_string(getpid()) + "_" + name; }

TEST(pcap_writer, writes_an_ethernet_file_with_microsecond_records_that_read_back_whole)
{
    const std::string path = temp_path("micro.pcap");
    std::string error;
    pcap_writer w;
    ASSERT_TRUE(w.open(path, pcap_writer::precision::micro, error)) << error;
    const std::string a(60, 'a'), b = "INVITE sip:bob@198.18.0.2 SIP/2.0\r\n\r\n";
    const uint64_t t1 = 1'764'633'600'123'456'789ULL;  // 2025-12-02T00:00:00.123456789Z
    ASSERT_TRUE(w.write(t1, a.data(), a.size()));
    ASSERT_TRUE(w.write(t1 + 2'000'001'000ULL, b.data(), b.size()));
    EXPECT_EQ(w.records(), 2u);
    w.close();
    const parsed p = read_back(path);
    EXPECT_EQ(p.magic, 0xa1b2c3d4u);
    EXPECT_EQ(p.major, 2);
    EXPECT_EQ(p.minor, 4);
    EXPECT_EQ(p.snaplen, 65535u);
    EXPECT_EQ(p.linktype, 1u);  // LINKTYPE_ETHERNET
    EXPECT_FALSE(p.trailing_garbage);
    ASSERT_EQ(p.records.size(), 2u);
    EXPECT_EQ(p.records[0].sec, 1'764'633'600u);
    EXPECT_EQ(p.records[0].frac, 123'456u);  // microseconds, truncated
    EXPECT_EQ(p.records[0].incl, a.size());
    EXPECT_EQ(p.records[0].orig, a.size());
    EXPECT_EQ(p.records[0].data, a);
    EXPECT_EQ(p.records[1].sec, 1'764'633'602u);
    EXPECT_EQ(p.records[1].frac, 123'457u);
    EXPECT_EQ(p.records[1].data, b);
    EXPECT_EQ(w.bytes(), 24u + 16 + a.size() + 16 + b.size());
    std::remove(path.c_str());
}

TEST(pcap_writer, nanosecond_files_keep_the_nanoseconds_and_their_own_magic)
{
    const std::string path = temp_path("nano.pcap");
    std::string error;
    pcap_writer w;
    ASSERT_TRUE(w.open(path, pcap_writer::precision::nano, error)) << error;
    const std::string a(42, 'x');
    ASSERT_TRUE(w.write(1'000'000'000ULL * 7 + 999'999'999ULL, a.data(), a.size()));
    w.close();
    const parsed p = read_back(path);
    EXPECT_EQ(p.magic, 0xa1b23c4du);
    ASSERT_EQ(p.records.size(), 1u);
    EXPECT_EQ(p.records[0].sec, 7u);
    EXPECT_EQ(p.records[0].frac, 999'999'999u);
    std::remove(path.c_str());
}

TEST(pcap_writer, a_packet_in_pieces_is_one_record_and_one_over_the_snaplen_is_cut_there)
{
    const std::string path = temp_path("parts.pcap");
    std::string error;
    pcap_writer w;
    ASSERT_TRUE(w.open(path, pcap_writer::precision::micro, error)) << error;
    const std::string head(14 + 20 + 8, 'h'), body(2000, 'b');
    const pcap_part parts[] = {{head.data(), head.size()}, {body.data(), body.size()}};
    ASSERT_TRUE(w.write(1'000'000'000ULL, parts));
    const std::string huge(70'000, 'z');  // a reassembled datagram with its headers, over 65535
    ASSERT_TRUE(w.write(2'000'000'000ULL, huge.data(), huge.size()));
    w.close();
    const parsed p = read_back(path);
    ASSERT_EQ(p.records.size(), 2u);
    EXPECT_EQ(p.records[0].data, head + body);
    EXPECT_EQ(p.records[0].orig, head.size() + body.size());
    EXPECT_EQ(p.records[1].incl, 65535u);
    EXPECT_EQ(p.records[1].orig, 70'000u);
    EXPECT_FALSE(p.trailing_garbage);
    std::remove(path.c_str());
}

TEST(pcap_writer, a_file_that_cannot_be_created_is_refused_with_its_path_and_reason)
{
    std::string error;
    pcap_writer w;
    EXPECT_FALSE(w.open("/nonexistent-dir/x.pcap", pcap_writer::precision::micro, error));
    EXPECT_NE(error.find("/nonexistent-dir/x.pcap"), std::string::npos) << error;
    EXPECT_NE(error.find("No such file"), std::string::npos) << error;
    EXPECT_FALSE(w.is_open());
    EXPECT_FALSE(w.write(1, "x", 1));
}

}  // namespace
