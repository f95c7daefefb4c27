// Builds the immutable dataplane snapshot from a validated config and the started ports, and
// publishes it under RCU. Control core only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "control/config.h"
#include "dataplane/runtime.h"
#include "dataplane/snapshot.h"

namespace sbc::control {

/// The snapshot for `cfg` on the ports of `rt`; nullptr with a message when an interface's
/// device has no port.
std::unique_ptr<dataplane::snapshot> build_snapshot(const config& cfg, const std::vector<dataplane::port_info>& ports,
                                                    uint64_t generation, std::string& error);

/// Publishes `fresh` to the workers and frees the previous snapshot after a grace period
/// (call_rcu). Never waits for a worker.
void publish_snapshot(dataplane::snapshot_slot& slot, std::unique_ptr<dataplane::snapshot> fresh);

/// At shutdown, once workers have stopped: frees the published snapshot.
void retire_snapshot(dataplane::snapshot_slot& slot);

}  // namespace sbc::control
