// Reading a DSCP key of the config (`[[interface]] dscp_sip`, `dscp_rtp`): a number 0..63 or
// a name. Internal to the config loader (control/config.cc); control core, sbcctl and tests only.
#pragma once

#include <cstdint>
#include <string_view>

#include "control/config_reader.h"

namespace sbc::control::config_detail {

/// Reads `key` of the table `r` reads into `out` (left as is when the key is absent); a value
/// that is no DSCP is refused as `FILE:LINE: PREFIX.KEY: why`.
void read_dscp(loader& l, table_reader& r, std::string_view key, uint8_t& out);

}  // namespace sbc::control::config_detail
