// Unit tests of common/address.h, the one address vocabulary: parsing and formatting IPv4 and
// IPv6 (RFC 5952 text), order and hashing, prefixes, endpoints and transport names.
#include "common/address.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <unordered_set>
#include <vector>

namespace sbc {
namespace {

struct text_case {
    const char* written;
    const char* formatted;  ///< nullptr: refused
    ip_family family;
};

class address_text : public ::testing::TestWithParam<text_case> {};

TEST_P(address_text, parses_and_formats_as_expected)
{
    const text_case& c = GetParam();
    const auto a = parse_address(c.written);
    if (c.formatted == nullptr) {
        EXPECT_FALSE(a) << c.written << " parsed as " << (a ? to_string(*a) : "");
        return;
    }
    ASSERT_TRUE(a) << c.written;
    EXPECT_EQ(a->family(), c.family);
    EXPECT_EQ(to_string(*a), c.formatted);
    EXPECT_EQ(parse_address(to_string(*a)), a) << "formatted text parses back to the same address";
}

INSTANTIATE_TEST_SUITE_P(
    literals, address_text,
    ::testing::Values(text_case{"198.18.0.1", "198.18.0.1", ip_family::v4},
                      text_case{"0.0.0.0", "0.0.0.0", ip_family::v4},
                      text_case{"255.255.255.255", "255.255.255.255", ip_family::v4},
                      text_case{"::1", "::1", ip_family::v6},
                      text_case{"::", "::", ip_family::v6},
                      text_case{"2001:db8::1", "2001:db8::1", ip_family::v6},
                      text_case{"2001:DB8:0:0:0:0:0:1", "2001:db8::1", ip_family::v6},
                      text_case{"2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1", ip_family::v6},
                      text_case{"2001:0:0:1::1", "2001:0:0:1::1", ip_family::v6},
                      text_case{"::ffff:198.18.0.1", "::ffff:198.18.0.1", ip_family::v6},
                      text_case{"fe80::1:2", "fe80::1:2", ip_family::v6},
                      // Refused:
                      text_case{"", nullptr, ip_family::none},
                      text_case{"1.2.3", nullptr, ip_family::none},
                      text_case{"1.2.3.4.5", nullptr, ip_family::none},
                      text_case{"256.1.1.1", nullptr, ip_family::none},
                      text_case{"1.2.3.-4", nullptr, ip_family::none},
                      text_case{"01.2.3.4", nullptr, ip_family::none},
                      text_case{"1..3.4", nullptr, ip_family::none},
                      text_case{" 1.2.3.4", nullptr, ip_family::none},
                      text_case{"1.2.3.4 ", nullptr, ip_family::none},
                      text_case{"01:::", nullptr, ip_family::none},
                      text_case{"1::2::3", nullptr, ip_family::none},
                      text_case{"2001:db8::1::", nullptr, ip_family::none},
                      text_case{"12345::1", nullptr, ip_family::none},
                      text_case{"[::1]", nullptr, ip_family::none},
                      text_case{"::1/128", nullptr, ip_family::none},
                      text_case{"g::1", nullptr, ip_family::none}),
    [](const ::testing::TestParamInfo<text_case>& info) { return "case_" + std::to_string(info.index); });

TEST(address, parse_ipv4_takes_dotted_quads_only)
{
    EXPECT_EQ(parse_ipv4("198.18.0.1"), ip_address::v4(0xC6120001));
    EXPECT_FALSE(parse_ipv4("::1"));
    EXPECT_FALSE(parse_ipv4("::ffff:198.18.0.1"));
}

TEST(address, keeps_ipv4_in_host_order_for_the_packet_path)
{
    const auto a = ip_address::v4(0xC6120001);
    EXPECT_TRUE(a.is_v4());
    EXPECT_FALSE(a.is_v6());
    EXPECT_EQ(a.v4_host(), 0xC6120001u);
    EXPECT_EQ(parse_address("::1")->v4_host(), 0u);
    const auto b = parse_address("2001:db8::1")->v6_bytes();
    EXPECT_EQ(b[0], 0x20);
    EXPECT_EQ(b[1], 0x01);
    EXPECT_EQ(b[15], 0x01);
    EXPECT_EQ(ip_address::v4(1).v6_bytes(), (std::array<uint8_t, 16>{}));
}

TEST(address, an_unset_address_is_unspecified_and_formats_to_nothing)
{
    const ip_address none;
    EXPECT_EQ(none.family(), ip_family::none);
    EXPECT_TRUE(none.is_unspecified());
    EXPECT_TRUE(ip_address::v4(0).is_unspecified());
    EXPECT_TRUE(parse_address("::")->is_unspecified());
    EXPECT_FALSE(parse_address("::1")->is_unspecified());
    EXPECT_EQ(to_string(none), "");
}

TEST(address, orders_ipv4_before_ipv6_and_numerically_within_a_family)
{
    const std::vector<const char*> sorted{"0.0.0.1", "9.0.0.0", "10.0.0.0", "198.18.0.1", "255.255.255.255",
                                          "::",      "::1",     "::ffff:0.0.0.1", "2001:db8::1", "2001:db8::2",
                                          "fe80::1"};
    for (std::size_t i = 0; i + 1 < sorted.size(); ++i) {
        const auto a = *parse_address(sorted[i]);
        const auto b = *parse_address(sorted[i + 1]);
        EXPECT_LT(a, b) << sorted[i] << " < " << sorted[i + 1];
        EXPECT_NE(a, b);
        EXPECT_EQ(a, *parse_address(sorted[i]));
    }
    // The same bits in another family are another address.
    EXPECT_NE(ip_address::v4(1), *parse_address("::1"));
    EXPECT_NE(ip_address::v4(0), ip_address{});
}

TEST(address, equal_addresses_hash_equal_and_different_ones_spread)
{
    EXPECT_EQ(parse_address("2001:db8::1")->hash(), parse_address("2001:DB8:0::1")->hash());
    EXPECT_EQ(std::hash<ip_address>{}(ip_address::v4(7)), std::hash<ip_address>{}(*parse_address("0.0.0.7")));
    EXPECT_NE(ip_address::v4(1).hash(), parse_address("::1")->hash());
    std::unordered_set<ip_address> set;
    std::set<uint64_t> hashes;
    for (uint32_t i = 0; i < 1000; ++i) {
        set.insert(ip_address::v4(0xC6120000 + i));
        hashes.insert(ip_address::v4(0xC6120000 + i).hash());
    }
    EXPECT_EQ(set.size(), 1000u);
    EXPECT_EQ(hashes.size(), 1000u);
    EXPECT_EQ(set.count(*parse_address("198.18.0.5")), 1u);
}

struct prefix_case {
    const char* written;
    const char* canonical;  ///< nullptr: refused
};

class prefix_text : public ::testing::TestWithParam<prefix_case> {};

TEST_P(prefix_text, parses_keeping_host_bits_and_canonicalises)
{
    const prefix_case& c = GetParam();
    const auto p = parse_prefix(c.written);
    if (c.canonical == nullptr) {
        EXPECT_FALSE(p) << c.written;
        return;
    }
    ASSERT_TRUE(p) << c.written;
    EXPECT_EQ(to_string(*p), c.written) << "as written, host bits kept";
    EXPECT_EQ(to_string(p->canonical()), c.canonical);
}

INSTANTIATE_TEST_SUITE_P(
    prefixes, prefix_text,
    ::testing::Values(prefix_case{"198.18.0.1/24", "198.18.0.0/24"}, prefix_case{"198.18.0.0/15", "198.18.0.0/15"},
                      prefix_case{"198.19.255.255/15", "198.18.0.0/15"}, prefix_case{"10.1.2.3/32", "10.1.2.3/32"},
                      prefix_case{"10.1.2.3/1", "0.0.0.0/1"}, prefix_case{"2001:db8::1/64", "2001:db8::/64"},
                      prefix_case{"2001:db8:ffff::/33", "2001:db8:8000::/33"}, prefix_case{"::1/128", "::1/128"},
                      // Refused: no length, length 0, too long for the family, not a number.
                      prefix_case{"198.18.0.1", nullptr}, prefix_case{"198.18.0.1/0", nullptr},
                      prefix_case{"198.18.0.1/33", nullptr}, prefix_case{"198.18.0.1/024", nullptr},
                      prefix_case{"198.18.0.1/", nullptr}, prefix_case{"198.18.0.1/x", nullptr},
                      prefix_case{"2001:db8::/129", nullptr}, prefix_case{"1.2.3/8", nullptr},
                      prefix_case{"/8", nullptr}),
    [](const ::testing::TestParamInfo<prefix_case>& info) { return "case_" + std::to_string(info.index); });

TEST(address, a_prefix_contains_the_addresses_of_its_family_under_it)
{
    const auto p = *parse_prefix("198.18.0.7/15");
    EXPECT_TRUE(p.contains(*parse_address("198.18.0.1")));
    EXPECT_TRUE(p.contains(*parse_address("198.19.255.255")));
    EXPECT_FALSE(p.contains(*parse_address("198.20.0.0")));
    EXPECT_FALSE(p.contains(*parse_address("::ffff:198.18.0.1")));
    const auto v6 = *parse_prefix("2001:db8::/32");
    EXPECT_TRUE(v6.contains(*parse_address("2001:db8:1234::5")));
    EXPECT_FALSE(v6.contains(*parse_address("2001:db9::")));
    EXPECT_FALSE(v6.contains(ip_address::v4(0)));
    EXPECT_EQ(p.canonical(), *parse_prefix("198.18.0.0/15"));
    EXPECT_NE(p, p.canonical());
}

TEST(address, masks_to_any_length_of_its_family)
{
    const auto a = *parse_address("198.18.255.255");
    EXPECT_EQ(to_string(a.masked(0)), "0.0.0.0");
    EXPECT_EQ(to_string(a.masked(17)), "198.18.128.0");
    EXPECT_EQ(to_string(a.masked(32)), "198.18.255.255");
    const auto b = *parse_address("2001:db8:ffff:ffff::1");
    EXPECT_EQ(to_string(b.masked(0)), "::");
    EXPECT_EQ(to_string(b.masked(36)), "2001:db8:f000::");
    EXPECT_EQ(to_string(b.masked(128)), "2001:db8:ffff:ffff::1");
}

TEST(address, gives_the_ipv4_netmask_of_any_prefix_length)
{
    EXPECT_EQ(ipv4_netmask(0), 0u);
    EXPECT_EQ(ipv4_netmask(1), 0x80000000u);
    EXPECT_EQ(ipv4_netmask(15), 0xfffe0000u);
    EXPECT_EQ(ipv4_netmask(24), 0xffffff00u);
    EXPECT_EQ(ipv4_netmask(32), 0xffffffffu);
    EXPECT_EQ(ipv4_netmask(64), 0xffffffffu);  // an IPv6 length never shifts out of range
    static_assert(ipv4_netmask(30) == 0xfffffffcu, "usable in constant expressions");
}

TEST(endpoint, formats_ipv6_in_brackets_and_ipv4_without)
{
    EXPECT_EQ(to_string(endpoint::udp4(0xC6120001, 5060)), "198.18.0.1:5060");
    EXPECT_EQ(to_string(endpoint{*parse_address("2001:db8::1"), 5061, transport::tls, 9}), "[2001:db8::1]:5061");
    EXPECT_EQ(to_string(endpoint{*parse_address("::ffff:198.18.0.1"), 65535}), "[::ffff:198.18.0.1]:65535");
    EXPECT_EQ(to_string(endpoint{ip_address::v4(0), 0}), "0.0.0.0:0");
    EXPECT_EQ(to_string(endpoint{}), "") << "an unset address formats to nothing";
    char small[8];
    EXPECT_EQ(format_endpoint(endpoint::udp4(0xC6120001, 5060), small), 0u) << "too small a buffer writes nothing";
    char room[max_endpoint_text];
    const std::string longest = "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535";
    EXPECT_EQ(format_endpoint(endpoint{*parse_address("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"), 65535}, room),
              longest.size());
}

TEST(endpoint, equal_endpoints_hash_equal_and_the_connection_does_not_take_part)
{
    const endpoint a{*parse_address("2001:db8::1"), 5060, transport::tcp, 1};
    endpoint b = a;
    b.conn = 2;
    EXPECT_EQ(a.hash(), b.hash());
    EXPECT_NE(a, b);
    b.conn = 1;
    EXPECT_EQ(a, b);
    b.proto = transport::udp;
    EXPECT_NE(a.hash(), b.hash());
    b = a;
    b.port = 5061;
    EXPECT_NE(a.hash(), b.hash());
    EXPECT_EQ(std::hash<endpoint>{}(a), a.hash());
}

TEST(transport, has_a_via_name_a_parameter_name_and_parses_both)
{
    struct row {
        transport t;
        const char* via;
        const char* param;
        bool stream;
    };
    for (const row& r : {row{transport::udp, "UDP", "udp", false}, row{transport::tcp, "TCP", "tcp", true},
                         row{transport::tls, "TLS", "tls", true}}) {
        EXPECT_EQ(transport_via_name(r.t), r.via);
        EXPECT_EQ(transport_param_name(r.t), r.param);
        EXPECT_EQ(parse_transport(r.via), r.t);
        EXPECT_EQ(parse_transport(r.param), r.t);
        EXPECT_EQ(is_stream(r.t), r.stream);
    }
    EXPECT_EQ(parse_transport("Tcp"), transport::tcp);
    for (const char* bad : {"", "sctp", "ws", "udp ", "UDPX"}) EXPECT_FALSE(parse_transport(bad)) << bad;
}

}  // namespace
}  // namespace sbc
