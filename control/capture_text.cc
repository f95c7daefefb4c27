// `sbcctl capture` requests, sbcd's reading of them, and renderings (see capture_text.h).
// sbcctl's main thread and the control core.
#include "control/capture_text.h"

#include <algorithm>
#include <cstdio>

namespace sbc::control {

namespace {

using nlohmann::json;

bool parse_count(const std::string& s, uint64_t min, uint64_t max, uint64_t& out)
{
    if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return false;
    out = std::stoull(s);
    return out >= min && out <= max;
}

}  // namespace

std::optional<json> capture_request_json(std::span<const std::string> args, const std::string& cwd, std::string& error)
{
    const std::string action = args.empty() ? std::string("status") : args[0];
    json r{{"cmd", "capture"}, {"action", action}};
    if (action == "status" || action == "stop") {
        if (args.size() > 1) {
            error = "capture " + action + " takes no arguments, got '" + args[1] + "'";
            return std::nullopt;
        }
        return r;
    }
    if (action != "start") {
        error = "capture: unknown action '" + action + "' (start, stop, status)";
        return std::nullopt;
    }
    json match = json::array();
    std::string file;
    uint64_t max_mb = capture_default_max_mb, seconds = capture_default_seconds;
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--match" || a == "--max-mb" || a == "--seconds") {
            if (i + 1 >= args.size()) {
                error = a + " needs a value";
                return std::nullopt;
            }
            const std::string& v = args[++i];
            if (a == "--match") {
                if (!sip::parse_capture_match(v, error)) return std::nullopt;
                match.push_back(v);
            } else if (a == "--max-mb" && !parse_count(v, 1, 1024 * 1024, max_mb)) {
                error = "--max-mb expects an integer in 1..1048576, got '" + v + "'";
                return std::nullopt;
            } else if (a == "--seconds" && !parse_count(v, 0, 30 * 86400, seconds)) {
                error = "--seconds expects an integer in 0..2592000 (0: until stop), got '" + v + "'";
                return std::nullopt;
            }
            continue;
        }
        if (a.rfind("--", 0) == 0) {
            error = "capture start: unknown option '" + a + "' (--match, --max-mb, --seconds)";
            return std::nullopt;
        }
        if (!file.empty()) {
            error = "capture start takes one FILE, got '" + file + "' and '" + a + "'";
            return std::nullopt;
        }
        file = a;
    }
    if (file.empty()) {
        error = "capture start needs a FILE to write (pcap)";
        return std::nullopt;
    }
    // sbcd writes the file: a relative path means where sbcctl runs, not sbcd's directory.
    if (file[0] != '/') file = (cwd.empty() || cwd.back() == '/' ? cwd : cwd + "/") + file;
    r["file"] = file;
    r["match"] = match;
    r["max_mb"] = max_mb;
    r["seconds"] = seconds;
    return r;
}

std::optional<capture_request> capture_request_of(const json& request, std::string& error)
{
    capture_request c;
    c.path = request.value("file", "");
    if (c.path.empty() || c.path[0] != '/') {
        error = "capture start: \"file\" must be an absolute path, got '" + c.path + "'";
        return std::nullopt;
    }
    if (request.contains("match")) {
        if (!request["match"].is_array()) {
            error = "capture start: \"match\" must be a list of FIELD:PATTERN";
            return std::nullopt;
        }
        for (const auto& m : request["match"]) {
            if (!m.is_string()) {
                error = "capture start: \"match\" must be a list of FIELD:PATTERN";
                return std::nullopt;
            }
            auto p = sip::parse_capture_match(m.get<std::string>(), error);
            if (!p) return std::nullopt;
            c.patterns.push_back(std::move(*p));
        }
    }
    c.max_mb = request.value("max_mb", capture_default_max_mb);
    c.seconds = request.value("seconds", capture_default_seconds);
    if (c.max_mb == 0) {
        error = "capture start: \"max_mb\" must be at least 1";
        return std::nullopt;
    }
    return c;
}

json capture_status_json(const capture_status& s)
{
    json j{{"running", s.running}};
    if (!s.ever) return j;
    j["file"] = s.file;
    j["match"] = s.match;
    j["max_mb"] = s.max_mb;
    j["seconds"] = s.seconds;
    j["elapsed_s"] = s.elapsed_s;
    j["messages"] = s.messages;
    j["bytes"] = s.bytes;
    j["dropped"] = {{"ring_full", s.dropped_ring_full}, {"no_buffer", s.dropped_no_buffer}, {"file_full", s.dropped_file_full}};
    if (!s.running) j["stopped"] = s.stopped;
    return j;
}

std::string render_capture_text(const json& answer)
{
    const json c = answer.value("capture", json::object());
    if (!c.contains("file")) return "capture: not running (none since sbcd started)\n";
    const bool running = c.value("running", false);
    std::string out = running ? "capture: running\n" : "capture: stopped (" + c.value("stopped", std::string("?")) + ")\n";
    std::string match;
    for (const auto& m : c.value("match", json::array())) match += (match.empty() ? "" : " or ") + m.get<std::string>();
    char line[256];
    out += "  file      " + c.value("file", std::string()) + "\n";
    out += "  match     " + (match.empty() ? std::string("every SIP message") : match) + "\n";
    const uint64_t secs = c.value("seconds", uint64_t{0});
    std::snprintf(line, sizeof line, "  limits    %llu MiB, %s\n", static_cast<unsigned long long>(c.value("max_mb", uint64_t{0})),
                  secs == 0 ? "until stopped" : (std::to_string(secs) + " s").c_str());
    out += line;
    std::snprintf(line, sizeof line, "  elapsed   %.1f s\n  written   %llu messages, %llu bytes\n", c.value("elapsed_s", 0.0),
                  static_cast<unsigned long long>(c.value("messages", uint64_t{0})),
                  static_cast<unsigned long long>(c.value("bytes", uint64_t{0})));
    out += line;
    const json d = c.value("dropped", json::object());
    std::snprintf(line, sizeof line, "  dropped   ring_full %llu, no_buffer %llu, file_full %llu\n",
                  static_cast<unsigned long long>(d.value("ring_full", uint64_t{0})),
                  static_cast<unsigned long long>(d.value("no_buffer", uint64_t{0})),
                  static_cast<unsigned long long>(d.value("file_full", uint64_t{0})));
    out += line;
    return out;
}

}  // namespace sbc::control
