// OPTIONS scheduling and the probe's text (see probe.h). Control core only.
#include "control/probe.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>

#include "sip-fastpath/probe_branch.h"
#include "sip-fastpath/proxy_ids.h"

namespace sbc::control {

void probe_scheduler::set_peers(std::span<const uint32_t> ids, uint64_t now_us)
{
    for (uint32_t id : ids)
        if (id >= slots_.size()) slots_.resize(id + 1);
    std::vector<char> was(slots_.size(), 0);
    for (uint32_t id : active_) was[id] = 1, slots_[id].active = false;
    std::size_t n_new = 0, k = 0;
    for (uint32_t id : ids) n_new += was[id] == 0;
    active_.clear();
    for (uint32_t id : ids) {
        slot& s = slots_[id];
        if (s.active) continue;  // listed twice
        s.active = true;
        active_.push_back(id);
        if (was[id]) continue;   // keeps its rhythm and its outstanding probe
        // Spread first probes over one interval: many peers, no burst every interval.
        s.outstanding = false;
        s.next_us = now_us + (n_new > 1 ? interval_us_ * k / n_new : 0);
        ++k;
    }
    // A peer no longer probed: its outstanding probe can neither time out nor be answered.
    for (std::size_t id = 0; id < was.size(); ++id)
        if (was[id] && !slots_[id].active) slots_[id].outstanding = false;
}

probe_scheduler::slot& probe_scheduler::at(uint32_t id)
{
    if (id >= slots_.size()) slots_.resize(id + 1);
    return slots_[id];
}

void probe_scheduler::due(uint64_t now_us, std::vector<probe_due>& out)
{
    for (uint32_t id : active_) {
        slot& s = slots_[id];
        if (!s.active || now_us < s.next_us) continue;
        ++s.seq;
        s.outstanding = true;
        s.sent_us = now_us;
        s.timeout_us = timeout_us_;
        ++s.sent;
        // The rhythm follows the schedule, not the loop's lateness, unless it fell behind.
        s.next_us = s.next_us + interval_us_ > now_us ? s.next_us + interval_us_ : now_us + interval_us_;
        out.push_back({id, s.seq});
    }
    for (uint32_t id : once_) {
        slot& s = slots_[id];
        if (!s.once_pending) continue;
        s.once_pending = false;
        if (s.active) continue;  // probed since it was asked for: its rhythm covers it
        ++s.seq;
        s.once_seq = s.seq;
        s.once_open = true;
        s.once_sent_us = now_us;
        ++s.sent;
        out.push_back({id, s.seq, true});
    }
    once_.clear();
}

void probe_scheduler::set_timeout(uint32_t id, uint64_t timeout_us) noexcept
{
    if (id >= slots_.size()) return;
    // At most the interval: one probe at a time, so it must be over when the next is due.
    slots_[id].timeout_us = timeout_us == 0 ? timeout_us_ : std::min(timeout_us, interval_us_);
}

bool probe_scheduler::probe_now(uint32_t id, uint64_t now_us)
{
    slot& s = at(id);
    if (s.active) {
        if (s.outstanding || s.next_us <= now_us) return false;
        s.next_us = now_us;
        return true;
    }
    if (s.once_pending) return false;
    s.once_pending = true;
    once_.push_back(id);
    return true;
}

std::optional<probe_answer> probe_scheduler::on_reply(uint32_t id, uint32_t seq, uint64_t rx_us)
{
    if (id < slots_.size()) {
        slot& s = slots_[id];
        if (s.active && s.outstanding && s.seq == seq) {
            s.outstanding = false;
            const uint64_t rtt = rx_us > s.sent_us ? rx_us - s.sent_us : 0;
            return probe_answer{rtt, rtt > s.timeout_us, false};
        }
        if (s.once_open && s.once_seq == seq) {
            s.once_open = false;
            return probe_answer{rx_us > s.once_sent_us ? rx_us - s.once_sent_us : 0, false, true};
        }
    }
    ++stale_;
    return std::nullopt;
}

void probe_scheduler::expired(uint64_t now_us, std::vector<uint32_t>& out)
{
    for (uint32_t id : active_) {
        slot& s = slots_[id];
        // Failed only when its successor is due too: a reply before then is late, not lost.
        if (!s.active || !s.outstanding || now_us < s.sent_us + s.timeout_us || now_us < s.next_us) continue;
        s.outstanding = false;
        out.push_back(id);
    }
}

std::size_t write_probe_options(std::span<char> out, const probe_text_args& a) noexcept
{
    // Hosts as in a SIP URI and a Via sent-by (IPv6 in brackets), NUL-terminated for printf.
    char local[max_endpoint_text + 1], peer[max_endpoint_text + 1], branch[sip::branch_probe_len + 1];
    const auto host = [](const endpoint& e, char* out) {
        std::size_t n = 0;
        if (e.addr.is_v6()) out[n++] = '[';
        n += format_address(e.addr, std::span<char>(out + n, max_address_text));
        if (e.addr.is_v6()) out[n++] = ']';
        out[n] = '\0';
    };
    host(a.local, local);
    host(a.peer, peer);
    sip::write_probe_branch(branch, {a.peer_id, a.seq});
    branch[sip::branch_probe_len] = '\0';
    const std::string_view via_proto = transport_via_name(a.local.proto);
    // From and Contact name us as the peer knows us: the FQDN we present, else our address.
    std::array<char, 256> named{};
    const char* name = local;
    if (!a.fqdn.empty() && a.fqdn.size() < named.size()) {
        std::memcpy(named.data(), a.fqdn.data(), a.fqdn.size());
        name = named.data();
    }
    const int n = std::snprintf(out.data(), out.size(),
                                "OPTIONS sip:%s:%u SIP/2.0\r\n"
                                "Via: SIP/2.0/%.*s %s:%u;branch=%s;rport\r\n"
                                "Max-Forwards: 70\r\n"
                                "From: <sip:sbc@%s:%u>;tag=p%x\r\n"
                                "To: <sip:%s:%u>\r\n"
                                "Call-ID: %s@%s\r\n"
                                "CSeq: %u OPTIONS\r\n"
                                "Contact: <sip:sbc@%s:%u%s>\r\n"
                                "Accept: application/sdp\r\n"
                                "Content-Length: 0\r\n\r\n",
                                peer, unsigned{a.peer.port}, static_cast<int>(via_proto.size()), via_proto.data(), local,
                                unsigned{a.local.port}, branch, name, unsigned{a.local.port}, a.peer_id, peer,
                                unsigned{a.peer.port},
                                branch + sip::branch_probe.size(), local, a.seq, name, unsigned{a.local.port},
                                a.local.proto == transport::tls   ? ";transport=tls"
                                : a.local.proto == transport::tcp ? ";transport=tcp"
                                                                  : "");
    if (n <= 0 || static_cast<std::size_t>(n) >= out.size()) return 0;
    return static_cast<std::size_t>(n);
}

}  // namespace sbc::control
