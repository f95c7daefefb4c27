// Flood protection on the control core: workers' reports become deny list entries (trusted
// sources never: ignored and counted), `sbcctl deny list|add|remove`, expiry, and publishing the
// set with [flood]'s limits to the workers (dataplane/flood_policy.h). Every denial and every
// end of one is logged once. Control core only (called from run(), drain_events and the control
// socket).
#include <chrono>
#include <cstdio>

#include "control/control_loop.h"
#include "control/deny_text.h"
#include "dataplane/flood_policy.h"
#include "dataplane/source_guard.h"

namespace sbc::control {

namespace {

constexpr uint64_t expiry_interval_ms = 100;

int64_t unix_now()
{
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void log_denied(const deny_entry& e, uint64_t seconds)
{
    std::fprintf(stderr, "sbcd: deny: %s denied for %llu s until %s: %s%s%s\n", to_string(e.addr).c_str(),
                 static_cast<unsigned long long>(seconds), deny_utc(e.until_unix).c_str(),
                 std::string(dataplane::deny_reason_name(e.reason)).c_str(), e.note.empty() ? "" : ", ",
                 e.note.c_str());
}

}  // namespace

bool control_loop::source_trusted(const ip_address& a) const
{
    return published_.tables && dataplane::trusted_anywhere(*published_.tables, a);
}

void control_loop::publish_flood(const config& c)
{
    for (const auto& e : deny_.list.drop_trusted([this](const ip_address& a) { return source_trusted(a); }))
        std::fprintf(stderr, "sbcd: deny: %s no longer denied: trusted now (a peer, or a trusted trunk allows it)\n",
                     to_string(e.addr).c_str());
    deny_.dirty = false;
    if (!c.flood.enabled) {
        dataplane::publish_flood_policy(rt_.shared->flood, nullptr);
        return;
    }
    auto p = std::make_unique<dataplane::flood_policy>();
    p->limits = static_cast<const dataplane::flood_limits&>(c.flood);
    p->set_denied(deny_.list.addresses());
    dataplane::publish_flood_policy(rt_.shared->flood, std::move(p));
}

void control_loop::on_source_report(const dataplane::event& e, uint64_t now)
{
    if (!cfg_.flood.enabled) return;
    const auto why = e.code < dataplane::deny_reason_count ? static_cast<dataplane::deny_reason>(e.code)
                                                           : dataplane::deny_reason::rate;
    const deny_outcome o = deny_.list.add(e.ip, why, "reported by worker " + std::to_string(e.worker),
                                          cfg_.flood.deny_s, source_trusted(e.ip), now, unix_now());
    if (o != deny_outcome::added) return;  // a trusted source or a full list (both counted), or denied already
    log_denied(deny_.list.entries().at(e.ip), cfg_.flood.deny_s);
    deny_.dirty = true;
}

void control_loop::deny_tick(uint64_t now)
{
    if (now - deny_.last_expiry_ms >= expiry_interval_ms) {
        deny_.last_expiry_ms = now;
        for (const auto& e : deny_.list.expire(now)) {
            std::fprintf(stderr, "sbcd: deny: %s no longer denied: its %s denial expired\n", to_string(e.addr).c_str(),
                         std::string(dataplane::deny_reason_name(e.reason)).c_str());
            deny_.dirty = true;
        }
    }
    if (deny_.dirty) publish_flood(cfg_);
}

namespace {

/// What `sbcctl deny` names: an IPv4 address, or an IPv6 address or /64 prefix, as the deny
/// list keys it (dataplane::flood_key: an IPv6 source's /64).
std::optional<ip_address> parse_deny_source(const std::string& text)
{
    if (auto a = parse_ipv4(text)) return a;
    const auto slash = text.find('/');
    if (slash != std::string::npos && text.substr(slash) != "/64") return std::nullopt;
    const auto a = parse_address(std::string_view(text).substr(0, slash));
    if (!a || !a->is_v6()) return std::nullopt;
    return dataplane::flood_key(*a);
}

}  // namespace

nlohmann::json control_loop::cmd_deny(const nlohmann::json& request)
{
    const std::string action = request.value("action", "list");
    const uint64_t now = now_ms();
    if (action == "list") return deny_json(deny_.list, now);
    if (action != "add" && action != "remove")
        return {{"ok", false}, {"error", "deny: unknown action '" + action + "' (list, add, remove)"}};
    const std::string text = request.value("address", "");
    const auto addr = parse_deny_source(text);
    if (!addr)
        return {{"ok", false},
                {"error", "deny " + action + ": expected an IPv4 address, or an IPv6 address or /64 prefix "
                          "(IPv6 sources are denied per /64), got '" + text + "'"}};
    if (action == "remove") {
        if (!deny_.list.remove(*addr)) return {{"ok", false}, {"error", text + " is not denied"}};
        std::fprintf(stderr, "sbcd: deny: %s no longer denied: removed by the operator\n", text.c_str());
        publish_flood(cfg_);
        return deny_json(deny_.list, now);
    }
    if (!cfg_.flood.enabled)
        return {{"ok", false}, {"error", "flood protection is off ([flood] enabled = false): nothing would drop " + text}};
    const uint64_t seconds = request.value("seconds", uint64_t{cfg_.flood.deny_s});
    if (seconds < 1 || seconds > 604800)
        return {{"ok", false}, {"error", "deny add: seconds must be 1..604800, got " + std::to_string(seconds)}};
    const std::string note = request.value("reason", "");
    const deny_outcome o = deny_.list.add(*addr, dataplane::deny_reason::by_operator, note, seconds,
                                          source_trusted(*addr), now, unix_now());
    if (o == deny_outcome::refused_trusted)
        return {{"ok", false},
                {"error", text + " is trusted (a peer's address, or allowed by a trunk with trusted = true): "
                                 "trusted sources are rate-limited, never denied"}};
    if (o == deny_outcome::refused_full)
        return {{"ok", false},
                {"error", "the deny list is full (" + std::to_string(deny_list::max_entries) +
                              " sources): remove entries first (sbcctl deny list, deny remove)"}};
    log_denied(deny_.list.entries().at(*addr), seconds);
    publish_flood(cfg_);
    return deny_json(deny_.list, now);
}

void control_loop::fill_flood(stats_report& r) const
{
    flood_report& f = r.flood;
    f.enabled = cfg_.flood.enabled;
    f.denied = deny_.list.entries().size();
    f.denials = deny_.list.denials();
    f.ignored_trusted = deny_.list.ignored_trusted();
    f.expired = deny_.list.expired();
    f.refused_full = deny_.list.refused_full();
    for (const auto& w : rt_.workers) {
        f.evictions.push_back(w->guard ? w->guard->evictions.get() : 0);
        f.reports.push_back(w->guard ? w->guard->reports.get() : 0);
    }
    if (!published_.tables) return;
    const auto& trunks = published_.tables->trunks;
    for (std::size_t i = 0; i < trunks.size() && i < max_trunks; ++i) {
        if (trunks[i].trusted) continue;  // its sources are never screened by a trunk bucket
        uint64_t n = 0;
        for (const auto& w : rt_.workers)
            if (w->guard) n += w->guard->untrusted_trunk_dropped[i].get();
        f.trunk_drops.emplace_back(trunks[i].name, n);
    }
}

}  // namespace sbc::control
