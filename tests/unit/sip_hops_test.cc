// Unit tests of the SBC's hop headers (sip-fastpath/proxy_ids.h): the Via it puts on a request
// it forwards (sent-protocol of the outgoing leg, sbc-src naming where the response goes back)
// and its Record-Route (transport parameter on stream legs), for UDP, TCP and TLS, IPv4 and
// IPv6; reading sbc-src back; refusing what is not ours; never writing past the buffer.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "common/address.h"
#include "sip-fastpath/proxy_ids.h"

using sbc::endpoint;
using sbc::ip_address;
using sbc::transport;
namespace sip = sbc::sip;

namespace {

ip_address addr(std::string_view text)
{
    const auto a = sbc::parse_address(text);
    EXPECT_TRUE(a.has_value()) << text;
    return a.value_or(ip_address{});
}

endpoint ep(std::string_view text, uint16_t port, transport proto = transport::udp, sbc::connection_id conn = 0)
{
    return endpoint{addr(text), port, proto, conn};
}

/// One forwarded hop: our endpoint on the outgoing leg, the sender the response goes back to,
/// and the exact Via and Record-Route values a peer sees.
struct hop_case {
    const char* description;
    endpoint local;
    endpoint src;
    std::string_view via;           ///< write_via(local, "z9hG4bKx", src)
    std::string_view record_route;  ///< write_record_route(local, worker 3)
};

const std::vector<hop_case>& hop_cases()
{
    static const std::vector<hop_case> cases = {
        {"udp_ipv4_as_since_the_start", ep("198.18.0.1", 5060), ep("198.18.0.2", 5060),
         "SIP/2.0/UDP 198.18.0.1:5060;branch=z9hG4bKx;sbc-src=c6120002.13c4", "<sip:198.18.0.1:5060;lr;w=03>"},
        {"tcp_ipv4_names_the_connection", ep("198.18.0.1", 5060, transport::tcp, 7),
         ep("198.18.0.2", 5060, transport::tcp, 42),
         "SIP/2.0/TCP 198.18.0.1:5060;branch=z9hG4bKx;sbc-src=c6120002.13c4.t0000002a",
         "<sip:198.18.0.1:5060;transport=tcp;lr;w=03>"},
        {"tls_ipv4_names_the_connection", ep("198.18.0.1", 5061, transport::tls, 7),
         ep("198.18.0.2", 5061, transport::tls, 42),
         "SIP/2.0/TLS 198.18.0.1:5061;branch=z9hG4bKx;sbc-src=c6120002.13c5.s0000002a",
         "<sip:198.18.0.1:5061;transport=tls;lr;w=03>"},
        {"tcp_leg_out_for_a_udp_caller", ep("198.18.0.1", 5060, transport::tcp, 7), ep("198.18.0.2", 5062),
         "SIP/2.0/TCP 198.18.0.1:5060;branch=z9hG4bKx;sbc-src=c6120002.13c6",
         "<sip:198.18.0.1:5060;transport=tcp;lr;w=03>"},
        {"udp_leg_out_for_a_tls_caller", ep("198.18.0.1", 5060), ep("198.18.0.2", 40000, transport::tls, 0xffffffff),
         "SIP/2.0/UDP 198.18.0.1:5060;branch=z9hG4bKx;sbc-src=c6120002.9c40.sffffffff",
         "<sip:198.18.0.1:5060;lr;w=03>"},
        {"udp_ipv6_in_brackets", ep("2001:db8::1", 5060), ep("2001:db8::2", 5060),
         "SIP/2.0/UDP [2001:db8::1]:5060;branch=z9hG4bKx;sbc-src=20010db8000000000000000000000002.13c4",
         "<sip:[2001:db8::1]:5060;lr;w=03>"},
        {"tcp_ipv6_in_brackets", ep("2001:db8::1", 5060, transport::tcp, 1), ep("2001:db8::2", 5060, transport::tcp, 42),
         "SIP/2.0/TCP [2001:db8::1]:5060;branch=z9hG4bKx;sbc-src=20010db8000000000000000000000002.13c4.t0000002a",
         "<sip:[2001:db8::1]:5060;transport=tcp;lr;w=03>"},
        {"tls_ipv6_caller_behind_an_ipv4_leg", ep("198.18.0.1", 5061, transport::tls, 1),
         ep("2001:db8::2", 5061, transport::tls, 42),
         "SIP/2.0/TLS 198.18.0.1:5061;branch=z9hG4bKx;sbc-src=20010db8000000000000000000000002.13c5.s0000002a",
         "<sip:198.18.0.1:5061;transport=tls;lr;w=03>"},
    };
    return cases;
}

std::string via_of(const hop_case& c)
{
    std::array<char, sip::max_via_size> buf{};
    const std::size_t n = sip::write_via(buf, c.local, "z9hG4bKx", c.src);
    return std::string(buf.data(), n);
}

std::string record_route_of(const hop_case& c)
{
    std::array<char, sip::max_record_route_size> buf{};
    const std::size_t n = sip::write_record_route(buf, c.local, 3);
    return std::string(buf.data(), n);
}

/// The sbc-src parameter's value in a Via we wrote.
std::string_view sbc_src_of(std::string_view via)
{
    const std::size_t at = via.find(";sbc-src=");
    return at == std::string_view::npos ? std::string_view{} : via.substr(at + 9);
}

}  // namespace

TEST(sip_hops, our_via_names_the_outgoing_legs_transport_and_where_the_response_goes_back)
{
    for (const auto& c : hop_cases()) EXPECT_EQ(via_of(c), c.via) << c.description;
}

TEST(sip_hops, our_record_route_carries_the_transport_of_a_stream_leg_and_the_worker)
{
    for (const auto& c : hop_cases()) EXPECT_EQ(record_route_of(c), c.record_route) << c.description;
}

TEST(sip_hops, the_sbc_src_we_write_reads_back_as_the_sender_with_its_transport_and_connection)
{
    for (const auto& c : hop_cases()) {
        const std::string via = via_of(c);
        const std::string_view value = sbc_src_of(via);
        ASSERT_FALSE(value.empty()) << c.description << ": " << via;
        endpoint back;
        ASSERT_TRUE(sip::read_via_source(value, back)) << c.description << ": " << value;
        EXPECT_EQ(back, c.src) << c.description << ": " << sbc::to_string(back);
        EXPECT_EQ(back.proto, c.src.proto) << c.description;
        EXPECT_EQ(back.conn, c.src.conn) << c.description;
    }
}

TEST(sip_hops, a_worker_number_is_two_hex_digits)
{
    std::array<char, sip::max_record_route_size> buf{};
    const endpoint local = endpoint::udp4(0xC6120001, 5060);
    EXPECT_EQ(std::string_view(buf.data(), sip::write_record_route(buf, local, 0)), "<sip:198.18.0.1:5060;lr;w=00>");
    EXPECT_EQ(std::string_view(buf.data(), sip::write_record_route(buf, local, 0xfe)), "<sip:198.18.0.1:5060;lr;w=fe>");
}

TEST(sip_hops, sbc_src_values_that_are_not_ours_are_refused)
{
    const std::vector<std::string_view> bad = {
        "",
        ".",
        "c6120002",                                           // no port
        "c6120002.",                                          // empty port
        "c612002.13c4",                                       // 7 address digits
        "0c6120002.13c4",                                     // 9 address digits
        "c6120002.13c",                                       // 3 port digits
        "c6120002.13c4x",                                     // junk after the port
        "c6120002.013c4",                                     // 5 port digits
        "c612000g.13c4",                                      // not hex
        "c6120002.13g4",                                      // not hex
        "c6120002.13c4.x0000002a",                            // unknown transport letter
        "c6120002.13c4.u0000002a",                            // UDP has no connection
        "c6120002.13c4.t2a",                                  // short connection id
        "c6120002.13c4.t0000002a0",                           // long connection id
        "c6120002.13c4.t000000zz",                            // connection id not hex
        "c6120002.13c4.t",                                    // transport without connection
        "c6120002.13c4t0000002a",                             // no dot before the transport
        "20010db800000000000000000000002.13c4",               // 31 IPv6 digits
        "20010db80000000000000000000000002.13c4",             // 33 IPv6 digits
        "20010db80000000000000000000000g2.13c4",              // IPv6 not hex
        "20010db8000000000000000000000002.13c4.s00000001x",   // junk after the connection
        "198.18.0.2:5060",                                    // an address as text
    };
    for (std::string_view v : bad) {
        endpoint e;
        EXPECT_FALSE(sip::read_via_source(v, e)) << '"' << v << "\" read as " << sbc::to_string(e);
    }
}

TEST(sip_hops, a_buffer_one_byte_short_gets_nothing_and_an_exact_one_gets_all)
{
    for (const auto& c : hop_cases()) {
        std::vector<char> exact(c.via.size() + 1, '#');
        ASSERT_EQ(sip::write_via(std::span<char>(exact.data(), c.via.size()), c.local, "z9hG4bKx", c.src), c.via.size())
            << c.description;
        EXPECT_EQ(std::string_view(exact.data(), c.via.size()), c.via) << c.description;
        EXPECT_EQ(exact.back(), '#') << c.description << ": nothing past the end";
        std::vector<char> shorter(c.via.size() - 1);
        EXPECT_EQ(sip::write_via(shorter, c.local, "z9hG4bKx", c.src), 0u) << c.description;

        std::vector<char> rr(c.record_route.size());
        EXPECT_EQ(sip::write_record_route(rr, c.local, 3), c.record_route.size()) << c.description;
        std::vector<char> rr_short(c.record_route.size() - 1);
        EXPECT_EQ(sip::write_record_route(rr_short, c.local, 3), 0u) << c.description;
    }
    EXPECT_EQ(sip::write_via(std::span<char>{}, endpoint::udp4(0xC6120001, 5060), "z9hG4bKx",
                             endpoint::udp4(0xC6120002, 5060)),
              0u);
    EXPECT_EQ(sip::write_record_route(std::span<char>{}, endpoint::udp4(0xC6120001, 5060), 0), 0u);
}

TEST(sip_hops, the_longest_via_and_record_route_fit_their_declared_maximum)
{
    // The longest IPv6 text, a stream transport with the largest connection id and port, and
    // the longer of our two branch forms.
    const endpoint local = ep("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 65535, transport::tls, 0xffffffff);
    const endpoint src = ep("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 65535, transport::tls, 0xffffffff);
    const std::string branch = std::string(sip::branch_stateful) + std::string(sip::branch_stateful_len - 9, 'f');
    std::array<char, sip::max_via_size> via{};
    const std::size_t n = sip::write_via(via, local, branch, src, true);  // with RFC 7339 oc advertised
    EXPECT_TRUE(std::string_view(via.data(), n).ends_with(";oc;oc-algo=\"loss\"")) << std::string_view(via.data(), n);
    EXPECT_GT(n, 0u);
    EXPECT_NE(std::string_view(via.data(), n).find("[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535"), std::string_view::npos);
    std::array<char, sip::max_record_route_size> rr{};
    EXPECT_GT(sip::write_record_route(rr, local, 0xff), 0u);
}
