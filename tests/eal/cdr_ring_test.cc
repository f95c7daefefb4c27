// Call records through the production dataplane (process_burst and poll_worker on the test
// thread over a net_ring port): calls go through worker 0 with a ring of call records
// (worker::cdr_out, the sink dataplane/cdr_out.h sets up as start_dataplane does with
// port_options::cdr_ring), and the test, as the control core, dequeues the records: one per
// call, a full ring counted in cdr_dropped, calls still up handed over by the drain at the end.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "common/call_record.h"
#include "dataplane/cdr_out.h"
#include "dataplane/counters.h"
#include "sip-fastpath/proxy.h"
#include "tests/eal/frame_builder.h"
#include "tests/eal/harness.h"

namespace sbc::test {
namespace {

constexpr uint32_t caller_ip = ipv4(198, 18, 0, 2);
constexpr uint32_t peer1_ip = ipv4(198, 18, 1, 11);
constexpr uint16_t sip_port = 5060;
constexpr mac caller_mac{0x02, 0, 0, 0, 0, 0x02};
constexpr mac gateway_mac{0x02, 0, 0, 0, 0, 0xfe};

std::shared_ptr<const sip::proxy_tables> tables()
{
    auto t = std::make_shared<sip::proxy_tables>();
    t->trunks.push_back(access_trunk());
    sip::peer p;
    p.name = "r1/peer1";
    p.id = 0;
    p.address = ip_address::v4(peer1_ip);
    p.port = sip_port;
    p.weight = 10;
    t->peers.push_back(p);
    t->index_peers();
    t->regions.push_back({"r1", {0}});
    t->groups.push_back({"g1", {0}, sip::selector::srv});
    t->routes.push_back({"default", sip::match_field::ruri_user, ".*", 0});
    t->default_route = 0;
    return t;
}

bytes sip_frame(const harness& h, const mac& l2src, uint32_t src, std::string_view text)
{
    const bytes payload(text.begin(), text.end());
    return ethernet({h.our_mac(), l2src, 0}, ethertype_ipv4,
                    ipv4_packet({src, our_ip, proto_udp, 64, 0, 0x99, ip_flag_df},
                                udp_datagram(src, our_ip, sip_port, sip_port, payload)));
}

std::string invite(const std::string& call_id)
{
    return "INVITE sip:+15551234@198.18.0.1 SIP/2.0\r\n"
           "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-" + call_id + "\r\n"
           "Max-Forwards: 70\r\n"
           "From: <sip:alice@198.18.0.2>;tag=a1\r\n"
           "To: <sip:+15551234@198.18.0.1>\r\n"
           "Call-ID: " + call_id + "\r\n"
           "CSeq: 1 INVITE\r\n"
           "Contact: <sip:alice@198.18.0.2:5060>\r\n"
           "Content-Length: 0\r\n\r\n";
}

/// The SIP text of every UDP frame the worker sent.
std::vector<std::string> sent_texts(harness& h)
{
    std::vector<std::string> v;
    const sent_frames f = h.take_sent();
    for (auto* m : f.mbufs) {
        const bytes b = linear_bytes(m);
        if (b.size() < 14 + 28) continue;
        v.emplace_back(reinterpret_cast<const char*>(b.data()) + 42, b.size() - 42);
    }
    return v;
}

/// The peer's final `code` to the INVITE the SBC sent it (`fwd`): its Vias, From, To with a
/// tag, Call-ID and CSeq.
std::string final_to(const std::string& fwd, int code, std::string_view reason)
{
    std::string out = "SIP/2.0 " + std::to_string(code) + " " + std::string(reason) + "\r\n";
    std::size_t pos = fwd.find("\r\n") + 2;
    while (pos < fwd.size()) {
        const std::size_t e = fwd.find("\r\n", pos);
        if (e == pos || e == std::string::npos) break;
        const std::string line = fwd.substr(pos, e - pos);
        for (std::string_view h : {"Via:", "From:", "Call-ID:", "CSeq:"})
            if (line.rfind(h, 0) == 0) out += line + "\r\n";
        if (line.rfind("To:", 0) == 0) out += line + ";tag=b1\r\n";
        pos = e + 2;
    }
    return out + "Content-Length: 0\r\n\r\n";
}

std::vector<call_record> dequeue(rte_ring* r)
{
    std::vector<call_record> v;
    call_record rec;
    while (rte_ring_sc_dequeue_elem(r, &rec, sizeof(rec)) == 0) v.push_back(rec);
    return v;
}

class cdr_ring : public ::testing::Test {
protected:
    void SetUp() override
    {
        h_ = std::make_unique<harness>(2047, 1);
        ASSERT_TRUE(h_->ok()) << h_->error();
        h_->set_proxy(tables());
        h_->runtime().shared->neighbours.insert(ip_address::v4(caller_ip), caller_mac, 1);
        h_->runtime().shared->neighbours.insert(ip_address::v4(our_gateway), gateway_mac, 1);
        // As start_dataplane does for port_options::cdr_ring = 2 (the runtime frees it).
        dataplane::worker& w = h_->worker();
        w.cdr_out = rte_ring_create_elem("test_cdr_w0", sizeof(call_record), 2, 0,
                                         RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
        ASSERT_NE(w.cdr_out, nullptr);
        w.cdr_sink.attach(w.cdr_out, &w.counters);
        w.proxy->set_cdr_sink(&w.cdr_sink);
        h_->poll_worker();  // starts the proxy's clock
    }
    std::unique_ptr<harness> h_;
};

TEST_F(cdr_ring, each_call_leaves_the_worker_as_one_record_and_a_full_ring_is_counted)
{
    harness& h = *h_;
    rte_ring* ring = h.worker().cdr_out;
    // A call the peer refuses: its record once the 486 goes to the caller.
    ASSERT_TRUE(h.receive(sip_frame(h, caller_mac, caller_ip, invite("busy-1"))));
    h.poll();
    std::string fwd;
    for (const std::string& s : sent_texts(h))
        if (s.rfind("INVITE ", 0) == 0) fwd = s;
    ASSERT_FALSE(fwd.empty()) << "the INVITE went to the peer";
    EXPECT_TRUE(dequeue(ring).empty()) << "nothing while the call is under way";
    ASSERT_TRUE(h.receive(sip_frame(h, gateway_mac, peer1_ip, final_to(fwd, 486, "Busy Here"))));
    h.poll();
    sent_texts(h);

    // Two calls refused while draining: the ring (2 entries) takes the first only.
    h.runtime().shared->peer_health.node.store(sip::peer_health::node_draining);
    ASSERT_TRUE(h.receive(sip_frame(h, caller_mac, caller_ip, invite("refused-1"))));
    ASSERT_TRUE(h.receive(sip_frame(h, caller_mac, caller_ip, invite("refused-2"))));
    h.poll();
    sent_texts(h);
    const dataplane::counters_view c = h.counters();
    EXPECT_EQ(c.cdr_records, 2u);
    EXPECT_EQ(c.cdr_dropped, 1u) << "the writer fell behind: lost, and counted";

    const std::vector<call_record> recs = dequeue(ring);
    ASSERT_EQ(recs.size(), 2u);
    EXPECT_EQ(recs[0].call_id(), "busy-1");
    EXPECT_EQ(recs[0].end, cdr_end::failed);
    EXPECT_EQ(recs[0].final_code, 486);
    EXPECT_EQ(recs[0].final_by, cdr_final_by::peer);
    ASSERT_EQ(recs[0].n_attempts, 1);
    EXPECT_EQ(recs[0].attempts[0].peer_id, 0u);
    EXPECT_EQ(recs[0].attempts[0].outcome, cdr_outcome::code);
    EXPECT_EQ(recs[0].from(), "alice");
    EXPECT_EQ(recs[0].to(), "+15551234");
    EXPECT_EQ(recs[1].call_id(), "refused-1");
    EXPECT_EQ(recs[1].end, cdr_end::refused);
    EXPECT_EQ(recs[1].final_code, 503);
    EXPECT_EQ(recs[1].final_by, cdr_final_by::sbc);
}

TEST_F(cdr_ring, calls_still_up_when_the_worker_stops_are_handed_over_by_the_drain)
{
    harness& h = *h_;
    ASSERT_TRUE(h.receive(sip_frame(h, caller_mac, caller_ip, invite("up-1"))));
    h.poll();
    sent_texts(h);
    EXPECT_TRUE(dequeue(h.worker().cdr_out).empty());
    dataplane::cdr_drain_worker(h.worker());  // what the lcore function does after run_loop
    const std::vector<call_record> recs = dequeue(h.worker().cdr_out);
    ASSERT_EQ(recs.size(), 1u);
    EXPECT_EQ(recs[0].call_id(), "up-1");
    EXPECT_EQ(recs[0].end, cdr_end::drain);
    EXPECT_EQ(recs[0].final_code, 0);
    dataplane::cdr_drain_worker(h.worker());
    EXPECT_TRUE(dequeue(h.worker().cdr_out).empty()) << "once";
}

}  // namespace
}  // namespace sbc::test
