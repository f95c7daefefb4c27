// Unit tests of how a worker's longest loop gap reaches the operator: the control socket's JSON,
// /metrics (in seconds) and the MAX GAP column of `sbcctl status`.
#include <gtest/gtest.h>

#include <string>

#include "control/stats.h"

namespace sbc::control {
namespace {

stats_report report_with_gaps()
{
    stats_report r;
    r.node_name = "sbc-1";
    r.state = "running";
    r.version = "0.1.0";
    r.tsc_hz = 2'000'000'000;
    for (unsigned id = 0; id < 2; ++id) {
        worker_status w;
        w.id = id;
        w.lcore = id + 1;
        w.max_loop_gap_us = id == 0 ? 12.0 : 4051.0;
        r.workers.push_back(w);
    }
    return r;
}

TEST(loop_gap_report, each_workers_gap_is_in_the_json_metrics_and_status_text)
{
    const stats_report r = report_with_gaps();
    const auto j = to_json(r);
    ASSERT_EQ(j["workers"].size(), 2u);
    EXPECT_DOUBLE_EQ(j["workers"][1]["max_loop_gap_us"].get<double>(), 4051.0);

    const std::string prom = to_prometheus(r);
    EXPECT_NE(prom.find("# TYPE sbc_worker_max_loop_gap_seconds gauge"), std::string::npos) << prom;
    EXPECT_NE(prom.find("sbc_worker_max_loop_gap_seconds{worker=\"1\"} 0.004051"), std::string::npos) << prom;

    const std::string text = render_status_text(j);
    EXPECT_NE(text.find("MAX GAP"), std::string::npos) << text;
    EXPECT_NE(text.find("4051 us"), std::string::npos) << text;
    EXPECT_NE(text.find("12 us"), std::string::npos) << text;
}

}  // namespace
}  // namespace sbc::control
