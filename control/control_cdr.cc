// The control core's side of call detail records: opens the writer from [cdr] at start, feeds
// it from every worker's ring each loop iteration (bounded bursts), serves `cdr tail|since`, and
// writes what the workers left in their rings after they stopped. Control core only.
#include <chrono>
#include <cstdio>

#include <rte_cycles.h>

#include "control/cdr_ring.h"
#include "control/control_loop.h"

namespace sbc::control {

namespace {

int64_t wall_ms_now()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

constexpr uint64_t default_tail = 20;

}  // namespace

bool control_loop::start_cdr(std::string& error)
{
    if (!cfg_.cdr.enabled()) return true;
    // The workers' clock is rte_rdtsc() / tsc_per_ms (sip_input::now_ms); read it and the wall
    // clock together once, and map every record's times with that pair.
    const uint64_t tsc_per_ms = !rt_.workers.empty() ? rt_.workers[0]->tsc_per_ms : rte_get_tsc_hz() / 1000;
    const cdr_clock clock{wall_ms_now(), rte_rdtsc() / (tsc_per_ms != 0 ? tsc_per_ms : 1)};
    cdr_ = cdr_writer::open(cfg_.cdr, clock, clock.wall_ms_at,
                            [](const std::string& line) { std::fprintf(stderr, "sbcd: %s\n", line.c_str()); }, error);
    if (!cdr_) {
        error = "[cdr] " + error;
        return false;
    }
    if (published_.tables) cdr_->set_names(cdr_names_of(*published_.tables));
    std::fprintf(stderr, "sbcd: call detail records to %s\n", cfg_.cdr.path.c_str());
    return true;
}

void control_loop::poll_cdr(bool all)
{
    if (!cdr_) return;
    uint64_t dropped = 0;
    for (const auto& w : rt_.workers) {
        if (all)
            while (drain_cdr_ring(w->cdr_out, *cdr_) != 0) {
            }
        else
            drain_cdr_ring(w->cdr_out, *cdr_);
        dropped += w->counters.cdr_dropped.get();  // relaxed: a count that stands alone
    }
    const int64_t now = wall_ms_now();
    cdr_->flush(now);
    cdr_->tick(now, dropped);
}

void control_loop::finish_cdr()
{
    if (!cdr_) return;
    poll_cdr(true);
    const cdr_report r = cdr_->report();
    std::fprintf(stderr, "sbcd: call detail records: %llu written, %llu lost on full rings, %llu lost to write errors\n",
                 static_cast<unsigned long long>(r.written), static_cast<unsigned long long>(r.dropped),
                 static_cast<unsigned long long>(r.write_errors));
}

nlohmann::json control_loop::cmd_cdr(const nlohmann::json& request)
{
    if (!cdr_) return {{"ok", true}, {"enabled", false}, {"records", nlohmann::json::array()}, {"last_seq", 0}};
    poll_cdr(false);  // what the workers handed over since the last iteration, too
    const std::string action = request.value("action", "tail");
    nlohmann::json j{{"ok", true}, {"enabled", true}, {"path", cfg_.cdr.path}};
    if (action == "tail") {
        const uint64_t n = request.value("n", default_tail);
        j["records"] = cdr_->tail().last(n);
    } else if (action == "since") {
        j["records"] = cdr_->tail().since(request.value("seq", uint64_t{0}));
    } else {
        return {{"ok", false}, {"error", "cdr: unknown action '" + action + "' (tail, since)"}};
    }
    j["last_seq"] = cdr_->tail().last_seq();
    return j;
}

}  // namespace sbc::control
