// The real worker loop (run_loop over process_burst) on a worker lcore: echo requests injected
// through the ring port while it runs all come back answered, the busy accounting moves, and
// stop_dataplane brings the worker back.
#include <chrono>
#include <future>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "tests/eal/frame_builder.h"
#include "tests/eal/harness.h"

namespace sbc::test {
namespace {

namespace dp = sbc::dataplane;
using namespace std::chrono_literals;

TEST(eal_run_loop, answers_every_echo_while_running_on_its_lcore_and_stops)
{
    harness h;
    ASSERT_TRUE(h.ok()) << h.error();
    std::string error;
    ASSERT_TRUE(dp::launch_workers(h.runtime(), error)) << error;

    constexpr uint16_t n = 600;
    const bytes data = pattern(64);
    for (uint16_t seq = 0; seq < n; ++seq) {
        const bytes f = ethernet({h.our_mac(), peer_mac, 0}, ethertype_ipv4,
                                 ipv4_packet({peer_ip, our_ip, proto_icmp, 64, 0, seq, 0}, icmp_echo(8, 1, seq, data)));
        while (!h.receive(f)) std::this_thread::sleep_for(1ms);  // the ring full: the worker catches up
    }
    // Bounded wait: the replies, and at least one fold of the loop counters (every 64 loops).
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while ((rte_ring_count(h.tx_ring()) < n || h.counters().loops == 0) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(1ms);

    const auto v = h.counters();
    EXPECT_EQ(v.rx_packets, n);
    EXPECT_EQ(v.tx_packets, n);
    EXPECT_GT(v.loops, 0u);
    EXPECT_GT(v.busy_loops, 0u);
    EXPECT_GT(v.busy_cycles, 0u);
    EXPECT_GE(v.total_cycles, v.busy_cycles);

    auto stopped = std::async(std::launch::async, [&] { dp::stop_dataplane(h.runtime()); });
    ASSERT_EQ(stopped.wait_for(5s), std::future_status::ready) << "stop_dataplane did not return";

    sent_frames sent = h.take_sent();
    ASSERT_EQ(sent.size(), n);
    std::set<uint16_t> seqs;
    for (auto* m : sent.mbufs) {
        const bytes b = linear_bytes(m);
        ASSERT_EQ(b.size(), 14u + 20 + 8 + data.size());
        const auto ip = std::span(b).subspan(14);
        EXPECT_EQ(read32(ip, 12), our_ip);
        EXPECT_EQ(ip[20], 0) << "echo reply";
        EXPECT_EQ(internet_checksum(ip.first(20)), 0);
        EXPECT_EQ(internet_checksum(ip.subspan(20)), 0);
        seqs.insert(read16(ip, 26));
    }
    EXPECT_EQ(seqs.size(), n) << "each request answered once";
}

}  // namespace
}  // namespace sbc::test
