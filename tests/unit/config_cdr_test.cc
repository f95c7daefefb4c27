// Call detail records in sbc.toml (control/config_cdr.cc): [cdr] and its defaults, and every
// refusal naming file, line and key. Unit tier.
#include <gtest/gtest.h>

#include <string>

#include "control/config.h"

namespace sbc::control {
namespace {

// Lines 1-4: an interface; [cdr] cases start at line 5.
const std::string head = "[[interface]]\nname = \"core\"\ndevice = \"net_null0\"\naddress = \"198.18.0.1/24\"\n";

TEST(config_cdr, no_section_means_no_records)
{
    auto r = parse_config(head, "a.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    EXPECT_FALSE(r.cfg->cdr.enabled());
    EXPECT_EQ(r.cfg->cdr.line, 0);
}

TEST(config_cdr, a_path_alone_takes_the_defaults)
{
    auto r = parse_config(head + "[cdr]\npath = \"/var/log/sbc/cdr.jsonl\"\n", "a.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    const cdr_config& c = r.cfg->cdr;
    EXPECT_TRUE(c.enabled());
    EXPECT_EQ(c.path, "/var/log/sbc/cdr.jsonl");
    EXPECT_EQ(c.rotate_bytes, uint64_t{100} << 20);
    EXPECT_EQ(c.rotate_seconds, 3600u);
    EXPECT_EQ(c.keep, 24u);
    EXPECT_EQ(c.ring, 16384u);
    EXPECT_EQ(c.line, 5);
}

TEST(config_cdr, reads_every_key)
{
    auto r = parse_config(head + "[cdr]\npath = \"cdr.jsonl\"\nrotate_bytes = 0\nrotate_seconds = 86400\nkeep = 7\n"
                                 "ring = 1024\n",
                          "a.toml");
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    const cdr_config& c = r.cfg->cdr;
    EXPECT_EQ(c.rotate_bytes, 0u) << "0: logrotate (or nobody) rotates by size";
    EXPECT_EQ(c.rotate_seconds, 86400u);
    EXPECT_EQ(c.keep, 7u);
    EXPECT_EQ(c.ring, 1024u);
    auto big = parse_config(head + "[cdr]\npath = \"cdr.jsonl\"\nrotate_bytes = 10737418240\nrotate_seconds = 0\n", "a.toml");
    ASSERT_TRUE(big.errors.empty()) << big.errors[0].to_string();
    EXPECT_EQ(big.cfg->cdr.rotate_bytes, uint64_t{10} << 30) << "over 4 GiB";
    EXPECT_EQ(big.cfg->cdr.rotate_seconds, 0u);
}

struct bad {
    const char* what;
    std::string text;
    int line;
    const char* key;
    const char* says;
};

TEST(config_cdr, refuses_bad_values_with_file_line_and_key)
{
    const std::string p = "[cdr]\npath = \"cdr.jsonl\"\n";  // lines 5-6; the bad key on line 7
    const bad cases[] = {
        {"no path", head + "[cdr]\nkeep = 3\n", 5, "cdr.path", "missing"},
        {"an empty path", head + "[cdr]\npath = \"\"\n", 6, "cdr.path", "expected the path of a file"},
        {"a directory", head + "[cdr]\npath = \"/var/log/sbc/\"\n", 6, "cdr.path", "expected the path of a file"},
        {"a path that is a number", head + "[cdr]\npath = 5\n", 6, "cdr.path", "got an integer"},
        {"rotate_bytes below 1 MiB", head + p + "rotate_bytes = 1000\n", 7, "cdr.rotate_bytes", "1 MiB..1 TiB"},
        {"rotate_bytes negative", head + p + "rotate_bytes = -1\n", 7, "cdr.rotate_bytes", "got -1"},
        {"rotate_bytes a string", head + p + "rotate_bytes = \"100M\"\n", 7, "cdr.rotate_bytes", "got a string"},
        {"rotate_seconds below a minute", head + p + "rotate_seconds = 10\n", 7, "cdr.rotate_seconds", "0 (no rotation by time)"},
        {"rotate_seconds over 30 days", head + p + "rotate_seconds = 9999999\n", 7, "cdr.rotate_seconds", "got 9999999"},
        {"keep 0", head + p + "keep = 0\n", 7, "cdr.keep", "1..10000"},
        {"a ring that is no power of two", head + p + "ring = 1000\n", 7, "cdr.ring", "power of two"},
        {"a ring too small", head + p + "ring = 32\n", 7, "cdr.ring", "64..1048576"},
        {"a ring too large", head + p + "ring = 2097152\n", 7, "cdr.ring", "got 2097152"},
        {"a typo", head + p + "rotate_byte = 5\n", 7, "cdr.rotate_byte", "did you mean"},
        {"cdr as a value", "cdr = \"on\"\n" + head, 1, "cdr", "expected a table written [cdr]"},
    };
    for (const auto& c : cases) {
        auto r = parse_config(c.text, "a.toml");
        ASSERT_FALSE(r.errors.empty()) << c.what;
        const config_error& e = r.errors[0];
        EXPECT_EQ(e.file, "a.toml") << c.what;
        EXPECT_EQ(e.line, c.line) << c.what << ": " << e.to_string();
        EXPECT_EQ(e.key, c.key) << c.what << ": " << e.to_string();
        EXPECT_NE(e.message.find(c.says), std::string::npos) << c.what << ": " << e.to_string();
    }
}

}  // namespace
}  // namespace sbc::control
