// `sbcctl deny` and the deny list in reports: the request sbcctl sends for `deny list|add|remove`,
// the JSON the control core answers with, its text rendering, and the flood lines of /metrics.
// Any thread that calls them owns its arguments (sbcctl's main thread, the control core).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "control/deny_list.h"

namespace sbc::control {

/// The control socket request for `sbcctl deny ARGS`: {"cmd":"deny","action":"list"} or
/// "add" with "address", "seconds" (optional) and "reason" (optional), or "remove" with
/// "address". nullopt with `error` (a usage message) when ARGS are wrong.
std::optional<nlohmann::json> deny_request(std::span<const std::string> args, std::string& error);

/// The entries as the control socket answers: {"ok":true,"denied":[{"address","reason","note",
/// "since","until","seconds_left"}...]} with times as Unix seconds, soonest expiry first.
nlohmann::json deny_json(const deny_list& list, uint64_t now_ms);

/// `sbcctl deny list`: one line per entry (address, reason, since, until, seconds left).
std::string render_deny_text(const nlohmann::json& answer);

/// A Unix time as "2026-12-01T19:30:00Z" (UTC), as the deny list shows and logs it.
std::string deny_utc(int64_t unix_s);

/// The flood lines of /metrics: sbc_flood_enabled, sbc_denied_sources, sbc_denials_total{reason},
/// sbc_deny_reports_ignored_total, sbc_deny_expired_total, sbc_flood_table_evictions_total{worker},
/// sbc_flood_reports_total{worker}.
std::string flood_prometheus(const flood_report& r);

}  // namespace sbc::control
