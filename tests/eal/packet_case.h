// One received frame and the verdict a user would see for it (the frame sent back, compared
// byte for byte with every checksum verified by this file's own arithmetic; the drop reason
// counted; the event posted to the control core), and the check that runs it through the
// production burst processing of a harness. Shared by the eal tier's table-driven packet tests.
// Test thread only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dataplane/counters.h"
#include "dataplane/events.h"
#include "tests/eal/frame_builder.h"
#include "tests/eal/harness.h"

namespace sbc::test {

/// Filled in by the test once the port's MAC is known (it is the frames' destination).
struct packet_case {
    std::string name;
    bytes input;
    std::optional<dataplane::drop_reason> drop;  ///< verdict "dropped": the reason counted
    std::optional<bytes> output;                  ///< verdict "sent": the exact frame transmitted
    std::optional<dataplane::event> event;        ///< verdict "event": what the control core gets
};

/// Receives c.input on a fresh-state harness `h`, polls it once and checks every part of the
/// verdict (gtest expectations), also that every mbuf went back to its pool.
void expect_verdict(harness& h, const packet_case& c);

/// Checks every checksum of an IPv4 or IPv6 frame we sent (IPv4 header, ICMP, UDP, ICMPv6).
void expect_valid_checksums(const bytes& frame);

/// A table of cases, built once the port's MAC is known.
using case_table = std::vector<packet_case> (*)(const mac& ours);

/// The names of a table's cases (built with an unknown MAC), for INSTANTIATE_TEST_SUITE_P.
std::vector<std::string> case_names(case_table cases);

/// Runs the case `name` of `cases` on a fresh harness (expect_verdict).
void run_named_case(case_table cases, const std::string& name);

}  // namespace sbc::test
