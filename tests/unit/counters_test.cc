// Unit tests of dataplane/counters.h: names of drop reasons and stages, reading a worker's
// counters, summing, differences between readings and busy share; the single-writer counter
// of common/counter.h they are made of.
#include "dataplane/counters.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <set>
#include <string>
#include <thread>

namespace sbc::dataplane {
namespace {

TEST(counters, drop_reason_names_are_unique_nonempty_metric_labels_with_help)
{
    std::set<std::string_view> names;
    for (std::size_t i = 0; i < drop_reason_count; ++i) {
        const auto r = static_cast<drop_reason>(i);
        const auto name = drop_reason_name(r);
        EXPECT_FALSE(name.empty());
        EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;
        for (char c : name) EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') << name;
        EXPECT_FALSE(drop_reason_help(r).empty()) << name;
        EXPECT_EQ(drop_reason_help(r).find('\n'), std::string_view::npos) << "help is one line: " << name;
    }
    EXPECT_EQ(drop_reason_name(drop_reason::ipv4_bad_checksum), "ipv4_bad_checksum");
}

TEST(counters, stage_names_are_unique_and_nonempty)
{
    std::set<std::string_view> names;
    for (std::size_t i = 0; i < stage_count; ++i) {
        const auto name = stage_name(static_cast<stage>(i));
        EXPECT_FALSE(name.empty());
        EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;
    }
    EXPECT_EQ(stage_name(stage::udp), "udp");
}

TEST(counters, snapshot_reads_what_the_worker_counted)
{
    worker_counters w;
    w.rx_packets.add(3);
    w.rx_packets.add(4);
    w.tx_bytes.add(1500);
    w.drop(drop_reason::tx_full);
    w.drop(drop_reason::udp_port_closed, 5);
    w.entered(stage::arp, 2);
    w.busy_cycles.add(10);
    w.total_cycles.add(40);
    const auto v = snapshot_of(w);
    EXPECT_EQ(v.rx_packets, 7u);
    EXPECT_EQ(v.tx_bytes, 1500u);
    EXPECT_EQ(v.drops[static_cast<std::size_t>(drop_reason::tx_full)], 1u);
    EXPECT_EQ(v.drops[static_cast<std::size_t>(drop_reason::udp_port_closed)], 5u);
    EXPECT_EQ(v.drops_total(), 6u);
    EXPECT_EQ(v.stage_packets[static_cast<std::size_t>(stage::arp)], 2u);
    EXPECT_DOUBLE_EQ(v.busy_percent(), 25.0);
}

TEST(counters, worker_counters_do_not_share_a_cache_line)
{
    EXPECT_EQ(alignof(worker_counters) % 64, 0u);
    EXPECT_EQ(sizeof(worker_counters) % 64, 0u);
}

TEST(counters, accumulate_sums_every_field)
{
    counters_view a;
    counters_view b;
    a.rx_packets = 1;
    b.rx_packets = 2;
    a.drops[0] = 5;
    b.drops[drop_reason_count - 1] = 7;
    a.stage_packets[1] = 3;
    b.stage_packets[1] = 4;
    b.events_sent = 9;
    a.loops = 10;
    b.busy_loops = 11;
    a.busy_cycles = 12;
    b.total_cycles = 13;
    b.rx_bytes = 14;
    a.tx_packets = 15;
    b.tx_bytes = 16;
    a.cdr_records = 17;
    b.cdr_records = 1;
    b.cdr_dropped = 18;
    accumulate(a, b);
    EXPECT_EQ(a.rx_packets, 3u);
    EXPECT_EQ(a.drops[0], 5u);
    EXPECT_EQ(a.drops[drop_reason_count - 1], 7u);
    EXPECT_EQ(a.stage_packets[1], 7u);
    EXPECT_EQ(a.events_sent, 9u);
    EXPECT_EQ(a.loops, 10u);
    EXPECT_EQ(a.busy_loops, 11u);
    EXPECT_EQ(a.busy_cycles, 12u);
    EXPECT_EQ(a.total_cycles, 13u);
    EXPECT_EQ(a.rx_bytes, 14u);
    EXPECT_EQ(a.tx_packets, 15u);
    EXPECT_EQ(a.tx_bytes, 16u);
    EXPECT_EQ(a.cdr_records, 18u);
    EXPECT_EQ(a.cdr_dropped, 18u);
    EXPECT_EQ(a.drops_total(), 12u);
}

TEST(counters, difference_gives_what_happened_between_two_readings)
{
    counters_view before;
    counters_view after;
    before.rx_packets = 100;
    after.rx_packets = 250;
    before.busy_cycles = 100;
    after.busy_cycles = 400;
    before.total_cycles = 1000;
    after.total_cycles = 2000;
    after.drops[3] = 4;
    const auto d = difference(before, after);
    EXPECT_EQ(d.rx_packets, 150u);
    EXPECT_EQ(d.drops[3], 4u);
    EXPECT_DOUBLE_EQ(d.busy_percent(), 30.0);
}

TEST(counters, difference_never_goes_negative_when_counters_restart)
{
    counters_view before;
    counters_view after;
    before.rx_packets = 500;  // a restarted daemon counts from zero again
    after.rx_packets = 20;
    EXPECT_EQ(difference(before, after).rx_packets, 0u);
}

TEST(counters, busy_percent_is_zero_before_anything_was_measured_and_bounded_by_100)
{
    counters_view v;
    EXPECT_EQ(v.busy_percent(), 0.0);
    v.busy_cycles = 50;
    v.total_cycles = 50;
    EXPECT_DOUBLE_EQ(v.busy_percent(), 100.0);
}

}  // namespace
}  // namespace sbc::dataplane

namespace sbc {
namespace {

TEST(single_writer_counter, adds_and_reads_back_what_its_owner_added)
{
    single_writer<uint64_t> c;
    EXPECT_EQ(c.get(), 0u);
    c.add(5);
    c.bump();
    EXPECT_EQ(c.get(), 6u);
}

TEST(single_writer_counter, moves_a_gauge_down_as_well_as_up_and_sets_it)
{
    single_writer<uint32_t> g{3};
    EXPECT_EQ(g.get(), 3u);
    g.move(-2);
    EXPECT_EQ(g.get(), 1u);
    g.move(4);
    EXPECT_EQ(g.get(), 5u);
    g.add(10u);
    g.bump();
    EXPECT_EQ(g.get(), 16u);
    g.set(7);
    EXPECT_EQ(g.get(), 7u);
}

TEST(single_writer_counter, loses_no_add_of_its_one_writer_while_others_read)
{
    single_writer<uint64_t> c;
    std::atomic<bool> done{false};
    uint64_t last = 0;
    bool monotonic = true;
    std::thread reader([&] {
        while (!done.load(std::memory_order_acquire)) {
            const uint64_t v = c.get();
            monotonic = monotonic && v >= last;
            last = v;
        }
    });
    for (int i = 0; i < 1000000; ++i) c.add(1);
    done.store(true, std::memory_order_release);
    reader.join();
    EXPECT_EQ(c.get(), 1000000u);
    EXPECT_TRUE(monotonic);
}

}  // namespace
}  // namespace sbc
