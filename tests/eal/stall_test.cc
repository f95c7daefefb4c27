// The control core publishing must not stall or starve the workers: the real worker loop runs on
// its lcore and answers pings and INVITEs (choosing a peer from the published health words)
// while the test thread, standing in for the control core, publishes 1,000 snapshots per second
// (rcu_xchg_pointer, the old one freed by call_rcu) and flips 10,000 health words per second,
// for two seconds. Every ping is answered, every INVITE gets its 100 Trying, nothing is dropped,
// and the longest gap between two worker loop iterations is printed. The lcores share CPU 0
// here (eal_main.cc), so that gap includes the time the test thread itself holds the CPU; it is
// a report, not a bound (scripts/bench/stall.sh measures on separate CPUs).
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include <rte_cycles.h>

#include "tests/eal/frame_builder.h"
#include "tests/eal/harness.h"

namespace sbc::test {
namespace {

namespace dp = sbc::dataplane;
using namespace std::chrono_literals;

constexpr uint32_t caller_ip = ipv4(198, 18, 0, 2);
constexpr mac caller_mac{0x02, 0, 0, 0, 0, 0x02};
constexpr mac gateway_mac{0x02, 0, 0, 0, 0, 0xfe};
constexpr uint32_t n_peers = 64;

std::shared_ptr<const sip::proxy_tables> tables()
{
    auto t = std::make_shared<sip::proxy_tables>();
    t->trunks.push_back(access_trunk());
    sip::region r{"r1", {}};
    for (uint32_t i = 0; i < n_peers; ++i) {
        sip::peer p;
        p.name = "r1/peer" + std::to_string(i);
        p.id = i;
        p.address = ip_address::v4(ipv4(198, 18, 1, static_cast<uint8_t>(10 + i)));
        p.priority = static_cast<uint16_t>(i / 16);
        p.weight = 10;
        t->peers.push_back(p);
        r.peers.push_back(i);
    }
    t->index_peers();
    t->regions.push_back(r);
    t->groups.push_back({"g1", {0}, sip::selector::srv});
    t->routes.push_back({"default", sip::match_field::ruri_user, "", 0});
    t->default_route = 0;
    for (uint16_t c : {408, 503, 504}) t->retry.codes.set(c);
    return t;
}

bytes invite_frame(const harness& h, unsigned n)
{
    const std::string k = std::to_string(n);
    const std::string text = "INVITE sip:1000@198.18.0.1 SIP/2.0\r\n"
                             "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-stall" + k + "\r\n"
                             "Max-Forwards: 70\r\n"
                             "From: <sip:caller@198.18.0.2>;tag=s" + k + "\r\n"
                             "To: <sip:1000@198.18.0.1>\r\n"
                             "Call-ID: stall-" + k + "\r\n"
                             "CSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n";
    const bytes payload(text.begin(), text.end());
    return ethernet({h.our_mac(), caller_mac, 0}, ethertype_ipv4,
                    ipv4_packet({caller_ip, our_ip, proto_udp, 64, 0, static_cast<uint16_t>(n), 0},
                                udp_datagram(caller_ip, our_ip, 5060, 5060, payload)));
}

bool starts_with(const bytes& b, std::size_t off, std::string_view s)
{
    return b.size() >= off + s.size() && std::equal(s.begin(), s.end(), b.begin() + static_cast<std::ptrdiff_t>(off));
}

TEST(eal_stall, workers_lose_nothing_while_the_control_core_publishes_and_flips)
{
    harness h(8191);
    ASSERT_TRUE(h.ok()) << h.error();
    const auto t = tables();
    h.set_proxy(t);
    h.runtime().shared->neighbours.insert(ip_address::v4(caller_ip), caller_mac, 1);
    h.runtime().shared->neighbours.insert(ip_address::v4(our_gateway), gateway_mac, 1);
    std::string error;
    ASSERT_TRUE(dp::launch_workers(h.runtime(), error)) << error;
    auto& w = h.worker();
    auto& words = h.runtime().shared->peer_health.word;

    const bytes data = pattern(32);
    uint64_t pings = 0, invites = 0, replies = 0, trying = 0, published = 0, flipped = 0, ring_full = 0;
    // The lcores share CPU 0 with this thread: after a preemption it catches up several ticks at
    // once, and may then find the worker's RX ring full. It waits for the worker (at most 2 s)
    // instead of counting that as a loss: the ring is this test's feeder, not a NIC.
    auto feed = [&](const bytes& f) {
        const auto give_up = std::chrono::steady_clock::now() + 2s;
        while (!h.receive(f)) {
            ++ring_full;
            if (std::chrono::steady_clock::now() > give_up) return false;
            std::this_thread::sleep_for(100us);
        }
        return true;
    };
    // What the worker sent so far: echo replies to the pinger, 100 Trying to the caller; the
    // INVITEs it forwards to peers are freed uncounted.
    auto collect = [&] {
        sent_frames s = h.take_sent();
        for (auto* m : s.mbufs) {
            const bytes b = linear_bytes(m);
            if (b.size() < 14 + 20 + 8) continue;
            const uint8_t proto = b[14 + 9];
            if (proto == proto_icmp && b[14 + 20] == 0) ++replies;
            if (proto == proto_udp && read32(b, 14 + 16) == caller_ip && starts_with(b, 14 + 28, "SIP/2.0 100 ")) ++trying;
        }
    };

    w.max_loop_gap_epoch.bump();  // the test stands in for the control core, the word's writer
    const auto before = dp::snapshot_of(w.counters);
    const auto t0 = std::chrono::steady_clock::now();
    uint32_t flip = 0;
    // 2,000 ticks of 1 ms: one publication and ten flips each, four pings, and an INVITE every
    // fifth tick. A tick missed (the thread preempted) is caught up at once.
    for (uint64_t k = 0; k < 2000; ++k) {
        std::this_thread::sleep_until(t0 + std::chrono::milliseconds(k));
        h.set_proxy(t);
        ++published;
        for (int f = 0; f < 10; ++f) {
            auto& word = words[flip];
            word.store(word.load(std::memory_order_relaxed) ^ sip::peer_state::down, std::memory_order_relaxed);
            flip = (flip + 1) % n_peers;
            ++flipped;
        }
        for (int p = 0; p < 4; ++p) {
            const auto seq = static_cast<uint16_t>(pings);
            const bytes f = ethernet({h.our_mac(), peer_mac, 0}, ethertype_ipv4,
                                     ipv4_packet({peer_ip, our_ip, proto_icmp, 64, 0, seq, 0}, icmp_echo(8, 7, seq, data)));
            ASSERT_TRUE(feed(f)) << "the worker took no packet from its RX ring for 2 s";
            ++pings;
        }
        if (k % 5 == 0) {
            ASSERT_TRUE(feed(invite_frame(h, static_cast<unsigned>(invites))));
            ++invites;
        }
        collect();
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto deadline = std::chrono::steady_clock::now() + 3s;
    while ((replies < pings || trying < invites) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(1ms);
        collect();
    }
    std::this_thread::sleep_for(5ms);  // one more fold of the loop counters (every 64 loops)
    const auto d = dp::difference(before, dp::snapshot_of(w.counters));
    const double gap_us = static_cast<double>(w.max_loop_gap.get()) /
                          (static_cast<double>(rte_get_tsc_hz()) / 1e6);
    std::printf("eal_stall: %.2f s, %.0f snapshots/s, %.0f health flips/s, %lu pings, %lu INVITEs, "
                "RX ring found full %lu times, max_loop_gap_us=%.1f\n",
                secs, static_cast<double>(published) / secs, static_cast<double>(flipped) / secs,
                static_cast<unsigned long>(pings), static_cast<unsigned long>(invites),
                static_cast<unsigned long>(ring_full), gap_us);

    EXPECT_EQ(replies, pings) << "every ping answered";
    EXPECT_EQ(trying, invites) << "every INVITE answered 100 Trying";
    EXPECT_EQ(d.drops_total(), 0u) << "nothing dropped";
    EXPECT_EQ(published, 2000u);
    EXPECT_GT(w.max_loop_gap.get(), 0u) << "the gap is measured";
    EXPECT_LT(secs, 6.0) << "the control side kept its pace (2 s planned)";
}

}  // namespace
}  // namespace sbc::test
