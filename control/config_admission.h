// Call admission in sbc.toml: the node-wide `[admission]` section and the per-trunk,
// per-region and per-peer limit keys (docs/config.md, "Call admission"). Read by
// control/config_admission.cc; carried into the proxy tables by control/proxy_build.cc.
// Control core only (also sbcctl and tests).
#pragma once

namespace sbc::control {

/// The limits of one `[[trunk]]`; 0: no limit.
struct trunk_admission_config {
    unsigned max_calls = 0;             ///< concurrent calls that arrived on it, 1..10000000
    unsigned max_calls_per_second = 0;  ///< new calls per second, 1..1000000
    unsigned calls_burst = 0;           ///< new calls at once, 1..1000000; 0 (not given): the rate
};

/// `[admission]`: the node's own limit and how a refused call is answered.
struct admission_config {
    unsigned max_calls = 0;        ///< concurrent calls on the node (all workers), 1..10000000; 0: no limit
    unsigned refuse_code = 503;    ///< 403, 480, 486, 500, 503, 600 or 603
    unsigned retry_after_s = 5;    ///< 0..86400; sent with the codes RFC 3261 20.33 allows it on
    int line = 0;                  ///< of the [admission] table (0: absent)
};

}  // namespace sbc::control
