// The control socket's commands: dispatch by the command table (control/commands.h) and one
// handler per command (peer canary|promote in control_canary.cc; conns reads the stream
// thread's published report). Control core only (called from control_socket::poll in run(),
// and for SIGHUP).
#include <cstdio>
#include <string>

#include "control/control_loop.h"
#include "control/media_collect.h"
#include "transport/stream_thread.h"

namespace sbc::control {

namespace {

constexpr std::size_t index_of(command_id id) { return static_cast<std::size_t>(id); }

}  // namespace

const std::array<control_loop::command_handler, command_count> control_loop::handlers = [] {
    std::array<command_handler, command_count> h{};
    h[index_of(command_id::status)] = &control_loop::cmd_report;
    h[index_of(command_id::stats)] = &control_loop::cmd_report;
    h[index_of(command_id::calls)] = &control_loop::cmd_report;
    h[index_of(command_id::peers)] = &control_loop::cmd_report;
    h[index_of(command_id::peer)] = &control_loop::cmd_peer;
    h[index_of(command_id::drain)] = &control_loop::cmd_drain;
    h[index_of(command_id::reload)] = &control_loop::cmd_reload;
    h[index_of(command_id::conns)] = &control_loop::cmd_conns;
    h[index_of(command_id::deny)] = &control_loop::cmd_deny;  // control_deny.cc
    h[index_of(command_id::capture)] = &control_loop::cmd_capture;  // control_capture.cc
    h[index_of(command_id::cdr)] = &control_loop::cmd_cdr;  // control_cdr.cc
    return h;
}();

nlohmann::json control_loop::handle(const nlohmann::json& request)
{
    const std::string cmd = request.value("cmd", "");
    const command_info* c = find_served(cmd);
    const command_handler h = c != nullptr ? handlers[index_of(c->id)] : nullptr;
    if (h == nullptr) return {{"ok", false}, {"error", unknown_command_error(cmd)}};
    return (this->*h)(request);
}

nlohmann::json control_loop::cmd_reload(const nlohmann::json&)
{
    std::string err;
    if (!reload(err)) {
        std::fprintf(stderr, "sbcd: reload refused, the running config stays:\n%s\n", err.c_str());
        return {{"ok", false}, {"error", "reload refused, the running config stays: " + err}};
    }
    std::fprintf(stderr, "sbcd: reloaded %s (generation %llu)\n", cfg_.path.c_str(),
                 static_cast<unsigned long long>(published_.generation.load()));
    return {{"ok", true}, {"generation", published_.generation.load()}};
}

nlohmann::json control_loop::cmd_peer(const nlohmann::json& request)
{
    // Operator's word on one peer: drain (no new calls, calls up go on), disable (out of
    // service), and their undo. A bit in the peer's health word: every worker sees it at
    // its next call, no snapshot.
    const std::string action = request.value("action", "");
    const std::string name = request.value("name", "");
    if (action == "canary" || action == "promote") return peer_canary(request);
    uint32_t bit = 0;
    bool set = true;
    if (action == "drain" || action == "undrain") bit = sip::peer_state::draining, set = action == "drain";
    else if (action == "disable" || action == "enable") bit = sip::peer_state::disabled, set = action == "disable";
    else return {{"ok", false}, {"error", "peer: unknown action '" + action + "' (drain, undrain, disable, enable, canary, promote)"}};
    if (!published_.tables) return {{"ok", false}, {"error", "no peers configured"}};
    std::string known;
    for (const auto& p : published_.tables->peers) {
        if (p.name != name) {
            if (known.size() < 300) known += (known.empty() ? "" : ", ") + p.name;
            continue;
        }
        auto& w = rt_.shared->peer_health.word[p.id];
        const uint32_t old = w.load(std::memory_order_relaxed);
        w.store(set ? (old | bit) : (old & ~bit), std::memory_order_relaxed);
        std::fprintf(stderr, "sbcd: peer %s: %s by the operator\n", name.c_str(), action.c_str());
        nlohmann::json j = to_json(report());
        j["ok"] = true;
        return j;
    }
    return {{"ok", false}, {"error", "no peer named '" + name + "' (known: " + known + ")"}};
}

nlohmann::json control_loop::cmd_drain(const nlohmann::json& request)
{
    // No new calls from now on; sbcd exits when the last call ends or at the deadline.
    const uint64_t timeout_s = request.value("timeout_s", uint64_t{cfg_.self.drain_timeout_s});
    if (shared_.state.load(std::memory_order_relaxed) != node_state::draining) {
        rt_.shared->peer_health.node.fetch_or(sip::peer_health::node_draining, std::memory_order_relaxed);
        shared_.state.store(node_state::draining, std::memory_order_relaxed);
        std::fprintf(stderr, "sbcd: draining: no new calls; exit when none is left or in %llu s\n",
                     static_cast<unsigned long long>(timeout_s));
    }
    drain_.drain_deadline_ms = now_ms() + timeout_s * 1000;
    nlohmann::json j = to_json(report());
    j["ok"] = true;
    j["drain_timeout_s"] = timeout_s;
    return j;
}

nlohmann::json control_loop::cmd_conns(const nlohmann::json&)
{
    // The stream thread's last report (at most half a second old); the control core only
    // reads the immutable object it published.
    nlohmann::json j{{"ok", true}, {"conns", nlohmann::json::array()}, {"peers", nlohmann::json::array()},
                     {"problems", nlohmann::json::array()}};
    if (!streams_.running()) {
        j["note"] = "no TCP or TLS trunk or peer configured";
        return j;
    }
    j["namespace"] = streams_.namespace_name();
    const auto r = streams_.thread()->report();
    if (!r) {
        j["note"] = "the stream thread has not reported yet";
        return j;
    }
    for (const auto& c : r->conns)
        j["conns"].push_back({{"id", c.id},
                              {"direction", c.outbound ? "out" : "in"},
                              {"transport", std::string(transport_param_name(c.remote.proto))},
                              {"state", c.state},
                              {"local", to_string(c.local)},
                              {"remote", to_string(c.remote)},
                              {"owner", c.owner},
                              {"tls_version", c.tls_version},
                              {"cipher", c.cipher},
                              {"peer_subject", c.peer_subject},
                              {"age_s", static_cast<double>(c.age_ms) / 1000.0},
                              {"msgs_in", c.msgs_in},
                              {"msgs_out", c.msgs_out},
                              {"bytes_in", c.bytes_in},
                              {"bytes_out", c.bytes_out}});
    for (const auto& p : r->peers)
        j["peers"].push_back({{"id", p.peer_id}, {"name", p.name}, {"established", p.established}, {"last_error", p.last_error}});
    for (const auto& p : r->problems) j["problems"].push_back(p);
    return j;
}

nlohmann::json control_loop::cmd_report(const nlohmann::json& request)
{
    // status, stats, calls and peers answer the same report; sbcctl renders the part it shows.
    nlohmann::json j = to_json(report());
    if (request.value("cmd", "") == command_of(command_id::calls).name && request.value("media", false))
        j["media"] = to_json(collect_media(rt_, true));
    j["ok"] = true;
    return j;
}

}  // namespace sbc::control
