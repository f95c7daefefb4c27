// The control socket's `peer canary` and `peer promote` (sbcctl peer canary NAME --match
// FIELD:PATTERN, sbcctl peer promote NAME): the registry is changed and a new snapshot with the
// compiled patterns is published (control_loop::publish_config applies the registry). Control
// core only.
#include <cstdio>
#include <optional>

#include "control/control_loop.h"

namespace sbc::control {

nlohmann::json control_loop::peer_canary(const nlohmann::json& request)
{
    const std::string action = request.value("action", "");
    const std::string name = request.value("name", "");
    if (!published_.tables) return {{"ok", false}, {"error", "no peers configured"}};
    bool known_peer = false;
    std::string known;
    for (const auto& p : published_.tables->peers) {
        if (p.name == name) known_peer = true;
        else if (known.size() < 300) known += (known.empty() ? "" : ", ") + p.name;
    }
    if (!known_peer) return {{"ok", false}, {"error", "no peer named '" + name + "' (known: " + known + ")"}};

    std::string error;
    if (action == "canary") {
        const std::string match = request.value("match", "");
        const canary_entry* before = canaries_.find(name);
        const std::optional<canary_entry> previous = before ? std::optional<canary_entry>(*before) : std::nullopt;
        if (!canaries_.set(name, match, cfg_.node.workers, error))
            return {{"ok", false}, {"error", "peer " + name + ": " + error}};
        if (!publish_config(cfg_, error)) {
            // Put the registry back as it was; the running snapshot never saw the change.
            canaries_.remove(name);
            std::string ignored;
            if (previous) canaries_.set(name, previous->describe(), cfg_.node.workers, ignored);
            return {{"ok", false}, {"error", "peer " + name + ": canary not published: " + error}};
        }
        std::fprintf(stderr, "sbcd: peer %s: canary by the operator: only new calls matching %s (generation %llu)\n",
                     name.c_str(), canaries_.find(name)->describe().c_str(),
                     static_cast<unsigned long long>(published_.generation.load()));
    } else {
        const canary_entry* before = canaries_.find(name);
        if (before == nullptr) return {{"ok", false}, {"error", "peer " + name + " is not a canary"}};
        const std::string was = before->describe();
        canaries_.remove(name);
        if (!publish_config(cfg_, error)) {
            std::string ignored;
            canaries_.set(name, was, cfg_.node.workers, ignored);
            return {{"ok", false}, {"error", "peer " + name + ": promotion not published: " + error}};
        }
        std::fprintf(stderr, "sbcd: peer %s: promoted by the operator: in normal rotation (was canary for %s)\n",
                     name.c_str(), was.c_str());
    }
    nlohmann::json j = to_json(report());
    j["ok"] = true;
    return j;
}

}  // namespace sbc::control
