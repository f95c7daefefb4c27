// `sbcctl capture start|stop|status` on the control socket: hands the request to the capture
// service (control/capture_service.h). Control core only.
#include <cstdio>

#include "control/capture_text.h"
#include "control/control_loop.h"

namespace sbc::control {

nlohmann::json control_loop::cmd_capture(const nlohmann::json& request)
{
    const std::string action = request.value("action", "status");
    std::string error;
    if (action == "start") {
        const auto r = capture_request_of(request, error);
        if (!r || !capture_.start(*r, error)) return {{"ok", false}, {"error", "capture: " + error}};
        std::fprintf(stderr, "sbcd: capture started: %s (%zu pattern(s), %llu MiB, %llu s)\n", r->path.c_str(),
                     r->patterns.size(), static_cast<unsigned long long>(r->max_mb),
                     static_cast<unsigned long long>(r->seconds));
    } else if (action == "stop") {
        if (!capture_.stop(error)) return {{"ok", false}, {"error", "capture: " + error}};
    } else if (action != "status") {
        return {{"ok", false}, {"error", "capture: unknown action '" + action + "' (start, stop, status)"}};
    }
    // The capture thread logs the end of a capture itself (also one that stops by its limits).
    return {{"ok", true}, {"capture", capture_status_json(capture_.status())}};
}

}  // namespace sbc::control
