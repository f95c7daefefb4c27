// Call detail records as JSON, the tail, the sbcctl table and the counters (see cdr_format.h).
#include "control/cdr_format.h"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "control/emodel.h"
#include "control/report_util.h"
#include "sip-fastpath/proxy_tables.h"

namespace sbc::control {

using nlohmann::json;

namespace {

/// Appends JSON text for the characters of `s`: quotes, backslashes and control characters
/// escaped, valid UTF-8 copied, any other byte as U+FFFD.
void put_string(std::string& out, std::string_view s)
{
    static constexpr char hex[] = "0123456789abcdef";
    out += '"';
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            if (c == '"' || c == '\\') {
                out += '\\';
                out += static_cast<char>(c);
            } else if (c < 0x20) {
                out += "\\u00";
                out += hex[c >> 4];
                out += hex[c & 15];
            } else {
                out += static_cast<char>(c);
            }
            ++i;
            continue;
        }
        // A UTF-8 sequence: its length from the lead byte, each continuation 10xxxxxx, no
        // overlong two-byte form (C0, C1) and nothing above U+10FFFF (F5..FF).
        const std::size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        bool ok = n != 0 && i + n <= s.size();
        for (std::size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
        if (ok) {
            out.append(s.data() + i, n);
            i += n;
        } else {
            out += "\\ufffd";
            ++i;
        }
    }
    out += '"';
}

void put_uint(std::string& out, uint64_t v)
{
    char b[24];
    const auto [p, ec] = std::to_chars(b, b + sizeof b, v);
    out.append(b, p);
}

/// `v` with at most `decimals` decimals and no trailing zeros ("4.4", "2", "0.208").
void put_fixed(std::string& out, double v, int decimals)
{
    char b[64];
    int n = std::snprintf(b, sizeof b, "%.*f", decimals, v);
    if (n <= 0 || n >= static_cast<int>(sizeof b)) {
        out += '0';
        return;
    }
    if (std::memchr(b, '.', static_cast<std::size_t>(n)) != nullptr) {
        while (n > 1 && b[n - 1] == '0') --n;
        if (b[n - 1] == '.') --n;
    }
    if (n == 2 && b[0] == '-' && b[1] == '0') {  // "-0" from a tiny negative
        out += '0';
        return;
    }
    out.append(b, static_cast<std::size_t>(n));
}

void put_key(std::string& out, std::string_view k)
{
    out += '"';
    out += k;
    out += "\":";
}

void put_name(std::string& out, const std::vector<std::string>& names, std::size_t i)
{
    if (i < names.size() && !names[i].empty())
        put_string(out, names[i]);
    else
        put_string(out, "#" + std::to_string(i));
}

void put_media(std::string& out, const cdr_media& m)
{
    const double sent = static_cast<double>(m.packets) + static_cast<double>(m.lost);
    const double loss_pct = sent > 0 ? 100.0 * static_cast<double>(m.lost) / sent : 0.0;
    const double jitter_ms = static_cast<double>(m.jitter_us) / 1000.0;
    put_key(out, "packets");
    put_uint(out, m.packets);
    out += ',';
    put_key(out, "bytes");
    put_uint(out, m.bytes);
    out += ',';
    put_key(out, "lost");
    put_uint(out, m.lost);
    out += ',';
    put_key(out, "loss_pct");
    put_fixed(out, loss_pct, 2);
    out += ',';
    put_key(out, "jitter_ms");
    put_fixed(out, jitter_ms, 3);
    out += ',';
    put_key(out, "codec");
    if (m.payload_type == 255)
        out += "null";
    else
        put_string(out, emodel::codec_name(m.payload_type));
    out += ',';
    put_key(out, "mos");
    // No packets: nothing was heard, there is nothing to score.
    if (m.packets > 0)
        put_fixed(out, emodel::estimate_mos(m.payload_type, loss_pct, jitter_ms), 2);
    else
        out += "null";
}

std::string str_of(const json& j, const char* k)
{
    const auto it = j.find(k);
    if (it == j.end() || it->is_null()) return {};
    if (it->is_string()) return it->get<std::string>();
    return it->dump();
}

}  // namespace

cdr_names cdr_names_of(const sip::proxy_tables& t)
{
    cdr_names n;
    for (const auto& tr : t.trunks) n.trunks.push_back(tr.name);
    for (const auto& ro : t.routes) n.routes.push_back(ro.name);
    for (const auto& p : t.peers) {
        if (p.id >= n.peers.size()) n.peers.resize(p.id + 1);
        n.peers[p.id] = {p.name, to_string(p.remote())};
    }
    return n;
}

std::string iso8601_ms(int64_t unix_ms)
{
    const int64_t ms = ((unix_ms % 1000) + 1000) % 1000;
    const std::time_t s = static_cast<std::time_t>((unix_ms - ms) / 1000);
    std::tm tm{};
    gmtime_r(&s, &tm);
    char buf[80];  // room for any int the compiler imagines in each field
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
    return buf;
}

void append_cdr_line(std::string& out, const call_record& r, const cdr_names& names, const cdr_clock& clock)
{
    const int64_t start = clock.wall_ms(r.invite_ms);
    const bool answered = r.answer_ms != 0;
    out += '{';
    put_key(out, "start");
    put_string(out, iso8601_ms(start));
    out += ',';
    put_key(out, "stop");
    put_string(out, iso8601_ms(start + r.end_ms));
    out += ',';
    put_key(out, "call_id");
    put_string(out, r.call_id());
    out += ',';
    put_key(out, "call_id_cut");
    out += r.callid_cut ? "true" : "false";
    out += ',';
    put_key(out, "from");
    put_string(out, r.from());
    out += ',';
    put_key(out, "to");
    put_string(out, r.to());
    out += ',';
    put_key(out, "trunk");
    put_name(out, names.trunks, r.trunk);
    out += ',';
    put_key(out, "route");
    if (r.route == 0xffff)
        out += "null";
    else
        put_name(out, names.routes, r.route);
    out += ',';
    put_key(out, "peers");
    out += '[';
    for (std::size_t i = 0; i < r.n_attempts && i < r.attempts.size(); ++i) {
        const cdr_attempt& a = r.attempts[i];
        const bool named = a.peer_id < names.peers.size() && !names.peers[a.peer_id].name.empty();
        if (i != 0) out += ',';
        out += '{';
        put_key(out, "peer");
        if (named)
            put_string(out, names.peers[a.peer_id].name);
        else
            put_string(out, "#" + std::to_string(a.peer_id));
        out += ',';
        put_key(out, "address");
        if (named)
            put_string(out, names.peers[a.peer_id].address);
        else
            out += "null";
        out += ',';
        put_key(out, "outcome");
        put_string(out, cdr_outcome_name(a.outcome));
        out += ',';
        put_key(out, "code");
        if (a.code != 0)
            put_uint(out, a.code);
        else
            out += "null";
        out += ',';
        put_key(out, "at_ms");
        put_uint(out, a.sent_ms);
        out += ',';
        put_key(out, "ended_ms");
        put_uint(out, a.ended_ms);
        out += '}';
    }
    out += "],";
    put_key(out, "attempts");
    put_uint(out, r.attempts_total);
    out += ',';
    put_key(out, "final_code");
    put_uint(out, r.final_code);
    out += ',';
    put_key(out, "final_by");
    put_string(out, cdr_final_by_name(r.final_by));
    out += ',';
    put_key(out, "provisional_ms");
    if (r.first_provisional_ms != 0)
        put_uint(out, r.first_provisional_ms);
    else
        out += "null";
    out += ',';
    put_key(out, "answer_ms");
    if (answered)
        put_uint(out, r.answer_ms);
    else
        out += "null";
    out += ',';
    put_key(out, "duration_s");
    put_fixed(out, answered && r.end_ms > r.answer_ms ? (r.end_ms - r.answer_ms) / 1000.0 : 0.0, 3);
    out += ',';
    put_key(out, "end");
    put_string(out, cdr_end_name(r.end));
    out += ',';
    put_key(out, "worker");
    put_uint(out, r.worker);
    out += ',';
    put_key(out, "media");
    if (r.has_media) {
        out += "{\"a\":{";
        put_media(out, r.media[0]);
        out += "},\"b\":{";
        put_media(out, r.media[1]);
        out += "}}";
    } else {
        out += "null";
    }
    out += "}\n";
}

json cdr_json(const call_record& r, const cdr_names& names, const cdr_clock& clock)
{
    std::string line;
    append_cdr_line(line, r, names, clock);
    return json::parse(line);
}

void cdr_tail::push(std::string line)
{
    ++seq_;
    kept_.push_back(std::move(line));
    while (kept_.size() > capacity_) kept_.pop_front();
}

json cdr_tail::record_at(std::size_t i) const
{
    // Our own lines: they parse (a discarded value would mean a bug; it is still shown).
    json j = json::parse(kept_[i], nullptr, false);
    if (!j.is_object()) j = json{{"unreadable", kept_[i]}};
    j["seq"] = seq_ - kept_.size() + 1 + i;
    return j;
}

json cdr_tail::last(std::size_t n) const
{
    json out = json::array();
    const std::size_t from = kept_.size() > n ? kept_.size() - n : 0;
    for (std::size_t i = from; i < kept_.size(); ++i) out.push_back(record_at(i));
    return out;
}

json cdr_tail::since(uint64_t seq, std::size_t max) const
{
    json out = json::array();
    // Sequence numbers are consecutive: the first kept is seq_ - size + 1.
    const uint64_t first = seq_ - kept_.size() + 1;
    const std::size_t from = seq < first ? 0 : static_cast<std::size_t>(seq - first + 1);
    for (std::size_t i = from; i < kept_.size() && out.size() < max; ++i) out.push_back(record_at(i));
    return out;
}

json to_json(const cdr_report& r)
{
    if (!r.enabled) return {{"enabled", false}};
    return {{"enabled", true},         {"path", r.path},           {"written", r.written},
            {"dropped", r.dropped},    {"write_errors", r.write_errors}, {"rotations", r.rotations}};
}

std::string cdr_prometheus(const cdr_report& r)
{
    if (!r.enabled) return {};
    report::prom_writer w;
    w.single("cdr_records_written_total", "counter", "Call detail records written to the [cdr] file.", r.written);
    // Records lost on a full ring are the workers' sbc_cdr_dropped_total{worker} (stats.cc).
    w.single("cdr_write_errors_total", "counter",
             "Call detail records lost because the [cdr] file could not be written (disk full, I/O error).",
             r.write_errors);
    w.single("cdr_rotations_total", "counter", "Times the [cdr] file was rotated (by size or by time).", r.rotations);
    return w.str();
}

std::vector<std::string> cdr_header()
{
    return {"TIME", "CALL-ID", "FROM", "TO", "TRUNK", "PEERS", "FINAL", "SETUP_MS", "DUR_S", "END", "MOS_A/B"};
}

std::vector<std::string> cdr_row(const json& rec)
{
    std::string time = str_of(rec, "start");
    if (time.size() >= 23) time = time.substr(0, 10) + " " + time.substr(11, 12);  // 2026-12-02 00:31:02.123
    std::string call_id = str_of(rec, "call_id");
    if (call_id.size() > 20) call_id.resize(20);
    std::string peers;
    if (const auto it = rec.find("peers"); it != rec.end() && it->is_array())
        for (const auto& p : *it) {
            peers += (peers.empty() ? "" : ",") + str_of(p, "peer") + ":" + str_of(p, "outcome");
            if (const std::string code = str_of(p, "code"); !code.empty()) peers += "/" + code;
        }
    const std::string answer = str_of(rec, "answer_ms");
    std::string duration = "-";
    if (!answer.empty()) duration = report::fmt("%.1f", rec.value("duration_s", 0.0));
    std::string mos = "-";
    if (const auto it = rec.find("media"); it != rec.end() && it->is_object()) {
        auto one = [&](const char* side) {
            const auto m = it->find(side);
            if (m == it->end() || !m->is_object() || !m->contains("mos") || (*m)["mos"].is_null()) return std::string("-");
            return report::fmt("%.2f", (*m)["mos"].get<double>());
        };
        mos = one("a") + "/" + one("b");
    }
    auto dash = [](std::string s) { return s.empty() ? std::string("-") : s; };
    return {dash(time),
            dash(call_id),
            dash(str_of(rec, "from")),
            dash(str_of(rec, "to")),
            dash(str_of(rec, "trunk")),
            dash(peers),
            str_of(rec, "final_code") + "/" + str_of(rec, "final_by"),
            dash(answer),
            duration,
            dash(str_of(rec, "end")),
            mos};
}

std::string render_cdr_rows(const std::vector<std::vector<std::string>>& rows)
{
    static constexpr std::size_t widths[] = {23, 20, 14, 14, 10, 30, 9, 8, 7, 13, 9};
    std::string out;
    for (const auto& row : rows) {
        std::string line;
        std::size_t want = 0;  // where this column should start
        for (std::size_t i = 0; i < row.size(); ++i) {
            if (i > 0) {
                want += (i - 1 < std::size(widths) ? widths[i - 1] : 8) + 2;
                line += std::string(line.size() + 2 <= want ? want - line.size() : 2, ' ');
                if (line.size() > want) want = line.size();
            }
            line += row[i];
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
    }
    return out;
}

std::string render_cdr_text(const json& answer, bool header)
{
    std::vector<std::vector<std::string>> rows;
    if (header) rows.push_back(cdr_header());
    if (const auto it = answer.find("records"); it != answer.end() && it->is_array())
        for (const auto& rec : *it) rows.push_back(cdr_row(rec));
    if (answer.contains("enabled") && !answer.value("enabled", true))
        return "call detail records are off (no [cdr] in the config)\n";
    return render_cdr_rows(rows);
}

}  // namespace sbc::control
