// Names of drop reasons and stages, and the reader side of worker counters.
// Any thread: reads counters with relaxed loads.
#include "dataplane/counters.h"

namespace sbc::dataplane {

namespace {
constexpr auto drop_texts = SBC_LIST_TEXTS(drop_reason, SBC_DROP_REASONS);
constexpr std::array<std::string_view, stage_count> stage_names{
#define SBC_X(name) #name,
    SBC_STAGES(SBC_X)
#undef SBC_X
};
}  // namespace

std::string_view drop_reason_name(drop_reason r) noexcept { return drop_texts.name(r); }
std::string_view drop_reason_help(drop_reason r) noexcept { return drop_texts.help(r); }
std::string_view stage_name(stage s) noexcept { return stage_names[static_cast<std::size_t>(s)]; }

uint64_t counters_view::drops_total() const noexcept
{
    uint64_t t = 0;
    for (auto d : drops) t += d;
    return t;
}

double counters_view::busy_percent() const noexcept
{
    if (total_cycles == 0) return 0.0;
    return 100.0 * static_cast<double>(busy_cycles) / static_cast<double>(total_cycles);
}

counters_view snapshot_of(const worker_counters& c) noexcept
{
    counters_view v;
    v.rx_packets = c.rx_packets.get();
    v.rx_bytes = c.rx_bytes.get();
    v.tx_packets = c.tx_packets.get();
    v.tx_bytes = c.tx_bytes.get();
    for (std::size_t i = 0; i < stage_count; ++i) v.stage_packets[i] = c.stage_packets[i].get();
    for (std::size_t i = 0; i < drop_reason_count; ++i) v.drops[i] = c.drops[i].get();
    v.events_sent = c.events_sent.get();
    v.neighbour_held = c.neighbour_held.get();
    v.neighbour_released = c.neighbour_released.get();
    v.sip_fragments_sent = c.sip_fragments_sent.get();
    v.icmp6_errors_sent = c.icmp6_errors_sent.get();
    v.icmp6_errors_suppressed = c.icmp6_errors_suppressed.get();
    v.sip_handed_off = c.sip_handed_off.get();
    v.sip_handed_in = c.sip_handed_in.get();
    v.cdr_records = c.cdr_records.get();
    v.cdr_dropped = c.cdr_dropped.get();
    v.loops = c.loops.get();
    v.busy_loops = c.busy_loops.get();
    v.busy_cycles = c.busy_cycles.get();
    v.total_cycles = c.total_cycles.get();
    return v;
}

namespace {
template <class Op>
counters_view combine(const counters_view& a, const counters_view& b, Op op) noexcept
{
    counters_view r;
    r.rx_packets = op(a.rx_packets, b.rx_packets);
    r.rx_bytes = op(a.rx_bytes, b.rx_bytes);
    r.tx_packets = op(a.tx_packets, b.tx_packets);
    r.tx_bytes = op(a.tx_bytes, b.tx_bytes);
    for (std::size_t i = 0; i < stage_count; ++i) r.stage_packets[i] = op(a.stage_packets[i], b.stage_packets[i]);
    for (std::size_t i = 0; i < drop_reason_count; ++i) r.drops[i] = op(a.drops[i], b.drops[i]);
    r.events_sent = op(a.events_sent, b.events_sent);
    r.neighbour_held = op(a.neighbour_held, b.neighbour_held);
    r.neighbour_released = op(a.neighbour_released, b.neighbour_released);
    r.sip_fragments_sent = op(a.sip_fragments_sent, b.sip_fragments_sent);
    r.icmp6_errors_sent = op(a.icmp6_errors_sent, b.icmp6_errors_sent);
    r.icmp6_errors_suppressed = op(a.icmp6_errors_suppressed, b.icmp6_errors_suppressed);
    r.sip_handed_off = op(a.sip_handed_off, b.sip_handed_off);
    r.sip_handed_in = op(a.sip_handed_in, b.sip_handed_in);
    r.cdr_records = op(a.cdr_records, b.cdr_records);
    r.cdr_dropped = op(a.cdr_dropped, b.cdr_dropped);
    r.loops = op(a.loops, b.loops);
    r.busy_loops = op(a.busy_loops, b.busy_loops);
    r.busy_cycles = op(a.busy_cycles, b.busy_cycles);
    r.total_cycles = op(a.total_cycles, b.total_cycles);
    return r;
}
}  // namespace

void accumulate(counters_view& a, const counters_view& b) noexcept
{
    a = combine(a, b, [](uint64_t x, uint64_t y) { return x + y; });
}

counters_view difference(const counters_view& a, const counters_view& b) noexcept
{
    return combine(a, b, [](uint64_t x, uint64_t y) { return y >= x ? y - x : 0; });
}

}  // namespace sbc::dataplane
