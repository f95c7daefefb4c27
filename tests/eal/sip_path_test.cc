// The SIP path through the production dataplane (process_burst and poll_worker on the test
// thread over net_ring ports): SIP frames in, the proxy's answers out as real frames whose
// Ethernet, IPv4 and UDP headers and checksums are checked independently. One trunk
// 198.18.0.1:5060 allowing 198.18.0.0/24; one region with peers 198.18.1.11 (priority 0) and
// 198.18.1.12 (priority 1), reached through the gateway 198.18.0.254; a default route.
// With two workers: messages that land on the worker that does not own their call are handed
// to the owner through its ring.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "dataplane/counters.h"
#include "dataplane/events.h"
#include "sip-fastpath/proxy.h"
#include "tests/eal/frame_builder.h"
#include "tests/eal/harness.h"

namespace sbc::test {
namespace {

namespace dp = sbc::dataplane;

constexpr uint32_t caller_ip = ipv4(198, 18, 0, 2);
constexpr uint32_t stranger_ip = ipv4(198, 51, 100, 7);
constexpr uint32_t peer1_ip = ipv4(198, 18, 1, 11);
constexpr uint32_t peer2_ip = ipv4(198, 18, 1, 12);
constexpr uint16_t sip_port = 5060;
constexpr mac caller_mac{0x02, 0, 0, 0, 0, 0x02};
constexpr mac gateway_mac{0x02, 0, 0, 0, 0, 0xfe};

std::shared_ptr<const sip::proxy_tables> tables()
{
    auto t = std::make_shared<sip::proxy_tables>();
    t->trunks.push_back(access_trunk());
    for (uint32_t i = 0; i < 2; ++i) {
        sip::peer p;
        p.name = "r1/peer" + std::to_string(i + 1);
        p.id = i;
        p.address = ip_address::v4(i == 0 ? peer1_ip : peer2_ip);
        p.port = sip_port;
        p.priority = static_cast<uint16_t>(i);  // peer1 first, deterministically
        p.weight = 10;
        p.region = 0;
        p.trunk = 0;
        t->peers.push_back(p);
    }
    t->index_peers();
    t->regions.push_back({"r1", {0, 1}});
    t->groups.push_back({"g1", {0}, sip::selector::srv});
    t->routes.push_back({"default", sip::match_field::ruri_user, ".*", 0});
    t->default_route = 0;
    for (uint16_t c : {408, 503, 504}) t->retry.codes.set(c);
    return t;
}

/// One received frame: Ethernet from `l2src`, IPv4/UDP from (src, sport) to our trunk.
bytes sip_frame(const harness& h, const mac& l2src, uint32_t src, uint16_t sport, std::string_view text,
                uint32_t dst = our_ip)
{
    const bytes payload(text.begin(), text.end());
    return ethernet({h.our_mac(), l2src, 0}, ethertype_ipv4,
                    ipv4_packet({src, dst, proto_udp, 64, 0, 0x99, ip_flag_df},
                                udp_datagram(src, dst, sport, sip_port, payload)));
}

/// A transmitted frame, decoded and checked independently of the dataplane.
struct sent_sip {
    mac dst_mac{};
    mac src_mac{};
    uint32_t src = 0, dst = 0;
    uint16_t sport = 0, dport = 0;
    uint8_t ttl = 0;
    uint16_t flags_fragment = 0;
    bool ip_checksum_ok = false;
    bool udp_checksum_ok = false;
    bytes ip_packet;
    std::string text;

    [[nodiscard]] bool has(std::string_view s) const { return text.find(s) != std::string::npos; }
    [[nodiscard]] bool starts(std::string_view s) const { return text.rfind(s, 0) == 0; }
};

std::vector<sent_sip> decode(const sent_frames& f)
{
    std::vector<sent_sip> out;
    for (auto* m : f.mbufs) {
        const bytes b = linear_bytes(m);
        sent_sip s;
        if (b.size() < 14 + 28 || read16(b, 12) != ethertype_ipv4) {
            ADD_FAILURE() << "sent frame is not untagged IPv4 UDP";
            continue;
        }
        std::copy_n(b.begin(), 6, s.dst_mac.begin());
        std::copy_n(b.begin() + 6, 6, s.src_mac.begin());
        const auto ip = std::span(b).subspan(14);
        EXPECT_EQ(ip[0], 0x45);
        EXPECT_EQ(ip[9], proto_udp);
        EXPECT_EQ(read16(ip, 2), ip.size()) << "IPv4 total length is the frame's";
        s.ttl = ip[8];
        s.flags_fragment = read16(ip, 6);
        s.ip_checksum_ok = internet_checksum(ip.first(20)) == 0;
        s.src = read32(ip, 12);
        s.dst = read32(ip, 16);
        const auto udp = ip.subspan(20);
        s.sport = read16(udp, 0);
        s.dport = read16(udp, 2);
        EXPECT_EQ(read16(udp, 4), udp.size()) << "UDP length";
        s.udp_checksum_ok = read16(udp, 6) != 0 && udp_checksum(s.src, s.dst, udp) == 0;
        s.ip_packet.assign(ip.begin(), ip.end());
        s.text.assign(reinterpret_cast<const char*>(udp.data()) + 8, udp.size() - 8);
        out.push_back(std::move(s));
    }
    return out;
}

/// The one sent message to `dst`; fails the test when there is not exactly one.
const sent_sip* to(const std::vector<sent_sip>& v, uint32_t dst)
{
    const sent_sip* found = nullptr;
    int n = 0;
    for (const auto& s : v)
        if (s.dst == dst) {
            found = &s;
            ++n;
        }
    EXPECT_EQ(n, 1) << "messages to " << (dst >> 24) << "." << ((dst >> 16) & 255) << "." << ((dst >> 8) & 255)
                    << "." << (dst & 255);
    return n == 1 ? found : nullptr;
}

void expect_well_formed(const harness& h, const sent_sip& s, const mac& next_hop)
{
    EXPECT_EQ(s.dst_mac, next_hop);
    EXPECT_EQ(s.src_mac, h.our_mac());
    EXPECT_EQ(s.src, our_ip);
    EXPECT_EQ(s.sport, sip_port);
    EXPECT_EQ(s.dport, sip_port);
    EXPECT_EQ(s.ttl, 64);
    EXPECT_EQ(s.flags_fragment, ip_flag_df);
    EXPECT_TRUE(s.ip_checksum_ok);
    EXPECT_TRUE(s.udp_checksum_ok);
}

std::string invite(std::string_view call_id, std::string_view cseq_method = "INVITE",
                   std::string_view branch = "z9hG4bK-c1")
{
    std::string s = "INVITE sip:+15551234@198.18.0.1 SIP/2.0\r\n";
    s += "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=" + std::string(branch) + "\r\n";
    s += "Max-Forwards: 70\r\n";
    s += "From: <sip:alice@198.18.0.2>;tag=a1\r\n";
    s += "To: <sip:+15551234@198.18.0.1>\r\n";
    s += "Call-ID: " + std::string(call_id) + "\r\n";
    s += "CSeq: 1 " + std::string(cseq_method) + "\r\n";
    s += "Contact: <sip:alice@198.18.0.2:5060>\r\n";
    s += "Content-Length: 0\r\n\r\n";
    return s;
}

/// The response a UAS sends to `request` (its Via, From, To, Call-ID, CSeq and Record-Route).
std::string response_to(std::string_view request, int code, std::string_view reason, std::string_view to_tag)
{
    std::string out = "SIP/2.0 " + std::to_string(code) + " " + std::string(reason) + "\r\n";
    std::size_t pos = request.find("\r\n") + 2;
    while (pos < request.size()) {
        const std::size_t e = request.find("\r\n", pos);
        if (e == pos || e == std::string_view::npos) break;
        const std::string_view line = request.substr(pos, e - pos);
        for (std::string_view h : {"Via:", "From:", "Call-ID:", "CSeq:", "Record-Route:"})
            if (line.rfind(h, 0) == 0) out += std::string(line) + "\r\n";
        if (line.rfind("To:", 0) == 0) {
            out += std::string(line);
            if (!to_tag.empty()) out += ";tag=" + std::string(to_tag);
            out += "\r\n";
        }
        pos = e + 2;
    }
    if (code >= 200 && code < 300) out += "Contact: <sip:bob@198.18.1.12:5060>\r\n";
    out += "Content-Length: 0\r\n\r\n";
    return out;
}

std::vector<dp::event> peer_events(harness& h)
{
    std::vector<dp::event> v;
    for (const auto& e : h.take_events())
        if (e.kind == dp::event_kind::peer_failed || e.kind == dp::event_kind::peer_answered) v.push_back(e);
    return v;
}

uint64_t stat(harness& h, sip::proxy_counter c, unsigned w = 0) { return h.worker(w).proxy->stats().get(c); }

class sip_path : public ::testing::Test {
protected:
    void start(unsigned workers)
    {
        h_ = std::make_unique<harness>(2047, workers);
        ASSERT_TRUE(h_->ok()) << h_->error();
        h_->set_proxy(tables());
        h_->runtime().shared->neighbours.insert(ip_address::v4(caller_ip), caller_mac, 1);
        h_->runtime().shared->neighbours.insert(ip_address::v4(our_gateway), gateway_mac, 1);
        for (unsigned w = 0; w < workers; ++w) h_->poll_worker(w);  // starts the proxies' clocks
    }
    /// A new INVITE with Call-ID `call_id` on worker 1's queue (worker 1 owns the call): the
    /// 100 back and the INVITE to the first peer, our stateful branch naming worker 1, into
    /// `forwarded`.
    void invite_on_worker_1(const std::string& call_id, std::string& forwarded)
    {
        harness& h = *h_;
        ASSERT_TRUE(h.receive(sip_frame(h, caller_mac, caller_ip, sip_port, invite(call_id)), 1));
        h.poll(1);
        const sent_frames f = h.take_sent();
        const auto out = decode(f);
        ASSERT_EQ(out.size(), 2u);
        const sent_sip* fwd = to(out, peer1_ip);
        ASSERT_NE(fwd, nullptr);
        EXPECT_TRUE(fwd->has("branch=z9hG4bKsT01")) << fwd->text;
        forwarded = fwd->text;
    }
    std::unique_ptr<harness> h_;
};

TEST_F(sip_path, invite_gets_100_and_goes_to_a_peer_503_fails_over_and_200_reaches_the_caller)
{
    start(1);
    harness& h = *h_;
    const std::string inv = invite("call-1@198.18.0.2");
    ASSERT_TRUE(h.receive(sip_frame(h, caller_mac, caller_ip, sip_port, inv)));
    h.poll();
    std::string forwarded;
    {
        const sent_frames f = h.take_sent();
        const auto out = decode(f);
        ASSERT_EQ(out.size(), 2u);
        const sent_sip* trying = to(out, caller_ip);
        ASSERT_NE(trying, nullptr);
        expect_well_formed(h, *trying, caller_mac);
        EXPECT_TRUE(trying->starts("SIP/2.0 100 ")) << trying->text;
        EXPECT_TRUE(trying->has("branch=z9hG4bK-c1"));
        const sent_sip* fwd = to(out, peer1_ip);
        ASSERT_NE(fwd, nullptr);
        expect_well_formed(h, *fwd, gateway_mac);  // off-link: through the gateway
        // The Request-URI named the SBC: retargeted to the peer (RFC 3261 16.6 step 2).
        EXPECT_TRUE(fwd->starts("INVITE sip:+15551234@198.18.1.11:5060 SIP/2.0\r\n")) << fwd->text;
        EXPECT_TRUE(fwd->has("Via: SIP/2.0/UDP 198.18.0.1:5060;branch=z9hG4bKsT00")) << fwd->text;
        EXPECT_TRUE(fwd->has("branch=z9hG4bK-c1")) << "the caller's Via stays below ours";
        EXPECT_TRUE(fwd->has("Record-Route: <sip:198.18.0.1:5060;lr;w=00>")) << fwd->text;
        EXPECT_TRUE(fwd->has("Max-Forwards: 69\r\n")) << fwd->text;
        EXPECT_FALSE(fwd->has("Max-Forwards: 70")) << fwd->text;
        forwarded = fwd->text;
    }
    EXPECT_TRUE(peer_events(h).empty());

    // The first peer refuses with 503: ACK to it, the INVITE to the other peer.
    ASSERT_TRUE(h.receive(sip_frame(h, gateway_mac, peer1_ip, sip_port, response_to(forwarded, 503, "Busy", "p1"))));
    h.poll();
    {
        const sent_frames f = h.take_sent();
        const auto out = decode(f);
        ASSERT_EQ(out.size(), 2u);
        const sent_sip* ack = to(out, peer1_ip);
        ASSERT_NE(ack, nullptr);
        expect_well_formed(h, *ack, gateway_mac);
        EXPECT_TRUE(ack->starts("ACK sip:+15551234@198.18.1.11:5060 SIP/2.0\r\n")) << ack->text;
        EXPECT_TRUE(ack->has("tag=p1")) << ack->text;
        const sent_sip* fwd = to(out, peer2_ip);
        ASSERT_NE(fwd, nullptr);
        expect_well_formed(h, *fwd, gateway_mac);
        EXPECT_TRUE(fwd->starts("INVITE ")) << fwd->text;
        EXPECT_TRUE(fwd->has("branch=z9hG4bKsT00")) << fwd->text;
        forwarded = fwd->text;
    }
    auto ev = peer_events(h);
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].kind, dp::event_kind::peer_failed);
    EXPECT_EQ(ev[0].peer_id, 0u);
    EXPECT_EQ(ev[0].cause, sip::failure_cause::code);
    EXPECT_EQ(ev[0].code, 503);

    // The second peer answers: the 200 goes to the caller without our Via.
    ASSERT_TRUE(h.receive(sip_frame(h, gateway_mac, peer2_ip, sip_port, response_to(forwarded, 200, "OK", "p2"))));
    h.poll();
    {
        const sent_frames f = h.take_sent();
        const auto out = decode(f);
        ASSERT_EQ(out.size(), 1u);
        const sent_sip* ok = to(out, caller_ip);
        ASSERT_NE(ok, nullptr);
        expect_well_formed(h, *ok, caller_mac);
        EXPECT_TRUE(ok->starts("SIP/2.0 200 OK\r\n")) << ok->text;
        EXPECT_FALSE(ok->has("z9hG4bKsT")) << ok->text;
        EXPECT_TRUE(ok->has("Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-c1")) << ok->text;
        EXPECT_TRUE(ok->has("tag=p2"));
    }
    ev = peer_events(h);
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].kind, dp::event_kind::peer_answered);
    EXPECT_EQ(ev[0].peer_id, 1u);
    EXPECT_EQ(ev[0].code, 200);

    EXPECT_EQ(stat(h, sip::proxy_counter::invites), 1u);
    EXPECT_EQ(stat(h, sip::proxy_counter::retries_code), 1u);
    EXPECT_EQ(stat(h, sip::proxy_counter::calls_answered), 1u);
    EXPECT_EQ(h.worker().proxy->stats().dialogs_active.get(), 1u);
    const auto c = h.counters();
    EXPECT_EQ(c.stage_packets[static_cast<std::size_t>(dp::stage::sip)], 3u);
    EXPECT_EQ(c.drops_total(), 0u);
    EXPECT_EQ(c.tx_packets, 5u);
    EXPECT_EQ(h.mbufs_in_use(), 0u) << "every received frame was freed";
}

TEST_F(sip_path, icmp_port_unreachable_from_the_peer_fails_over_at_once)
{
    start(1);
    harness& h = *h_;
    ASSERT_TRUE(h.receive(sip_frame(h, caller_mac, caller_ip, sip_port, invite("call-icmp@198.18.0.2"))));
    h.poll();
    bytes quoted;
    {
        const sent_frames f = h.take_sent();
        const auto out = decode(f);
        const sent_sip* fwd = to(out, peer1_ip);
        ASSERT_NE(fwd, nullptr);
        // Like Linux: the original IP packet quoted up to 576 bytes of ICMP in all.
        quoted.assign(fwd->ip_packet.begin(),
                      fwd->ip_packet.begin() + static_cast<long>(std::min<std::size_t>(fwd->ip_packet.size(), 548)));
    }
    h.take_events();
    const bytes icmp = ethernet({h.our_mac(), gateway_mac, 0}, ethertype_ipv4,
                                ipv4_packet({peer1_ip, our_ip, proto_icmp, 64, 0, 7, 0}, icmp_unreachable(3, quoted)));
    ASSERT_TRUE(h.receive(icmp));
    h.poll();
    const sent_frames f = h.take_sent();
    const auto out = decode(f);
    ASSERT_EQ(out.size(), 1u);
    const sent_sip* fwd = to(out, peer2_ip);
    ASSERT_NE(fwd, nullptr);
    EXPECT_TRUE(fwd->starts("INVITE ")) << fwd->text;
    bool control_event = false, peer_failed = false;
    for (const auto& e : h.take_events()) {
        if (e.kind == dp::event_kind::icmp_unreachable) control_event = e.orig_dst == ip_address::v4(peer1_ip) && e.orig_src_port == sip_port;
        if (e.kind == dp::event_kind::peer_failed)
            peer_failed = e.peer_id == 0 && e.cause == sip::failure_cause::icmp;
    }
    EXPECT_TRUE(control_event) << "the control core still gets the ICMP event";
    EXPECT_TRUE(peer_failed);
    EXPECT_EQ(stat(h, sip::proxy_counter::retries_icmp), 1u);
}

TEST_F(sip_path, source_outside_the_trunk_allow_list_gets_nothing_and_is_counted)
{
    start(1);
    harness& h = *h_;
    h.runtime().shared->neighbours.insert(ip_address::v4(stranger_ip), caller_mac, 1);
    ASSERT_TRUE(h.receive(sip_frame(h, gateway_mac, stranger_ip, sip_port, invite("call-x@198.51.100.7"))));
    h.poll();
    EXPECT_EQ(h.take_sent().size(), 0u);
    EXPECT_EQ(stat(h, sip::proxy_counter::source_denied), 1u);
    EXPECT_EQ(stat(h, sip::proxy_counter::invites), 0u);
    EXPECT_EQ(h.counters().stage_packets[static_cast<std::size_t>(dp::stage::sip)], 1u);
    EXPECT_EQ(h.mbufs_in_use(), 0u);
}

TEST_F(sip_path, malformed_invite_is_answered_400)
{
    start(1);
    harness& h = *h_;
    ASSERT_TRUE(h.receive(sip_frame(h, caller_mac, caller_ip, sip_port, invite("call-bad@198.18.0.2", "BYE"))));
    h.poll();
    const sent_frames f = h.take_sent();
    const auto out = decode(f);
    ASSERT_EQ(out.size(), 1u);
    const sent_sip* r = to(out, caller_ip);
    ASSERT_NE(r, nullptr);
    expect_well_formed(h, *r, caller_mac);
    EXPECT_TRUE(r->starts("SIP/2.0 400 ")) << r->text;
    EXPECT_EQ(stat(h, sip::proxy_counter::invites), 0u);
    EXPECT_EQ(stat(h, sip::proxy_counter::rejected), 1u);
}

TEST_F(sip_path, udp_to_another_port_is_still_closed)
{
    start(1);
    harness& h = *h_;
    const std::string text = invite("call-p@198.18.0.2");
    const bytes payload(text.begin(), text.end());
    ASSERT_TRUE(h.receive(ethernet({h.our_mac(), caller_mac, 0}, ethertype_ipv4,
                                   ipv4_packet({caller_ip, our_ip, proto_udp}, udp_datagram(caller_ip, our_ip, 5060, 5070, payload)))));
    h.poll();
    EXPECT_EQ(h.take_sent().size(), 0u);
    EXPECT_EQ(h.counters().drops[static_cast<std::size_t>(dp::drop_reason::udp_port_closed)], 1u);
    EXPECT_EQ(stat(h, sip::proxy_counter::requests), 0u);
}

TEST_F(sip_path, an_unresolved_caller_is_answered_at_the_mac_it_came_from_and_learned)
{
    start(1);
    harness& h = *h_;
    constexpr uint32_t unknown_caller = ipv4(198, 18, 0, 3);
    ASSERT_TRUE(h.receive(sip_frame(h, caller_mac, unknown_caller, sip_port, invite("call-n@198.18.0.3", "BYE"))));
    h.poll();
    const auto sent = h.take_sent();
    ASSERT_EQ(sent.size(), 1u) << "the 400 goes out without waiting for ARP";
    const bytes frame = sbc::test::linear_bytes(sent.mbufs[0]);
    ASSERT_GE(frame.size(), 6u);
    EXPECT_TRUE(std::equal(caller_mac.begin(), caller_mac.end(), frame.begin())) << "to the MAC the request came from";
    EXPECT_EQ(h.counters().drops[static_cast<std::size_t>(dp::drop_reason::neighbour_unknown)], 0u);
    bool seen = false;
    for (const auto& e : h.take_events())
        seen = seen || (e.kind == dp::event_kind::neighbour_seen && e.ip == ip_address::v4(unknown_caller) &&
                        std::equal(e.mac.begin(), e.mac.end(), caller_mac.begin()));
    EXPECT_TRUE(seen) << "the control core is told, so later messages to it need no ARP";
}

TEST_F(sip_path, messages_on_the_non_owning_worker_are_handed_to_the_owner)
{
    start(2);
    harness& h = *h_;
    // The call arrives on worker 1's queue: worker 1 owns it.
    std::string forwarded;
    invite_on_worker_1("call-2w@198.18.0.2", forwarded);
    if (HasFatalFailure()) return;
    EXPECT_TRUE(forwarded.find("Record-Route: <sip:198.18.0.1:5060;lr;w=01>") != std::string::npos) << forwarded;
    // The peer's 200 lands on worker 0 (RSS): worker 0 sends nothing and hands it over.
    ASSERT_TRUE(h.receive(sip_frame(h, gateway_mac, peer1_ip, sip_port, response_to(forwarded, 200, "OK", "p1")), 0));
    h.poll(0);
    EXPECT_EQ(h.take_sent().size(), 0u);
    EXPECT_EQ(stat(h, sip::proxy_counter::responses, 0), 0u) << "worker 0 did not handle it";
    EXPECT_EQ(rte_ring_count(h.worker(0).handoff_out[1]), 1u);
    // Worker 1's per-iteration work takes it from the ring and completes the call.
    EXPECT_GE(h.poll_worker(1), 1u);
    {
        const sent_frames f = h.take_sent();
        const auto out = decode(f);
        ASSERT_EQ(out.size(), 1u);
        const sent_sip* ok = to(out, caller_ip);
        ASSERT_NE(ok, nullptr);
        expect_well_formed(h, *ok, caller_mac);
        EXPECT_TRUE(ok->starts("SIP/2.0 200 OK\r\n")) << ok->text;
        EXPECT_FALSE(ok->has("z9hG4bKsT"));
    }
    EXPECT_EQ(stat(h, sip::proxy_counter::calls_answered, 1), 1u);

    // The caller's ACK, routed by our Record-Route (;w=01), also lands on worker 0.
    std::string ack = "ACK sip:bob@198.18.1.11:5060 SIP/2.0\r\n"
                      "Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-ack1\r\n"
                      "Route: <sip:198.18.0.1:5060;lr;w=01>\r\n"
                      "Max-Forwards: 70\r\n"
                      "From: <sip:alice@198.18.0.2>;tag=a1\r\n"
                      "To: <sip:+15551234@198.18.0.1>;tag=p1\r\n"
                      "Call-ID: call-2w@198.18.0.2\r\n"
                      "CSeq: 1 ACK\r\n"
                      "Content-Length: 0\r\n\r\n";
    ASSERT_TRUE(h.receive(sip_frame(h, caller_mac, caller_ip, sip_port, ack), 0));
    h.poll(0);
    EXPECT_EQ(h.take_sent().size(), 0u);
    h.poll_worker(1);
    {
        const sent_frames f = h.take_sent();
        const auto out = decode(f);
        ASSERT_EQ(out.size(), 1u);
        const sent_sip* a = to(out, peer1_ip);
        ASSERT_NE(a, nullptr);
        expect_well_formed(h, *a, gateway_mac);
        EXPECT_TRUE(a->starts("ACK sip:bob@198.18.1.11:5060 SIP/2.0\r\n")) << a->text;
        EXPECT_FALSE(a->has("Route: <sip:198.18.0.1")) << "our Route is popped";
    }
    EXPECT_EQ(stat(h, sip::proxy_counter::in_dialog, 1), 1u);
    EXPECT_EQ(stat(h, sip::proxy_counter::requests, 0), 0u);
    EXPECT_EQ(h.counters(0).drops_total() + h.counters(1).drops_total(), 0u);
    // Both crossings are counted on each side (sbcctl stats, /metrics per worker).
    EXPECT_EQ(h.counters(0).sip_handed_off, 2u);
    EXPECT_EQ(h.counters(1).sip_handed_in, 2u);
    EXPECT_EQ(h.counters(1).sip_handed_off + h.counters(0).sip_handed_in, 0u);
}

TEST_F(sip_path, a_full_handoff_ring_drops_and_counts_and_the_retransmission_completes_the_call)
{
    start(2);
    harness& h = *h_;
    std::string forwarded;
    invite_on_worker_1("call-full@198.18.0.2", forwarded);
    if (HasFatalFailure()) return;
    // Worker 1 has fallen behind: its ring from worker 0 is full (stand-in entries, taken
    // out below before worker 1 polls; never dereferenced).
    rte_ring* ring = h.worker(0).handoff_out[1];
    static int stand_in;
    unsigned filled = 0;
    while (rte_ring_enqueue(ring, &stand_in) == 0) ++filled;
    ASSERT_EQ(filled, rte_ring_get_capacity(ring));
    const std::string ok = response_to(forwarded, 200, "OK", "p1");
    ASSERT_TRUE(h.receive(sip_frame(h, gateway_mac, peer1_ip, sip_port, ok), 0));
    h.poll(0);  // returns: worker 0 drops the 200, never waits for room
    EXPECT_EQ(h.take_sent().size(), 0u);
    EXPECT_EQ(h.counters(0).drops[static_cast<std::size_t>(dp::drop_reason::sip_handoff_full)], 1u);
    EXPECT_EQ(h.counters(0).sip_handed_off, 0u);
    void* e = nullptr;
    while (rte_ring_dequeue(ring, &e) == 0) EXPECT_EQ(e, &stand_in);
    // The peer retransmits its 200 (RFC 3261 13.3.1.4): handed over now, and the call completes.
    ASSERT_TRUE(h.receive(sip_frame(h, gateway_mac, peer1_ip, sip_port, ok), 0));
    h.poll(0);
    EXPECT_EQ(h.counters(0).sip_handed_off, 1u);
    EXPECT_GE(h.poll_worker(1), 1u);
    const sent_frames f = h.take_sent();
    const auto out = decode(f);
    const sent_sip* to_caller = to(out, caller_ip);
    ASSERT_NE(to_caller, nullptr);
    EXPECT_TRUE(to_caller->starts("SIP/2.0 200 OK\r\n")) << to_caller->text;
    EXPECT_EQ(stat(h, sip::proxy_counter::calls_answered, 1), 1u);
    EXPECT_EQ(h.counters(1).sip_handed_in, 1u);
}

/// `text` with a padding header inserted after its start line, `size` bytes in all.
std::string padded(std::string text, std::size_t size)
{
    const std::string_view pad = "X-Pad: \r\n";
    if (size > text.size() + pad.size())
        text.insert(text.find("\r\n") + 2, "X-Pad: " + std::string(size - text.size() - pad.size(), 'p') + "\r\n");
    return text;
}

TEST_F(sip_path, an_invite_that_outgrows_one_packet_leaves_as_two_fragments_and_no_peer_is_blamed)
{
    start(1);
    harness& h = *h_;
    // One 1500-byte packet as the caller sent it; not once our Via and Record-Route are in:
    // sent on as IPv4 fragments (dataplane/udp_fragment.h; tests/eal/sip_large_test.cc checks
    // their reassembly byte for byte), no longer refused.
    const std::string inv = padded(invite("call-big@198.18.0.2"), 1500 - 28 - 40);
    ASSERT_TRUE(h.receive(sip_frame(h, caller_mac, caller_ip, sip_port, inv)));
    h.poll();
    const sent_frames f = h.take_sent();
    ASSERT_EQ(f.size(), 3u) << "100 Trying and the INVITE in two fragments";
    std::size_t to_peer = 0;
    for (auto* m : f.mbufs) {
        const bytes b = linear_bytes(m);
        const auto ip = std::span(b).subspan(14);
        if (read32(ip, 16) != peer1_ip) continue;
        ++to_peer;
        EXPECT_EQ(read16(ip, 6) & ip_flag_df, 0) << "a fragment has no DF";
        EXPECT_EQ(internet_checksum(ip.first(20)), 0);
        EXPECT_LE(ip.size(), 1500u);
    }
    EXPECT_EQ(to_peer, 2u);
    EXPECT_EQ(h.counters().sip_fragments_sent, 2u);
    EXPECT_EQ(stat(h, sip::proxy_counter::send_failed_too_big), 0u);
    EXPECT_TRUE(peer_events(h).empty());
    EXPECT_EQ(h.counters().drops_total(), 0u);
}

/// Worker 0's clock `ms` milliseconds from now, as a TSC for poll_worker.
uint64_t tsc_in(uint64_t ms) { return rte_rdtsc() + ms * (rte_get_tsc_hz() / 1000); }

/// Whether `events` ask the control core to resolve `ip`; and whether any is about a peer.
bool asks_for(const std::vector<dp::event>& events, uint32_t ip)
{
    return std::any_of(events.begin(), events.end(), [&](const dp::event& e) {
        return e.kind == dp::event_kind::neighbour_needed && e.ip == ip_address::v4(ip);
    });
}
bool blames_a_peer(const std::vector<dp::event>& events)
{
    return std::any_of(events.begin(), events.end(), [](const dp::event& e) { return e.kind == dp::event_kind::peer_failed; });
}

/// One worker whose neighbour table has forgotten `unknown` (the caller, or the gateway the
/// peers are behind), and the caller's INVITE `call_id` through it.
harness& invite_without_mac_of(std::unique_ptr<harness>& h, uint32_t unknown, const std::string& call_id)
{
    h->runtime().shared->neighbours.remove(ip_address::v4(unknown));
    EXPECT_TRUE(h->receive(sip_frame(*h, caller_mac, caller_ip, sip_port, invite(call_id))));
    h->poll();
    return *h;
}

TEST_F(sip_path, the_callees_180_reaches_a_caller_the_control_core_has_not_learned_yet)
{
    // The first call: the caller is new (not in the neighbour table), its INVITE is
    // answered 100 at the MAC it came from, and the callee's 180 a moment later (an
    // unreliable provisional, never resent) must reach it too, without waiting for ARP.
    start(1);
    harness& h = invite_without_mac_of(h_, caller_ip, "call-new@198.18.0.2");
    std::string forwarded;
    {
        const sent_frames f = h.take_sent();
        const auto out = decode(f);
        ASSERT_EQ(out.size(), 2u);
        const sent_sip* fwd = to(out, peer1_ip);
        ASSERT_NE(fwd, nullptr);
        forwarded = fwd->text;
    }
    ASSERT_TRUE(h.receive(sip_frame(h, gateway_mac, peer1_ip, sip_port, response_to(forwarded, 180, "Ringing", "p1"))));
    h.poll();
    const sent_frames f = h.take_sent();
    const auto out = decode(f);
    ASSERT_EQ(out.size(), 1u) << "the 180 leaves at once";
    const sent_sip* ringing = to(out, caller_ip);
    ASSERT_NE(ringing, nullptr);
    expect_well_formed(h, *ringing, caller_mac);
    EXPECT_TRUE(ringing->starts("SIP/2.0 180 Ringing\r\n")) << ringing->text;
    const auto c = h.counters();
    EXPECT_EQ(c.neighbour_held, 0u) << "the worker knew the caller's MAC from its INVITE";
    EXPECT_EQ(c.drops_total(), 0u);
}

TEST_F(sip_path, an_invite_toward_an_unresolved_next_hop_waits_for_arp_and_leaves_once_it_answers)
{
    start(1);
    harness& h = invite_without_mac_of(h_, our_gateway, "call-hold@198.18.0.2");
    {
        const sent_frames f = h.take_sent();
        const auto out = decode(f);
        ASSERT_EQ(out.size(), 1u) << "the 100 Trying leaves; the INVITE waits for the gateway's MAC";
        ASSERT_NE(to(out, caller_ip), nullptr);
    }
    const auto events = h.take_events();
    EXPECT_TRUE(asks_for(events, our_gateway)) << "the control core is asked to resolve the gateway";
    EXPECT_EQ(h.counters().neighbour_held, 1u);
    h.poll_worker(0, tsc_in(100));
    EXPECT_EQ(h.take_sent().size(), 0u) << "still unresolved, still held";

    h.runtime().shared->neighbours.insert(ip_address::v4(our_gateway), gateway_mac, 2);  // ARP answered
    h.poll_worker(0, tsc_in(110));
    const sent_frames f = h.take_sent();
    const auto out = decode(f);
    ASSERT_EQ(out.size(), 1u);
    const sent_sip* fwd = to(out, peer1_ip);
    ASSERT_NE(fwd, nullptr);
    expect_well_formed(h, *fwd, gateway_mac);
    EXPECT_TRUE(fwd->starts("INVITE sip:+15551234@198.18.1.11:5060 SIP/2.0\r\n")) << fwd->text;
    const auto c = h.counters();
    EXPECT_EQ(c.neighbour_released, 1u);
    EXPECT_EQ(c.drops_total(), 0u);
    EXPECT_FALSE(blames_a_peer(h.take_events()));
    EXPECT_EQ(h.mbufs_in_use(), 0u);
}

TEST_F(sip_path, an_invite_whose_next_hop_never_resolves_is_answered_503_before_any_peer_is_blamed)
{
    start(1);
    harness& h = invite_without_mac_of(h_, our_gateway, "call-noarp@198.18.0.2");
    EXPECT_EQ(h.take_sent().size(), 1u) << "the 100 Trying";
    // Past the hold (half the 1000 ms no-response time), before the no-response timer.
    h.poll_worker(0, tsc_in(600));
    const sent_frames f = h.take_sent();
    const auto out = decode(f);
    ASSERT_EQ(out.size(), 1u);
    const sent_sip* refused = to(out, caller_ip);
    ASSERT_NE(refused, nullptr);
    expect_well_formed(h, *refused, caller_mac);
    EXPECT_TRUE(refused->starts("SIP/2.0 503 ")) << refused->text;
    const auto c = h.counters();
    EXPECT_EQ(c.drops[static_cast<std::size_t>(dp::drop_reason::neighbour_unknown)], 1u) << "the held INVITE, counted";
    EXPECT_EQ(c.neighbour_released, 0u);
    EXPECT_EQ(stat(h, sip::proxy_counter::send_failed_unresolved), 1u);
    EXPECT_EQ(stat(h, sip::proxy_counter::retries_timeout), 0u);
    EXPECT_FALSE(blames_a_peer(h.take_events())) << "a next hop that never resolves is not the peer's fault";
    for (uint32_t p = 0; p < 2; ++p)
        for (const auto& n : h.worker().proxy->stats().failures_by_peer[p]) EXPECT_EQ(n.get(), 0u);
    EXPECT_EQ(h.mbufs_in_use(), 0u);
}

}  // namespace
}  // namespace sbc::test
