// Unit tests of the status report renderers: the JSON the control socket sends, the
// Prometheus text of /metrics, and the text views of sbcctl status, stats and top.
#include "control/stats.h"
#include "control/media_stats.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace sbc::control {
namespace {

namespace dp = sbc::dataplane;

std::size_t idx(dp::drop_reason r) { return static_cast<std::size_t>(r); }

stats_report sample_report()
{
    stats_report r;
    r.node_name = "sbc-1";
    r.state = "running";
    r.version = "0.1.0";
    r.uptime_s = 3725;
    r.snapshot_generation = 3;
    r.tsc_hz = 2'000'000'000;
    r.neighbours = 2;
    r.interfaces.push_back({"core", "net_af_packet0,iface=sbc-dp", "198.18.0.1/24", "02:00:00:00:00:01", 0, 0, true,
                            "198.18.0.254", "02:00:00:00:00:fe", "2001:2:0:1::1/64", "fe80::ff:fe00:1", "fe80::1",
                            "02:00:00:00:00:fd"});
    r.interfaces.push_back({"access", "0000:3b:00.0", "198.19.0.1/24", "02:00:00:00:00:02", 1, 100, false,
                            "198.19.0.254", "", "", "", "", ""});
    for (unsigned id = 0; id < 2; ++id) {
        worker_status w;
        w.id = id;
        w.lcore = id + 1;
        w.counters.rx_packets = 1000 * (id + 1);
        w.counters.rx_bytes = 64000 * (id + 1);
        w.counters.tx_packets = 900 * (id + 1);
        w.counters.tx_bytes = 57600 * (id + 1);
        w.counters.stage_packets[static_cast<std::size_t>(dp::stage::eth)] = 1000 * (id + 1);
        w.counters.drops[idx(dp::drop_reason::ipv4_bad_checksum)] = 7 * (id + 1);
        w.counters.busy_cycles = 250 * (id + 1);
        w.counters.total_cycles = 1000;
        w.counters.loops = 10000;
        w.dialogs_active = 4130 + id;  // 4130 and 4131: distinct from every other figure here
        w.setups_active = 17 + id;
        r.workers.push_back(w);
        dp::accumulate(r.total, w.counters);
    }
    return r;
}

TEST(stats, json_report_carries_node_interfaces_workers_and_totals)
{
    auto j = to_json(sample_report());
    EXPECT_EQ(j["node"], "sbc-1");
    EXPECT_EQ(j["state"], "running");
    EXPECT_EQ(j["version"], "0.1.0");
    EXPECT_EQ(j["uptime_s"], 3725.0);
    EXPECT_EQ(j["snapshot_generation"], 3);
    EXPECT_EQ(j["tsc_hz"], 2'000'000'000u);
    EXPECT_EQ(j["neighbours"], 2);
    ASSERT_EQ(j["interfaces"].size(), 2u);
    EXPECT_EQ(j["interfaces"][1]["name"], "access");
    EXPECT_EQ(j["interfaces"][1]["vlan"], 100);
    EXPECT_EQ(j["interfaces"][1]["link_up"], false);
    EXPECT_EQ(j["interfaces"][1]["gateway_mac"], "");
    ASSERT_EQ(j["workers"].size(), 2u);
    EXPECT_EQ(j["workers"][1]["lcore"], 2);
    EXPECT_EQ(j["workers"][1]["counters"]["drops"]["ipv4_bad_checksum"], 14);
    EXPECT_EQ(j["total"]["rx_packets"], 3000);
    EXPECT_EQ(j["total"]["drops_total"], 21);
    EXPECT_EQ(j["total"]["stages"]["eth"], 3000);
    EXPECT_DOUBLE_EQ(j["workers"][0]["counters"]["busy_percent"].get<double>(), 25.0);
    EXPECT_EQ(j["total"]["drops"].size(), dp::drop_reason_count) << "every reason is present, also at zero";
}

TEST(stats, counters_survive_a_trip_through_json)
{
    auto r = sample_report();
    auto back = counters_from_json(to_json(r.total));
    EXPECT_EQ(back.rx_packets, r.total.rx_packets);
    EXPECT_EQ(back.tx_bytes, r.total.tx_bytes);
    EXPECT_EQ(back.drops, r.total.drops);
    EXPECT_EQ(back.stage_packets, r.total.stage_packets);
    EXPECT_EQ(back.busy_cycles, r.total.busy_cycles);
    EXPECT_EQ(back.total_cycles, r.total.total_cycles);
    EXPECT_EQ(back.loops, r.total.loops);
}

TEST(stats, counters_from_json_ignores_what_it_does_not_know)
{
    auto c = counters_from_json(nlohmann::json{{"rx_packets", 5}, {"drops", {{"a_future_reason", 9}}}, {"x", "y"}});
    EXPECT_EQ(c.rx_packets, 5u);
    EXPECT_EQ(c.drops_total(), 0u);
    EXPECT_EQ(counters_from_json(nlohmann::json("not an object")).rx_packets, 0u);
}

struct prom_sample {
    std::string name;
    std::string labels;
    std::string value;
};

// Parses exposition text the way a strict scraper would; fails the test on any bad line.
std::vector<prom_sample> parse_prometheus(const std::string& text, std::map<std::string, std::string>& types)
{
    static const std::regex sample_re(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (-?[0-9.eE+-]+|NaN|\+Inf|-Inf)$)");
    static const std::regex help_re(R"(^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .+$)");
    static const std::regex type_re(R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$)");
    std::set<std::string> helps;
    std::vector<prom_sample> samples;
    std::istringstream in(text);
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
        if (std::regex_match(line, m, help_re)) {
            EXPECT_TRUE(helps.insert(m[1]).second) << "HELP twice for " << m[1];
        } else if (std::regex_match(line, m, type_re)) {
            EXPECT_TRUE(types.emplace(m[1], m[2]).second) << "TYPE twice for " << m[1];
        } else if (line.rfind("# ", 0) == 0) {
            EXPECT_EQ(line.find("HELP"), std::string::npos) << "malformed HELP: " << line;
            EXPECT_EQ(line.find("TYPE"), std::string::npos) << "malformed TYPE: " << line;
        } else if (std::regex_match(line, m, sample_re)) {
            EXPECT_TRUE(types.count(m[1])) << "sample before its TYPE: " << line;
            EXPECT_TRUE(helps.count(m[1])) << "sample without HELP: " << line;
            samples.push_back({m[1], m[2], m[3]});
        } else {
            ADD_FAILURE() << "malformed line: '" << line << "'";
        }
    }
    return samples;
}

// The value of sample NAME with exactly LABELS ("" for none), or "absent".
std::string value_in(const std::vector<prom_sample>& samples, const std::string& name, const std::string& labels)
{
    for (const auto& s : samples)
        if (s.name == name && s.labels == labels) return s.value;
    return "absent";
}

TEST(stats, prometheus_text_is_well_formed_with_help_and_type_once_per_metric)
{
    std::map<std::string, std::string> types;
    auto samples = parse_prometheus(to_prometheus(sample_report()), types);
    EXPECT_GT(samples.size(), 50u);
    for (const auto& [name, type] : types) {
        EXPECT_EQ(name.rfind("sbc_", 0), 0u) << name;
        const bool ends_total = name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0;
        EXPECT_EQ(type == "counter", ends_total) << name << " is a " << type;
    }
    std::set<std::string> series;
    for (const auto& s : samples) EXPECT_TRUE(series.insert(s.name + s.labels).second) << "duplicate " << s.name << s.labels;
}

TEST(stats, call_records_handed_over_and_lost_show_per_worker_in_json_and_prometheus)
{
    auto r = sample_report();
    r.workers[1].counters.cdr_records = 40;
    r.workers[1].counters.cdr_dropped = 3;
    const auto back = counters_from_json(to_json(r.workers[1].counters));
    EXPECT_EQ(back.cdr_records, 40u);
    EXPECT_EQ(back.cdr_dropped, 3u);
    std::map<std::string, std::string> types;
    const auto samples = parse_prometheus(to_prometheus(r), types);
    auto value_of = [&](const std::string& name, const std::string& labels) { return value_in(samples, name, labels); };
    EXPECT_EQ(value_of("sbc_cdr_records_total", R"({worker="1"})"), "40");
    EXPECT_EQ(value_of("sbc_cdr_dropped_total", R"({worker="1"})"), "3");
    EXPECT_EQ(value_of("sbc_cdr_dropped_total", R"({worker="0"})"), "0");
    EXPECT_EQ(types["sbc_cdr_dropped_total"], "counter");
}

TEST(stats, media_jitter_is_a_cumulative_histogram_with_sum_and_count)
{
    media_report m;
    m.enabled = true;
    m.jitter_bounds_ms = {1, 5};
    m.jitter_flows = {2, 0, 3};  // two flows at or under 1 ms, three above 5 ms
    m.jitter_sum_ms = 40.5;
    const std::string text = media_prometheus(m);
    EXPECT_NE(text.find("# TYPE sbc_media_jitter_ms histogram\n"), std::string::npos) << text;
    EXPECT_NE(text.find("sbc_media_jitter_ms_bucket{le=\"1\"} 2\n"
                        "sbc_media_jitter_ms_bucket{le=\"5\"} 2\n"
                        "sbc_media_jitter_ms_bucket{le=\"+Inf\"} 5\n"
                        "sbc_media_jitter_ms_sum 40.5\n"
                        "sbc_media_jitter_ms_count 5\n"),
              std::string::npos)
        << text;
}

TEST(stats, prometheus_text_has_up_info_per_worker_counters_and_labelled_drops)
{
    std::map<std::string, std::string> types;
    const std::string text = to_prometheus(sample_report());
    auto samples = parse_prometheus(text, types);
    auto value_of = [&](const std::string& name, const std::string& labels) { return value_in(samples, name, labels); };
    EXPECT_EQ(value_of("sbc_up", ""), "1");
    EXPECT_EQ(value_of("sbc_info", R"({node="sbc-1",version="0.1.0",state="running"})"), "1");
    EXPECT_EQ(value_of("sbc_rx_packets_total", R"({worker="1"})"), "2000");
    EXPECT_EQ(value_of("sbc_drops_total", R"({worker="1",reason="ipv4_bad_checksum"})"), "14");
    EXPECT_EQ(value_of("sbc_drops_total", R"({worker="0",reason="tx_full"})"), "0");
    EXPECT_EQ(value_of("sbc_worker_busy_percent", R"({worker="0"})"), "25");
    EXPECT_EQ(types["sbc_worker_busy_percent"], "gauge");
    EXPECT_EQ(value_of("sbc_interface_gateway_resolved", R"({interface="access"})"), "0");
    EXPECT_EQ(value_of("sbc_interface_gateway6_resolved", R"({interface="core"})"), "1");
    EXPECT_EQ(value_of("sbc_interface_gateway6_resolved", R"({interface="access"})"), "0");
    EXPECT_EQ(value_of("sbc_interface_link_up", R"({interface="core"})"), "1");
    EXPECT_NE(text.find("ipv4_bad_checksum\": IPv4 header checksum wrong"), std::string::npos)
        << "each drop reason is explained";
}

TEST(stats, prometheus_escapes_quotes_in_label_values)
{
    auto r = sample_report();
    r.node_name = "a\"b\\c";
    std::map<std::string, std::string> types;
    auto text = to_prometheus(r);
    parse_prometheus(text, types);
    EXPECT_NE(text.find(R"(node="a\"b\\c")"), std::string::npos);
}

// A report with streams running, as control_loop::report() copies them from the stream thread.
stats_report report_with_streams()
{
    auto r = sample_report();
    stream_metrics& s = r.streams;
    s.running = true;
    s.open_by_state = {1, 2, 5};
    s.counters = {{"accepted", "inbound connections accepted", 40},
                  {"handshakes_ok", "TLS handshakes completed", 30},
                  {"msgs_in", "SIP messages received on streams", 700},
                  {"msgs_out", "SIP messages sent on streams", 650},
                  {"bytes_in", "bytes received on streams (after TLS)", 123456},
                  {"bytes_out", "bytes sent on streams (before TLS)", 98765},
                  {"output_overflow", "connections closed: too much unsent output", 2}};
    s.closed = {{"refused", "connection refused", 3}, {"name_mismatch", "certificate name mismatch", 4}};
    s.handshakes_failed = {{"refused", "connection refused", 0}, {"name_mismatch", "certificate name mismatch", 4}};
    s.pump = {{"to_kernel", "frames written to the kernel", 900}, {"ring_full", "kernel frames lost on a full worker ring", 1}};
    s.certificates = {{"trunk carrier", "/etc/sbc/carrier.pem", 1'767'225'600}, {"tls", "/etc/sbc/\"default\".pem", 1'800'000'000}};
    return r;
}

TEST(stats, prometheus_text_has_stream_connections_handshakes_traffic_and_certificate_expiry)
{
    std::map<std::string, std::string> types;
    const std::string text = to_prometheus(report_with_streams());
    auto samples = parse_prometheus(text, types);
    auto value_of = [&](const std::string& name, const std::string& labels) { return value_in(samples, name, labels); };
    EXPECT_EQ(value_of("sbc_stream_connections", R"({state="connecting"})"), "1");
    EXPECT_EQ(value_of("sbc_stream_connections", R"({state="handshaking"})"), "2");
    EXPECT_EQ(value_of("sbc_stream_connections", R"({state="established"})"), "5");
    EXPECT_EQ(types["sbc_stream_connections"], "gauge");
    EXPECT_EQ(value_of("sbc_stream_handshakes_total", R"({result="ok"})"), "30");
    EXPECT_EQ(value_of("sbc_stream_handshakes_total", R"({result="failed",reason="name_mismatch"})"), "4");
    EXPECT_EQ(value_of("sbc_stream_handshakes_total", R"({result="failed",reason="refused"})"), "0");
    EXPECT_EQ(value_of("sbc_stream_closed_total", R"({reason="refused"})"), "3");
    EXPECT_EQ(value_of("sbc_stream_bytes_total", R"({direction="in"})"), "123456");
    EXPECT_EQ(value_of("sbc_stream_bytes_total", R"({direction="out"})"), "98765");
    EXPECT_EQ(value_of("sbc_stream_messages_total", R"({direction="in"})"), "700");
    EXPECT_EQ(value_of("sbc_stream_messages_total", R"({direction="out"})"), "650");
    EXPECT_EQ(value_of("sbc_stream_accepted_total", ""), "40");
    EXPECT_EQ(value_of("sbc_stream_output_overflow_total", ""), "2");
    EXPECT_EQ(types.count("sbc_stream_bytes_in_total"), 0u) << "bytes go by direction, not as counters of their own";
    EXPECT_EQ(types.count("sbc_stream_handshakes_ok_total"), 0u);
    EXPECT_EQ(value_of("sbc_exception_port_to_kernel_total", ""), "900");
    EXPECT_EQ(value_of("sbc_exception_port_ring_full_total", ""), "1");
    EXPECT_EQ(value_of("sbc_tls_certificate_expiry_seconds", R"({owner="trunk carrier",file="/etc/sbc/carrier.pem"})"),
              "1767225600");
    EXPECT_EQ(value_of("sbc_tls_certificate_expiry_seconds", R"({owner="tls",file="/etc/sbc/\"default\".pem"})"),
              "1800000000");
    EXPECT_EQ(types["sbc_tls_certificate_expiry_seconds"], "gauge");
    EXPECT_NE(text.find("# HELP sbc_stream_accepted_total Inbound connections accepted."), std::string::npos)
        << "each counter keeps its help text";
    EXPECT_NE(text.find("reason=\"name_mismatch\": certificate name mismatch"), std::string::npos)
        << "each reason is explained";
    std::set<std::string> series;
    for (const auto& s : samples) EXPECT_TRUE(series.insert(s.name + s.labels).second) << "duplicate " << s.name << s.labels;
    for (const auto& [name, type] : types) {
        const bool ends_total = name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0;
        EXPECT_EQ(type == "counter", ends_total) << name << " is a " << type;
    }
}

TEST(stats, prometheus_text_has_no_stream_metrics_when_no_stream_thread_runs)
{
    const std::string text = to_prometheus(sample_report());
    EXPECT_EQ(text.find("sbc_stream_"), std::string::npos);
    EXPECT_EQ(text.find("sbc_exception_port_"), std::string::npos);
    EXPECT_EQ(text.find("sbc_tls_certificate_expiry_seconds"), std::string::npos);
}

TEST(stats, conns_text_lists_connections_then_peers_then_failed_listeners)
{
    const nlohmann::json answer = {
        {"ok", true},
        {"namespace", "sbcd-sbc"},
        {"conns",
         {{{"id", 7}, {"direction", "out"}, {"transport", "tls"}, {"state", "established"},
           {"local", "198.18.0.1:40001"}, {"remote", "198.18.0.20:5061"}, {"owner", "peer carrier-a"},
           {"tls_version", "TLSv1.3"}, {"cipher", "TLS_AES_256_GCM_SHA384"}, {"peer_subject", "CN=carrier-a.example"},
           {"age_s", 3725.0}, {"msgs_in", 12}, {"msgs_out", 13}, {"bytes_in", 2048}, {"bytes_out", 100}},
          {{"id", 8}, {"direction", "in"}, {"transport", "tcp"}, {"state", "connecting"},
           {"local", "198.18.0.1:5060"}, {"remote", "198.18.0.30:33000"}, {"owner", "trunk core"},
           {"tls_version", ""}, {"cipher", ""}, {"peer_subject", ""},
           {"age_s", 1.5}, {"msgs_in", 0}, {"msgs_out", 0}, {"bytes_in", 0}, {"bytes_out", 0}}}},
        {"peers", {{{"id", 3}, {"name", "carrier-b"}, {"established", 0}, {"last_error", "certificate name mismatch: CN=x"}}}},
        {"problems", {"trunk access: TLS port 5061: address in use"}}};
    const std::string text = render_conns_text(answer);
    for (const char* expected : {"namespace sbcd-sbc", "ID", "DIR", "PROTO", "STATE", "LOCAL", "REMOTE", "OWNER", "TLS",
                                 "CIPHER", "SUBJECT", "AGE", "MSGS_IN", "MSGS_OUT", "BYTES_IN", "BYTES_OUT",
                                 "198.18.0.20:5061", "peer carrier-a", "TLSv1.3", "TLS_AES_256_GCM_SHA384",
                                 "CN=carrier-a.example", "01:02:05", "2.0 KiB", "trunk core", "carrier-b",
                                 "certificate name mismatch: CN=x", "address in use"})
        EXPECT_NE(text.find(expected), std::string::npos) << "missing '" << expected << "' in\n" << text;
    EXPECT_LT(text.find("198.18.0.20:5061"), text.find("carrier-b")) << "connections first, then peers\n" << text;
    EXPECT_LT(text.find("carrier-b"), text.find("address in use")) << text;
}

TEST(stats, conns_text_says_why_nothing_is_listed)
{
    const std::string none = render_conns_text(
        {{"ok", true}, {"conns", nlohmann::json::array()}, {"note", "no TCP or TLS trunk or peer configured"}});
    EXPECT_EQ(none, "no TCP or TLS trunk or peer configured\n");
    const std::string empty = render_conns_text({{"ok", true}, {"namespace", "sbcd-sbc"}, {"conns", nlohmann::json::array()}});
    EXPECT_NE(empty.find("connections (0)\n  none"), std::string::npos) << empty;
}

TEST(stats, status_text_shows_interfaces_gateway_resolution_and_worker_load)
{
    auto text = render_status_text(to_json(sample_report()));
    for (const char* expected : {"sbc-1", "running", "01:02:05", "198.18.0.1/24", "02:00:00:00:00:01",
                                 "198.18.0.254 at 02:00:00:00:00:fe", "198.19.0.254 unresolved", "DOWN", "100",
                                 "25.0", "50.0"})
        EXPECT_NE(text.find(expected), std::string::npos) << "missing '" << expected << "' in\n" << text;
    // The IPv6 table lists the interface that runs IPv6 and only that one.
    const auto v6 = text.find("interfaces over IPv6\n");
    ASSERT_NE(v6, std::string::npos) << text;
    const auto workers = text.find("workers (", v6);
    const std::string table = text.substr(v6, workers - v6);
    for (const char* expected : {"core", "2001:2:0:1::1/64", "fe80::ff:fe00:1", "fe80::1 at 02:00:00:00:00:fd"})
        EXPECT_NE(table.find(expected), std::string::npos) << "missing '" << expected << "' in\n" << table;
    EXPECT_EQ(table.find("access"), std::string::npos) << table;
    // Without IPv6 anywhere there is no such table.
    auto four = sample_report();
    four.interfaces.erase(four.interfaces.begin());
    EXPECT_EQ(render_status_text(to_json(four)).find("IPv6"), std::string::npos);
}

TEST(stats, each_workers_calls_show_in_json_text_and_prometheus)
{
    const auto j = to_json(sample_report());
    ASSERT_EQ(j["workers"].size(), 2u);
    EXPECT_EQ(j["workers"][1]["calls"]["established"], 4131);
    EXPECT_EQ(j["workers"][1]["calls"]["setting_up"], 18);

    // The text's per-worker table: worker 1's row carries its calls and setups.
    const std::string text = render_stats_text(j);
    const auto table = text.find("per worker\n");
    ASSERT_NE(table, std::string::npos) << text;
    EXPECT_NE(text.find("CALLS", table), std::string::npos) << text;
    const auto row = text.find("\n  1 ", table);
    ASSERT_NE(row, std::string::npos) << text;
    const std::string line = text.substr(row + 1, text.find('\n', row + 1) - row - 1);
    EXPECT_NE(line.find(" 4131 "), std::string::npos) << line;
    EXPECT_NE(line.find(" 18 "), std::string::npos) << line;

    std::map<std::string, std::string> types;
    const auto samples = parse_prometheus(to_prometheus(sample_report()), types);
    auto value_of = [&](const std::string& name, const std::string& labels) { return value_in(samples, name, labels); };
    EXPECT_EQ(value_of("sbc_worker_calls_active", R"({worker="0"})"), "4130");
    EXPECT_EQ(value_of("sbc_worker_call_setups_active", R"({worker="1"})"), "18");
    EXPECT_EQ(types["sbc_worker_calls_active"], "gauge");
}

TEST(stats, stats_text_lists_nonzero_drop_reasons_before_zero_ones)
{
    auto text = render_stats_text(to_json(sample_report()));
    const auto bad_checksum = text.find("ipv4_bad_checksum");
    const auto tx_full = text.find("tx_full");
    const auto eth_truncated = text.find("eth_truncated");
    ASSERT_NE(bad_checksum, std::string::npos) << text;
    EXPECT_LT(bad_checksum, eth_truncated) << text;
    EXPECT_LT(bad_checksum, tx_full) << text;
    EXPECT_NE(text.find("IPv4 header checksum wrong"), std::string::npos) << "reasons are explained";
    for (const char* expected : {"received", "3000", "sent", "2700", "dropped", "21", "eth", "per worker"})
        EXPECT_NE(text.find(expected), std::string::npos) << "missing '" << expected << "' in\n" << text;
}

TEST(stats, top_text_computes_busy_and_rates_from_the_difference_of_two_reports)
{
    auto before = sample_report();
    auto after = before;
    after.uptime_s += 2;
    auto& c = after.workers[0].counters;
    c.rx_packets += 1000;  // 500 pps over 2 s
    c.tx_packets += 4000;  // 2000 pps = "2.00k"
    c.busy_cycles += 900;  // of 1000: 90 % busy in the interval, 25 % since the start
    c.total_cycles += 1000;
    c.drops[idx(dp::drop_reason::udp_port_closed)] += 20;  // 10/s
    after.workers[1].counters.total_cycles += 1000;        // idle in the interval
    auto text = render_top_text(to_json(before), to_json(after), 2.0);
    for (const char* expected : {"90.0", "500", "2.00k", "udp_port_closed", "10", "interval 2.0 s"})
        EXPECT_NE(text.find(expected), std::string::npos) << "missing '" << expected << "' in\n" << text;
    EXPECT_EQ(text.find("ipv4_bad_checksum"), std::string::npos) << "no new drops of that reason in the interval\n"
                                                                  << text;
}

TEST(stats, top_text_says_none_when_nothing_was_dropped)
{
    auto j = to_json(sample_report());
    auto text = render_top_text(j, j, 1.0);
    EXPECT_NE(text.find("drops/s by reason\n  none"), std::string::npos) << text;
}

TEST(stats, durations_read_as_days_hours_minutes_seconds)
{
    EXPECT_EQ(format_duration(0), "00:00:00");
    EXPECT_EQ(format_duration(3725), "01:02:05");
    EXPECT_EQ(format_duration(90061), "1d 01:01:01");
}

}  // namespace
}  // namespace sbc::control
