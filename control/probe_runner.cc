// The control core's OPTIONS prober (see probe_runner.h). Control core only.
#include "control/probe_runner.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include <rte_cycles.h>

#include "control/probe_send.h"
#include "dataplane/udp_frame.h"

namespace sbc::control {

probe_runner::probe_runner(dataplane::dataplane_runtime& rt, neighbour_manager& neighbours, log_fn log)
    : rt_(rt), neighbours_(neighbours), log_(std::move(log)), tsc_hz_(rte_get_tsc_hz() ? rte_get_tsc_hz() : 1)
{
}

namespace {
/// TSC cycles to microseconds without overflow (the remainder times 1e6 fits in 64 bits).
uint64_t tsc_to_us(uint64_t tsc, uint64_t hz) noexcept
{
    return tsc / hz * 1'000'000 + tsc % hz * 1'000'000 / hz;
}
}  // namespace

uint64_t probe_runner::now_us() const noexcept
{
    return tsc_to_us(rte_rdtsc(), tsc_hz_);
}

void probe_runner::configure(const config& c, std::shared_ptr<const sip::proxy_tables> tables,
                             const std::vector<dataplane::interface_info>& interfaces,
                             const std::vector<uint32_t>& fresh)
{
    tables_ = std::move(tables);
    interfaces_ = interfaces;
    sched_.set_timing(uint64_t{c.health.options_interval_ms} * 1000, uint64_t{c.health.options_timeout_ms} * 1000);
    timeout_ms_ = c.health.options_timeout_ms;
    health_.set_policy(probe_policy{c.health.down_after, c.health.up_after, c.health.accepted_codes});
    for (uint32_t id : fresh) health_.reset(id);
    std::vector<uint32_t> ids;
    index_of_.assign(sip::max_peers, sip::no_peer);
    if (tables_) {
        for (std::size_t i = 0; i < tables_->peers.size(); ++i) {
            const sip::peer& p = tables_->peers[i];
            index_of_[p.id] = static_cast<uint32_t>(i);
            const std::string& region = p.region < tables_->regions.size() ? tables_->regions[p.region].name : "";
            bool options = true;
            for (const auto& rc : c.regions)
                if (rc.name == region) options = rc.probe == probe_mode::options;
            if (options) ids.push_back(p.id);
        }
    }
    // A peer that stops being probed forgets its probe verdict (passive health takes over).
    std::vector<char> keep(sip::max_peers, 0);
    for (uint32_t id : ids) keep[id] = 1;
    for (uint32_t id = 0; id < sip::max_peers; ++id) {
        if (!sched_.probed(id) || keep[id]) continue;
        if (health_.of(id).down) {
            const uint32_t old = rt_.shared->peer_health.word[id].load(std::memory_order_relaxed);
            rt_.shared->peer_health.word[id].store(old & ~sip::peer_state::down, std::memory_order_relaxed);
        }
        health_.reset(id);
    }
    sched_.set_peers(ids, now_us());
}

void probe_runner::apply(const health_change& c, const name_fn& name_of)
{
    // Relaxed, as every health word: a worker that sees the flip one call late only makes
    // that call try this peer (or another) first.
    auto& w = rt_.shared->peer_health.word[c.id];
    const uint32_t old = w.load(std::memory_order_relaxed);
    w.store(c.down ? (old | sip::peer_state::down) : (old & ~sip::peer_state::down), std::memory_order_relaxed);
    log_("peer " + name_of(c.id) + ": " + (c.down ? "up -> down" : "down -> up") + " (" + c.why + ")");
}

void probe_runner::tick(uint64_t now_ms, const name_fn& name_of)
{
    if (!tables_) return;
    const uint64_t now = now_us();
    expired_.clear();
    sched_.expired(now, expired_);
    for (uint32_t id : expired_)
        if (auto c = health_.on_timeout(id)) apply(*c, name_of);
    due_.clear();
    sched_.due(now, due_);
    std::array<char, 1024> text;
    for (const probe_due& d : due_) {
        const uint32_t i = d.id < index_of_.size() ? index_of_[d.id] : sip::no_peer;
        if (i == sip::no_peer) continue;
        if (!d.once) {
            // The peer's learned no-answer timer, not below twice its last probe RTT (a reply
            // as slow as the last one is on time); the scheduler holds it to the interval.
            const uint64_t learned = uint64_t{rt_.shared->peer_health.no_response_for(d.id, timeout_ms_)} * 1000;
            const int64_t rtt = health_.of(d.id).last_rtt_us;
            sched_.set_timeout(d.id, std::max(learned, rtt > 0 ? 2 * static_cast<uint64_t>(rtt) : 0));
        }
        const sip::peer& p = tables_->peers[i];
        if (p.trunk >= tables_->trunks.size()) continue;
        const sip::trunk& t = tables_->trunks[p.trunk];
        if (t.iface >= interfaces_.size()) continue;
        const std::string& fqdn =
            p.region < tables_->regions.size() && !tables_->regions[p.region].fqdn.empty() ? tables_->regions[p.region].fqdn : t.fqdn;
        const std::size_t len = write_probe_options(text, {t.leg_local(p.proto, p.address), p.remote(), p.id, d.seq, fqdn});
        if (len == 0) {  // cannot happen with 1024 bytes; counted rather than sent empty
            ++send_failures_;
            continue;
        }
        if (p.proto != transport::udp) {
            // A TCP/TLS peer: over its persistent connection, through the stream thread.
            if (!send_stream(rt_, t.leg_local(p.proto, p.address), p.remote(), {text.data(), len})) ++send_failures_;
            continue;
        }
        const dataplane::next_hop nh = dataplane::route_packet(interfaces_, t.address_for(p.address), p.address, t.iface);
        const auto mac = nh.found() ? rt_.shared->neighbours.lookup(nh.hop) : std::nullopt;
        if (!mac) {
            // The probe counts as sent: with no way to the peer it times out, as it should.
            if (nh.found()) neighbours_.needed(nh.iface, nh.hop, now_ms);
            ++send_failures_;
            continue;
        }
        if (send_udp(rt_, interfaces_[nh.iface], *mac, t.leg_local(transport::udp, p.address), p.remote(), {text.data(), len}, ip_id_++) !=
            send_result::sent)
            ++send_failures_;
    }
}

void probe_runner::on_reply(const dataplane::event& e, const name_fn& name_of)
{
    // The worker stamped its receipt with TSC >> 8 (low 32 bits): rebuild the full stamp from
    // now (the reply is at most a few ms old; the 32 bits cover minutes).
    const uint64_t now_tsc = rte_rdtsc();
    const uint32_t age8 = static_cast<uint32_t>(now_tsc >> 8) - e.probe_rx_tsc8;
    const uint64_t rx_tsc = now_tsc - (uint64_t{age8} << 8);
    const uint64_t rx_us = tsc_to_us(rx_tsc, tsc_hz_);
    const auto a = sched_.on_reply(e.peer_id, e.probe_seq, rx_us);
    if (!a) return;  // after the next probe was sent, or not ours any more: counted stale
    if (e.code != 0 && on_heard_)
        on_heard_(e.peer_id, std::string(a->once ? "one-off probe" : a->late ? "late probe" : "probe") + " answered " +
                                 std::to_string(e.code));
    if (a->once) return;  // a one-off probe of a peer not probed: alive, nothing more
    auto c = e.code == 0 ? health_.on_unreachable(e.peer_id) : health_.on_reply(e.peer_id, e.code, a->rtt_us, a->late);
    if (c) apply(*c, name_of);
}

bool probe_runner::probe_now(uint32_t id)
{
    if (!tables_ || id >= index_of_.size() || index_of_[id] == sip::no_peer) return false;
    if (!sched_.probe_now(id, now_us())) return false;
    ++early_probes_;
    return true;
}

void probe_runner::on_passive_down(uint32_t id, const std::string& why, const name_fn& name_of)
{
    if (!sched_.probed(id)) return;
    if (auto c = health_.on_passive_down(id, why)) apply(*c, name_of);
}

}  // namespace sbc::control
