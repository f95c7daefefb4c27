// The proxy tables cps_bench runs its calls through: the hand-built ones (trunk "access" on
// 198.18.0.1:5060 taking 198.18.0.0/24, the callee 198.18.0.11:5060 its only peer, one group,
// one route), or the ones sbcd would build from an sbc.toml (--config FILE), so that a
// configuration with a rule set (header and number rules, topology hiding) is measured
// through the same loader and builder as in production. Bench code only (main lcore, before
// the worker starts).
#pragma once

#include <memory>
#include <string>

#include "dataplane/snapshot.h"
#include "sip-fastpath/proxy_tables.h"

namespace sbc::bench {

/// The tables of `config_path` (nullptr or "": the hand-built ones) for the interface `ifc`,
/// which must be the config's only [[interface]] (its name is taken from the file); null and
/// `error` when the file is refused or does not fit what the generator sends.
std::shared_ptr<const sip::proxy_tables> cps_tables(const char* config_path, dataplane::interface_info& ifc,
                                                   std::string& error);

}  // namespace sbc::bench
