// The node's life cycle as sbcctl status, /metrics and /healthz name it. Written by the control
// core (control_loop), read by it and by the HTTP thread (/healthz); the functions are pure, any
// thread.
#pragma once

#include <cstdint>
#include <string_view>

namespace sbc::control {

enum class node_state : uint8_t {
    starting,  ///< config published, workers not running yet
    running,   ///< taking calls
    draining,  ///< no new calls; sbcd exits when the last one ends or at the drain deadline
};

/// "starting", "running" or "draining": the state in `sbcctl status`, the `state` label of
/// /metrics and the /healthz body (when not running). Running and overloaded shows as
/// "overloaded" in reports; that is control_loop::report()'s business, not this name.
[[nodiscard]] constexpr std::string_view node_state_name(node_state s) noexcept
{
    switch (s) {
    case node_state::starting: return "starting";
    case node_state::running: return "running";
    case node_state::draining: return "draining";
    }
    return "starting";
}

}  // namespace sbc::control
