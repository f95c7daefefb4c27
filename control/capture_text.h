// `sbcctl capture`: the request sbcctl sends for `capture start|stop|status`, how sbcd reads it,
// the status it answers with, and its text rendering. No EAL: sbcctl and the unit tier use it.
// Any thread that calls them owns its arguments (sbcctl's main thread, the control core).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sip-fastpath/capture_match.h"

namespace sbc::control {

/// Defaults of `sbcctl capture start`.
constexpr uint64_t capture_default_max_mb = 100;
constexpr uint64_t capture_default_seconds = 0;  ///< 0: until `capture stop`

struct capture_request {
    std::string path;  ///< absolute (sbcctl resolves a relative one against its own directory)
    std::vector<sip::capture_pattern> patterns;  ///< any of them selects a message; none: every SIP message
    uint64_t max_mb = capture_default_max_mb;    ///< the file stops growing at this size (MiB)
    uint64_t seconds = capture_default_seconds;  ///< 0: until stopped
};

/// What `capture status` shows.
struct capture_status {
    bool running = false;
    bool ever = false;  ///< a capture ran since sbcd started (the fields below are about it)
    std::string file;
    std::vector<std::string> match;  ///< "FIELD:PATTERN" as given
    uint64_t max_mb = 0;
    uint64_t seconds = 0;
    double elapsed_s = 0;
    uint64_t messages = 0;           ///< frames written to the file
    uint64_t bytes = 0;              ///< the file's size
    uint64_t dropped_ring_full = 0;  ///< copies lost: a worker's ring to the capture thread was full
    uint64_t dropped_no_buffer = 0;  ///< frames not copied: the capture pool was empty
    uint64_t dropped_file_full = 0;  ///< frames not written: --max-mb reached
    std::string stopped;             ///< why it ended (not running): "stopped by the operator", ...
};

/// The control socket request for `sbcctl capture ARGS`: {"cmd":"capture","action":"status"}
/// (also for no ARGS), "stop", or "start" with "file" (made absolute against `cwd`), "match"
/// (a list of "FIELD:PATTERN"), "max_mb" and "seconds". nullopt with `error` (a usage message)
/// when ARGS are wrong (an unknown FIELD included; patterns are compiled by sbcd).
std::optional<nlohmann::json> capture_request_json(std::span<const std::string> args, const std::string& cwd,
                                                   std::string& error);

/// sbcd's reading of a "start" request; nullopt with `error` when a field is missing or wrong.
std::optional<capture_request> capture_request_of(const nlohmann::json& request, std::string& error);

/// {"running":..., "file":..., "match":[...], "max_mb", "seconds", "elapsed_s", "messages",
/// "bytes", "dropped":{"ring_full","no_buffer","file_full"}, "stopped"}.
nlohmann::json capture_status_json(const capture_status& s);

/// `sbcctl capture status` (and what start and stop print): the answer's "capture" object as lines.
std::string render_capture_text(const nlohmann::json& answer);

}  // namespace sbc::control
