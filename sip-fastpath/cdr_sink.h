// The narrow interface through which the proxy hands over a call's record (common/call_record.h)
// when the call ends, answered or not: the dataplane implements it with a ring to the control
// core (dataplane/cdr_out.h), tests with a vector. Keeps the proxy free of rings and files.
// Worker only: one sink per worker, called by that worker's proxy, which owns the call.
#pragma once

#include "common/call_record.h"

namespace sbc::sip {

class cdr_sink {
public:
    /// Call `r` ended (stage_cdr.cc says when and how each field is filled). `r` is valid for
    /// the call only: the sink copies it. Never blocks, allocates, locks or logs: a sink that
    /// cannot take it counts it lost.
    virtual void call_ended(const sbc::call_record& r) noexcept = 0;

protected:
    ~cdr_sink() = default;
};

}  // namespace sbc::sip
