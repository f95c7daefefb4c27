// Canary peers (see canary.h). Control core only.
#include "control/canary.h"

#include <algorithm>
#include <atomic>

#include "sip-fastpath/canary_match.h"

namespace sbc::control {

namespace {

std::vector<sip::canary_rule> rules_of(const std::vector<const canary_entry*>& es)
{
    std::vector<sip::canary_rule> rules;
    rules.reserve(es.size());
    for (const canary_entry* e : es) rules.push_back({e->slot, e->field, e->pattern});
    return rules;
}

}  // namespace

std::string canary_entry::describe() const
{
    return std::string(sip::canary_field_name(field)) + ":" + pattern;
}

bool canary_registry::set(const std::string& peer, std::string_view match, unsigned workers, std::string& error)
{
    const auto colon = match.find(':');
    if (colon == std::string_view::npos) {
        error = "canary match '" + std::string(match) + "': expected FIELD:PATTERN with FIELD one of ruri, from, to";
        return false;
    }
    const auto field = sip::parse_canary_field(match.substr(0, colon));
    if (!field) {
        error = "canary match '" + std::string(match) + "': unknown field '" + std::string(match.substr(0, colon)) +
                "' (ruri, from, to)";
        return false;
    }
    const std::string pattern(match.substr(colon + 1));
    if (pattern.empty()) {
        error = "canary match '" + std::string(match) + "': empty pattern";
        return false;
    }
    canary_entry* existing = nullptr;
    for (auto& e : entries_)
        if (e.peer == peer) existing = &e;
    uint8_t slot = 0;
    if (existing != nullptr) {
        slot = existing->slot;
    } else {
        uint64_t used = 0;
        for (const auto& e : entries_) used |= uint64_t{1} << e.slot;
        if (used == ~uint64_t{0}) {
            error = "already " + std::to_string(sip::max_canaries) + " canary peers; promote one first";
            return false;
        }
        while ((used >> slot) & 1) ++slot;
    }
    // Compiled alone first, so that a bad pattern is refused here with Hyperscan's reason.
    std::string why;
    if (!sip::canary_matcher::compile({{slot, *field, pattern}}, workers, why)) {
        error = "canary match '" + std::string(match) + "': " + why;
        return false;
    }
    if (existing != nullptr) {
        existing->field = *field;
        existing->pattern = pattern;
    } else {
        entries_.push_back({peer, *field, pattern, slot});
    }
    return true;
}

bool canary_registry::remove(std::string_view peer)
{
    const auto it = std::find_if(entries_.begin(), entries_.end(), [&](const canary_entry& e) { return e.peer == peer; });
    if (it == entries_.end()) return false;
    entries_.erase(it);
    return true;
}

const canary_entry* canary_registry::find(std::string_view peer) const noexcept
{
    for (const auto& e : entries_)
        if (e.peer == peer) return &e;
    return nullptr;
}

std::shared_ptr<const sip::proxy_tables> canary_registry::apply(std::shared_ptr<const sip::proxy_tables> tables,
                                                                unsigned workers, sip::peer_health& health,
                                                                std::vector<std::string>& dropped, std::string& error)
{
    if (!tables) return tables;
    std::vector<const canary_entry*> live;
    std::vector<std::string> gone;
    for (const auto& e : entries_) {
        const bool present = std::any_of(tables->peers.begin(), tables->peers.end(),
                                         [&](const sip::peer& p) { return p.name == e.peer; });
        if (present) live.push_back(&e);
        else gone.push_back(e.peer);
    }
    std::shared_ptr<const sip::proxy_tables> out = tables;
    if (!live.empty()) {
        auto matcher = sip::canary_matcher::compile(rules_of(live), workers, error);
        if (!matcher) return nullptr;
        auto copy = std::make_shared<sip::proxy_tables>(*tables);
        for (auto& p : copy->peers) {
            p.canary = sip::no_canary;
            for (const canary_entry* e : live)
                if (e->peer == p.name) p.canary = e->slot;
        }
        copy->canaries = std::move(matcher);
        out = std::move(copy);
    }
    for (const auto& name : gone) {
        remove(name);
        dropped.push_back(name);
    }
    // Relaxed stores: the control core is the only writer of these words, and a worker that sees
    // a flip one call late only chooses differently for that call (see peer_health).
    for (const auto& p : out->peers) {
        auto& w = health.word[p.id];
        const uint32_t old = w.load(std::memory_order_relaxed);
        const bool canary = find(p.name) != nullptr;
        const uint32_t now = canary ? (old | sip::peer_state::canary) : (old & ~sip::peer_state::canary);
        if (now != old) w.store(now, std::memory_order_relaxed);
    }
    return out;
}

}  // namespace sbc::control
