// SIP over UDP on IPv6 through the production dataplane (process_burst on the test thread over
// net_ring ports): a trunk listening on its interface's IPv4 and IPv6 addresses
// (198.18.0.1 and 2001:2:0:1::1, port 5060), two peers on the IPv6 link (2001:2:0:1::11 first,
// ::12), frames out checked independently (IPv6 header, the UDP checksum IPv6 makes mandatory,
// RFC 5118 references in brackets). A call enters on IPv6 or on IPv4 and leaves on IPv6; an
// ICMPv6 port unreachable fails the attempt over at once; a source outside the trunk's IPv6
// prefix gets nothing.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include <rte_cycles.h>

#include "dataplane/counters.h"
#include "dataplane/events.h"
#include "sip-fastpath/proxy.h"
#include "tests/eal/frame_builder.h"
#include "tests/eal/harness.h"

namespace sbc::test {
namespace {

namespace dp = sbc::dataplane;

constexpr uint16_t sip_port = 5060;
constexpr mac caller_mac{0x02, 0, 0, 0, 0, 0x10};
constexpr mac peer1_mac{0x02, 0, 0, 0, 0, 0x11};
constexpr mac peer2_mac{0x02, 0, 0, 0, 0, 0x12};
constexpr uint32_t caller4 = ipv4(198, 18, 0, 2);

const ip6 me = ipv6(our_ip6_text);
const ip6 caller = ipv6("2001:2:0:1::10");
const ip6 stranger = ipv6("2001:2:0:1::99");
const ip6 peer1 = ipv6("2001:2:0:1::11");
const ip6 peer2 = ipv6("2001:2:0:1::12");

std::shared_ptr<const sip::proxy_tables> tables()
{
    auto t = std::make_shared<sip::proxy_tables>();
    sip::trunk tr = access_trunk();
    tr.address6 = ip_address::v6(me);
    tr.allow.push_back(ip_prefix{ip_address::v6(caller), 128});  // the caller only, not its /64
    t->trunks.push_back(tr);
    for (uint32_t i = 0; i < 2; ++i) {
        sip::peer p;
        p.name = "r1/peer" + std::to_string(i + 1);
        p.id = i;
        p.address = ip_address::v6(i == 0 ? peer1 : peer2);
        p.port = sip_port;
        p.priority = static_cast<uint16_t>(i);
        p.weight = 10;
        t->peers.push_back(p);
    }
    t->index_peers();
    t->regions.push_back({"r1", {0, 1}});
    t->groups.push_back({"g1", {0}, sip::selector::srv});
    t->routes.push_back({"default", sip::match_field::ruri_user, ".*", 0});
    t->default_route = 0;
    t->retry.codes.set(503);
    return t;
}

bytes sip6_frame(const harness& h, const mac& l2src, const ip6& src, std::string_view text)
{
    const bytes payload(text.begin(), text.end());
    return ethernet({h.our_mac(), l2src, 0}, ethertype_ipv6,
                    ipv6_packet({src, me, proto_udp}, udp6_datagram(src, me, sip_port, sip_port, payload)));
}

/// A transmitted IPv6 UDP frame, decoded and checked independently of the dataplane.
struct sent6 {
    mac dst_mac{};
    ip6 src{}, dst{};
    uint8_t hop_limit = 0;
    bool udp_checksum_ok = false;
    bytes ip_packet;
    std::string text;
    [[nodiscard]] bool has(std::string_view s) const { return text.find(s) != std::string::npos; }
    [[nodiscard]] bool starts(std::string_view s) const { return text.rfind(s, 0) == 0; }
};

std::vector<sent6> decode6(const sent_frames& f)
{
    std::vector<sent6> out;
    for (auto* m : f.mbufs) {
        const bytes b = linear_bytes(m);
        if (b.size() < 14 + 48 || read16(b, 12) != ethertype_ipv6 || b[14 + 6] != proto_udp) {
            ADD_FAILURE() << "sent frame is not untagged IPv6 UDP";
            continue;
        }
        sent6 s;
        std::copy_n(b.begin(), 6, s.dst_mac.begin());
        const auto ip = std::span(b).subspan(14);
        EXPECT_EQ(read16(ip, 4) + 40u, ip.size()) << "payload length";
        s.hop_limit = ip[7];
        std::copy_n(ip.begin() + 8, 16, s.src.begin());
        std::copy_n(ip.begin() + 24, 16, s.dst.begin());
        const auto udp = ip.subspan(40);
        EXPECT_EQ(read16(udp, 4), udp.size()) << "UDP length";
        const bytes data(udp.begin() + 8, udp.end());
        const bytes expect = udp6_datagram(s.src, s.dst, read16(udp, 0), read16(udp, 2), data);
        s.udp_checksum_ok = read16(udp, 6) != 0 && read16(expect, 6) == read16(udp, 6);
        s.ip_packet.assign(ip.begin(), ip.end());
        s.text.assign(reinterpret_cast<const char*>(data.data()), data.size());
        out.push_back(std::move(s));
    }
    return out;
}

const sent6* to6(const std::vector<sent6>& v, const ip6& dst)
{
    const sent6* found = nullptr;
    int n = 0;
    for (const auto& s : v)
        if (s.dst == dst) {
            found = &s;
            ++n;
        }
    EXPECT_EQ(n, 1) << "messages to one address";
    return n == 1 ? found : nullptr;
}

std::string invite(std::string_view via_host, std::string_view from_host, std::string_view call_id)
{
    std::string s = "INVITE sip:+15551234@[2001:2:0:1::1] SIP/2.0\r\n";
    s += "Via: SIP/2.0/UDP " + std::string(via_host) + ":5060;branch=z9hG4bK-c1\r\n";
    s += "Max-Forwards: 70\r\n";
    s += "From: <sip:alice@" + std::string(from_host) + ">;tag=a1\r\n";
    s += "To: <sip:+15551234@[2001:2:0:1::1]>\r\n";
    s += "Call-ID: " + std::string(call_id) + "\r\n";
    s += "CSeq: 1 INVITE\r\n";
    s += "Contact: <sip:alice@" + std::string(from_host) + ":5060>\r\n";
    s += "Content-Length: 0\r\n\r\n";
    return s;
}

class sip_ipv6 : public ::testing::Test {
protected:
    void SetUp() override
    {
        h_ = std::make_unique<harness>(2047, 1);
        ASSERT_TRUE(h_->ok()) << h_->error();
        h_->set_proxy(tables());
        auto& n = h_->runtime().shared->neighbours;
        n.insert(ip_address::v6(caller), caller_mac, 1);
        n.insert(ip_address::v6(peer1), peer1_mac, 1);
        n.insert(ip_address::v6(peer2), peer2_mac, 1);
        n.insert(ip_address::v4(caller4), caller_mac, 1);
        h_->poll_worker(0);
    }
    std::unique_ptr<harness> h_;
};

TEST_F(sip_ipv6, a_call_over_ipv6_names_us_in_brackets_and_fails_over_on_icmpv6_unreachable)
{
    harness& h = *h_;
    ASSERT_TRUE(h.receive(sip6_frame(h, caller_mac, caller, invite("[2001:2:0:1::10]", "[2001:2:0:1::10]", "c6@x"))));
    h.poll();
    bytes quoted;
    {
        const sent_frames f = h.take_sent();
        const auto out = decode6(f);
        ASSERT_EQ(out.size(), 2u);
        const sent6* trying = to6(out, caller);
        ASSERT_NE(trying, nullptr);
        EXPECT_EQ(trying->dst_mac, caller_mac);
        EXPECT_EQ(trying->src, me);
        EXPECT_EQ(trying->hop_limit, 64);
        EXPECT_TRUE(trying->udp_checksum_ok);
        EXPECT_TRUE(trying->starts("SIP/2.0 100 ")) << trying->text;
        const sent6* fwd = to6(out, peer1);
        ASSERT_NE(fwd, nullptr);
        EXPECT_EQ(fwd->dst_mac, peer1_mac);
        EXPECT_TRUE(fwd->udp_checksum_ok);
        EXPECT_TRUE(fwd->starts("INVITE sip:+15551234@[2001:2:0:1::11]:5060 SIP/2.0\r\n")) << fwd->text;
        EXPECT_TRUE(fwd->has("Via: SIP/2.0/UDP [2001:2:0:1::1]:5060;branch=z9hG4bKsT00")) << fwd->text;
        EXPECT_TRUE(fwd->has("Record-Route: <sip:[2001:2:0:1::1]:5060;lr;w=00>\r\n")) << fwd->text;
        EXPECT_FALSE(fwd->has("Record-Route: <sip:198.18.0.1")) << "one leg family: one Record-Route";
        // Linux quotes the datagram up to 1,280 bytes of ICMPv6 in all.
        quoted = fwd->ip_packet;
    }
    h.take_events();
    // Nothing listens on the first peer: its host answers port unreachable.
    const bytes icmp = ethernet({h.our_mac(), peer1_mac, 0}, ethertype_ipv6,
                                ipv6_packet({peer1, me, proto_icmp6}, icmp6_message(peer1, me, 1, 4, [&] {
                                    bytes body{0, 0, 0, 0};
                                    body.insert(body.end(), quoted.begin(), quoted.end());
                                    return body;
                                }())));
    ASSERT_TRUE(h.receive(icmp));
    h.poll();
    {
        const sent_frames f = h.take_sent();
        const auto out = decode6(f);
        ASSERT_EQ(out.size(), 1u);
        const sent6* fwd = to6(out, peer2);
        ASSERT_NE(fwd, nullptr);
        EXPECT_TRUE(fwd->starts("INVITE sip:+15551234@[2001:2:0:1::12]:5060 ")) << fwd->text;
    }
    bool peer_failed = false;
    for (const auto& e : h.take_events())
        if (e.kind == dp::event_kind::peer_failed) peer_failed = e.peer_id == 0 && e.cause == sip::failure_cause::icmp;
    EXPECT_TRUE(peer_failed) << "the first peer is blamed for the ICMPv6 unreachable";
    EXPECT_EQ(h.worker().proxy->stats().get(sip::proxy_counter::retries_icmp), 1u);
    EXPECT_EQ(h.counters().drops_total(), 0u);
    EXPECT_EQ(h.mbufs_in_use(), 0u);
}

TEST_F(sip_ipv6, a_call_from_ipv4_leaves_on_ipv6_with_a_record_route_per_family)
{
    harness& h = *h_;
    const std::string inv = invite("198.18.0.2", "198.18.0.2", "c4@x");
    const bytes payload(inv.begin(), inv.end());
    ASSERT_TRUE(h.receive(ethernet({h.our_mac(), caller_mac, 0}, ethertype_ipv4,
                                   ipv4_packet({caller4, our_ip, proto_udp, 64, 0, 1, ip_flag_df},
                                               udp_datagram(caller4, our_ip, sip_port, sip_port, payload)))));
    h.poll();
    const sent_frames f = h.take_sent();
    ASSERT_EQ(f.size(), 2u) << "100 Trying over IPv4, the INVITE over IPv6";
    std::optional<sent6> fwd;
    for (auto* m : f.mbufs) {
        const bytes b = linear_bytes(m);
        if (read16(b, 12) != ethertype_ipv6) continue;
        sent_frames one;
        one.mbufs.push_back(m);
        fwd = decode6(one).at(0);
        one.mbufs.clear();
    }
    ASSERT_TRUE(fwd);
    EXPECT_EQ(fwd->src, me);
    EXPECT_EQ(fwd->dst, peer1);
    EXPECT_TRUE(fwd->udp_checksum_ok);
    EXPECT_TRUE(fwd->has("Via: SIP/2.0/UDP [2001:2:0:1::1]:5060;branch=z9hG4bKsT00")) << fwd->text;
    // RFC 5658: the top entry names us on the IPv6 leg, the second on the caller's IPv4 leg.
    EXPECT_TRUE(fwd->has("Record-Route: <sip:[2001:2:0:1::1]:5060;lr;w=00>\r\nRecord-Route: <sip:198.18.0.1:5060;lr;w=00>\r\n"))
        << fwd->text;
}

TEST_F(sip_ipv6, a_source_outside_the_trunks_ipv6_prefix_gets_nothing_and_is_counted)
{
    harness& h = *h_;
    ASSERT_TRUE(h.receive(sip6_frame(h, caller_mac, stranger, invite("[2001:2:0:1::99]", "[2001:2:0:1::99]", "s@x"))));
    h.poll();
    const sent_frames f = h.take_sent();
    EXPECT_EQ(f.size(), 0u) << "no answer, no call";
    EXPECT_EQ(h.worker().proxy->stats().get(sip::proxy_counter::source_denied), 1u) << "counted";
    EXPECT_EQ(h.worker().proxy->stats().get(sip::proxy_counter::invites), 0u);
    EXPECT_EQ(h.counters().stage_packets[static_cast<std::size_t>(dp::stage::udp6)], 1u);
    EXPECT_EQ(h.mbufs_in_use(), 0u);
}

/// The UDP datagram the IPv6 fragments to `dst` among `f` carry, each checked to fit `mtu`,
/// carry a fragment header right after the IPv6 header and continue where the last ended.
bytes reassemble6(const sent_frames& f, const ip6& dst, std::size_t mtu, std::size_t& fragments)
{
    bytes whole;
    fragments = 0;
    for (auto* m : f.mbufs) {
        const bytes b = linear_bytes(m);
        if (read16(b, 12) != ethertype_ipv6) continue;
        const auto ip = std::span(b).subspan(14);
        if (!std::equal(dst.begin(), dst.end(), ip.begin() + 24)) continue;
        EXPECT_LE(ip.size(), mtu);
        EXPECT_EQ(ip[6], 44) << "a fragment header";
        EXPECT_EQ(ip[40], proto_udp);
        EXPECT_EQ(read16(ip, 42) & 0xfff8u, whole.size()) << "in order, each where the last ended";
        whole.insert(whole.end(), ip.begin() + 48, ip.end());
        ++fragments;
    }
    return whole;
}

TEST_F(sip_ipv6, an_invite_over_the_path_mtu_leaves_in_ipv6_fragments_sbcd_writes_itself)
{
    harness& h = *h_;
    // 1,500 bytes as the caller sent it, more once our Via and Record-Route are in; and a
    // path MTU of 1,280 toward the peer (a Packet Too Big recorded it).
    std::string inv = invite("[2001:2:0:1::10]", "[2001:2:0:1::10]", "big@x");
    inv.insert(inv.find("\r\n") + 2, "X-Pad: " + std::string(1500 - 48 - inv.size() - 9, 'p') + "\r\n");
    ASSERT_TRUE(h.runtime().shared->path_mtu.record(ip_address::v6(peer1), 1280, 0));
    ASSERT_TRUE(h.receive(sip6_frame(h, caller_mac, caller, inv)));
    h.poll();
    const sent_frames f = h.take_sent();
    std::size_t n = 0;
    const bytes udp = reassemble6(f, peer1, 1280, n);
    EXPECT_EQ(n, 2u) << "two fragments of at most 1,280 bytes";
    ASSERT_GE(udp.size(), 8u);
    EXPECT_EQ(read16(udp, 4), udp.size()) << "the UDP length is the whole datagram's";
    const bytes data(udp.begin() + 8, udp.end());
    EXPECT_EQ(read16(udp6_datagram(me, peer1, sip_port, sip_port, data), 6), read16(udp, 6))
        << "the UDP checksum covers the whole datagram";
    const std::string text(data.begin(), data.end());
    EXPECT_NE(text.find("Via: SIP/2.0/UDP [2001:2:0:1::1]:5060;branch=z9hG4bKsT00"), std::string::npos) << text;
    EXPECT_EQ(h.counters().sip_fragments_sent, 2u);
    EXPECT_EQ(h.counters().drops_total(), 0u);
}

TEST_F(sip_ipv6, an_invite_toward_an_ipv6_hop_that_never_answers_solicitation_is_answered_503)
{
    harness& h = *h_;
    h.runtime().shared->neighbours.remove(ip_address::v6(peer1));
    h.take_events();
    ASSERT_TRUE(h.receive(sip6_frame(h, caller_mac, caller, invite("[2001:2:0:1::10]", "[2001:2:0:1::10]", "nd@x"))));
    h.poll();
    EXPECT_EQ(h.take_sent().size(), 1u) << "the 100 Trying; the INVITE waits for the peer's MAC";
    const auto events = h.take_events();
    EXPECT_TRUE(std::any_of(events.begin(), events.end(), [](const dp::event& e) {
        return e.kind == dp::event_kind::neighbour_needed && e.ip == ip_address::v6(peer1);
    })) << "the control core is asked to solicit the IPv6 hop";
    // Past the hold (half the 1000 ms no-response time), before the no-response timer.
    h.poll_worker(0, rte_rdtsc() + 600 * (rte_get_tsc_hz() / 1000));
    const sent_frames f = h.take_sent();
    const auto out = decode6(f);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dst, caller);
    EXPECT_TRUE(out[0].starts("SIP/2.0 503 ")) << out[0].text;
    EXPECT_EQ(h.worker().proxy->stats().get(sip::proxy_counter::send_failed_unresolved), 1u);
    EXPECT_EQ(h.mbufs_in_use(), 0u);
}

}  // namespace
}  // namespace sbc::test
