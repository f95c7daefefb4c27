// SIP capture, the control side (see capture_service.h). start/stop/status and the destructor:
// control core. run(), drain_rings(), write_copy(): the capture thread.
#include "control/capture_service.h"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdio>
#include <ctime>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "common/counter.h"
#include "dataplane/capture_filter.h"
#include "dataplane/rcu.h"

namespace sbc::control {

namespace {

constexpr uint64_t mib = 1024 * 1024;
constexpr unsigned drain_burst = 256;
constexpr auto idle_wait = std::chrono::milliseconds(1);
constexpr auto flush_every = std::chrono::milliseconds(500);

uint64_t wall_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

capture_service::~capture_service()
{
    std::string ignored;
    stop(ignored);
    reap();
}

uint64_t capture_service::dropped(bool ring_full) const
{
    uint64_t n = 0;
    for (const auto& w : rt_.workers) n += ring_full ? w->capture_stats.ring_full.get() : w->capture_stats.no_buffer.get();
    return n;
}

void capture_service::reap()
{
    if (thread_.joinable()) {
        if (!progress_.finished.load(std::memory_order_acquire)) return;
        thread_.join();
    }
    writer_.reset();
    // Every copy went back to the pool: the filter was unpublished, a grace period passed and
    // the rings were drained before the thread finished.
    if (pool_ != nullptr) rte_mempool_free(pool_);
    pool_ = nullptr;
}

bool capture_service::start(const capture_request& r, std::string& error)
{
    reap();
    if (thread_.joinable()) {
        error = "a capture is already running (" + path_ + "); stop it first with `sbcctl capture stop`";
        return false;
    }
    if (rt_.workers.empty() || rt_.workers[0]->capture_out == nullptr) {
        error = "no worker to capture on";
        return false;
    }
    std::shared_ptr<sip::capture_matcher> matcher;
    if (!r.patterns.empty()) {
        matcher = sip::capture_matcher::compile(r.patterns, static_cast<unsigned>(rt_.workers.size()), error);
        if (!matcher) return false;
    }
    // Room for every worker's ring to be full, plus what the workers' caches hold.
    const auto want = static_cast<unsigned>(rt_.workers.size() * (dataplane::capture_ring_size + 512));
    const unsigned n = std::bit_ceil(want) - 1;
    const std::string pool_name = "sbc_cap_pool" + std::to_string(pool_seq_++);
    rte_mempool* pool = rte_pktmbuf_pool_create(pool_name.c_str(), n, 256, dataplane::capture_priv_size,
                                                RTE_MBUF_DEFAULT_BUF_SIZE, static_cast<int>(rte_socket_id()));
    if (pool == nullptr) {
        error = "cannot allocate the capture pool (" + std::to_string(n) + " mbufs): " + rte_strerror(rte_errno);
        return false;
    }
    auto writer = std::make_unique<pcap_writer>();
    if (!writer->open(r.path, pcap_writer::precision::micro, error)) {
        rte_mempool_free(pool);
        return false;
    }
    req_ = r;
    path_ = r.path;
    pool_ = pool;
    writer_ = std::move(writer);
    ever_ = true;
    base_ring_full_ = dropped(true);
    base_no_buffer_ = dropped(false);
    tsc_hz_ = rte_get_tsc_hz() != 0 ? rte_get_tsc_hz() : 1;
    tsc0_ = rte_rdtsc();
    wall0_ns_ = wall_ns();
    progress_.stop.store(false, std::memory_order_relaxed);
    progress_.messages.set(0);
    progress_.bytes.set(writer_->bytes());
    progress_.file_full.set(0);
    progress_.elapsed_ms.set(0);
    progress_.why.clear();
    progress_.finished.store(false, std::memory_order_relaxed);
    auto* f = new dataplane::capture_filter();
    f->matcher = std::move(matcher);
    f->pool = pool;
    dataplane::capture_filter* old = dataplane::rcu::exchange(rt_.shared->capture.current, f);
    (void)old;  // null: only a running capture publishes one, and its thread took it back
    thread_ = std::thread([this] { run(); });
    return true;
}

bool capture_service::stop(std::string& error)
{
    if (!thread_.joinable() || progress_.finished.load(std::memory_order_acquire)) {
        reap();
        error = "no capture is running";
        return false;
    }
    progress_.stop.store(true, std::memory_order_relaxed);
    thread_.join();  // the thread ends after its final drain and flush: the file is complete
    reap();
    return true;
}

capture_status capture_service::status()
{
    reap();
    capture_status s;
    s.ever = ever_;
    if (!ever_) return s;
    const bool finished = progress_.finished.load(std::memory_order_acquire);
    s.running = !finished;
    s.file = path_;
    for (const auto& p : req_.patterns) s.match.push_back(std::string(sip::capture_field_name(p.field)) + ":" + p.expr);
    s.max_mb = req_.max_mb;
    s.seconds = req_.seconds;
    s.elapsed_s = static_cast<double>(progress_.elapsed_ms.get()) / 1000.0;
    s.messages = progress_.messages.get();
    s.bytes = progress_.bytes.get();
    s.dropped_ring_full = dropped(true) - base_ring_full_;
    s.dropped_no_buffer = dropped(false) - base_no_buffer_;
    s.dropped_file_full = progress_.file_full.get();
    if (finished) s.stopped = progress_.why;
    return s;
}

bool capture_service::write_copy(rte_mbuf* m)
{
    const uint64_t limit = req_.max_mb * mib;
    bool ok = false;
    if (writer_->bytes() + pcap_record_header_size + rte_pktmbuf_pkt_len(m) > limit) {
        progress_.file_full.bump();
    } else {
        std::array<pcap_part, 64> parts;
        std::size_t n = 0;
        for (const rte_mbuf* s = m; s != nullptr && n < parts.size(); s = s->next)
            parts[n++] = {rte_pktmbuf_mtod(s, const void*), s->data_len};
        // TSC to wall-clock time from the pair taken at start (whole seconds, then the rest,
        // so that the product never overflows).
        const uint64_t d = dataplane::capture_meta_of(m)->tsc - tsc0_;
        const uint64_t ns = d / tsc_hz_ * 1'000'000'000 + d % tsc_hz_ * 1'000'000'000 / tsc_hz_;
        ok = writer_->write(wall0_ns_ + ns, std::span<const pcap_part>(parts.data(), n));
        if (ok) {
            progress_.messages.bump();
            progress_.bytes.set(writer_->bytes());
        }
    }
    rte_pktmbuf_free(m);
    return ok;
}

std::size_t capture_service::drain_rings(bool& failed)
{
    std::array<rte_mbuf*, drain_burst> burst;
    std::vector<rte_mbuf*>& batch = batch_;
    batch.clear();
    for (const auto& w : rt_.workers) {
        const unsigned n =
            rte_ring_sc_dequeue_burst(w->capture_out, reinterpret_cast<void**>(burst.data()), drain_burst, nullptr);
        batch.insert(batch.end(), burst.begin(), burst.begin() + n);
    }
    // Workers copy in parallel: one pass's frames in the order they were copied.
    std::sort(batch.begin(), batch.end(), [](rte_mbuf* a, rte_mbuf* b) {
        return dataplane::capture_meta_of(a)->tsc < dataplane::capture_meta_of(b)->tsc;
    });
    for (rte_mbuf* m : batch)
        if (!write_copy(m) && !writer_->error().empty()) failed = true;
    return batch.size();
}

void capture_service::run()
{
    const auto started = std::chrono::steady_clock::now();
    auto flushed = started;
    std::string why;
    bool failed = false;
    for (;;) {
        const auto now = std::chrono::steady_clock::now();
        const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(now - started);
        progress_.elapsed_ms.set(static_cast<uint64_t>(elapsed.count()));
        if (progress_.stop.load(std::memory_order_relaxed)) {
            why = "stopped by the operator";
            break;
        }
        if (req_.seconds != 0 && elapsed >= std::chrono::seconds(req_.seconds)) {
            why = "--seconds " + std::to_string(req_.seconds) + " elapsed";
            break;
        }
        const std::size_t n = drain_rings(failed);
        if (failed) {
            why = "cannot write " + path_ + ": " + writer_->error();
            break;
        }
        if (progress_.file_full.get() != 0) {
            why = "--max-mb " + std::to_string(req_.max_mb) + " reached";
            break;
        }
        if (now - flushed >= flush_every) {
            writer_->flush();  // so that a reader sees the file grow
            flushed = now;
        }
        if (n == 0) std::this_thread::sleep_for(idle_wait);
    }
    // No worker copies after a grace period: what the rings hold then is all there is.
    dataplane::capture_filter* f = dataplane::rcu::exchange(rt_.shared->capture.current,
                                                            static_cast<dataplane::capture_filter*>(nullptr));
    dataplane::rcu::synchronize();
    delete f;
    bool ignored = false;
    while (drain_rings(ignored) != 0) {
    }
    writer_->close();
    progress_.bytes.set(writer_->bytes());
    std::fprintf(stderr, "sbcd: capture %s stopped (%s): %llu messages, %llu bytes\n", path_.c_str(), why.c_str(),
                 static_cast<unsigned long long>(progress_.messages.get()),
                 static_cast<unsigned long long>(writer_->bytes()));
    progress_.why = why;
    progress_.finished.store(true, std::memory_order_release);
}

}  // namespace sbc::control
