// The proxy's per-worker room for header and number rules: the worker's PCRE2 match data and
// two buffers with their parsed messages, one for a request as the inbound rules made it (it
// stays msg_ while the call is set up) and one for the copy the outbound rules make toward a
// peer. Internal to the proxy (proxy.cc allocates it at start; proxy_rules.cc uses it). Worker
// only, after construction.
#pragma once

#include <array>

#include "sip-fastpath/proxy.h"
#include "sip-fastpath/sip_rules.h"

namespace sbc::sip {

struct proxy::rule_scratch {
    rule_work work;
    // As large as any message the engine parses (sip_span.h), so that rules apply to a large
    // INVITE too; what the proxy then does with its size is the proxy's own affair.
    std::array<char, max_message_size> in_buf;
    std::array<char, max_message_size> out_buf;
    message in_msg;
    message out_msg;
};

}  // namespace sbc::sip
