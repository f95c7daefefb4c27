// Every header of the project compiles on its own: meson lists them at configure time and
// builds one translation unit per header into this test (tests/unit/meson.build). A header
// that does not compile alone fails the build; this test checks that none was left out.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/unit/header_check.h"

namespace sbc::test {

namespace {

// A function-local static: the generated units register during static initialisation, in an
// order nobody controls.
std::vector<std::string_view>& registry()
{
    static std::vector<std::string_view> all;
    return all;
}

}  // namespace

bool header_checked(std::string_view header)
{
    registry().push_back(header);
    return true;
}

const std::vector<std::string_view>& headers_checked() { return registry(); }

namespace {

TEST(headers, every_header_compiles_on_its_own)
{
    const auto& checked = headers_checked();
    std::vector<std::string> names(checked.begin(), checked.end());
    std::sort(names.begin(), names.end());
    EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "a header was generated twice";
    EXPECT_EQ(names.size(), std::size_t{SBC_HEADERS_FOUND})
        << "meson found " << SBC_HEADERS_FOUND << " headers under " << SBC_HEADER_DIRS;
    std::printf("headers: %zu checked on their own (%s)\n", names.size(), SBC_HEADER_DIRS);
}

}  // namespace
}  // namespace sbc::test
