// Call detail records on the control core (control/cdr_format.h, control/cdr_writer.h): the JSON
// line of a record, the tail `sbcctl cdr tail` reads and its table, and the writer's file:
// rotation by size and by time, pruning, reopening after logrotate, and losses counted and
// logged at most once a second. Unit tier (no EAL: the records are made here).
#include <gtest/gtest.h>

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "control/cdr_format.h"
#include "control/cdr_writer.h"

namespace sbc::control {
namespace {

using nlohmann::json;

void set(std::array<char, cdr_callid_size>& dst, uint8_t& len, std::string_view s)
{
    std::memcpy(dst.data(), s.data(), s.size());
    len = static_cast<uint8_t>(s.size());
}
void set_user(std::array<char, cdr_user_size>& dst, uint8_t& len, std::string_view s)
{
    std::memcpy(dst.data(), s.data(), s.size());
    len = static_cast<uint8_t>(s.size());
}

cdr_names names()
{
    cdr_names n;
    n.trunks = {"carrier-a", "carrier-b"};
    n.routes = {"default"};
    n.peers.resize(4);
    n.peers[2] = {"r1/198.18.0.11:5060", "198.18.0.11:5060"};
    n.peers[3] = {"r1/198.18.0.12:5060", "198.18.0.12:5060"};
    return n;
}

// Worker ms 5000 is 2026-12-02T00:31:00.000Z.
constexpr int64_t t0 = 1796171460000;
const cdr_clock clock0{t0, 5000};

// A call that failed over: peer 2 answered 503, peer 3 answered; the caller hung up.
call_record failed_over()
{
    call_record r;
    r.invite_ms = 5123;
    r.first_provisional_ms = 40;
    r.answer_ms = 120;
    r.end_ms = 12120;
    r.trunk = 1;
    r.route = 0;
    r.final_code = 200;
    r.final_by = cdr_final_by::peer;
    r.end = cdr_end::bye_caller;
    r.worker = 1;
    r.n_attempts = 2;
    r.attempts_total = 2;
    set(r.callid, r.callid_len, "1-2345@198.18.0.2-and-a-long-tail");
    set_user(r.from_user, r.from_len, "15550100");
    set_user(r.to_user, r.to_len, "15550199");
    r.attempts[0] = {2, 0, 12, 503, cdr_outcome::code, 0};
    r.attempts[1] = {3, 12, 120, 200, cdr_outcome::answered, 0};
    r.has_media = true;
    r.media[0] = {600, 103200, 0, 0, 0, {}};
    r.media[1] = {588, 101136, 12, 2500, 0, {}};
    return r;
}

TEST(cdr_json, a_failed_over_call_names_both_peers_and_its_times)
{
    const json j = cdr_json(failed_over(), names(), clock0);
    EXPECT_EQ(j["start"], "2026-12-02T00:31:00.123Z");
    EXPECT_EQ(j["stop"], "2026-12-02T00:31:12.243Z");
    EXPECT_EQ(j["call_id"], "1-2345@198.18.0.2-and-a-long-tail");
    EXPECT_EQ(j["from"], "15550100");
    EXPECT_EQ(j["to"], "15550199");
    EXPECT_EQ(j["trunk"], "carrier-b");
    EXPECT_EQ(j["route"], "default");
    ASSERT_EQ(j["peers"].size(), 2u);
    EXPECT_EQ(j["peers"][0]["peer"], "r1/198.18.0.11:5060");
    EXPECT_EQ(j["peers"][0]["address"], "198.18.0.11:5060");
    EXPECT_EQ(j["peers"][0]["outcome"], "code");
    EXPECT_EQ(j["peers"][0]["code"], 503);
    EXPECT_EQ(j["peers"][0]["ended_ms"], 12);
    EXPECT_EQ(j["peers"][1]["peer"], "r1/198.18.0.12:5060");
    EXPECT_EQ(j["peers"][1]["outcome"], "answered");
    EXPECT_EQ(j["peers"][1]["at_ms"], 12);
    EXPECT_EQ(j["final_code"], 200);
    EXPECT_EQ(j["final_by"], "peer");
    EXPECT_EQ(j["provisional_ms"], 40);
    EXPECT_EQ(j["answer_ms"], 120);
    EXPECT_DOUBLE_EQ(j["duration_s"].get<double>(), 12.0);
    EXPECT_EQ(j["end"], "bye_caller");
    EXPECT_EQ(j["worker"], 1);
    EXPECT_EQ(j["media"]["a"]["packets"], 600);
    EXPECT_EQ(j["media"]["a"]["codec"], "PCMU");
    EXPECT_DOUBLE_EQ(j["media"]["a"]["loss_pct"].get<double>(), 0.0);
    EXPECT_DOUBLE_EQ(j["media"]["b"]["loss_pct"].get<double>(), 2.0) << "12 lost of 600 sent";
    EXPECT_DOUBLE_EQ(j["media"]["b"]["jitter_ms"].get<double>(), 2.5);
    EXPECT_GT(j["media"]["a"]["mos"].get<double>(), j["media"]["b"]["mos"].get<double>()) << "loss and jitter lower B's";
    EXPECT_NEAR(j["media"]["a"]["mos"].get<double>(), 4.40, 0.01);
}

TEST(cdr_json, an_unanswered_call_has_no_answer_time_duration_or_score)
{
    call_record r = failed_over();
    r.answer_ms = 0;
    r.first_provisional_ms = 0;
    r.final_code = 503;
    r.final_by = cdr_final_by::sbc;
    r.end = cdr_end::failed;
    r.route = 0xffff;
    r.n_attempts = 1;
    r.attempts[0] = {9, 0, 1000, 0, cdr_outcome::timeout, 0};
    r.media[0] = {};
    r.media[1] = {};
    const json j = cdr_json(r, names(), clock0);
    EXPECT_TRUE(j["answer_ms"].is_null());
    EXPECT_TRUE(j["provisional_ms"].is_null());
    EXPECT_DOUBLE_EQ(j["duration_s"].get<double>(), 0.0);
    EXPECT_TRUE(j["route"].is_null());
    EXPECT_EQ(j["peers"][0]["peer"], "#9") << "a peer id no published table names";
    EXPECT_TRUE(j["peers"][0]["code"].is_null());
    EXPECT_EQ(j["peers"][0]["outcome"], "timeout");
    EXPECT_TRUE(j["media"]["a"]["mos"].is_null()) << "no packet, no score";
    EXPECT_TRUE(j["media"]["a"]["codec"].is_null());
    r.has_media = false;
    EXPECT_TRUE(cdr_json(r, names(), clock0)["media"].is_null());
}

TEST(cdr_json, every_way_a_call_ends_has_its_name)
{
    const std::pair<cdr_end, const char*> ends[] = {
        {cdr_end::failed, "failed"},           {cdr_end::cancelled, "cancelled"},     {cdr_end::bye_caller, "bye_caller"},
        {cdr_end::bye_callee, "bye_callee"},   {cdr_end::media_timeout, "media_timeout"}, {cdr_end::bye_timeout, "bye_timeout"},
        {cdr_end::drain, "drain"},             {cdr_end::refused, "refused"}};
    for (const auto& [e, name] : ends) {
        call_record r = failed_over();
        r.end = e;
        EXPECT_EQ(cdr_json(r, names(), clock0)["end"], name);
    }
}

TEST(cdr_json, a_line_is_one_json_object_whatever_the_call_id_holds)
{
    call_record r = failed_over();
    // A quote, a backslash, a tab, UTF-8 "é", and a lone 0xff byte (not UTF-8).
    set(r.callid, r.callid_len, "a\"b\\c\td\xc3\xa9" "e\xff");
    set_user(r.from_user, r.from_len, "+4420\x01");
    std::string line;
    append_cdr_line(line, r, names(), clock0);
    ASSERT_FALSE(line.empty());
    EXPECT_EQ(line.back(), '\n');
    EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << "one line per record";
    const json j = json::parse(line);  // throws (fails the test) on anything but one valid object
    EXPECT_EQ(j["call_id"], "a\"b\\c\td\xc3\xa9" "e\xef\xbf\xbd") << "invalid bytes become U+FFFD";
    EXPECT_EQ(j["from"], "+4420\x01");
    EXPECT_EQ(j["media"]["b"]["loss_pct"].dump(), "2") << "numbers without trailing zeros";
    EXPECT_EQ(j["duration_s"].dump(), "12");
}

TEST(cdr_tail, keeps_the_last_thousand_with_sequence_numbers)
{
    cdr_tail t;
    for (int i = 1; i <= 1005; ++i) t.push("{\"n\":" + std::to_string(i) + "}");
    EXPECT_EQ(t.size(), 1000u);
    EXPECT_EQ(t.last_seq(), 1005u);
    const json last = t.last(3);
    ASSERT_EQ(last.size(), 3u);
    EXPECT_EQ(last[0]["seq"], 1003);
    EXPECT_EQ(last[2]["seq"], 1005);
    EXPECT_EQ(last[2]["n"], 1005);
    const json since = t.since(1001);
    ASSERT_EQ(since.size(), 4u);
    EXPECT_EQ(since[0]["seq"], 1002);
    EXPECT_EQ(t.since(0).size(), 1000u) << "all that is kept";
    EXPECT_EQ(t.since(0)[0]["seq"], 6);
    EXPECT_TRUE(t.since(1005).empty());
    EXPECT_EQ(t.since(0, 10).size(), 10u);
    EXPECT_EQ(t.last(5000).size(), 1000u);
}

TEST(cdr_table, a_row_shows_peers_final_setup_duration_and_mos)
{
    json rec = cdr_json(failed_over(), names(), clock0);
    const auto row = cdr_row(rec);
    ASSERT_EQ(row.size(), cdr_header().size());
    EXPECT_EQ(row[0], "2026-12-02 00:31:00.123");
    EXPECT_EQ(row[1], "1-2345@198.18.0.2-an") << "cut to 20";
    EXPECT_EQ(row[2], "15550100");
    EXPECT_EQ(row[4], "carrier-b");
    EXPECT_EQ(row[5], "r1/198.18.0.11:5060:code/503,r1/198.18.0.12:5060:answered/200");
    EXPECT_EQ(row[6], "200/peer");
    EXPECT_EQ(row[7], "120");
    EXPECT_EQ(row[8], "12.0");
    EXPECT_EQ(row[9], "bye_caller");
    EXPECT_EQ(row[10].substr(0, 5), "4.40/");

    call_record f = failed_over();
    f.answer_ms = 0;
    f.has_media = false;
    f.final_code = 486;
    f.end = cdr_end::failed;
    const auto frow = cdr_row(cdr_json(f, names(), clock0));
    EXPECT_EQ(frow[7], "-");
    EXPECT_EQ(frow[8], "-");
    EXPECT_EQ(frow[10], "-");

    // Fixed columns: a later --follow batch lines up with the first.
    const std::string a = render_cdr_rows({cdr_header(), row});
    const std::string b = render_cdr_rows({frow});
    const std::string first_row = a.substr(a.find('\n') + 1);
    EXPECT_EQ(first_row.find("bye_caller"), b.find("failed")) << a << b;
    const std::string text = render_cdr_text(json{{"records", json::array({rec})}});
    EXPECT_EQ(text.rfind("TIME", 0), 0u);
    EXPECT_NE(text.find("1-2345@198.18.0.2-an "), std::string::npos);
    EXPECT_EQ(render_cdr_text(json{{"enabled", false}}), "call detail records are off (no [cdr] in the config)\n");
}

// A temporary directory, removed with what is in it.
struct temp_dir {
    std::string path;
    temp_dir()
    {
        char tmpl[] = "/tmp/cdr_test.XXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~temp_dir() { std::system(("rm -rf '" + path + "'").c_str()); }
    [[nodiscard]] std::vector<std::string> files() const
    {
        std::vector<std::string> out;
        if (DIR* d = ::opendir(path.c_str())) {
            while (const dirent* e = ::readdir(d))
                if (e->d_name[0] != '.') out.emplace_back(e->d_name);
            ::closedir(d);
        }
        std::sort(out.begin(), out.end());
        return out;
    }
};

std::vector<std::string> lines_of(const std::string& p)
{
    std::ifstream in(p);
    std::vector<std::string> out;
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

struct log_lines {
    std::vector<std::string> lines;
    cdr_writer::log_fn fn()
    {
        return [this](const std::string& l) { lines.push_back(l); };
    }
};

TEST(cdr_writer, writes_one_json_line_per_record_and_keeps_them_for_the_tail)
{
    temp_dir d;
    cdr_config cfg;
    cfg.path = d.path + "/cdr.jsonl";
    log_lines log;
    std::string error;
    auto w = cdr_writer::open(cfg, clock0, t0, log.fn(), error);
    ASSERT_NE(w, nullptr) << error;
    w->set_names(names());
    w->add(failed_over());
    call_record r = failed_over();
    r.end = cdr_end::media_timeout;
    w->add(r);
    w->flush(t0 + 10);
    const auto lines = lines_of(cfg.path);
    ASSERT_EQ(lines.size(), 2u);
    const json first = json::parse(lines[0]);
    EXPECT_EQ(first["peers"][1]["outcome"], "answered");
    EXPECT_FALSE(first.contains("seq")) << "the sequence number is the tail's, not the file's";
    EXPECT_EQ(json::parse(lines[1])["end"], "media_timeout");
    EXPECT_EQ(w->tail().last(5).size(), 2u);
    EXPECT_EQ(w->tail().last(1)[0]["end"], "media_timeout");
    EXPECT_EQ(w->report().written, 2u);
    EXPECT_EQ(w->report().write_errors, 0u);
    EXPECT_TRUE(log.lines.empty());
}

TEST(cdr_writer, rotates_by_size_and_keeps_only_keep_files)
{
    temp_dir d;
    cdr_config cfg;
    cfg.path = d.path + "/cdr.jsonl";
    cfg.rotate_bytes = 1 << 20;
    cfg.rotate_seconds = 0;
    cfg.keep = 2;
    log_lines log;
    std::string error;
    auto w = cdr_writer::open(cfg, clock0, t0, log.fn(), error);
    ASSERT_NE(w, nullptr) << error;
    w->set_names(names());
    // About 800 bytes a line: 1400 lines a MiB. Five MiB in batches of 100, each second apart
    // so that every rotation gets its own name.
    uint64_t n = 0;
    for (int batch = 0; batch < 70; ++batch) {
        for (int i = 0; i < 100; ++i, ++n) w->add(failed_over());
        w->flush(t0 + batch * 1000);
    }
    const auto files = d.files();
    ASSERT_EQ(files.size(), 3u) << "the live file and keep = 2 rotated ones";
    EXPECT_EQ(files[0], "cdr.jsonl");
    EXPECT_EQ(files[1].substr(0, 10), "cdr.jsonl.");
    EXPECT_EQ(files[1].size(), std::string("cdr.jsonl.20261202T003100Z").size());
    EXPECT_LT(files[1], files[2]) << "stamps sort by time";
    uint64_t kept_lines = 0;
    for (const auto& f : files) {
        std::ifstream in(d.path + "/" + f, std::ios::ate);
        EXPECT_LE(static_cast<uint64_t>(in.tellg()), uint64_t{1} << 20) << f;
        kept_lines += lines_of(d.path + "/" + f).size();
    }
    EXPECT_GE(w->report().rotations, 4u);
    EXPECT_EQ(w->report().written, n);
    EXPECT_LT(kept_lines, n) << "older files were removed";
}

TEST(cdr_writer, rotates_on_time_boundaries_but_not_an_empty_file)
{
    temp_dir d;
    cdr_config cfg;
    cfg.path = d.path + "/cdr.jsonl";
    cfg.rotate_seconds = 3600;
    log_lines log;
    std::string error;
    const int64_t hour = 3600'000;
    const int64_t h0 = t0 / hour * hour;  // 00:00
    auto w = cdr_writer::open(cfg, clock0, h0 + 10, log.fn(), error);
    ASSERT_NE(w, nullptr) << error;
    w->tick(h0 + hour + 5, 0);  // 01:00, nothing written yet: no rotation
    EXPECT_EQ(d.files().size(), 1u);
    w->add(failed_over());
    w->flush(h0 + hour + 10);
    w->tick(h0 + hour + 20, 0);
    EXPECT_EQ(d.files().size(), 1u) << "same hour";
    w->tick(h0 + 2 * hour, 0);  // 02:00: rotated without a record arriving
    const auto files = d.files();
    ASSERT_EQ(files.size(), 2u);
    EXPECT_EQ(files[1], "cdr.jsonl.20261202T020000Z");
    EXPECT_EQ(lines_of(d.path + "/" + files[1]).size(), 1u);
    w->add(failed_over());
    w->flush(h0 + 2 * hour + 10);
    EXPECT_EQ(lines_of(cfg.path).size(), 1u);
    EXPECT_EQ(w->report().rotations, 1u);
}

TEST(cdr_writer, reopens_after_logrotate_moved_the_file)
{
    temp_dir d;
    cdr_config cfg;
    cfg.path = d.path + "/cdr.jsonl";
    log_lines log;
    std::string error;
    auto w = cdr_writer::open(cfg, clock0, t0, log.fn(), error);
    ASSERT_NE(w, nullptr) << error;
    w->add(failed_over());
    w->flush(t0);
    ASSERT_EQ(::rename(cfg.path.c_str(), (cfg.path + ".1").c_str()), 0);
    w->add(failed_over());  // queued before the HUP: still goes to the old file
    w->reopen(t0 + 5);
    w->add(failed_over());
    w->flush(t0 + 10);
    EXPECT_EQ(lines_of(cfg.path + ".1").size(), 2u);
    EXPECT_EQ(lines_of(cfg.path).size(), 1u) << "a new file at the path";
}

TEST(cdr_writer, counts_and_logs_lost_records_at_most_once_a_second)
{
    cdr_config cfg;
    cfg.path = "/dev/full";  // every write fails with ENOSPC
    cfg.rotate_bytes = 0;
    cfg.rotate_seconds = 0;
    log_lines log;
    std::string error;
    auto w = cdr_writer::open(cfg, clock0, t0, log.fn(), error);
    ASSERT_NE(w, nullptr) << error;
    for (int i = 0; i < 3; ++i) w->add(failed_over());
    w->flush(t0 + 1000);
    w->add(failed_over());
    w->flush(t0 + 1200);
    EXPECT_EQ(w->report().write_errors, 4u);
    EXPECT_EQ(w->report().written, 0u);
    ASSERT_EQ(log.lines.size(), 1u);
    EXPECT_NE(log.lines[0].find("3 record(s) lost"), std::string::npos) << log.lines[0];
    EXPECT_NE(log.lines[0].find("No space left"), std::string::npos) << log.lines[0];
    w->tick(t0 + 2100, 0);
    ASSERT_EQ(log.lines.size(), 2u);
    EXPECT_NE(log.lines[1].find("1 record(s) lost"), std::string::npos) << log.lines[1];
    EXPECT_NE(log.lines[1].find("4 in all"), std::string::npos) << log.lines[1];

    // Ring-full drops, counted by the workers: logged with the count since the last line.
    w->tick(t0 + 5000, 5);
    w->tick(t0 + 5100, 9);
    ASSERT_EQ(log.lines.size(), 3u);
    EXPECT_NE(log.lines[2].find("5 record(s) lost: a worker's CDR ring was full"), std::string::npos) << log.lines[2];
    w->tick(t0 + 6100, 9);
    ASSERT_EQ(log.lines.size(), 4u);
    EXPECT_NE(log.lines[3].find("4 record(s) lost"), std::string::npos) << log.lines[3];
    EXPECT_EQ(w->report().dropped, 9u);
    w->tick(t0 + 9000, 9);
    EXPECT_EQ(log.lines.size(), 4u) << "nothing new, nothing said";
}

TEST(cdr_writer, refuses_a_path_it_cannot_open)
{
    cdr_config cfg;
    cfg.path = "/nonexistent-dir/cdr.jsonl";
    std::string error;
    log_lines log;
    EXPECT_EQ(cdr_writer::open(cfg, clock0, t0, log.fn(), error), nullptr);
    EXPECT_NE(error.find("/nonexistent-dir/cdr.jsonl"), std::string::npos) << error;
}

TEST(cdr_report, metrics_name_the_losses)
{
    cdr_report r;
    EXPECT_EQ(cdr_prometheus(r), "") << "[cdr] off";
    r.enabled = true;
    r.written = 7;
    r.dropped = 2;
    r.write_errors = 1;
    const std::string m = cdr_prometheus(r);
    EXPECT_NE(m.find("sbc_cdr_records_written_total 7\n"), std::string::npos) << m;
    EXPECT_NE(m.find("sbc_cdr_write_errors_total 1\n"), std::string::npos) << m;
    EXPECT_NE(m.find("# TYPE sbc_cdr_write_errors_total counter"), std::string::npos) << m;
    EXPECT_EQ(m.find("sbc_cdr_dropped_total"), std::string::npos)
        << "ring drops are the workers' family, sbc_cdr_dropped_total{worker}; declared twice it would break the scrape";
}

}  // namespace
}  // namespace sbc::control
