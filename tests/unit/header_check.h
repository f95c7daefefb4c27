// The headers that compiled on their own (one generated translation unit each, see
// tests/unit/meson.build), for headers_test. Called during static initialisation (main thread).
#pragma once

#include <string_view>
#include <vector>

namespace sbc::test {

/// Records that `header` compiled on its own; returns true. Each generated unit calls it once.
bool header_checked(std::string_view header);

/// Every header recorded so far.
const std::vector<std::string_view>& headers_checked();

}  // namespace sbc::test
