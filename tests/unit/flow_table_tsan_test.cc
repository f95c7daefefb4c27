// The media flow table shared between workers, under ThreadSanitizer: two readers do what the
// relay does per packet (look up our (address, port), read the stream record, latch, account
// the flow they receive), a third thread reads the sbcctl views, while the owning worker sets
// calls up through media_sessions, changes them (re-INVITE: another codec and clock rate,
// another far end) and tears them down, its ports coming back after a grace period. Every
// field one thread writes while another reads must be atomic: TSan fails the test otherwise.
// Built with -fsanitize=thread (tests/unit/meson.build), unit tier; at most about 2 s.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "rtp/flow_table.h"
#include "rtp/media.h"

// The first race ends the process with TSan's report (exit code 66), whatever gtest thinks.
extern "C" const char* __tsan_default_options() { return "halt_on_error=1:second_deadlock_stack=1"; }

namespace sbc::rtp {
namespace {

constexpr uint32_t sbc_ip = 0xc6130001;  // 198.19.0.1
constexpr uint16_t port_min = 20000, port_max = 20199;
constexpr uint32_t quarantine_ms = 100;
constexpr unsigned n_calls = 12;
constexpr unsigned n_readers = 2;  // one per direction: leg A's flows and leg B's
constexpr auto max_run = std::chrono::milliseconds(1500);
constexpr unsigned max_rounds = 4000;

/// The stand-in for liburcu QSBR: each reader reports, once per pass, the epoch it started the
/// pass in; the owner's synchronize() returns once every reader has finished a pass that began
/// after it was called. The production quarantine is longer than any such grace period, which
/// is what makes reusing a record's ports safe; here the owner waits for one instead.
struct grace {
    std::atomic<uint64_t> epoch{1};
    struct alignas(64) reader {
        std::atomic<uint64_t> seen{0};
    };
    std::array<reader, n_readers> readers{};

    void synchronize() noexcept
    {
        const uint64_t e = epoch.fetch_add(1, std::memory_order_acq_rel) + 1;
        for (auto& r : readers)
            while (r.seen.load(std::memory_order_acquire) < e) std::this_thread::yield();
    }
};

std::string sdp_body(uint32_t ip, uint16_t port, bool wideband)
{
    const std::string a = std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 0xff) + "." +
                          std::to_string((ip >> 8) & 0xff) + "." + std::to_string(ip & 0xff);
    std::string s = "v=0\r\no=- 1 1 IN IP4 " + a + "\r\ns=-\r\nc=IN IP4 " + a + "\r\nt=0 0\r\nm=audio " +
                    std::to_string(port) + (wideband ? " RTP/AVP 96\r\na=rtpmap:96 opus/48000/2\r\n" : " RTP/AVP 0\r\n");
    return s + "a=sendrecv\r\n";
}

/// What a reader saw: enough to tell that it really relayed, and that what it read made sense.
struct reader_result {
    uint64_t relayed = 0;
    uint64_t latched = 0;
    uint64_t bad_clock = 0;   ///< a clock rate no SDP gave
    uint64_t bad_port = 0;    ///< an egress port outside the owner's range
};

/// One pass of the relay's reads and writes over every port, for the flows arriving from leg
/// `side` (RSS gives each direction one receiving worker, so each flow's counters one writer).
void reader_pass(flow_table& table, unsigned side, uint64_t now_ms, uint32_t& seq, reader_result& r) noexcept
{
    for (uint32_t p = port_min; p <= port_max; ++p) {
        const auto port = static_cast<uint16_t>(p);
        const flow_ref ref = table.lookup(0, port);
        if (!ref.found() || ref.side != side) continue;
        media_stream& st = table.stream(ref.stream);
        const uint8_t flags = st.flags.load(std::memory_order_acquire);
        if ((flags & stream_flag::active) == 0) continue;
        const unsigned os = other(side), k = ref.rtcp;
        // Latching, as the relay does for symmetric mode.
        const uint32_t src_ip = 0x0a000000u + side * 0x10000u + port;
        const uint64_t far = st.far[side][k].load(std::memory_order_relaxed);
        if ((far & far_flag::latched) == 0) {
            st.far[side][k].store(pack_far(src_ip, port, far_flag::known | far_flag::latched), std::memory_order_relaxed);
            st.far_mac[side].store(mac_known | src_ip, std::memory_order_relaxed);
            ++r.latched;
        }
        // The flow's counters and RFC 3550 state: this reader is their only writer.
        flow_stats& fs = table.stats(0, port);
        fs.packets.bump();
        fs.bytes.add(160);
        fs.last_ms.set(now_ms);
        const uint32_t hz = st.clock_hz.load(std::memory_order_relaxed);
        if (hz != 8000 && hz != 48000) ++r.bad_clock;
        ++seq;
        if (k == 0) rtp_account(fs, static_cast<uint16_t>(seq), seq * 160, static_cast<uint32_t>(now_ms * (hz / 1000)));
        // Where it would go: the other leg's far end, from our port facing it.
        const uint64_t dst = st.far[os][k].load(std::memory_order_relaxed);
        const uint8_t addr_out = st.addr[os].load(std::memory_order_relaxed);
        const uint16_t port_out = st.port[os].load(std::memory_order_relaxed);
        const uint64_t mac = st.far_mac[os].load(std::memory_order_relaxed);
        if (port_out < port_min || port_out > port_max || addr_out != 0) ++r.bad_port;
        if ((dst & far_flag::known) != 0 && far_ip(dst) != 0 && (mac & mac_known) != 0) ++r.relayed;
    }
}

TEST(flow_table_tsan, readers_relaying_while_the_owner_changes_and_tears_down_streams_race_on_nothing)
{
    flow_table table(flow_table_config{{sbc_ip}, port_min, port_max, 1});
    media_config cfg;
    cfg.enabled = true;
    cfg.addresses = {ip_address::v4(sbc_ip)};
    cfg.quarantine_ms = quarantine_ms;
    cfg.inactivity_timeout_s = 0;
    cfg.sessions_per_worker = 64;
    media_sessions sessions(table, 0, cfg);
    grace g;
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> clock_ms{1000};

    std::array<reader_result, n_readers> results{};
    std::vector<std::thread> threads;
    for (unsigned side = 0; side < n_readers; ++side) {
        threads.emplace_back([&, side] {
            uint32_t seq = 0;
            while (!stop.load(std::memory_order_relaxed)) {
                const uint64_t e = g.epoch.load(std::memory_order_acquire);
                reader_pass(table, side, clock_ms.load(std::memory_order_relaxed), seq, results[side]);
                g.readers[side].seen.store(e, std::memory_order_release);
            }
            g.readers[side].seen.store(~uint64_t{0}, std::memory_order_release);  // offline
        });
    }
    // The control core's views (sbcctl media, /metrics) read the same records without RCU.
    uint64_t views = 0, view_flows = 0;
    threads.emplace_back([&] {
        while (!stop.load(std::memory_order_relaxed)) {
            for (const auto& c : sessions.calls())
                for (const auto& s : c.streams) view_flows += s.rtp[0].packets + s.rtp[1].packets + 1;
            view_flows += sessions.summary().sessions_active;
            ++views;
        }
    });

    // The owner: calls come, change codec and far end, and go; freed ports return after a
    // grace period. Bounded in time and in rounds.
    std::array<bool, n_calls> up{};
    std::array<uint8_t, n_calls> version{};
    uint64_t x = 0x9e3779b97f4a7c15ull;
    unsigned rounds = 0, reinvites = 0, teardowns = 0, setups = 0;
    std::array<char, 2048> out{};
    std::size_t len = 0;
    auto pass = [&](uint64_t call, sip::media_leg to, const std::string& body) {
        return sessions.rewrite_sdp(call, to, "application/sdp", body, out, len, clock_ms.load(std::memory_order_relaxed));
    };
    const auto start = std::chrono::steady_clock::now();
    while (rounds < max_rounds && std::chrono::steady_clock::now() - start < max_run) {
        ++rounds;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const unsigned c = static_cast<unsigned>(x % n_calls);
        const uint64_t call = 1000 + c;
        const auto v = version[c]++;
        const bool wide = (v & 1) != 0;
        const uint32_t far_a = 0xc6120000u + c * 16 + (v & 7), far_b = 0xc6120100u + c * 16 + (v & 7);
        const auto port_a = static_cast<uint16_t>(4000 + 2 * v), port_b = static_cast<uint16_t>(6000 + 2 * v);
        if (!up[c]) {
            // INVITE with an offer, 200 with the answer.
            if (pass(call, sip::media_leg::b, sdp_body(far_a, port_a, wide)) == sip::sdp_verdict::rewritten &&
                pass(call, sip::media_leg::a, sdp_body(far_b, port_b, wide)) == sip::sdp_verdict::rewritten) {
                up[c] = true;
                ++setups;
            } else {
                sessions.call_ended(call, clock_ms.load(std::memory_order_relaxed));
            }
        } else if ((x >> 32) % 3 != 0) {
            // re-INVITE: the caller moves and switches codec; the callee answers likewise.
            pass(call, sip::media_leg::b, sdp_body(far_a, port_a, wide));
            pass(call, sip::media_leg::a, sdp_body(far_b, port_b, wide));
            ++reinvites;
        } else {
            sessions.call_ended(call, clock_ms.load(std::memory_order_relaxed));
            up[c] = false;
            ++teardowns;
        }
        if (rounds % 16 == 0) {
            // Quarantine = a grace period: then the freed ports (and their records) are reused.
            g.synchronize();
            clock_ms.store(clock_ms.load(std::memory_order_relaxed) + quarantine_ms + 1, std::memory_order_relaxed);
            sessions.tick(clock_ms.load(std::memory_order_relaxed));
        }
    }
    stop.store(true, std::memory_order_relaxed);
    for (auto& t : threads) t.join();

    std::printf("rounds=%u setups=%u reinvites=%u teardowns=%u views=%lu relayed=%lu/%lu\n", rounds, setups, reinvites, teardowns,
                static_cast<unsigned long>(views), static_cast<unsigned long>(results[0].relayed),
                static_cast<unsigned long>(results[1].relayed));
    EXPECT_GT(setups, 10u);
    EXPECT_GT(reinvites, 10u);
    EXPECT_GT(teardowns, 10u);
    EXPECT_GT(views, 0u);
    EXPECT_GT(view_flows, 0u);
    for (unsigned side = 0; side < n_readers; ++side) {
        EXPECT_GT(results[side].relayed, 0u) << "side " << side;
        EXPECT_GT(results[side].latched, 0u) << "side " << side;
        EXPECT_EQ(results[side].bad_clock, 0u) << "side " << side;
        EXPECT_EQ(results[side].bad_port, 0u) << "side " << side;
    }
}

}  // namespace
}  // namespace sbc::rtp
