// A call's stages, chosen once per call and per attempt (stage.h): one test per feature, from
// what the snapshot's trunk, route and peer configure and what the worker provides. Worker only.
#include "sip-fastpath/stage.h"

#include "sip-fastpath/stage_hiding.h"
#include "sip-fastpath/stage_rules.h"

namespace sbc::sip {

stage_mask call_stages(const proxy_tables& t, uint16_t trunk, uint16_t route, node_stages node) noexcept
{
    stage_mask m = node.mask;
    if (rules::any_in(t, trunk, no_peer)) m |= stage::rules_in;  // the trunk's (a source region's ran already)
    if (hiding::trunk_hides(t, trunk)) m |= stage::hide_caller;
    if (route < t.routes.size() && t.routes[route].fallback.group != no_fallback) m |= stage::fallback;
    if (t.canaries) m |= stage::canary;
    return m;
}

stage_mask attempt_stages(const proxy_tables& t, uint32_t p) noexcept
{
    stage_mask m = 0;
    if (rules::any_out(t, p)) m |= stage::rules_out;
    if (hiding::peer_hides(t, p)) m |= stage::hide_callee;
    return m;
}

}  // namespace sbc::sip
