// sbcctl: the operator's command line over sbcd's control socket (status, stats, top, calls, peers,
// drain, peer, reload, conns, deny). sbcctl process only (main thread). The commands, their synopses and
// help come from the one table in control/commands.h; this file has one function per command
// (handlers[], indexed by command_id), which sends the requests and prints the answers.
//
// Exit codes: 0 success, 1 daemon or connection error, 2 usage error.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "control/capture_text.h"
#include "control/cdr_format.h"
#include "control/commands.h"
#include "control/config.h"
#include "control/control_socket.h"
#include "control/deny_text.h"
#include "control/stats.h"

namespace {

using nlohmann::json;
namespace ctl = sbc::control;

constexpr int exit_ok = 0;
constexpr int exit_daemon = 1;
constexpr int exit_usage = 2;

struct options {
    std::string socket;
    bool json = false;
    int timeout_ms = 2000;
};

struct usage_error {
    std::string message;
};

// Asks sbcd; prints the reason and returns nullopt on any failure, including an
// {"error": ...} answer from the daemon.
std::optional<json> ask(const options& o, const json& request)
{
    std::string error;
    auto response = ctl::control_request(o.socket, request, error, o.timeout_ms);
    if (!response) {
        std::cerr << "sbcctl: " << error << "\n";
        return std::nullopt;
    }
    if (response->is_object() && response->contains("error")) {
        const auto& e = (*response)["error"];
        std::cerr << "sbcctl: sbcd: " << (e.is_string() ? e.get<std::string>() : e.dump()) << "\n";
        return std::nullopt;
    }
    return response;
}

// {"cmd": NAME}: the request of a served command, its name from the table.
json request_for(ctl::command_id id) { return {{"cmd", std::string(ctl::command_of(id).name)}}; }

void no_args(std::string_view cmd, std::span<const std::string> args)
{
    if (!args.empty()) throw usage_error{std::string(cmd) + " takes no arguments, got '" + args[0] + "'"};
}

// The request for a report command is its own name (commands.cc: `served`).
int show(const options& o, ctl::command_id id, std::span<const std::string> args, std::string (*render)(const json&))
{
    const std::string_view cmd = ctl::command_of(id).name;
    no_args(cmd, args);  // run() checked it already, except for `calls` with something other than --media
    auto r = ask(o, request_for(id));
    if (!r) return exit_daemon;
    std::cout << (o.json ? r->dump(2) + "\n" : render(*r));
    return exit_ok;
}

int cmd_status(const options& o, std::span<const std::string> args)
{
    return show(o, ctl::command_id::status, args, ctl::render_status_text);
}
int cmd_stats(const options& o, std::span<const std::string> args)
{
    return show(o, ctl::command_id::stats, args, ctl::render_stats_text);
}
int cmd_calls(const options& o, std::span<const std::string> args)
{
    if (args.size() == 1 && args[0] == "--media") {
        // Every call with anchored media: ports, far ends, packets/bytes/loss/jitter each way.
        json request = request_for(ctl::command_id::calls);
        request["media"] = true;
        auto r = ask(o, request);
        if (!r) return exit_daemon;
        std::cout << (o.json ? r->dump(2) + "\n" : ctl::render_calls_media_text(*r));
        return exit_ok;
    }
    return show(o, ctl::command_id::calls, args, ctl::render_calls_text);
}
int cmd_peers(const options& o, std::span<const std::string> args)
{
    return show(o, ctl::command_id::peers, args, ctl::render_peers_text);
}

int cmd_conns(const options& o, std::span<const std::string> args)
{
    return show(o, ctl::command_id::conns, args, ctl::render_conns_text);
}

double parse_positive(const std::string& flag, const std::string& value)
{
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || errno != 0 || !(v > 0))
        throw usage_error{flag + " expects a positive number, got '" + value + "'"};
    return v;
}

int cmd_top(const options& o, std::span<const std::string> args)
{
    double interval = 1.0;
    std::optional<unsigned long> count;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if ((a == "--interval" || a == "--count") && i + 1 >= args.size()) throw usage_error{a + " needs a value"};
        if (a == "--interval")
            interval = parse_positive(a, args[++i]);
        else if (a == "--count") {
            const double n = parse_positive(a, args[++i]);
            if (n != static_cast<double>(static_cast<unsigned long>(n))) throw usage_error{"--count expects a whole number"};
            count = static_cast<unsigned long>(n);
        } else
            throw usage_error{"top: unknown argument '" + a + "'"};
    }
    // Redraw in place only on a terminal; piped into a file or a script, frames follow each other.
    const bool tty = ::isatty(STDOUT_FILENO) == 1;
    auto prev = ask(o, request_for(ctl::command_id::stats));
    if (!prev) return exit_daemon;
    auto prev_at = std::chrono::steady_clock::now();
    for (unsigned long frame = 0; !count || frame < *count; ++frame) {
        std::this_thread::sleep_for(std::chrono::duration<double>(interval));
        auto cur = ask(o, request_for(ctl::command_id::stats));
        if (!cur) return exit_daemon;
        const auto now = std::chrono::steady_clock::now();
        const double seconds = std::chrono::duration<double>(now - prev_at).count();
        if (o.json) {
            std::cout << json{{"interval_s", seconds}, {"report", *cur}}.dump() << "\n";
        } else {
            if (tty) std::cout << "\033[H\033[2J";
            std::cout << ctl::render_top_text(*prev, *cur, seconds);
            if (!tty) std::cout << "\n";
        }
        std::cout.flush();
        prev = std::move(cur);
        prev_at = now;
    }
    return exit_ok;
}

int cmd_drain(const options& o, std::span<const std::string> args)
{
    bool wait = false;
    double timeout_s = 0;  // 0: sbcd's [self] drain_timeout_s
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--wait") {
            wait = true;
        } else if (a == "--timeout") {
            if (i + 1 >= args.size()) throw usage_error{"--timeout needs a value"};
            timeout_s = parse_positive(a, args[++i]);
        } else {
            throw usage_error{"drain: unknown argument '" + a + "'"};
        }
    }
    json request = request_for(ctl::command_id::drain);
    if (timeout_s > 0) request["timeout_s"] = static_cast<uint64_t>(timeout_s);
    auto r = ask(o, request);
    if (!r) return exit_daemon;
    timeout_s = r->value("drain_timeout_s", timeout_s > 0 ? timeout_s : 600.0);
    auto active = [](const json& j) {
        const json s = j.contains("sip") ? j["sip"] : json::object();
        return s.value("dialogs_active", uint64_t{0}) + s.value("setups_active", uint64_t{0});
    };
    std::cout << "draining: no new calls; " << active(*r) << " call(s) up; sbcd exits when none is left or after "
              << timeout_s << " s\n";
    if (!wait) return exit_ok;
    // sbcd exits by itself once drained: wait until its socket stops answering.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s + 30);
    uint64_t last = active(*r);
    while (std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        std::string error;
        auto cur = ctl::control_request(o.socket, request_for(ctl::command_id::status), error, o.timeout_ms);
        if (!cur) {
            std::cout << "sbcd has stopped\n";
            return exit_ok;
        }
        const uint64_t now_active = active(*cur);
        if (now_active != last) std::cout << "waiting: " << now_active << " call(s) up\n";
        last = now_active;
    }
    std::cerr << "sbcctl: sbcd still running " << timeout_s + 30 << " s after the drain\n";
    return exit_daemon;
}

int cmd_peer(const options& o, std::span<const std::string> args)
{
    const std::string action = args.empty() ? std::string() : args[0];
    json request = request_for(ctl::command_id::peer);
    request["action"] = action;
    if (action == "canary") {
        // peer canary NAME --match FIELD:PATTERN (the flag before or after the name)
        std::string name, match;
        for (std::size_t i = 1; i < args.size(); ++i) {
            if (args[i] == "--match") {
                if (i + 1 >= args.size()) throw usage_error{"--match needs FIELD:PATTERN (FIELD: ruri, from or to)"};
                match = args[++i];
            } else if (name.empty()) {
                name = args[i];
            } else {
                throw usage_error{"peer canary: unexpected argument '" + args[i] + "'"};
            }
        }
        if (name.empty() || match.empty())
            throw usage_error{"peer canary takes a peer name and --match FIELD:PATTERN, e.g. --match 'from:^\\+15550100'"};
        request["name"] = name;
        request["match"] = match;
    } else {
        if (args.size() != 2)
            throw usage_error{"peer takes an action (drain, undrain, disable, enable, canary, promote) and a peer name"};
        if (action != "drain" && action != "undrain" && action != "disable" && action != "enable" && action != "promote")
            throw usage_error{"peer: unknown action '" + action + "' (drain, undrain, disable, enable, canary, promote)"};
        request["name"] = args[1];
    }
    auto r = ask(o, request);
    if (!r) return exit_daemon;
    if (o.json) {
        std::cout << r->dump() << "\n";
        return exit_ok;
    }
    std::cout << ctl::render_peers_text(*r);
    return exit_ok;
}

int cmd_reload(const options& o, std::span<const std::string>)
{
    auto r = ask(o, request_for(ctl::command_id::reload));
    if (!r) return exit_daemon;
    std::cout << "reloaded: generation " << r->value("generation", uint64_t{0}) << " published\n";
    return exit_ok;
}

// deny list | add ADDRESS [--seconds N] [--reason TEXT] | remove ADDRESS (control/deny_text.h)
int cmd_deny(const options& o, std::span<const std::string> args)
{
    std::string error;
    const auto request = ctl::deny_request(args, error);
    if (!request) throw usage_error{error};
    auto r = ask(o, *request);
    if (!r) return exit_daemon;
    std::cout << (o.json ? r->dump(2) + "\n" : ctl::render_deny_text(*r));
    return exit_ok;
}

// capture start [--match FIELD:PATTERN]... [--max-mb N] [--seconds S] FILE | stop | status
int cmd_capture(const options& o, std::span<const std::string> args)
{
    std::string error;
    char cwd[4096];
    const auto request = ctl::capture_request_json(args, getcwd(cwd, sizeof cwd) != nullptr ? cwd : "", error);
    if (!request) throw usage_error{error};
    auto r = ask(o, *request);
    if (!r) return exit_daemon;
    std::cout << (o.json ? r->dump(2) + "\n" : ctl::render_capture_text(*r));
    return exit_ok;
}

// cdr tail [-n N] [--follow]: the last records as a table (control/cdr_format.h), then, with
// --follow, the new ones every 500 ms until interrupted; --json: each record's JSON line.
int cmd_cdr(const options& o, std::span<const std::string> args)
{
    if (args.empty() || args[0] != "tail") throw usage_error{"cdr takes tail [-n N] [--follow]"};
    uint64_t n = 20;
    bool follow = false;
    for (std::size_t i = 1; i < args.size(); ++i) {
        if (args[i] == "--follow" || args[i] == "-f") {
            follow = true;
        } else if (args[i] == "-n") {
            if (i + 1 >= args.size()) throw usage_error{"-n needs a number of records"};
            const double v = parse_positive("-n", args[++i]);
            if (v != static_cast<double>(static_cast<uint64_t>(v))) throw usage_error{"-n expects a whole number"};
            n = static_cast<uint64_t>(v);
        } else {
            throw usage_error{"cdr tail: unknown argument '" + args[i] + "'"};
        }
    }
    json request = request_for(ctl::command_id::cdr);
    request["action"] = "tail";
    request["n"] = n;
    auto r = ask(o, request);
    if (!r) return exit_daemon;
    auto print = [&](const json& answer, bool header) {
        if (o.json) {
            for (const auto& rec : answer.value("records", json::array())) std::cout << rec.dump() << "\n";
        } else {
            std::cout << ctl::render_cdr_text(answer, header);
        }
        std::cout.flush();
    };
    print(*r, true);
    if (!follow || !r->value("enabled", false)) return exit_ok;
    uint64_t seq = r->value("last_seq", uint64_t{0});
    for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        json since = request_for(ctl::command_id::cdr);
        since["action"] = "since";
        since["seq"] = seq;
        auto next = ask(o, since);
        if (!next) return exit_daemon;
        if (!next->value("records", json::array()).empty()) print(*next, false);
        seq = next->value("last_seq", seq);
    }
}

int cmd_help(const options&, std::span<const std::string>);

std::string wrap(std::string_view text, const std::string& indent, std::size_t width)
{
    std::string out;
    std::string line = indent;
    while (!text.empty()) {
        const auto space = text.find(' ');
        const std::string_view word = text.substr(0, space);
        if (line.size() > indent.size() && line.size() + 1 + word.size() > width) {
            out += line + "\n";
            line = indent;
        }
        if (line.size() > indent.size()) line += ' ';
        line += word;
        text = space == std::string_view::npos ? std::string_view{} : text.substr(space + 1);
    }
    return out + line + "\n";
}

std::string usage()
{
    std::string s =
        "usage: sbcctl [--socket PATH] [--json] [--timeout MS] COMMAND [ARGS]\n"
        "\n"
        "Talks to sbcd over its control socket.\n"
        "\n"
        "options:\n"
        "  --socket PATH  control socket of sbcd (default: $SBC_SOCKET, else " +
        std::string(ctl::default_control_socket) +
        ";\n"
        "                 sbcd's is [node].control_socket in its config)\n"
        "  --json         print the daemon's JSON answer instead of text (shapes in docs/operations.md)\n"
        "  --timeout MS   give up when sbcd has not answered after MS milliseconds (default 2000);\n"
        "                 after `drain`, --timeout S is the drain's grace period instead\n"
        "  -h, --help     this text\n"
        "\n"
        "commands:\n";
    for (const auto& c : ctl::commands()) {
        s += "  " + std::string(c.name) + (c.args.empty() ? "" : " " + std::string(c.args)) + "\n";
        s += wrap(c.help, "      ", 80);
    }
    s += "\nexamples:\n"
         "  sbcctl status                          node, interfaces, workers\n"
         "  sbcctl --json stats | jq .drops        counters as JSON\n"
         "  sbcctl peer drain NAME                 take a peer (as `sbcctl peers` names it) out of rotation\n"
         "  sbcctl drain --wait --timeout 600      stop taking calls, return when sbcd has exited\n";
    s += "\nexit status: 0 success, 1 sbcd not reachable or answered with an error, 2 usage error\n";
    return s;
}

int cmd_help(const options&, std::span<const std::string>)
{
    std::cout << usage();
    return exit_ok;
}

using handler = int (*)(const options&, std::span<const std::string> args);

// One function per row of ctl::commands(), by command_id.
constexpr std::array<handler, ctl::command_count> handlers = [] {
    std::array<handler, ctl::command_count> h{};
    h[static_cast<std::size_t>(ctl::command_id::status)] = cmd_status;
    h[static_cast<std::size_t>(ctl::command_id::stats)] = cmd_stats;
    h[static_cast<std::size_t>(ctl::command_id::calls)] = cmd_calls;
    h[static_cast<std::size_t>(ctl::command_id::peers)] = cmd_peers;
    h[static_cast<std::size_t>(ctl::command_id::top)] = cmd_top;
    h[static_cast<std::size_t>(ctl::command_id::peer)] = cmd_peer;
    h[static_cast<std::size_t>(ctl::command_id::drain)] = cmd_drain;
    h[static_cast<std::size_t>(ctl::command_id::reload)] = cmd_reload;
    h[static_cast<std::size_t>(ctl::command_id::conns)] = cmd_conns;
    h[static_cast<std::size_t>(ctl::command_id::deny)] = cmd_deny;
    h[static_cast<std::size_t>(ctl::command_id::capture)] = cmd_capture;
    h[static_cast<std::size_t>(ctl::command_id::cdr)] = cmd_cdr;
    h[static_cast<std::size_t>(ctl::command_id::help)] = cmd_help;
    return h;
}();
static_assert(std::ranges::none_of(handlers, [](handler h) { return h == nullptr; }),
              "sbcctl: every command of control/commands.cc needs a handler");

int run(int argc, char** argv)
{
    options o;
    if (const char* env = std::getenv("SBC_SOCKET"); env && *env)
        o.socket = env;
    else
        o.socket = ctl::default_control_socket;

    std::vector<std::string> rest;
    const ctl::command_info* cmd = nullptr;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        // Global options are accepted before and after the command ("sbcctl stats --json"),
        // except that after `drain`, --timeout is the drain's own (seconds), as its help says.
        const bool drain_timeout = cmd != nullptr && cmd->id == ctl::command_id::drain && a == "--timeout";
        if (a == "--json") {
            o.json = true;
        } else if ((a == "--socket" || a == "--timeout") && !drain_timeout) {
            if (i + 1 >= argc) throw usage_error{a + " needs a value"};
            const std::string v = argv[++i];
            if (a == "--socket") {
                if (v.empty()) throw usage_error{"--socket needs a path"};
                o.socket = v;
            } else {
                o.timeout_ms = static_cast<int>(parse_positive(a, v));
            }
        } else if (a == "-h" || a == "--help") {
            return cmd_help(o, {});
        } else if (!cmd) {
            cmd = ctl::find_command(a);
            if (!cmd) throw usage_error{"unknown command '" + a + "'"};
        } else {
            rest.push_back(a);
        }
    }
    if (!cmd) throw usage_error{"no command given"};
    if (cmd->args_kind == ctl::command_args::none) no_args(cmd->name, rest);
    return handlers[static_cast<std::size_t>(cmd->id)](o, rest);
}

}  // namespace

int main(int argc, char** argv)
{
    try {
        return run(argc, argv);
    } catch (const usage_error& e) {
        std::cerr << "sbcctl: " << e.message << "\n\n" << usage();
        return exit_usage;
    }
}
