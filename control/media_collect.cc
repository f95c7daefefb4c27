// Collecting the media report from the workers (see media_collect.h). Control core only.
#include "control/media_collect.h"

#include <cinttypes>
#include <cstdio>

#include <rte_cycles.h>

#include "control/config.h"

namespace sbc::control {

namespace {

media_flow_report flow(const rtp::flow_view& f)
{
    media_flow_report r;
    r.local = to_string(f.local);
    r.far = f.far.addr.is_unspecified() ? "" : to_string(f.far);
    r.latched = f.latched;
    r.packets = f.packets;
    r.bytes = f.bytes;
    r.lost = f.lost;
    r.jitter_ms = f.jitter_ms;
    r.refused = f.dropped;
    return r;
}

}  // namespace

media_report collect_media(const dataplane::dataplane_runtime& rt, bool with_calls)
{
    media_report r;
    if (!rt.shared || !rt.shared->media_flows) return r;
    r.enabled = true;
    rtp::media_summary sum;
    std::array<uint64_t, rtp::relay_drop_count> drops{};
    for (const auto& w : rt.workers) {
        const auto& c = w->media_counters;
        for (unsigned s = 0; s < 2; ++s) {
            r.packets[s] += c.packets[s].get();
            r.bytes[s] += c.bytes[s].get();
        }
        r.rtcp_packets += c.rtcp_packets.get();
        r.latched += c.latched.get();
        for (std::size_t i = 0; i < drops.size(); ++i) drops[i] += c.drops[i].get();
        if (w->media) rtp::accumulate(sum, w->media->summary());
    }
    for (std::size_t i = 0; i < drops.size(); ++i) {
        const auto d = static_cast<rtp::relay_drop>(i);
        r.drops.emplace_back(std::string(rtp::relay_drop_name(d)), drops[i]);
        r.drop_help.emplace_back(std::string(rtp::relay_drop_name(d)), std::string(rtp::relay_drop_help(d)));
    }
    for (std::size_t i = 0; i < rtp::media_counter_count; ++i) {
        const auto c = static_cast<rtp::media_counter>(i);
        r.counters.emplace_back(std::string(rtp::media_counter_name(c)), sum.counters[i]);
        r.counter_help.emplace_back(std::string(rtp::media_counter_name(c)), std::string(rtp::media_counter_help(c)));
    }
    for (const uint32_t b : rtp::jitter_bounds_ms) r.jitter_bounds_ms.push_back(b);
    r.jitter_flows.assign(sum.jitter_flows.begin(), sum.jitter_flows.end());
    r.jitter_sum_ms = static_cast<double>(sum.jitter_sum_us) / 1000.0;
    r.sessions_active = sum.sessions_active;
    r.flows_active = sum.streams_active * 4;
    r.ports_free = sum.ports_free;
    r.ports_quarantined = sum.ports_quarantined;
    if (!with_calls) return r;
    const uint64_t per_ms = rte_get_tsc_hz() / 1000 != 0 ? rte_get_tsc_hz() / 1000 : 1;
    const uint64_t now_ms = rte_rdtsc() / per_ms;
    for (const auto& w : rt.workers) {
        if (!w->media) continue;
        for (const auto& c : w->media->calls()) {
            media_call_report cr;
            char id[20];
            std::snprintf(id, sizeof id, "%016" PRIx64, c.call);
            cr.call = id;
            cr.worker = c.worker;
            cr.age_s = now_ms > c.started_ms ? static_cast<double>(now_ms - c.started_ms) / 1000.0 : 0.0;
            for (const auto& s : c.streams) {
                media_stream_report sr;
                sr.index = s.index;
                sr.rtcp_mux = s.rtcp_mux;
                for (unsigned side = 0; side < 2; ++side) {
                    sr.rtp[side] = flow(s.rtp[side]);
                    sr.rtcp[side] = flow(s.rtcp[side]);
                }
                cr.streams.push_back(std::move(sr));
            }
            r.calls.push_back(std::move(cr));
        }
    }
    return r;
}

}  // namespace sbc::control
