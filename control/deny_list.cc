// The node's deny list (see deny_list.h). Control core only.
#include "control/deny_list.h"

namespace sbc::control {

deny_outcome deny_list::add(const ip_address& addr, dataplane::deny_reason reason, std::string note, uint64_t seconds,
                            bool trusted, uint64_t now_ms, int64_t now_unix)
{
    const bool by_operator = reason == dataplane::deny_reason::by_operator;
    if (trusted) {
        if (!by_operator) ++ignored_trusted_;
        return deny_outcome::refused_trusted;
    }
    auto it = entries_.find(addr);
    if (it != entries_.end()) {
        if (by_operator) {
            it->second.reason = reason;
            it->second.note = std::move(note);
            it->second.until_ms = now_ms + seconds * 1000;
            it->second.until_unix = now_unix + static_cast<int64_t>(seconds);
        }
        return deny_outcome::updated;
    }
    if (entries_.size() >= max_entries) {
        ++refused_full_;
        return deny_outcome::refused_full;
    }
    deny_entry e;
    e.addr = addr;
    e.reason = reason;
    e.note = std::move(note);
    e.since_ms = now_ms;
    e.until_ms = now_ms + seconds * 1000;
    e.since_unix = now_unix;
    e.until_unix = now_unix + static_cast<int64_t>(seconds);
    entries_.emplace(addr, std::move(e));
    ++denials_[static_cast<std::size_t>(reason)];
    return deny_outcome::added;
}

bool deny_list::remove(const ip_address& addr) { return entries_.erase(addr) != 0; }

std::vector<deny_entry> deny_list::expire(uint64_t now_ms)
{
    std::vector<deny_entry> out;
    for (auto it = entries_.begin(); it != entries_.end();) {
        if (it->second.until_ms <= now_ms) {
            out.push_back(std::move(it->second));
            it = entries_.erase(it);
            ++expired_;
        } else {
            ++it;
        }
    }
    return out;
}

std::vector<ip_address> deny_list::addresses() const
{
    std::vector<ip_address> out;
    out.reserve(entries_.size());
    for (const auto& [a, e] : entries_) out.push_back(a);
    return out;
}

}  // namespace sbc::control
