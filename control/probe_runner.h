// The control core's OPTIONS prober: for every peer of a region with probe = "options", an
// OPTIONS every [health].options_interval_ms from the trunk address and port its calls leave
// from (probe_send.h), replies matched by branch (probe.h), and the results fed to the
// health state machine (probe_health.h) whose flips are written to the peer's atomic health
// word (no snapshot) and logged once. A probe's timeout is the peer's learned no-answer timer
// (peer_health::no_response_for, options_timeout_ms while none is learned), at least twice
// the RTT of its last answered probe and at most the interval; a reply after it but before
// the next probe is late (counted, an answer all the same); only no reply before the next
// probe fails it. probe_now probes one peer at once (a suspect one): early in its rhythm if it
// is probed, else one OPTIONS whose reply only says the peer is alive. Every reply (on time,
// late or to a one-off probe) is reported to the on_heard hook. Control core only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "control/config.h"
#include "control/neighbours.h"
#include "control/probe.h"
#include "control/probe_health.h"
#include "dataplane/events.h"
#include "dataplane/runtime.h"
#include "dataplane/snapshot.h"
#include "sip-fastpath/proxy_tables.h"

namespace sbc::control {

class probe_runner {
public:
    using log_fn = std::function<void(const std::string&)>;
    using name_fn = std::function<std::string(uint32_t)>;
    using heard_fn = std::function<void(uint32_t id, const std::string& what)>;

    probe_runner(dataplane::dataplane_runtime& rt, neighbour_manager& neighbours, log_fn log);

    /// After a snapshot with `tables` was published from `c`: which peers are probed, with
    /// which timing and policy. `fresh` are ids that were given to another peer or freed.
    void configure(const config& c, std::shared_ptr<const sip::proxy_tables> tables,
                   const std::vector<dataplane::interface_info>& interfaces, const std::vector<uint32_t>& fresh);
    /// Times out unanswered probes and sends the due ones; call every few milliseconds.
    void tick(uint64_t now_ms, const name_fn& name_of);
    /// A probe_reply event from a worker.
    void on_reply(const dataplane::event& e, const name_fn& name_of);
    /// Called with the peer id and a few words ("probe answered 200") for every SIP reply
    /// that answers one of our probes. None at first.
    void on_heard(heard_fn f) { on_heard_ = std::move(f); }
    /// Probes peer `id` at the next tick (see above). False when none is scheduled (a probe
    /// is outstanding or already due, or the id is no peer of the tables).
    bool probe_now(uint32_t id);
    /// Passive detection reached its threshold on a probed peer.
    void on_passive_down(uint32_t id, const std::string& why, const name_fn& name_of);

    [[nodiscard]] bool probed(uint32_t id) const noexcept { return sched_.probed(id); }
    [[nodiscard]] const probe_health::view& of(uint32_t id) const { return health_.of(id); }
    [[nodiscard]] uint64_t sent(uint32_t id) const noexcept { return sched_.sent(id); }
    /// Replies too late to count (the global "late replies" counter, not a peer's probes_late):
    /// after the next probe was sent, twice, or for no probe of ours.
    [[nodiscard]] uint64_t late_replies() const noexcept { return sched_.stale_replies(); }
    /// Probes sent out of rhythm by probe_now (early ones and one-off ones).
    [[nodiscard]] uint64_t early_probes() const noexcept { return early_probes_; }
    [[nodiscard]] uint64_t send_failures() const noexcept { return send_failures_; }

private:
    void apply(const health_change& c, const name_fn& name_of);
    [[nodiscard]] uint64_t now_us() const noexcept;

    dataplane::dataplane_runtime& rt_;
    neighbour_manager& neighbours_;
    log_fn log_;
    heard_fn on_heard_;
    probe_scheduler sched_{2'000'000, 1'000'000};
    probe_health health_{probe_policy{}};
    std::shared_ptr<const sip::proxy_tables> tables_;  ///< as published
    std::vector<dataplane::interface_info> interfaces_;
    std::vector<uint32_t> index_of_;  ///< peer id -> index into tables_->peers
    uint64_t tsc_hz_ = 1;
    uint16_t ip_id_ = 0;
    uint64_t send_failures_ = 0;  ///< no MAC for the next hop yet, no buffer, inject ring full
    uint64_t early_probes_ = 0;
    uint32_t timeout_ms_ = 1000;  ///< [health].options_timeout_ms: the timeout while none is learned
    std::vector<probe_due> due_;
    std::vector<uint32_t> expired_;
};

}  // namespace sbc::control
