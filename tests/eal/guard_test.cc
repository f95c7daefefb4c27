// The proxy's guards through the production dataplane (process_burst on the test thread over
// net_ring ports): a scanner's OPTIONS (SIPVicious svmap, as captured) from an allowed but
// untrusted source produces no frame at all and reports the source for denial, while an
// ordinary OPTIONS from the same source is answered; a worker whose events ring is full counts
// as overloaded and answers a new INVITE 503 (overloaded) with Retry-After, and stops once the
// ring is drained. Trunk 198.18.0.1:5060 allowing 198.18.0.0/24.
#include <memory>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include <rte_cycles.h>
#include <rte_ring.h>

#include "dataplane/events.h"
#include "dataplane/overload.h"
#include "dataplane/source_guard.h"
#include "dataplane/worker.h"
#include "sip-fastpath/proxy.h"
#include "sip-fastpath/scanner_match.h"
#include "tests/eal/frame_builder.h"
#include "tests/eal/harness.h"

namespace sbc::test {
namespace {

namespace dp = sbc::dataplane;

constexpr uint32_t caller_ip = ipv4(198, 18, 0, 2);
constexpr mac caller_mac{0x02, 0, 0, 0, 0, 0x02};

std::shared_ptr<const sip::proxy_tables> tables(unsigned workers)
{
    auto t = std::make_shared<sip::proxy_tables>();
    t->trunks.push_back(access_trunk());
    t->index_peers();
    std::string error;
    t->scanner = sip::scanner_matcher::compile(sip::scanner_matcher::with_defaults(true, {}), {}, workers, error);
    EXPECT_TRUE(t->scanner) << error;
    t->overload.retry_after_s = 9;
    return t;
}

bytes sip_frame(const harness& h, std::string_view text)
{
    const bytes payload(text.begin(), text.end());
    return ethernet({h.our_mac(), caller_mac, 0}, ethertype_ipv4,
                    ipv4_packet({caller_ip, our_ip, proto_udp, 64, 0, 0x77, ip_flag_df},
                                udp_datagram(caller_ip, our_ip, 5060, 5060, payload)));
}

std::string request(const std::string& method, const std::string& ruri, const std::string& user_agent, int n)
{
    return method + " " + ruri + " SIP/2.0\r\n"
           "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-gd" + std::to_string(n) + "\r\n"
           "Max-Forwards: 70\r\n"
           "From: <sip:alice@198.18.0.2>;tag=g" + std::to_string(n) + "\r\n"
           "To: <sip:198.18.0.1>\r\n"
           "Call-ID: guard-" + std::to_string(n) + "@198.18.0.2\r\n"
           "CSeq: 1 " + method + "\r\n"
           "User-Agent: " + user_agent + "\r\n"
           "Content-Length: 0\r\n\r\n";
}

// svmap's OPTIONS as Debian's sipvicious sends it.
const std::string svmap_options =
    "OPTIONS sip:100@198.18.0.1 SIP/2.0\r\n"
    "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-1130910960;rport\r\n"
    "Max-Forwards: 70\r\n"
    "To: \"sipvicious\"<sip:100@1.1.1.1>\r\n"
    "From: \"sipvicious\"<sip:100@1.1.1.1>;tag=3766303030303031336164370133333738303935373238\r\n"
    "User-Agent: friendly-scanner\r\n"
    "Call-ID: 231359503165934606036116\r\n"
    "Contact: sip:100@198.18.0.2:5060\r\n"
    "CSeq: 1 OPTIONS\r\n"
    "Accept: application/sdp\r\n"
    "Content-Length: 0\r\n\r\n";

std::string sip_text(const rte_mbuf* m)
{
    const bytes b = linear_bytes(m);
    constexpr std::size_t headers = 14 + 20 + 8;
    return b.size() > headers ? std::string(b.begin() + headers, b.end()) : std::string();
}

class guard : public ::testing::Test {
protected:
    void SetUp() override
    {
        h_ = std::make_unique<harness>(2047, 1);
        ASSERT_TRUE(h_->ok()) << h_->error();
        h_->set_proxy(tables(1));
        h_->runtime().shared->neighbours.insert(ip_address::v4(caller_ip), caller_mac, 0);
    }
    void send(const std::string& text)
    {
        ASSERT_TRUE(h_->receive(sip_frame(*h_, text)));
        h_->poll();
    }
    uint64_t stat(sip::proxy_counter c) { return h_->worker().proxy->stats().get(c); }

    std::unique_ptr<harness> h_;
};

TEST_F(guard, a_scanners_options_produces_no_frame_and_reports_its_source)
{
    send(svmap_options);
    EXPECT_EQ(h_->take_sent().size(), 0u) << "the scanner learns nothing";
    EXPECT_EQ(stat(sip::proxy_counter::scanner_dropped), 1u);
    bool reported = false;
    for (const auto& e : h_->take_events())
        if (e.kind == dp::event_kind::source_report) {
            EXPECT_EQ(e.ip, ip_address::v4(caller_ip));
            EXPECT_EQ(e.code, static_cast<uint16_t>(dp::deny_reason::scanner));
            reported = true;
        }
    EXPECT_TRUE(reported) << "the source goes to the control core for the deny list";
    EXPECT_EQ(h_->mbufs_in_use(), 0u);

    send(request("OPTIONS", "sip:198.18.0.1", "SIPp", 1));
    const auto sent = h_->take_sent();
    ASSERT_EQ(sent.size(), 1u) << "an ordinary OPTIONS from the same source is answered";
    EXPECT_EQ(sip_text(sent.mbufs[0]).rfind("SIP/2.0 200", 0), 0u);
}

TEST_F(guard, a_full_events_ring_makes_the_worker_refuse_new_invites_until_it_drains)
{
    dp::worker& w = h_->worker();
    // The control core stops taking events: fill its ring (bounded by the ring's size).
    dp::event e{};
    e.kind = dp::event_kind::neighbour_seen;
    const unsigned capacity = rte_ring_get_capacity(w.events);
    for (unsigned i = 0; i < capacity && rte_ring_free_count(w.events) != 0; ++i) dp::post_event(w, e);
    ASSERT_EQ(rte_ring_free_count(w.events), 0u);
    h_->poll_worker(0, rte_rdtsc());
    EXPECT_EQ(w.proxy->overload(), 100);
    EXPECT_EQ(dp::overload_of(0).reduction, 100);
    EXPECT_EQ(dp::overload_of(0).ring_percent, 100);

    send(request("INVITE", "sip:+15550100@198.18.0.1", "SIPp", 2));
    const auto sent = h_->take_sent();
    ASSERT_EQ(sent.size(), 1u);
    const std::string answer = sip_text(sent.mbufs[0]);
    EXPECT_EQ(answer.rfind("SIP/2.0 503 Service Unavailable (overloaded)\r\n", 0), 0u) << answer;
    EXPECT_NE(answer.find("\r\nRetry-After: 9\r\n"), std::string::npos) << answer;
    EXPECT_EQ(stat(sip::proxy_counter::shed_overload), 1u);

    // The control core catches up: at the next sample the worker takes calls again.
    h_->take_events();
    h_->poll_worker(0, rte_rdtsc() + w.tsc_per_ms * 1000);
    EXPECT_EQ(w.proxy->overload(), 0);
    send(request("INVITE", "sip:+15550100@198.18.0.1", "SIPp", 3));
    const auto after = h_->take_sent();
    ASSERT_GE(after.size(), 1u);
    for (std::size_t i = 0; i < after.size(); ++i)
        EXPECT_EQ(sip_text(after.mbufs[i]).find("(overloaded)"), std::string::npos) << "no longer shed";
    EXPECT_EQ(stat(sip::proxy_counter::shed_overload), 1u);
}

}  // namespace
}  // namespace sbc::test
