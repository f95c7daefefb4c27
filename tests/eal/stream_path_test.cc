// The dataplane's side of SIP over TCP and TLS on real mbufs, with the test playing the stream
// thread (dataplane/stream_ring.h): TCP for a trunk's TCP/TLS port from a source it allows, or
// from a peer, goes to the kernel ring untagged; anything else is dropped and counted before
// the kernel sees a SYN; a message framed on a connection comes in on the worker's stream ring,
// and the proxy's answer goes out on the stream ring to that very connection.
#include <cstring>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dataplane/sip_path.h"
#include "dataplane/stream_ring.h"
#include "tests/eal/frame_builder.h"
#include "tests/eal/harness.h"

namespace sbc::test {
namespace {

namespace dp = sbc::dataplane;

constexpr uint8_t proto_tcp = 6;
const mac sender{0x02, 0, 0, 0, 0, 0x10};

/// A TCP SYN (20-byte header, no options) from `sport` to `dport`.
bytes tcp_syn(uint16_t sport, uint16_t dport)
{
    bytes b(20, 0);
    write16(b, 0, sport);
    write16(b, 2, dport);
    b[12] = 5 << 4;
    b[13] = 0x02;  // SYN
    write16(b, 14, 65535);
    return b;
}

/// A trunk listening on TCP 5060 and TLS 5061 on each of our addresses, open to their /24s,
/// and one peer at 198.18.7.7 (TLS).
std::shared_ptr<sip::proxy_tables> stream_tables()
{
    auto t = std::make_shared<sip::proxy_tables>();
    sip::trunk tr = access_trunk();
    tr.tcp_port = 5060;
    tr.tls_port = 5061;
    t->trunks.push_back(tr);
    sip::trunk core = tr;
    core.name = "core";
    core.iface = vlan_iface;
    core.address = ip_address::v4(our_vlan_ip);
    core.allow = {ip_prefix{ip_address::v4(ipv4(198, 18, 100, 0)), 24}};
    t->trunks.push_back(core);
    sip::peer p;
    p.name = "tls-peer";
    p.address = ip_address::v4(ipv4(198, 18, 7, 7));
    p.port = 5061;
    p.proto = transport::tls;
    t->peers.push_back(p);
    t->regions.push_back({"r1", {0}});
    t->index_peers();
    return t;
}

std::vector<rte_mbuf*> take(rte_ring* r)
{
    std::vector<rte_mbuf*> out;
    void* m = nullptr;
    while (rte_ring_sc_dequeue(r, &m) == 0) out.push_back(static_cast<rte_mbuf*>(m));
    return out;
}

bytes first_bytes(const bytes& b, std::size_t n)
{
    return bytes(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
}

bytes frame_bytes(const rte_mbuf* m)
{
    const auto* p = rte_pktmbuf_mtod(m, const uint8_t*);
    return bytes(p, p + rte_pktmbuf_data_len(m));
}

TEST(eal_stream_path, tcp_from_allowed_sources_and_peers_goes_to_the_kernel_untagged_the_rest_is_dropped)
{
    harness h(2047, 1, true);
    ASSERT_TRUE(h.ok()) << h.error();
    h.set_proxy(stream_tables());
    const bytes allowed = ethernet({h.our_mac(), sender, 0}, ethertype_ipv4,
                                   ipv4_packet({peer_ip, our_ip, proto_tcp}, tcp_syn(40000, 5061)));
    const bytes tagged_ip = ipv4_packet({vlan_peer_ip, our_vlan_ip, proto_tcp}, tcp_syn(40001, 5060));
    const bytes tagged = ethernet({h.our_mac(), sender, our_vlan}, ethertype_ipv4, tagged_ip);
    const bytes from_peer = ethernet({h.our_mac(), sender, 0}, ethertype_ipv4,
                                     ipv4_packet({ipv4(198, 18, 7, 7), our_ip, proto_tcp}, tcp_syn(5061, 45000)));
    const bytes stranger = ethernet({h.our_mac(), sender, 0}, ethertype_ipv4,
                                    ipv4_packet({ipv4(198, 18, 9, 9), our_ip, proto_tcp}, tcp_syn(40002, 5060)));
    const bytes closed_port = ethernet({h.our_mac(), sender, 0}, ethertype_ipv4,
                                       ipv4_packet({peer_ip, our_ip, proto_tcp}, tcp_syn(40003, 80)));
    for (const bytes* f : {&allowed, &tagged, &from_peer, &stranger, &closed_port}) ASSERT_TRUE(h.receive(*f));
    h.poll();

    std::vector<rte_mbuf*> kernel = take(h.worker().kernel_out);
    ASSERT_EQ(kernel.size(), 3u) << "the allowed source, the allowed source on the VLAN, and the peer";
    EXPECT_EQ(frame_bytes(kernel[0]), allowed) << "an untagged frame goes as it came";
    const bytes untagged = ethernet({h.our_mac(), sender, 0}, ethertype_ipv4, tagged_ip);
    EXPECT_EQ(frame_bytes(kernel[1]), untagged) << "the kernel interface has no VLANs: the tag comes off";
    EXPECT_EQ(frame_bytes(kernel[2]), from_peer) << "a peer's segments (our connection to it) go too";
    for (rte_mbuf* m : kernel) rte_pktmbuf_free(m);
    const auto c = h.counters();
    EXPECT_EQ(c.drops[static_cast<std::size_t>(dp::drop_reason::tcp_not_allowed)], 2u)
        << "a source no trunk allows, and a port no trunk listens on, never reach the kernel";
    EXPECT_EQ(c.stage_packets[static_cast<std::size_t>(dp::stage::tcp)], 5u);
}

TEST(eal_stream_path, tcp_over_ipv6_past_its_extension_headers_goes_to_the_kernel_from_allowed_sources_only)
{
    harness h(2047, 1, true);
    ASSERT_TRUE(h.ok()) << h.error();
    const ip6 me = ipv6(our_ip6_text);
    const ip6 caller = ipv6("2001:2:0:1::10");
    auto t = stream_tables();
    t->trunks[0].address6 = ip_address::v6(me);
    t->trunks[0].allow.push_back(ip_prefix{ip_address::v6(caller), 128});
    h.set_proxy(t);
    const bytes plain = ethernet({h.our_mac(), sender, 0}, ethertype_ipv6,
                                 ipv6_packet({caller, me, proto_tcp}, tcp_syn(40000, 5061)));
    // A destination options header before TCP: the stage reads TCP where the walk ended.
    const bytes options = ethernet({h.our_mac(), sender, 0}, ethertype_ipv6,
                                   ipv6_packet({caller, me, 60}, ipv6_extension(proto_tcp, 8, tcp_syn(40001, 5060))));
    const bytes stranger = ethernet({h.our_mac(), sender, 0}, ethertype_ipv6,
                                    ipv6_packet({ipv6("2001:2:0:1::99"), me, proto_tcp}, tcp_syn(40002, 5060)));
    const bytes closed_port = ethernet({h.our_mac(), sender, 0}, ethertype_ipv6,
                                       ipv6_packet({caller, me, proto_tcp}, tcp_syn(40003, 80)));
    const bytes short_tcp = ethernet({h.our_mac(), sender, 0}, ethertype_ipv6,
                                     ipv6_packet({caller, me, proto_tcp}, first_bytes(tcp_syn(40004, 5060), 12)));
    for (const bytes* f : {&plain, &options, &stranger, &closed_port, &short_tcp}) ASSERT_TRUE(h.receive(*f));
    h.poll();

    std::vector<rte_mbuf*> kernel = take(h.worker().kernel_out);
    ASSERT_EQ(kernel.size(), 2u) << "the allowed source's two SYNs, one behind a destination options header";
    EXPECT_EQ(frame_bytes(kernel[0]), plain);
    EXPECT_EQ(frame_bytes(kernel[1]), options) << "the kernel gets the extension headers as they came";
    for (rte_mbuf* m : kernel) rte_pktmbuf_free(m);
    const auto c = h.counters();
    EXPECT_EQ(c.drops[static_cast<std::size_t>(dp::drop_reason::tcp_not_allowed)], 2u)
        << "a source outside the trunk's IPv6 allow, and a port no trunk listens on, never reach the kernel";
    EXPECT_EQ(c.drops[static_cast<std::size_t>(dp::drop_reason::tcp_truncated)], 1u);
    EXPECT_EQ(c.drops[static_cast<std::size_t>(dp::drop_reason::ipv6_protocol_unsupported)], 0u);
    EXPECT_EQ(c.stage_packets[static_cast<std::size_t>(dp::stage::tcp)], 5u);
}

TEST(eal_stream_path, a_message_on_a_connection_is_answered_on_that_connection)
{
    harness h(2047, 1, true);
    ASSERT_TRUE(h.ok()) << h.error();
    h.set_proxy(stream_tables());
    dp::worker& w = h.worker();
    // What the stream thread does with a framed message: the bytes as the mbuf's data, the
    // decoded input in its headroom, onto the worker's stream ring.
    const std::string options =
        "OPTIONS sip:198.18.0.1:5061 SIP/2.0\r\n"
        "Via: SIP/2.0/TLS 198.18.0.10:40000;branch=z9hG4bK-stream-1\r\n"
        "From: <sip:probe@198.18.0.10>;tag=1\r\nTo: <sip:198.18.0.1>\r\nCall-ID: stream-1\r\n"
        "CSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n";
    rte_mbuf* m = rte_pktmbuf_alloc(w.stream_pool);
    ASSERT_NE(m, nullptr);
    std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(options.size())), options.data(), options.size());
    auto* in = new (dp::handoff_of(m)) dp::sip_handoff{};
    in->src = endpoint{ip_address::v4(peer_ip), 40000, transport::tls, 0x10007};
    in->local = endpoint{ip_address::v4(our_ip), 5061, transport::tls, 0x10007};
    in->len = static_cast<uint32_t>(options.size());
    in->trunk = 0;
    ASSERT_EQ(rte_ring_sp_enqueue(w.stream_in, m), 0);
    h.poll_worker();

    std::vector<rte_mbuf*> out = take(w.stream_out);
    ASSERT_EQ(out.size(), 1u) << "the answer goes to the stream thread, not onto the wire";
    const dp::stream_send* hdr = dp::stream_send_of(out[0]);
    EXPECT_EQ(hdr->dst.conn, 0x10007u) << "on the connection the request came on (RFC 3261 §18.2.2)";
    EXPECT_EQ(hdr->dst.proto, transport::tls);
    EXPECT_EQ(hdr->dst.addr, ip_address::v4(peer_ip));
    EXPECT_EQ(hdr->src.port, 5061);
    const std::string_view answer{rte_pktmbuf_mtod(out[0], const char*), rte_pktmbuf_data_len(out[0])};
    EXPECT_EQ(hdr->len, answer.size());
    EXPECT_EQ(answer.substr(0, 15), "SIP/2.0 200 OK\r");
    EXPECT_NE(answer.find("Via: SIP/2.0/TLS 198.18.0.10:40000;branch=z9hG4bK-stream-1"), std::string_view::npos);
    rte_pktmbuf_free(out[0]);
    EXPECT_EQ(h.take_sent().size(), 0u) << "nothing went out as a datagram";
}

}  // namespace
}  // namespace sbc::test
