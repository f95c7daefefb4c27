// What an operator sees of scanners and overload shedding (control/stats.cc, control/sip_stats.cc):
// each worker's overload state in the report's JSON, in `sbcctl stats` and in /metrics, and the
// scanner matches by list and header. Unit tier: pure rendering over a report.
#include <gtest/gtest.h>

#include <string>

#include "control/stats.h"

namespace sbc::control {
namespace {

stats_report two_workers_one_overloaded()
{
    stats_report r;
    r.node_name = "sbc-1";
    r.state = "running";
    for (unsigned id = 0; id < 2; ++id) {
        worker_status w;
        w.id = id;
        w.lcore = id + 1;
        r.workers.push_back(w);
    }
    r.workers[1].overload_reduction = 40;
    r.workers[1].recent_busy_percent = 96.0;
    r.workers[1].ring_percent = 12;
    r.sip.enabled = true;
    r.sip.counters = {{"shed_overload", 7}, {"scanner_dropped", 3}};
    r.sip.help = {{"shed_overload", "shed"}, {"scanner_dropped", "dropped"}};
    r.sip.scanner_matches = {3, 0, 0, 0, 1, 0};  // shipped User-Agent x3, the operator's From x1
    return r;
}

TEST(overload_report, metrics_show_which_worker_sheds_and_how_much)
{
    const std::string m = to_prometheus(two_workers_one_overloaded());
    EXPECT_NE(m.find("sbc_worker_overloaded{worker=\"0\"} 0\n"), std::string::npos) << m;
    EXPECT_NE(m.find("sbc_worker_overloaded{worker=\"1\"} 1\n"), std::string::npos);
    EXPECT_NE(m.find("sbc_worker_overload_reduction_percent{worker=\"1\"} 40\n"), std::string::npos);
    EXPECT_NE(m.find("sbc_worker_recent_busy_percent{worker=\"1\"} 96"), std::string::npos);
    EXPECT_NE(m.find("sbc_worker_ring_fill_percent{worker=\"1\"} 12\n"), std::string::npos);
    EXPECT_NE(m.find("sbc_sip_shed_overload_total 7\n"), std::string::npos);
    EXPECT_NE(m.find("sbc_sip_scanner_dropped_total 3\n"), std::string::npos);
    EXPECT_NE(m.find("sbc_sip_scanner_matches_total{set=\"default\",field=\"user_agent\"} 3\n"), std::string::npos);
    EXPECT_NE(m.find("sbc_sip_scanner_matches_total{set=\"config\",field=\"from\"} 1\n"), std::string::npos);
}

TEST(overload_report, sbcctl_stats_shows_each_workers_overload_from_the_json)
{
    const nlohmann::json j = to_json(two_workers_one_overloaded());
    EXPECT_EQ(j["workers"][1]["overload"]["reduction_percent"], 40);
    EXPECT_EQ(j["sip"]["scanner_matches"]["default"]["user_agent"], 3);
    const std::string text = render_stats_text(j);
    const auto table = text.find("overload per worker");
    ASSERT_NE(table, std::string::npos) << text;
    EXPECT_NE(text.find("40% of new requests (503)", table), std::string::npos) << text;
    EXPECT_NE(text.find("96.0", table), std::string::npos);
    nlohmann::json old = j;  // a daemon from before [overload]
    for (auto& w : old["workers"]) w.erase("overload");
    EXPECT_NE(render_stats_text(old).find("overload per worker"), std::string::npos) << "an older report still renders";
}

}  // namespace
}  // namespace sbc::control
