// OPTIONS scheduling and the probe's text (see probe.h). Control core only.
#include "control/probe.h"

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

void probe_scheduler::due(uint64_t now_us, std::vector<probe_due>& out)
{
    for (uint32_t id : active_) {
        slot& s = slots_[id];
        if (!s.active || now_us < s.next_us) continue;
        ++s.seq;
        s.outstanding = true;
        s.sent_us = now_us;
        ++s.sent;
        // The rhythm follows the schedule, not the loop's lateness, unless it fell behind.
        s.next_us = s.next_us + interval_us_ > now_us ? s.next_us + interval_us_ : now_us + interval_us_;
        out.push_back({id, s.seq});
    }
}

std::optional<uint64_t> probe_scheduler::on_reply(uint32_t id, uint32_t seq, uint64_t rx_us)
{
    if (id >= slots_.size() || !slots_[id].active || !slots_[id].outstanding || slots_[id].seq != seq) {
        ++late_;
        return std::nullopt;
    }
    slot& s = slots_[id];
    s.outstanding = false;
    return rx_us > s.sent_us ? rx_us - s.sent_us : 0;
}

void probe_scheduler::expired(uint64_t now_us, std::vector<uint32_t>& out)
{
    for (uint32_t id : active_) {
        slot& s = slots_[id];
        if (!s.active || !s.outstanding || now_us < s.sent_us + timeout_us_) continue;
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
