// Unit tests of a worker's own view of unresolved next hops (dataplane/neighbour_hold.h): the
// MACs it learned from its senders, and the packets it holds while ARP runs — released in
// order once the hop resolves, dropped only when the hold is full or the hop stays unresolved.
#include <gtest/gtest.h>

#include <vector>

#include "dataplane/neighbour_hold.h"

using sbc::dataplane::basic_neighbour_hold;
using sbc::dataplane::held_kind;
using sbc::dataplane::hold_result;
using sbc::dataplane::learned_neighbours;
using sbc::dataplane::mac_addr;

namespace {
constexpr uint32_t ip4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
    return (uint32_t{a} << 24) | (uint32_t{b} << 16) | (uint32_t{c} << 8) | d;
}
sbc::ip_address hop4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) { return sbc::ip_address::v4(ip4(a, b, c, d)); }
sbc::ip_address hop6(uint8_t last)
{
    std::array<uint8_t, 16> b{0x20, 0x01, 0x0d, 0xb8};
    b[15] = last;
    return sbc::ip_address::v6(b);
}
mac_addr mac(uint8_t last) { return {0x02, 0, 0, 0, 0, last}; }

using hold = basic_neighbour_hold<int, 2, 3>;  // two hops, three packets each

struct sink {
    std::vector<int> sent, expired;
    std::vector<held_kind> kinds;
    std::vector<uint16_t> ports;
    const uint8_t* resolved = nullptr;
    uint64_t hold_ms = hold::max_hold_ms;
    uint32_t poll(hold& h, uint64_t now)
    {
        return h.poll(
            now, hold_ms, [&](const sbc::ip_address&, uint16_t) { return resolved; },
            [&](int p, uint16_t port, const uint8_t*) {
                sent.push_back(p);
                ports.push_back(port);
            },
            [&](int p, held_kind k) {
                expired.push_back(p);
                kinds.push_back(k);
            });
    }
};
}  // namespace

TEST(learned_neighbours, a_sender_is_found_on_its_interface_until_its_entry_ages_out)
{
    learned_neighbours l;
    const uint32_t caller = ip4(198, 18, 0, 2);
    EXPECT_EQ(l.find(caller, 0, 0), nullptr);
    l.learn(caller, 0, mac(2), 1000);
    ASSERT_NE(l.find(caller, 0, 1000), nullptr);
    EXPECT_EQ(*l.find(caller, 0, 1000), mac(2));
    EXPECT_EQ(l.find(caller, 1, 1000), nullptr) << "another interface: another neighbour";
    EXPECT_EQ(l.find(ip4(198, 18, 0, 3), 0, 1000), nullptr);
    EXPECT_NE(l.find(caller, 0, 1000 + learned_neighbours::ttl_ms), nullptr);
    EXPECT_EQ(l.find(caller, 0, 1001 + learned_neighbours::ttl_ms), nullptr) << "too old to trust";
    l.learn(caller, 0, mac(9), 2000);
    EXPECT_EQ(*l.find(caller, 0, 2000), mac(9)) << "a newer frame wins (the host changed its NIC)";
    l.learn(0, 0, mac(1), 2000);
    EXPECT_EQ(l.find(0, 0, 2000), nullptr) << "0.0.0.0 is never a neighbour";
}

TEST(learned_neighbours, an_ipv6_sender_is_found_by_its_whole_address)
{
    sbc::dataplane::learned_neighbours6 l;
    const auto caller = hop6(2).v6_bytes();
    EXPECT_EQ(l.find(caller, 0, 0), nullptr);
    l.learn(caller, 0, mac(2), 1000);
    ASSERT_NE(l.find(caller, 0, 1000), nullptr);
    EXPECT_EQ(*l.find(caller, 0, 1000), mac(2));
    EXPECT_EQ(l.find(hop6(3).v6_bytes(), 0, 1000), nullptr) << "another host of the same /64";
    EXPECT_EQ(l.find(caller, 1, 1000), nullptr);
    l.learn({}, 0, mac(1), 1000);
    EXPECT_EQ(l.find({}, 0, 1000), nullptr) << ":: is never a neighbour";
}

TEST(neighbour_hold, an_ipv6_hop_is_held_apart_from_an_ipv4_one)
{
    hold h;
    EXPECT_EQ(h.hold(hop6(2), 0, 0, 1, held_kind::sip, 0), hold_result::new_hop);
    EXPECT_EQ(h.hold(hop4(0, 0, 0, 2), 0, 0, 2, held_kind::sip, 0), hold_result::new_hop)
        << "the same last bits in another family are another hop";
    EXPECT_EQ(h.hold(hop6(2), 0, 0, 3, held_kind::sip, 0), hold_result::held);
    const mac_addr m = mac(3);
    std::vector<int> sent;
    h.poll(
        10, hold::max_hold_ms, [&](const sbc::ip_address& hop, uint16_t) { return hop.is_v6() ? m.data() : nullptr; },
        [&](int p, uint16_t, const uint8_t*) { sent.push_back(p); }, [](int, held_kind) {});
    EXPECT_EQ(sent, (std::vector<int>{1, 3}));
    EXPECT_EQ(h.held(), 1u);
}

TEST(neighbour_hold, packets_wait_for_their_hop_and_leave_in_order_once_it_resolves)
{
    hold h;
    sink s;
    const sbc::ip_address caller = hop4(198, 18, 0, 2);
    EXPECT_EQ(h.hold(caller, 0, 7, 1, held_kind::sip, 100), hold_result::new_hop) << "the first asks for ARP";
    EXPECT_EQ(h.hold(caller, 0, 7, 2, held_kind::media, 101), hold_result::held) << "later ones only wait";
    EXPECT_EQ(h.held(), 2u);
    EXPECT_EQ(s.poll(h, 150), 0u) << "unresolved and young: kept";
    EXPECT_TRUE(s.sent.empty());
    EXPECT_TRUE(s.expired.empty());
    const mac_addr m = mac(2);
    s.resolved = m.data();
    EXPECT_EQ(s.poll(h, 151), 2u);
    EXPECT_EQ(s.sent, (std::vector<int>{1, 2}));
    EXPECT_EQ(s.ports, (std::vector<uint16_t>{7, 7}));
    EXPECT_TRUE(s.expired.empty());
    EXPECT_EQ(h.held(), 0u);
    EXPECT_EQ(h.hold(caller, 0, 7, 3, held_kind::sip, 200), hold_result::new_hop) << "its slot is free again";
}

TEST(neighbour_hold, a_hop_that_never_resolves_is_dropped_after_the_hold_time_with_its_kinds)
{
    hold h;
    sink s;
    h.hold(hop4(198, 18, 9, 9), 0, 0, 1, held_kind::sip, 1000);
    h.hold(hop4(198, 18, 9, 9), 0, 0, 2, held_kind::media, 1500);
    s.hold_ms = 300;  // what the caller asks for
    EXPECT_EQ(s.poll(h, 1300), 0u) << "the hold time counts from the first packet";
    EXPECT_EQ(s.poll(h, 1301), 2u);
    EXPECT_EQ(s.expired, (std::vector<int>{1, 2}));
    EXPECT_EQ(s.kinds, (std::vector<held_kind>{held_kind::sip, held_kind::media}));
    EXPECT_TRUE(s.sent.empty());
    EXPECT_EQ(h.held(), 0u);
}

TEST(neighbour_hold, a_full_hop_or_a_full_table_refuses_instead_of_growing)
{
    hold h;
    const sbc::ip_address a = hop4(198, 18, 0, 2), b = hop4(198, 18, 0, 3), c = hop4(198, 18, 0, 4);
    for (int i = 0; i < 3; ++i) EXPECT_NE(h.hold(a, 0, 0, i, held_kind::sip, 0), hold_result::full);
    EXPECT_EQ(h.hold(a, 0, 0, 3, held_kind::sip, 0), hold_result::full) << "three per hop";
    EXPECT_EQ(h.hold(b, 0, 0, 4, held_kind::sip, 0), hold_result::new_hop);
    EXPECT_EQ(h.hold(c, 0, 0, 5, held_kind::sip, 0), hold_result::full) << "two hops at a time";
    EXPECT_EQ(h.hold(a, 1, 0, 6, held_kind::sip, 0), hold_result::full) << "the same address on another interface is another hop";
    EXPECT_EQ(h.held(), 4u);
}

TEST(neighbour_hold, hops_resolve_independently)
{
    hold h;
    const sbc::ip_address a = hop4(198, 18, 0, 2), b = hop4(198, 18, 0, 3);
    h.hold(a, 0, 0, 1, held_kind::sip, 0);
    h.hold(b, 0, 0, 2, held_kind::sip, 0);
    const mac_addr m = mac(3);
    std::vector<int> sent;
    h.poll(
        10, hold::max_hold_ms, [&](const sbc::ip_address& hop, uint16_t) { return hop == b ? m.data() : nullptr; },
        [&](int p, uint16_t, const uint8_t* got) {
            EXPECT_EQ(got, m.data());
            sent.push_back(p);
        },
        [&](int, held_kind) { ADD_FAILURE() << "nothing is old enough to expire"; });
    EXPECT_EQ(sent, std::vector<int>{2});
    EXPECT_EQ(h.held(), 1u) << "a's packet still waits";
}
