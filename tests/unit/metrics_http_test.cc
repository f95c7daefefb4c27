// Unit tests of the management HTTP endpoint on 127.0.0.1 with an ephemeral port: /metrics,
// /healthz following the callback, and bind failures reported in words.
#include "control/metrics_http.h"

#include <gtest/gtest.h>

#include <atomic>

#include <httplib.h>

namespace sbc::control {
namespace {

std::unique_ptr<metrics_http> start_local(std::atomic<bool>* draining, std::string& error)
{
    return metrics_http::start(
        "127.0.0.1:0", [] { return std::string("# HELP sbc_up up\n# TYPE sbc_up gauge\nsbc_up 1\n"); },
        [draining]() -> std::pair<int, std::string> {
            if (draining && *draining) return {503, "draining"};
            return {200, "ok"};
        },
        error);
}

TEST(metrics_http, serves_prometheus_text_on_metrics)
{
    std::string error;
    auto http = start_local(nullptr, error);
    ASSERT_TRUE(http) << error;
    ASSERT_NE(http->port(), 0);
    httplib::Client cli("127.0.0.1", http->port());
    auto res = cli.Get("/metrics");
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    EXPECT_EQ(res->status, 200);
    EXPECT_EQ(res->get_header_value("Content-Type").rfind("text/plain; version=0.0.4", 0), 0u);
    EXPECT_NE(res->body.find("sbc_up 1"), std::string::npos);
}

TEST(metrics_http, healthz_follows_the_nodes_state)
{
    std::atomic<bool> draining{false};
    std::string error;
    auto http = start_local(&draining, error);
    ASSERT_TRUE(http) << error;
    httplib::Client cli("127.0.0.1", http->port());
    auto ok = cli.Get("/healthz");
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->status, 200);
    EXPECT_EQ(ok->body, "ok\n");
    draining = true;
    auto drain = cli.Get("/healthz");
    ASSERT_TRUE(drain);
    EXPECT_EQ(drain->status, 503);
    EXPECT_EQ(drain->body, "draining\n");
}

TEST(metrics_http, answers_404_for_other_paths)
{
    std::string error;
    auto http = start_local(nullptr, error);
    ASSERT_TRUE(http) << error;
    httplib::Client cli("127.0.0.1", http->port());
    auto res = cli.Get("/");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 404);
}

TEST(metrics_http, reports_an_address_in_use_instead_of_sharing_it)
{
    std::string error;
    auto first = start_local(nullptr, error);
    ASSERT_TRUE(first) << error;
    auto second = metrics_http::start(
        "127.0.0.1:" + std::to_string(first->port()), [] { return std::string(); },
        [] { return std::pair<int, std::string>{200, "ok"}; }, error);
    EXPECT_FALSE(second);
    EXPECT_NE(error.find("address in use"), std::string::npos) << error;
}

TEST(metrics_http, reports_a_malformed_or_foreign_address)
{
    std::string error;
    auto none = metrics_http::start("nonsense", [] { return std::string(); },
                                    [] { return std::pair<int, std::string>{200, "ok"}; }, error);
    EXPECT_FALSE(none);
    EXPECT_NE(error.find("expected host:port"), std::string::npos) << error;
    auto foreign = metrics_http::start("192.0.2.1:9090", [] { return std::string(); },
                                       [] { return std::pair<int, std::string>{200, "ok"}; }, error);
    EXPECT_FALSE(foreign);
    EXPECT_NE(error.find("not available"), std::string::npos) << error;
}

TEST(metrics_http, stops_serving_when_destroyed)
{
    std::string error;
    auto http = start_local(nullptr, error);
    ASSERT_TRUE(http) << error;
    const uint16_t port = http->port();
    http.reset();
    httplib::Client cli("127.0.0.1", port);
    cli.set_connection_timeout(1, 0);
    EXPECT_FALSE(cli.Get("/metrics"));
}

}  // namespace
}  // namespace sbc::control
