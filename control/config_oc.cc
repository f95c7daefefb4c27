// Reads `[overload_control]` (see config_oc.h). Control core only (also sbcctl and tests).
#include "control/config_reader.h"

namespace sbc::control::config_detail {

void read_overload_control(loader& l, const toml::table& t, oc_config& o)
{
    table_reader r(l, t, "overload_control");
    o.line = r.line();
    r.get_bool("advertise", o.advertise);
    r.get_bool("stamp", o.stamp);
    unsigned validity = o.validity_ms;
    r.get_uint("validity_ms", validity, 100, 60000,
               "milliseconds a client keeps our reduction without a newer response (oc-validity)");
    o.validity_ms = validity;
    r.finish();
}

}  // namespace sbc::control::config_detail
