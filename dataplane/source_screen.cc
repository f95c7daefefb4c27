// Flood screening of UDP SIP before parsing, and reports for denial (see source_screen.h).
// Worker only: no heap, locks, system calls or logging; drops counted once per burst.
#include "dataplane/source_screen.h"

#include <rte_cycles.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "dataplane/events.h"
#include "dataplane/sip_path.h"
#include "rtp/flow_table.h"

namespace sbc::dataplane {

namespace {

/// A reported source is reported again at most once a second (the control core may have lost
/// the event, or not published the denial yet); a flood stays one event a second per source.
constexpr uint32_t report_interval_ms = 1000;

uint32_t now32(const worker& w) noexcept { return static_cast<uint32_t>(now_ms_of(w, rte_rdtsc())); }

/// The source address of the datagram in `m` (IPv4 or IPv6 header at m->l2_len).
ip_address source_of(const rte_mbuf* m) noexcept
{
    const auto* ip = rte_pktmbuf_mtod_offset(m, const uint8_t*, m->l2_len);
    if ((ip[0] >> 4) == 6) return ip_address::v6(std::span<const uint8_t, 16>(ip + 8, 16));
    return ip_address::v4(rte_be_to_cpu_32(reinterpret_cast<const rte_ipv4_hdr*>(ip)->src_addr));
}

void report_once(worker& w, source_entry& e, deny_reason why, uint32_t now) noexcept
{
    if (e.reported && now - e.reported_ms < report_interval_ms) return;
    e.reported = true;
    e.reported_ms = now;
    report_source(w, e.addr, why);
}

/// The entry of `src`, a new one starting with a full bucket of its class.
source_entry& entry_of(worker& w, const flood_limits& l, const ip_address& src, trust t, uint32_t now) noexcept
{
    slot_result r;
    source_entry& e = w.guard->table.find_or_insert(src, now, r);
    if (r != slot_result::found) e.bucket.fill(now, t == trust::trusted ? l.trusted_burst : l.untrusted_burst);
    if (r == slot_result::evicted) w.guard->evictions.bump();
    return e;
}

/// The rate and burst of the bucket trunk `trunk`'s untrusted sources share: its own
/// ([[trunk]] untrusted_trunk_rate, _burst), else [flood]'s.
struct trunk_rate {
    uint32_t rate, burst;
    trunk_rate(const flood_limits& l, const sip::proxy_tables& t, uint16_t trunk) noexcept
    {
        const sip::trunk& tr = t.trunks[trunk];
        rate = tr.untrusted_trunk_rate != sip::trunk::from_flood ? tr.untrusted_trunk_rate : l.untrusted_trunk_rate;
        burst = tr.untrusted_trunk_burst != sip::trunk::from_flood ? tr.untrusted_trunk_burst : l.untrusted_trunk_burst;
    }
};

/// Whether trunk `trunk`'s untrusted sources together are over their rate now (nothing taken);
/// a refusal is remembered, so that the first stage looks for the next ones (early_screen),
/// and counted for the trunk (the caller drops the message and counts the drop reason).
/// `trunk` indexes the tables' trunks, fewer than max_trunks (the config refuses more).
bool trunk_dry(source_guard& g, const trunk_rate& r, uint16_t trunk, uint32_t now) noexcept
{
    const bool dry = g.untrusted_trunk[trunk].dry(now, r.rate, r.burst);
    if (dry) {
        g.untrusted_trunk_dry_ms = now;
        g.untrusted_trunk_dry_seen = true;
        g.untrusted_trunk_dropped[trunk].bump();
    }
    return dry;
}

}  // namespace

void report_source(worker& w, const ip_address& src, deny_reason why) noexcept
{
    event e{};
    e.kind = event_kind::source_report;
    e.worker = static_cast<uint8_t>(w.id);
    e.ip = flood_key(src);  // what the deny list keys it by
    e.code = static_cast<uint16_t>(why);
    post_event(w, e);
    if (w.guard) w.guard->reports.bump();
}

void screen_sources(worker& w, const snapshot& snap, sub_burst& b, const uint16_t* trunks, uint16_t* kept) noexcept
{
    const flood_policy* p = rcu::dereference(w.shared->flood.current);
    if (p == nullptr || !w.guard || !snap.proxy) {
        for (uint16_t i = 0; i < b.n; ++i) kept[i] = trunks[i];
        return;
    }
    const flood_limits& l = p->limits;
    const sip::proxy_tables& t = *snap.proxy;
    source_guard& g = *w.guard;
    const uint32_t now = now32(w);
    uint32_t denied = 0, unknown = 0, over_trusted = 0, over_untrusted = 0, over_trunk = 0;
    uint16_t n = 0;
    std::array<rte_mbuf*, burst_size> dropped;  // freed together (free_dropped): one mempool operation a burst
    unsigned n_dropped = 0;
    for (uint16_t i = 0; i < b.n; ++i) {
        rte_mbuf* m = b.pkts[i];
        const ip_address src = source_of(m);
        const trust tr = classify(t, trunks[i], src);
        // Trust by the whole address (a trunk may allow one IPv6 host); limits and denials
        // by flood_key (an IPv6 source's /64).
        const ip_address key = flood_key(src);
        bool pass = true;
        if (tr != trust::trusted && p->is_denied(key)) {
            pass = false;
            ++denied;
        } else if (tr == trust::unknown) {
            // Only dialog parties' responses may come from here: one small bucket for all of them.
            pass = g.unknown.take(now, l.unknown_rate, l.unknown_burst);
            if (!pass) ++unknown;
        } else if (tr == trust::untrusted && trunk_dry(g, trunk_rate(l, t, trunks[i]), trunks[i], now)) {
            // The trunk's untrusted sources together are over their rate: dropped before the
            // source's own bucket (no token, no table entry: forged sources churn nothing),
            // and not reported (the source may well be within its own rate).
            pass = false;
            ++over_trunk;
        } else {
            const bool trusted = tr == trust::trusted;
            source_entry& e = entry_of(w, l, key, tr, now);
            pass = trusted ? e.bucket.take(now, l.trusted_rate, l.trusted_burst)
                           : e.bucket.take(now, l.untrusted_rate, l.untrusted_burst);
            if (!pass && trusted) ++over_trusted;
            if (!pass && !trusted) {
                ++over_untrusted;
                report_once(w, e, deny_reason::rate, now);
            }
            // Not dry a moment ago, so the trunk's bucket has this token.
            if (pass && !trusted) {
                const trunk_rate r(l, t, trunks[i]);
                g.untrusted_trunk[trunks[i]].take(now, r.rate, r.burst);
            }
        }
        if (!pass) {
            dropped[n_dropped++] = m;  // never answered
            continue;
        }
        kept[n] = trunks[i];
        b.pkts[n] = m;
        b.iface[n] = b.iface[i];
        ++n;
    }
    b.n = n;
    if (n_dropped != 0) free_dropped(dropped.data(), n_dropped);
    if (denied) w.counters.drop(drop_reason::flood_denied, denied);
    if (unknown) w.counters.drop(drop_reason::flood_unknown_source, unknown);
    if (over_trusted) w.counters.drop(drop_reason::flood_rate_trusted, over_trusted);
    if (over_untrusted) w.counters.drop(drop_reason::flood_rate_untrusted, over_untrusted);
    if (over_trunk) w.counters.drop(drop_reason::flood_rate_untrusted_trunk, over_trunk);
}

early_screen::early_screen(worker& w, const snapshot& snap) noexcept : w_(w)
{
    const flood_policy* p = rcu::dereference(w.shared->flood.current);
    if (p == nullptr || !w.guard || !snap.proxy) return;
    policy_ = p;
    tables_ = snap.proxy.get();
    flows_ = w.shared->media_flows.get();
}

bool early_screen::trunk_over(uint16_t trunk) noexcept
{
    return trunk_dry(*w_.guard, trunk_rate(policy_->limits, *tables_, trunk), trunk, now());
}

uint32_t early_screen::now() noexcept
{
    if (!now_known_) {
        now_ = now32(w_);
        now_known_ = true;
    }
    return now_;
}

bool early_screen::look_unknown_dry() noexcept
{
    const flood_limits& l = policy_->limits;
    return w_.guard->unknown.dry(now(), l.unknown_rate, l.unknown_burst);
}

bool early_screen::look_trunk_flood() noexcept
{
    const source_guard& g = *w_.guard;
    return g.untrusted_trunk_dry_seen && now() - g.untrusted_trunk_dry_ms < trunk_flood_ms;
}

void note_malformed(worker& w, const snapshot& snap, const ip_address& src, uint16_t trunk) noexcept
{
    const flood_policy* p = rcu::dereference(w.shared->flood.current);
    if (p == nullptr || !w.guard || !snap.proxy || p->limits.deny_after_malformed == 0) return;
    const trust tr = classify(*snap.proxy, trunk, src);
    if (tr == trust::trusted) return;
    const uint32_t now = now32(w);
    source_entry& e = entry_of(w, p->limits, flood_key(src), tr, now);
    if (e.malformed == 0 || now - e.malformed_since_ms > p->limits.malformed_window_ms) {
        e.malformed_since_ms = now;
        e.malformed = 0;
    }
    if (++e.malformed < p->limits.deny_after_malformed) return;
    e.malformed = 0;
    report_once(w, e, deny_reason::malformed, now);
}

}  // namespace sbc::dataplane
