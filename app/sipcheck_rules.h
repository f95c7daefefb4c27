// sbc-sipcheck --config: what a config's header and number rules make of a captured message,
// so that an operator tests a rule set before loading it: the inbound rules of the trunk named
// (--trunk), then the outbound rules toward a peer (--peer, else the first peer of the route
// the rewritten request takes), each rule marked hit, failed or not applied. Tool only (main
// thread); allocates freely.
#pragma once

#include <string>
#include <vector>

namespace sbc::app {

struct rules_check_options {
    std::string config;  ///< sbc.toml
    std::string trunk;   ///< the trunk the message arrives on
    std::string peer;    ///< the peer it goes to; "": the route's first static peer
    bool json = false;
};

/// Checks each of `files` (one raw SIP request each, "-": stdin) against the rules of
/// `o.config`, printing to stdout. Returns the exit status: 0 done, 1 a file unreadable or not
/// a request, 2 the config refused (its errors on stderr, FILE:LINE: KEY: what), an unknown
/// trunk or peer.
int check_rules(const rules_check_options& o, const std::vector<std::string>& files);

}  // namespace sbc::app
