// Running one packet case (see packet_case.h). Test thread only.
#include "tests/eal/packet_case.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace sbc::test {

namespace dp = sbc::dataplane;

namespace {

void expect_event(const dp::event& got, const dp::event& want)
{
    EXPECT_EQ(static_cast<int>(got.kind), static_cast<int>(want.kind));
    EXPECT_EQ(got.worker, 0);
    EXPECT_EQ(got.iface, want.iface);
    EXPECT_EQ(got.ip, want.ip);
    if (want.kind == dp::event_kind::neighbour_seen) {
        EXPECT_EQ(got.mac, want.mac);
    }
    if (want.kind == dp::event_kind::packet_too_big) {
        EXPECT_EQ(got.orig_dst, want.orig_dst);
        EXPECT_EQ(got.code, want.code) << "the path MTU";
    }
    if (want.kind == dp::event_kind::icmp_unreachable) {
        EXPECT_EQ(got.icmp_type, want.icmp_type);
        EXPECT_EQ(got.icmp_code, want.icmp_code);
        EXPECT_EQ(got.orig_dst, want.orig_dst);
        EXPECT_EQ(got.orig_proto, want.orig_proto);
        EXPECT_EQ(got.orig_src_port, want.orig_src_port);
        EXPECT_EQ(got.orig_dst_port, want.orig_dst_port);
    }
}

}  // namespace

void expect_valid_checksums(const bytes& f)
{
    std::size_t l2 = 14;
    if (read16(f, 12) == ethertype_vlan) l2 = 18;
    if (read16(f, l2 - 2) == ethertype_ipv6) {
        // The frames we send carry no extension headers: the upper layer follows the header.
        const auto ip = std::span(f).subspan(l2);
        const auto msg = ip.subspan(40, read16(ip, 4));
        if (ip[6] == proto_icmp6) {
            uint32_t acc = ones_sum(ip.subspan(8, 32));
            acc += static_cast<uint32_t>(msg.size()) + proto_icmp6;
            EXPECT_EQ(fold_checksum(ones_sum(msg, acc)), 0) << "ICMPv6 checksum";
        }
        return;
    }
    if (read16(f, l2 - 2) != ethertype_ipv4) return;
    const auto ip = std::span(f).subspan(l2);
    const std::size_t ihl = (ip[0] & 0xf) * 4u;
    EXPECT_EQ(internet_checksum(ip.first(ihl)), 0) << "IPv4 header checksum";
    const auto l4 = ip.subspan(ihl, read16(ip, 2) - ihl);
    if (ip[9] == proto_icmp) {
        EXPECT_EQ(internet_checksum(l4), 0) << "ICMP checksum";
    }
    if (ip[9] == proto_udp) {
        EXPECT_EQ(udp_checksum(read32(ip, 12), read32(ip, 16), l4), 0) << "UDP checksum";
    }
}

void expect_verdict(harness& h, const packet_case& c)
{
    ASSERT_TRUE(h.receive(c.input));
    h.poll();
    const auto v = h.counters();
    sent_frames sent = h.take_sent();
    const auto events = h.take_events();

    EXPECT_EQ(v.rx_packets, 1u);
    EXPECT_EQ(v.rx_bytes, c.input.size());
    if (c.drop) {
        EXPECT_EQ(v.drops[static_cast<std::size_t>(*c.drop)], 1u) << "drop reason " << dp::drop_reason_name(*c.drop);
        EXPECT_EQ(v.drops_total(), 1u) << "counted under one reason only";
    } else {
        for (std::size_t r = 0; r < dp::drop_reason_count; ++r)
            EXPECT_EQ(v.drops[r], 0u) << "unexpected drop " << dp::drop_reason_name(static_cast<dp::drop_reason>(r));
    }
    if (c.output) {
        ASSERT_EQ(sent.size(), 1u);
        EXPECT_EQ(v.tx_packets, 1u);
        const bytes out = linear_bytes(sent.mbufs[0]);
        EXPECT_EQ(out, *c.output);
        expect_valid_checksums(out);
    } else {
        EXPECT_EQ(sent.size(), 0u);
        EXPECT_EQ(v.tx_packets, 0u);
    }
    if (c.event) {
        ASSERT_EQ(events.size(), 1u);
        EXPECT_EQ(v.events_sent, 1u);
        expect_event(events[0], *c.event);
    } else {
        EXPECT_EQ(events.size(), 0u);
    }
    for (auto* m : sent.mbufs) rte_pktmbuf_free(m);
    sent.mbufs.clear();
    EXPECT_EQ(h.mbufs_in_use(), 0u) << "every mbuf went back to its pool";
}

std::vector<std::string> case_names(case_table cases)
{
    std::vector<std::string> names;
    for (const auto& c : cases(mac{})) names.push_back(c.name);
    return names;
}

void run_named_case(case_table cases, const std::string& name)
{
    harness h;
    ASSERT_TRUE(h.ok()) << h.error();
    const auto all = cases(h.our_mac());
    const auto it = std::find_if(all.begin(), all.end(), [&](const packet_case& c) { return c.name == name; });
    ASSERT_NE(it, all.end());
    expect_verdict(h, *it);
}

}  // namespace sbc::test
