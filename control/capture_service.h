// SIP capture, the control side: `sbcctl capture start|stop|status`. start() (control core)
// compiles the patterns (sip-fastpath/capture_match.h), creates the pool the workers copy into,
// opens the pcap file and publishes the filter (dataplane/capture_filter.h); a capture thread
// of its own drains every worker's ring into the file (control/pcap_writer.h), so that a slow
// disk never stalls the control core, and ends the capture itself at --max-mb or --seconds: it
// unpublishes the filter, waits for a grace period, drains the rings, flushes and closes the
// file, and says why in status(). stop() asks it to do that now and waits for it.
// start(), stop(), status() and the destructor: control core only. The thread touches only
// the rings, the file and the atomics of `progress`.
#pragma once

#include <atomic>
#include <memory>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "common/counter.h"
#include "control/capture_text.h"
#include "control/pcap_writer.h"
#include "dataplane/runtime.h"
#include "sip-fastpath/capture_match.h"

namespace sbc::control {

class capture_service {
public:
    explicit capture_service(dataplane::dataplane_runtime& rt) : rt_(rt) {}
    ~capture_service();  ///< stops a running capture (flushes its file)
    capture_service(const capture_service&) = delete;
    capture_service& operator=(const capture_service&) = delete;

    /// Starts a capture. false with `error` when one is running, a pattern does not compile
    /// (Hyperscan's message), the file cannot be created, or the pool cannot be allocated.
    bool start(const capture_request& r, std::string& error);
    /// Ends the running capture and waits until its file is complete; false when none runs.
    bool stop(std::string& error);
    [[nodiscard]] capture_status status();

private:
    void run();                  ///< the capture thread
    void reap();                 ///< joins a finished thread and frees its pool (control core)
    [[nodiscard]] uint64_t dropped(bool ring_full) const;
    /// Writes one copy (false: the file is full or failed; counted) and frees it (thread).
    bool write_copy(rte_mbuf* m);
    /// Moves what the rings hold into the file, in TSC order per pass; how many (thread).
    std::size_t drain_rings(bool& failed);

    dataplane::dataplane_runtime& rt_;
    capture_request req_;
    std::thread thread_;
    rte_mempool* pool_ = nullptr;
    unsigned pool_seq_ = 0;
    std::string path_;
    bool ever_ = false;
    uint64_t base_ring_full_ = 0, base_no_buffer_ = 0;  ///< worker counters at start
    uint64_t tsc0_ = 0, wall0_ns_ = 0, tsc_hz_ = 1;
    /// Shared with the capture thread, its counters' one writer while it runs (single_writer): relaxed,
    /// each value stands alone; `finished` (release by the thread, acquire by the control core)
    /// publishes `why` and the final counts.
    struct progress {
        std::atomic<bool> stop{false};
        std::atomic<bool> finished{true};
        sbc::single_writer<uint64_t> messages;
        sbc::single_writer<uint64_t> bytes;
        sbc::single_writer<uint64_t> file_full;
        sbc::single_writer<uint64_t> elapsed_ms;
        std::string why;  ///< written by the thread before `finished`
    } progress_;
    std::vector<rte_mbuf*> batch_;  ///< the capture thread's, reused by every drain pass
    std::unique_ptr<pcap_writer> writer_;  ///< the capture thread's while it runs
};

}  // namespace sbc::control
