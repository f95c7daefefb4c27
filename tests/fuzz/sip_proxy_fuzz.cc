// libFuzzer target: the stateful proxy of one worker fed arbitrary datagrams from a caller
// and from peers, ICMP quotes and clock jumps. Checks that nothing crashes, that every
// datagram the proxy emits fits its buffer and parses as SIP, that no call setup is ever left
// without a timer (proxy::setups_unarmed: one would never be freed), and, for one input in 8
// (by a hash of its bytes), that once every timer has run out no call setup is left behind.
// Each input starts from a fresh proxy's state (proxy::reset, the tables kept), so that an
// input that fails, fails alone.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "sip-fastpath/proxy.h"
#include "sip-fastpath/sip_message.h"

using namespace sbc::sip;
using sbc::endpoint;
using sbc::ip_address;
using sbc::ip_prefix;

namespace {

std::shared_ptr<proxy_tables> tables()
{
    auto t = std::make_shared<proxy_tables>();
    trunk tr;
    tr.name = "core";
    tr.address = ip_address::v4(0xC6120001);
    tr.port = 5060;
    tr.allow = {ip_prefix{ip_address::v4(0xC6120000), 16}};
    t->trunks.push_back(tr);
    t->regions.resize(2);
    for (uint32_t i = 0; i < 4; ++i) {
        peer p;
        p.id = i;
        p.address = ip_address::v4(0xC6120100 + i);
        p.port = 5060;
        p.priority = static_cast<uint16_t>(10 + i);
        p.weight = 10;
        p.region = static_cast<uint16_t>(i / 2);
        t->regions[i / 2].peers.push_back(i);
        t->peers.push_back(p);
    }
    t->index_peers();
    peer_group g;
    g.regions = {0, 1};
    t->groups.push_back(g);
    t->routes.push_back(route{});
    t->default_route = 0;
    for (uint16_t c : {408, 503, 504}) t->retry.codes.set(c);
    t->retry.max_attempts = 4;
    return t;
}

struct state {
    std::shared_ptr<proxy_tables> t = tables();
    std::unique_ptr<peer_health> h = std::make_unique<peer_health>();
    std::unique_ptr<proxy> px = std::make_unique<proxy>(0, 64, 64, 1);
    std::unique_ptr<outbox> out = std::make_unique<outbox>();
    std::unique_ptr<message> check = std::make_unique<message>();
    uint64_t now = 1000;
};

void drain(state& s)
{
    for (uint32_t i = 0; i < s.out->n; ++i) {
        const out_message& d = s.out->msgs[i];
        if (d.len == 0 || d.len > max_out_size) std::abort();
        parse(std::string_view(d.data.data(), d.len), *s.check);
        if (s.check->kind == message_kind::invalid) std::abort();  // we only ever send SIP
    }
    s.out->clear();
}

void check_timers(const state& s)
{
    if (s.px->setups_unarmed() != 0) std::abort();
}

/// FNV-1a of the input: picks the inputs whose timers are run out, the same on every run.
uint32_t hash_of(const uint8_t* data, std::size_t size)
{
    uint32_t h = 2166136261u;
    for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619u;
    return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    static state s;
    s.px->reset();
    s.now = 1000;
    for (int i = 0; i < 4; ++i) s.h->word[i].store(0);  // the peers op 4 sets
    // Input: records of [op:1][len:2][bytes], op picks the source and what happens.
    std::size_t i = 0;
    while (i + 3 <= size) {
        const uint8_t op = data[i];
        const std::size_t len = std::min<std::size_t>(size - i - 3, (std::size_t{data[i + 1]} << 8) | data[i + 2]);
        const std::string_view payload(reinterpret_cast<const char*>(data + i + 3), len);
        i += 3 + len;
        s.now += op & 0x0f;
        switch (op >> 5) {
        case 0:
        case 1:
        case 2: {  // from the caller, or from peer 0..3
            const uint32_t from = (op >> 5) == 0 ? 0xC6120002 : 0xC6120100 + (op & 3);
            const sip_input in{payload, endpoint::udp4(from, 5060), endpoint::udp4(0xC6120001, 5060), 0, s.now};
            s.px->on_input(*s.t, *s.h, in, *s.out);
            break;
        }
        case 3: s.px->on_icmp_unreachable(*s.t, *s.h, payload, endpoint::udp4(0xC6120100u + (op & 3), 5060), s.now, *s.out); break;
        case 4: s.h->word[op & 3].store(op & 7); break;
        default: s.now += 1000u * (op & 0x1f); break;
        }
        drain(s);
        s.px->on_tick(*s.t, *s.h, s.now, *s.out);
        drain(s);
        check_timers(s);
    }
    if (hash_of(data, size) % 8 != 0) return 0;
    // Let every timer run out: no setup may survive (a leak would fill the table). The
    // longest is Timer C, 180 s of ringing; on_tick advances the wheel at most 64 ms a call,
    // as a worker calling it every loop does.
    for (int k = 0; k < 4000 && s.px->stats().setups_active.get() != 0; ++k) {
        s.now += 50;
        s.px->on_tick(*s.t, *s.h, s.now, *s.out);
        drain(s);
    }
    if (s.px->stats().setups_active.get() != 0) std::abort();
    return 0;
}
