// Reads the media state of a running dataplane into a media_report: relay counters summed
// over workers, session counters, ports, and (when asked) every call's streams. Control core
// only; reads workers' atomics, allocates.
#pragma once

#include "control/media_stats.h"
#include "dataplane/runtime.h"

namespace sbc::control {

/// The media report of `rt` (enabled false without [media]); `with_calls` adds every call.
media_report collect_media(const dataplane::dataplane_runtime& rt, bool with_calls);

}  // namespace sbc::control
