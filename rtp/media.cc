// Per-worker media anchoring (see media.h): the port pool with quarantine, call sessions by
// Call-ID hash, the SDP rewrite the proxy calls, teardown, and the inactivity check. Worker
// only, except construction (control core at start) and the views (control core, atomics
// only).
#include "common/counter.h"
#include "rtp/media.h"

#include <algorithm>
#include <cstring>

#include "rtp/sdp.h"

namespace sbc::rtp {

namespace {

constexpr auto counter_texts = SBC_LIST_TEXTS(media_counter, SBC_MEDIA_COUNTERS);

constexpr uint32_t none = slot_table<media_sessions::session>::none;

bool is_sdp_type(std::string_view ct) noexcept
{
    constexpr std::string_view want = "application/sdp";
    if (ct.size() < want.size()) return false;
    for (std::size_t i = 0; i < want.size(); ++i) {
        char c = ct[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != want[i]) return false;
    }
    return ct.size() == want.size() || ct[want.size()] == ';' || ct[want.size()] == ' ';
}

void store(std::atomic<uint64_t>& a, uint64_t v) noexcept { a.store(v, std::memory_order_relaxed); }

}  // namespace

std::string_view media_counter_name(media_counter c) noexcept { return counter_texts.name(c); }
std::string_view media_counter_help(media_counter c) noexcept { return counter_texts.help(c); }

// ---- port pool ----------------------------------------------------------------------------

port_pool::port_pool(const flow_table& t, unsigned worker, uint32_t quarantine_ms)
    : n_addresses_(t.address_count()), per_address_(t.pairs_per_worker()), quarantine_ms_(quarantine_ms)
{
    if (worker >= t.workers()) per_address_ = 0;
    const std::size_t total = std::size_t{per_address_} * n_addresses_;
    free_.reset(new uint16_t[total == 0 ? 1 : total]);
    head_.reset(new uint32_t[n_addresses_ == 0 ? 1 : n_addresses_]());
    count_.reset(new uint32_t[n_addresses_ == 0 ? 1 : n_addresses_]());
    quarantine_.reset(new held[total == 0 ? 1 : total]);
    const uint32_t first_pair = worker * t.pairs_per_worker();
    for (unsigned a = 0; a < n_addresses_; ++a) {
        for (uint32_t i = 0; i < per_address_; ++i)
            free_[std::size_t{a} * per_address_ + i] = static_cast<uint16_t>(t.port_min() + 2 * (first_pair + i));
        count_[a] = per_address_;
    }
    total_free_ = static_cast<uint32_t>(total);
    publish_counts();
}

void port_pool::publish_counts() noexcept
{
    free_view_.set(total_free_);
    q_view_.set(q_count_);
}

bool port_pool::take(unsigned addr, pair& out) noexcept
{
    if (addr >= n_addresses_ || count_[addr] == 0) return false;
    const std::size_t base = std::size_t{addr} * per_address_;
    out.addr = static_cast<uint8_t>(addr);
    out.port = free_[base + head_[addr]];
    head_[addr] = head_[addr] + 1 == per_address_ ? 0 : head_[addr] + 1;
    --count_[addr];
    --total_free_;
    publish_counts();
    return true;
}

unsigned port_pool::emptiest_address() const noexcept
{
    unsigned best = 0;
    for (unsigned a = 1; a < n_addresses_; ++a)
        if (count_[a] > count_[best]) best = a;
    return best;
}

void port_pool::give_back(pair p, uint64_t now_ms) noexcept
{
    const uint32_t total = per_address_ * n_addresses_;
    if (q_count_ == total) return;  // cannot happen: every pair given back was taken
    uint32_t tail = q_head_ + q_count_;
    if (tail >= total) tail -= total;
    quarantine_[tail] = held{p, now_ms + quarantine_ms_};
    ++q_count_;
    publish_counts();
}

void port_pool::reclaim(uint64_t now_ms) noexcept
{
    const uint32_t total = per_address_ * n_addresses_;
    bool changed = false;
    while (q_count_ != 0 && quarantine_[q_head_].until_ms <= now_ms) {
        const pair p = quarantine_[q_head_].p;
        q_head_ = q_head_ + 1 == total ? 0 : q_head_ + 1;
        --q_count_;
        uint32_t tail = head_[p.addr] + count_[p.addr];
        if (tail >= per_address_) tail -= per_address_;
        free_[std::size_t{p.addr} * per_address_ + tail] = p.port;
        ++count_[p.addr];
        ++total_free_;
        changed = true;
    }
    if (changed) publish_counts();
}

// ---- sessions -----------------------------------------------------------------------------

/// One call's media. The slot table indexes it by Call-ID hash for the worker; the views
/// (control core) scan the records and read only the atomics.
struct media_sessions::session {
    /// Call-ID hash as the views see it; 0: free slot. Release-stored last at creation, so a
    /// view that acquires it reads the rest of the new session.
    std::atomic<uint64_t> call{0};
    std::atomic<uint64_t> started_ms{0};
    /// [m-line][side]: the RTP address and port the leg's SDP last gave (packed like far).
    std::array<std::array<uint64_t, 2>, max_streams_per_call> sdp_far{};
    std::array<std::atomic<uint32_t>, max_streams_per_call> streams{};
    std::atomic<uint8_t> n_streams{0};    ///< release-stored after streams[] is filled
    std::array<uint8_t, 2> addr{};        ///< our address index facing each leg
    bool silent = false;                  ///< reported by silent_calls
};

media_sessions::media_sessions(flow_table& t, unsigned worker, const media_config& c)
    : table_(t),
      worker_(worker),
      cfg_(c),
      pool_(t, worker, c.quarantine_ms),
      sessions_(c.sessions_per_worker == 0 ? 1 : c.sessions_per_worker),
      timers_(sessions_.capacity())
{
}

media_sessions::~media_sessions() = default;

void media_sessions::count(media_counter c, uint64_t n) noexcept
{
    counters_[static_cast<std::size_t>(c)].add(n);
}

uint32_t media_sessions::create(uint64_t call, uint64_t now_ms) noexcept
{
    const uint32_t slot = sessions_.insert(call);
    if (slot == none) return none;
    session& s = sessions_.at(slot);
    s.n_streams.store(0, std::memory_order_relaxed);
    for (auto& f : s.sdp_far) f = {0, 0};
    // Each leg's streams come from one address (an SDP body names one c= for all of them).
    s.addr[0] = static_cast<uint8_t>(pool_.emptiest_address());
    s.addr[1] = s.addr[0];
    s.silent = false;
    s.started_ms.store(now_ms, std::memory_order_relaxed);
    s.call.store(call, std::memory_order_release);
    sessions_active_.set(sessions_.size());
    count(media_counter::sessions_started);
    if (cfg_.inactivity_timeout_s != 0) {
        if (timers_.now() == 0) timers_.start(now_ms);
        timers_.schedule(slot, now_ms + uint64_t{cfg_.inactivity_timeout_s} * 1000);
    }
    return slot;
}

bool media_sessions::ensure_stream(uint32_t slot, unsigned m) noexcept
{
    session& s = sessions_.at(slot);
    while (s.n_streams.load(std::memory_order_relaxed) <= m) {
        port_pool::pair pa, pb;
        if (!pool_.take(s.addr[0], pa)) return false;
        if (!pool_.take(s.addr[1], pb)) {
            pool_.give_back(pa, 0);  // never used: free again at the next reclaim
            return false;
        }
        const uint32_t id = table_.stream_id(pa.addr, pa.port);
        media_stream& st = table_.stream(id);
        // Unpublished (new, or back from quarantine): no reader holds it, relaxed stores
        // are published by the index entries' release in publish().
        for (auto& side : st.far)
            for (auto& f : side) store(f, 0);
        for (auto& mac : st.far_mac) store(mac, 0);
        st.port[0].store(pa.port, std::memory_order_relaxed);
        st.port[1].store(pb.port, std::memory_order_relaxed);
        st.addr[0].store(pa.addr, std::memory_order_relaxed);
        st.addr[1].store(pb.addr, std::memory_order_relaxed);
        st.owner.store(static_cast<uint8_t>(worker_), std::memory_order_relaxed);
        st.session.store(slot, std::memory_order_relaxed);
        st.clock_hz.store(8000, std::memory_order_relaxed);
        st.flags.store(cfg_.mode == latching::strict ? stream_flag::strict : 0, std::memory_order_relaxed);
        table_.publish(id);
        const uint8_t n = s.n_streams.load(std::memory_order_relaxed);
        s.streams[n].store(id, std::memory_order_relaxed);
        s.n_streams.store(static_cast<uint8_t>(n + 1), std::memory_order_release);
        streams_active_.bump();
    }
    return true;
}

sip::sdp_verdict media_sessions::rewrite_sdp(uint64_t call, sip::media_leg to, std::string_view content_type,
                                             std::string_view body, std::span<char> out, std::size_t& out_len,
                                             uint64_t now_ms) noexcept
{
    if (body.empty() || !is_sdp_type(content_type)) return sip::sdp_verdict::unchanged;
    sdp parsed;
    // m-lines past what we anchor would keep their ports next to our c= address: such a body
    // (like IPv6 media) is forwarded unchanged instead.
    if (!parse_sdp(body, parsed) || parsed.ipv6 || parsed.extra_media != 0 || parsed.n_media > max_streams_per_call) {
        count(media_counter::sdp_unparsable);
        return sip::sdp_verdict::unchanged;
    }
    if (call == 0) call = 1;
    uint32_t slot = sessions_.find(call);
    const bool fresh = slot == none;
    if (fresh) {
        slot = create(call, now_ms);
        if (slot == none) {
            count(media_counter::no_sessions);
            return sip::sdp_verdict::refused;
        }
    }
    session& s = sessions_.at(slot);
    const unsigned side_to = static_cast<unsigned>(to);
    const unsigned side_from = other(side_to);
    sdp_rewrite r;
    char addr_text[max_address_text];
    r.address = std::string_view(addr_text, format_address(ip_address::v4(table_.address(s.addr[side_to])), addr_text));
    const unsigned n = std::min<unsigned>(parsed.n_media, max_streams_per_call);
    for (unsigned i = 0; i < n; ++i) {
        const sdp_media& m = parsed.media[i];
        if (m.port == 0 || !m.rtp) continue;
        if (!ensure_stream(slot, i)) {
            count(media_counter::no_ports);
            if (fresh) end(slot, now_ms);
            return sip::sdp_verdict::refused;
        }
        media_stream& st = table_.stream(s.streams[i].load(std::memory_order_relaxed));
        const uint32_t ip = m.ip(parsed.c_ip);
        const uint64_t want = pack_far(ip, m.port, far_flag::known);
        if (ip != 0 && s.sdp_far[i][side_from] != want) {
            // New address from this leg's SDP (first time, or moved by a re-INVITE/UPDATE):
            // the far end is unlatched again and learns from its next packets.
            s.sdp_far[i][side_from] = want;
            store(st.far[side_from][0], want);
            const uint16_t rtcp_port = m.rtcp_mux ? m.port : m.rtcp_port != 0 ? m.rtcp_port : static_cast<uint16_t>(m.port + 1);
            store(st.far[side_from][1], pack_far(m.rtcp_ip != 0 ? m.rtcp_ip : ip, rtcp_port, far_flag::known));
            store(st.far_mac[side_from], 0);
        }
        if (m.rtcp_mux)
            st.flags.store(static_cast<uint8_t>(st.flags.load(std::memory_order_relaxed) | stream_flag::rtcp_mux),
                           std::memory_order_relaxed);
        if (side_from == 0 || st.clock_hz.load(std::memory_order_relaxed) == 8000)
            st.clock_hz.store(m.clock_hz, std::memory_order_relaxed);
        r.port[i] = st.port[side_to].load(std::memory_order_relaxed);
    }
    const std::size_t len = rtp::rewrite_sdp(body, parsed, r, out);
    if (len == 0) {
        count(media_counter::sdp_unparsable);
        return sip::sdp_verdict::unchanged;
    }
    out_len = len;
    count(media_counter::sdp_rewritten);
    return sip::sdp_verdict::rewritten;
}

void media_sessions::end(uint32_t slot, uint64_t now_ms) noexcept
{
    session& s = sessions_.at(slot);
    count_quality(s);
    const uint8_t n = s.n_streams.load(std::memory_order_relaxed);
    for (uint8_t i = 0; i < n; ++i) {
        const uint32_t id = s.streams[i].load(std::memory_order_relaxed);
        media_stream& st = table_.stream(id);
        table_.unpublish(id);
        for (unsigned side = 0; side < 2; ++side)
            pool_.give_back({st.addr[side].load(std::memory_order_relaxed), st.port[side].load(std::memory_order_relaxed)},
                            now_ms);
    }
    streams_active_.move(-static_cast<int64_t>(n));
    s.n_streams.store(0, std::memory_order_release);
    timers_.cancel(slot);
    s.call.store(0, std::memory_order_release);
    sessions_.erase(slot);
    sessions_active_.set(sessions_.size());
    count(media_counter::sessions_ended);
}

void media_sessions::call_ended(uint64_t call, uint64_t now_ms) noexcept
{
    const uint32_t slot = sessions_.find(call == 0 ? 1 : call);
    if (slot != none) end(slot, now_ms);
}

uint64_t media_sessions::last_media_ms(const session& s) const noexcept
{
    uint64_t last = s.started_ms.load(std::memory_order_relaxed);
    const uint8_t n = s.n_streams.load(std::memory_order_relaxed);
    for (uint8_t i = 0; i < n; ++i) {
        const media_stream& st = table_.stream(s.streams[i].load(std::memory_order_relaxed));
        for (unsigned side = 0; side < 2; ++side) {
            const uint8_t a = st.addr[side].load(std::memory_order_relaxed);
            const uint16_t p = st.port[side].load(std::memory_order_relaxed);
            for (uint16_t k = 0; k < 2; ++k)
                last = std::max(last, table_.stats(a, static_cast<uint16_t>(p + k)).last_ms.get());
        }
    }
    return last;
}

uint32_t media_sessions::silent_calls(uint64_t now_ms, std::span<uint64_t> calls) noexcept
{
    if (cfg_.inactivity_timeout_s == 0) return 0;
    if (timers_.now() == 0) timers_.start(now_ms);  // sessions made before the clock ran
    const uint64_t timeout = uint64_t{cfg_.inactivity_timeout_s} * 1000;
    uint32_t n = 0;
    timers_.advance(
        now_ms,
        [&](uint32_t slot) {
            session& s = sessions_.at(slot);
            if (s.call.load(std::memory_order_relaxed) == 0) return;
            const uint64_t last = last_media_ms(s);
            if (now_ms < last + timeout) {
                timers_.schedule(slot, last + timeout);
                return;
            }
            // Reported again after another timeout while it lasts: a call still ringing is
            // left alone by the proxy and looked at again later.
            timers_.schedule(slot, now_ms + timeout);
            if (!s.silent) count(media_counter::sessions_silent);
            s.silent = true;
            calls[n++] = s.call.load(std::memory_order_relaxed);
        },
        [&] { return n < calls.size(); });
    return n;
}

void media_sessions::tick(uint64_t now_ms) noexcept { pool_.reclaim(now_ms); }

sbc::cdr_media media_sessions::rtp_figures(const media_stream& st, unsigned side) const noexcept
{
    // Read as the views read them: another worker may be the flow's writer.
    const uint32_t clock = st.clock_hz.load(std::memory_order_relaxed);
    const uint64_t hz = clock != 0 ? clock : 8000;
    const flow_stats& fs =
        table_.stats(st.addr[side].load(std::memory_order_relaxed), st.port[side].load(std::memory_order_relaxed));
    sbc::cdr_media m;
    m.packets = fs.packets.get();
    m.bytes = fs.bytes.get();
    m.lost = fs.lost.get();
    // Timestamp units << 4 (RFC 3550 A.8) to microseconds.
    m.jitter_us = static_cast<uint32_t>(uint64_t{fs.jitter.get()} * 1'000'000 / 16 / hz);
    m.payload_type = fs.payload_type.get();
    return m;
}

void media_sessions::count_quality(const session& s) noexcept
{
    uint64_t packets = 0, lost = 0, sum_us = 0;
    const uint8_t n = s.n_streams.load(std::memory_order_relaxed);
    for (uint8_t i = 0; i < n; ++i) {
        const media_stream& st = table_.stream(s.streams[i].load(std::memory_order_relaxed));
        for (unsigned side = 0; side < 2; ++side) {
            const sbc::cdr_media m = rtp_figures(st, side);
            if (m.packets == 0) continue;
            packets += m.packets;
            lost += m.lost;
            sum_us += m.jitter_us;
            std::size_t b = 0;
            while (b < jitter_bounds_ms.size() && m.jitter_us > jitter_bounds_ms[b] * 1000u) ++b;
            jitter_flows_[b].bump();
        }
    }
    count(media_counter::ended_rtp_packets, packets);
    count(media_counter::ended_rtp_lost, lost);
    jitter_sum_us_.add(sum_us);
}

bool media_sessions::call_figures(uint64_t call, std::span<sbc::cdr_media, 2> out) noexcept
{
    const uint32_t slot = sessions_.find(call == 0 ? 1 : call);
    if (slot == none) return false;
    const session& s = sessions_.at(slot);
    if (s.n_streams.load(std::memory_order_relaxed) == 0) return false;
    // The first m-line's RTP flows.
    const media_stream& st = table_.stream(s.streams[0].load(std::memory_order_relaxed));
    for (unsigned side = 0; side < 2; ++side) out[side] = rtp_figures(st, side);
    return true;
}

std::vector<call_media_view> media_sessions::calls() const
{
    std::vector<call_media_view> v;
    auto flow = [&](const media_stream& st, unsigned side, unsigned k) {
        flow_view f;
        const uint8_t a = st.addr[side].load(std::memory_order_relaxed);
        const auto local_port = static_cast<uint16_t>(st.port[side].load(std::memory_order_relaxed) + k);
        f.local = endpoint::udp4(table_.address(a), local_port);
        const uint64_t far = st.far[side][k].load(std::memory_order_relaxed);
        if (far_ip(far) != 0) f.far = endpoint::udp4(far_ip(far), far_port(far));
        f.latched = (far & far_flag::latched) != 0;
        const flow_stats& fs = table_.stats(a, local_port);
        f.packets = fs.packets.get();
        f.bytes = fs.bytes.get();
        f.lost = fs.lost.get();
        f.dropped = fs.dropped.get();
        const uint32_t clock = st.clock_hz.load(std::memory_order_relaxed);
        const uint32_t hz = clock != 0 ? clock : 8000;
        f.jitter_ms = static_cast<double>(fs.jitter.get()) / 16.0 * 1000.0 / hz;
        return f;
    };
    // Every record, not the table's index: that is the worker's alone.
    for (uint32_t i = 0; i < sessions_.capacity(); ++i) {
        const session& s = sessions_.at(i);
        const uint64_t call = s.call.load(std::memory_order_acquire);
        if (call == 0) continue;
        call_media_view c;
        c.call = call;
        c.worker = worker_;
        c.started_ms = s.started_ms.load(std::memory_order_relaxed);
        const uint8_t n = s.n_streams.load(std::memory_order_acquire);
        for (uint8_t k = 0; k < n && k < max_streams_per_call; ++k) {
            const media_stream& st = table_.stream(s.streams[k].load(std::memory_order_relaxed));
            stream_view sv;
            sv.index = k;
            sv.rtcp_mux = (st.flags.load(std::memory_order_relaxed) & stream_flag::rtcp_mux) != 0;
            for (unsigned side = 0; side < 2; ++side) {
                sv.rtp[side] = flow(st, side, 0);
                sv.rtcp[side] = flow(st, side, 1);
            }
            c.streams.push_back(sv);
        }
        v.push_back(std::move(c));
    }
    return v;
}

media_summary media_sessions::summary() const noexcept
{
    media_summary m;
    for (std::size_t i = 0; i < media_counter_count; ++i) m.counters[i] = counters_[i].get();
    m.sessions_active = sessions_active_.get();
    m.streams_active = streams_active_.get();
    m.ports_free = pool_.free_count();
    m.ports_quarantined = pool_.quarantined();
    for (std::size_t i = 0; i < jitter_buckets; ++i) m.jitter_flows[i] = jitter_flows_[i].get();
    m.jitter_sum_us = jitter_sum_us_.get();
    return m;
}

void accumulate(media_summary& a, const media_summary& b) noexcept
{
    for (std::size_t i = 0; i < media_counter_count; ++i) a.counters[i] += b.counters[i];
    a.sessions_active += b.sessions_active;
    a.streams_active += b.streams_active;
    a.ports_free += b.ports_free;
    a.ports_quarantined += b.ports_quarantined;
    for (std::size_t i = 0; i < jitter_buckets; ++i) a.jitter_flows[i] += b.jitter_flows[i];
    a.jitter_sum_us += b.jitter_sum_us;
}

}  // namespace sbc::rtp
