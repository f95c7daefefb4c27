// What the flood benchmark (flood_bench.cc) watches besides its counters, to explain a failed
// legitimate call: the worker thread's page faults (each a kernel entry on the packet path) and
// the overload state the worker publishes (dataplane/overload.h: why and when new requests
// were shed). Main lcore only; reads what the worker publishes (relaxed atomics) and /proc.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "dataplane/overload.h"
#include "sip-fastpath/overload_shed.h"

namespace sbc::bench::flood {

/// Page faults thread `tid` of this process took so far (minor + major, from
/// /proc/self/task/TID/stat): on the worker, each is a kernel entry on the packet path. Main
/// lcore, between phases; 0 where unreadable.
inline uint64_t thread_faults(pid_t tid)
{
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", static_cast<int>(tid));
    std::ifstream f(path);
    std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const std::size_t e = stat.rfind(')');
    if (e == std::string::npos) return 0;
    std::istringstream rest(stat.substr(e + 2));
    std::string field;
    uint64_t minflt = 0, majflt = 0;
    // After "(comm) ": state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt.
    for (int k = 0; k < 10 && rest >> field; ++k) {
        if (k == 7) minflt = std::strtoull(field.c_str(), nullptr, 10);
        if (k == 9) majflt = std::strtoull(field.c_str(), nullptr, 10);
    }
    return minflt + majflt;
}

/// The worker's overload state (dataplane/overload.h, published by the worker) as the main
/// lcore saw it in the flood phase, sampled every round: why new requests were shed, and when.
struct overload_seen {
    uint8_t max_reduction = 0, max_ring = 0;
    uint16_t max_busy = 0;
    uint64_t samples = 0, overloaded = 0;  ///< rounds sampled, rounds with a reduction
    uint64_t by_busy = 0, by_ring = 0;     ///< of those, the busy share or a ring past its threshold
    double first_ms = -1, last_ms = -1;    ///< since the flood phase began
    void sample(const sip::overload_policy& p, double ms)
    {
        const dataplane::overload_view v = dataplane::overload_of(0);
        ++samples;
        max_reduction = std::max(max_reduction, v.reduction);
        max_busy = std::max(max_busy, v.busy_permille);
        max_ring = std::max(max_ring, v.ring_percent);
        if (v.reduction == 0) return;
        ++overloaded;
        by_busy += v.busy_permille > p.busy_percent * 10u;
        by_ring += v.ring_percent > p.ring_percent;
        if (first_ms < 0) first_ms = ms;
        last_ms = ms;
    }
};

}  // namespace sbc::bench::flood
