// Shared by the config loader's unit tests (config_test.cc, config_limits_test.cc): config
// texts whose line numbers the cases count on, and the parameterised "bad config" case, whose
// TEST_P is in config_test.cc and whose cases each file instantiates. Unit tier only.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "control/config.h"

namespace sbc::control::config_testing {

// One interface, good unless a case changes it; line numbers below count from 1 here.
inline std::string with_interface(const std::string& before, const std::string& iface_lines)
{
    return before + "[[interface]]\nname = \"core\"\ndevice = \"net_null0\"\n" + iface_lines;
}

struct bad_case {
    const char* description;
    std::string text;
    int line;
    const char* key;
    const char* message_contains;
};

class config_bad : public ::testing::TestWithParam<bad_case> {};

/// The test name of a case: its description with every other character than a letter or a
/// digit made '_'.
inline std::string bad_case_name(const ::testing::TestParamInfo<bad_case>& info)
{
    std::string n = info.param.description;
    for (char& ch : n)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return n;
}

inline const std::string good_address = "address = \"198.18.0.1/24\"\n";

// Lines 1-4: an interface; 5-8: a trunk on it. Proxy cases append from line 9.
inline const std::string trunk_base =
    "[[interface]]\nname = \"core\"\ndevice = \"net_null0\"\naddress = \"198.18.0.1/24\"\n"
    "[[trunk]]\nname = \"t1\"\ninterface = \"core\"\nallow = [\"198.18.0.2\"]\n";
// The trunk with `allow` (line 8) replaced by `lines`.
inline std::string with_trunk(const std::string& lines)
{
    return "[[interface]]\nname = \"core\"\ndevice = \"net_null0\"\naddress = \"198.18.0.1/24\"\n"
           "[[trunk]]\nname = \"t1\"\ninterface = \"core\"\n" + lines;
}
// trunk_base, then a region header (line 9) and name (line 10); `lines` from line 11.
inline std::string with_region(const std::string& lines) { return trunk_base + "[[region]]\nname = \"r1\"\n" + lines; }
// trunk_base, region r1 (lines 9-11) with one peer, group g1 (lines 12-14); `lines` from line 15.
inline const std::string group_base = trunk_base + "[[region]]\nname = \"r1\"\npeers = [ { address = \"198.18.0.11:5060\" } ]\n" +
                               "[[peer_group]]\nname = \"g1\"\nregions = [\"r1\"]\n";
inline std::string with_route(const std::string& lines) { return group_base + "[[route]]\nname = \"x1\"\n" + lines; }
inline std::string with_group_base(const std::string& lines) { return group_base + lines; }

}  // namespace sbc::control::config_testing
