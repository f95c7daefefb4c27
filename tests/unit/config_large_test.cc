// The config keys of SIP messages larger than one packet: [dpdk] af_packet_max_datagram and
// [limits] large_messages_per_worker (defaults, a good value, and out-of-range values refused
// with file, line and key). Unit tier.
#include <gtest/gtest.h>

#include "control/config.h"
#include "dataplane/af_packet.h"
#include "sip-fastpath/proxy.h"
#include "tests/unit/config_test_util.h"

namespace sbc::control {
namespace {

using config_testing::bad_case;
using config_testing::config_bad;

const std::string iface = "[[interface]]\nname = \"a\"\ndevice = \"net_null0\"\naddress = \"10.0.0.1/8\"\n";

TEST(config_large, defaults_match_the_dataplane_and_the_proxy_and_values_are_read)
{
    auto d = parse_config(iface, "d.toml");
    ASSERT_TRUE(d.cfg) << (d.errors.empty() ? "" : d.errors[0].to_string());
    EXPECT_EQ(d.cfg->dpdk.af_packet_max_datagram, dataplane::default_af_packet_max_datagram);
    EXPECT_EQ(d.cfg->dpdk.af_packet_max_datagram, dataplane::af_packet_max_datagram_limit);
    EXPECT_EQ(d.cfg->limits.large_messages_per_worker, sip::large_setups_per_worker);
    auto r = parse_config("[dpdk]\naf_packet_max_datagram = 16384\n[limits]\nlarge_messages_per_worker = 8\n" + iface, "r.toml");
    ASSERT_TRUE(r.cfg) << (r.errors.empty() ? "" : r.errors[0].to_string());
    EXPECT_EQ(r.cfg->dpdk.af_packet_max_datagram, 16384u);
    EXPECT_EQ(r.cfg->limits.large_messages_per_worker, 8u);
}

INSTANTIATE_TEST_SUITE_P(
    large_message_mistakes, config_bad,
    ::testing::Values(
        bad_case{"af_packet datagram over the mbuf limit", "[dpdk]\naf_packet_max_datagram = 65201\n" + iface, 2,
                 "dpdk.af_packet_max_datagram", "1500..65200"},
        bad_case{"af_packet datagram under the MTU", "[dpdk]\naf_packet_max_datagram = 1499\n" + iface, 2,
                 "dpdk.af_packet_max_datagram", "1500..65200"},
        bad_case{"no large message buffer", "[limits]\nlarge_messages_per_worker = 0\n" + iface, 2,
                 "limits.large_messages_per_worker", "1..4096"},
        bad_case{"more large message buffers than the proxy takes", "[limits]\nlarge_messages_per_worker = 4097\n" + iface,
                 2, "limits.large_messages_per_worker", "1..4096"}),
    config_testing::bad_case_name);

}  // namespace
}  // namespace sbc::control
