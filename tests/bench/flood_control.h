// The flood benchmark's stand-in for the control core's part in flood protection
// (control/control_deny.cc does the same in sbcd): publish [flood]'s limits and the deny list to
// the workers (dataplane/flood_policy.h), turn the workers' source reports into deny entries
// (trusted sources never), expire them. flood_bench runs no control loop (no socket, ARP or
// probes), so its main lcore does this between generator rounds. Main lcore only.
#pragma once

#include <cstdint>
#include <memory>

#include "control/config.h"
#include "control/deny_list.h"
#include "dataplane/events.h"
#include "dataplane/flood_policy.h"
#include "dataplane/source_guard.h"
#include "dataplane/worker.h"
#include "sip-fastpath/proxy_tables.h"

namespace sbc::bench::flood {

struct control_stand_in {
    const control::config& cfg;
    dataplane::flood_policy_slot& slot;
    std::shared_ptr<const sip::proxy_tables> tables;
    control::deny_list list;
    uint64_t reports = 0;   ///< source reports received from the worker
    uint64_t publishes = 0; ///< flood policies published
    bool dirty = false;

    /// [flood]'s limits and the current deny list, or nothing when [flood] is off.
    void publish()
    {
        ++publishes;
        dirty = false;
        if (!cfg.flood.enabled) {
            dataplane::publish_flood_policy(slot, nullptr);
            return;
        }
        auto p = std::make_unique<dataplane::flood_policy>();
        p->limits = static_cast<const dataplane::flood_limits&>(cfg.flood);
        p->set_denied(list.addresses());
        dataplane::publish_flood_policy(slot, std::move(p));
    }

    void on_event(const dataplane::event& e, uint64_t now_ms)
    {
        if (e.kind != dataplane::event_kind::source_report || !cfg.flood.enabled) return;
        ++reports;
        const auto why = e.code < dataplane::deny_reason_count ? static_cast<dataplane::deny_reason>(e.code)
                                                               : dataplane::deny_reason::rate;
        if (list.add(e.ip, why, "", cfg.flood.deny_s, dataplane::trusted_anywhere(*tables, e.ip), now_ms, 0) ==
            control::deny_outcome::added)
            dirty = true;
    }

    /// Expiry and publication of what changed, as the control loop does every 100 ms and after
    /// each batch of events.
    void tick(uint64_t now_ms)
    {
        if (!list.expire(now_ms).empty()) dirty = true;
        if (dirty) publish();
    }
};

}  // namespace sbc::bench::flood
