// The control core's OPTIONS prober: for every peer of a region with probe = "options", an
// OPTIONS every [health].options_interval_ms from the trunk address and port its calls leave
// from (probe_send.h), replies matched by branch (probe.h), probes timed out after
// options_timeout_ms, and the results fed to the health state machine (probe_health.h)
// whose flips are written to the peer's atomic health word (no snapshot) and logged once.
// Control core only.
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

    probe_runner(dataplane::dataplane_runtime& rt, neighbour_manager& neighbours, log_fn log);

    /// After a snapshot with `tables` was published from `c`: which peers are probed, with
    /// which timing and policy. `fresh` are ids that were given to another peer or freed.
    void configure(const config& c, std::shared_ptr<const sip::proxy_tables> tables,
                   const std::vector<dataplane::interface_info>& interfaces, const std::vector<uint32_t>& fresh);
    /// Times out unanswered probes and sends the due ones; call every few milliseconds.
    void tick(uint64_t now_ms, const name_fn& name_of);
    /// A probe_reply event from a worker.
    void on_reply(const dataplane::event& e, const name_fn& name_of);
    /// Passive detection reached its threshold on a probed peer.
    void on_passive_down(uint32_t id, const std::string& why, const name_fn& name_of);

    [[nodiscard]] bool probed(uint32_t id) const noexcept { return sched_.probed(id); }
    [[nodiscard]] const probe_health::view& of(uint32_t id) const { return health_.of(id); }
    [[nodiscard]] uint64_t sent(uint32_t id) const noexcept { return sched_.sent(id); }
    [[nodiscard]] uint64_t late_replies() const noexcept { return sched_.late_replies(); }
    [[nodiscard]] uint64_t send_failures() const noexcept { return send_failures_; }

private:
    void apply(const health_change& c, const name_fn& name_of);
    [[nodiscard]] uint64_t now_us() const noexcept;

    dataplane::dataplane_runtime& rt_;
    neighbour_manager& neighbours_;
    log_fn log_;
    probe_scheduler sched_{2'000'000, 1'000'000};
    probe_health health_{probe_policy{}};
    std::shared_ptr<const sip::proxy_tables> tables_;  ///< as published
    std::vector<dataplane::interface_info> interfaces_;
    std::vector<uint32_t> index_of_;  ///< peer id -> index into tables_->peers
    uint64_t tsc_hz_ = 1;
    uint16_t ip_id_ = 0;
    uint64_t send_failures_ = 0;  ///< no MAC for the next hop yet, no buffer, inject ring full
    std::vector<probe_due> due_;
    std::vector<uint32_t> expired_;
};

}  // namespace sbc::control
