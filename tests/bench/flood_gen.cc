// The flood benchmark's traffic generator (see flood_gen.h). Main lcore only.
#include "flood_gen.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

namespace sbc::bench::flood {

namespace {

constexpr std::string_view sdp =
    "v=0\r\no=- 1 1 IN IP4 198.18.0.2\r\ns=-\r\nc=IN IP4 198.18.0.2\r\nt=0 0\r\n"
    "m=audio 40000 RTP/AVP 0 8 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:8 PCMA/8000\r\n"
    "a=rtpmap:101 telephone-event/8000\r\na=sendrecv\r\n";
constexpr std::string_view hex_digits = "0123456789abcdef";

/// The source MAC of a frame from `src`: its own on the subnet, the router's for the others.
void mac_of(uint32_t src, uint8_t* mac)
{
    const uint8_t host = (src & 0xffffff00u) == (sbc_ip & 0xffffff00u) ? static_cast<uint8_t>(src & 0xff) : 0xfe;
    const uint8_t m[6] = {0x02, 0, 0, 0, 0, host};
    std::memcpy(mac, m, 6);
}

/// Ethernet, IPv4 and UDP headers (UDP checksum 0) and `payload` at `p`; returns the length.
std::size_t write_frame(uint8_t* p, const uint8_t* sbc_mac, uint32_t src, uint16_t dport, uint16_t ip_id,
                        std::string_view payload)
{
    std::memcpy(p, sbc_mac, 6);
    mac_of(src, p + 6);
    auto* eth = reinterpret_cast<rte_ether_hdr*>(p);
    eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
    auto* ip = reinterpret_cast<rte_ipv4_hdr*>(eth + 1);
    ip->version_ihl = RTE_IPV4_VHL_DEF;
    ip->type_of_service = 0;
    ip->total_length = rte_cpu_to_be_16(static_cast<uint16_t>(28 + payload.size()));
    ip->packet_id = rte_cpu_to_be_16(ip_id);
    ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
    ip->time_to_live = 64;
    ip->next_proto_id = IPPROTO_UDP;
    ip->hdr_checksum = 0;
    ip->src_addr = rte_cpu_to_be_32(src);
    ip->dst_addr = rte_cpu_to_be_32(sbc_ip);
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
    udp->src_port = rte_cpu_to_be_16(5060);
    udp->dst_port = rte_cpu_to_be_16(dport);
    udp->dgram_len = rte_cpu_to_be_16(static_cast<uint16_t>(8 + payload.size()));
    udp->dgram_cksum = 0;
    std::memcpy(udp + 1, payload.data(), payload.size());
    return 42 + payload.size();
}

void put_hex(char* p, uint32_t v)
{
    for (int i = 7; i >= 0; --i) *p++ = hex_digits[(v >> (i * 4)) & 15];
}

uint32_t get_hex(std::string_view s)
{
    uint32_t v = 0;
    for (char c : s.substr(0, 8)) v = v << 4 | static_cast<uint32_t>(c <= '9' ? c - '0' : c - 'a' + 10);
    return v;
}

unsigned status_of(std::string_view msg)
{
    if (msg.size() < 12 || !msg.starts_with("SIP/2.0 ")) return 0;
    const unsigned c = static_cast<unsigned>((msg[8] - '0') * 100 + (msg[9] - '0') * 10 + (msg[10] - '0'));
    return c < 700 ? c : 0;
}

}  // namespace

generator::generator(const generator_options& o) : o_(o)
{
    calls_.assign(o_.max_calls, call_state::unused);
    started_at_.assign(o_.max_calls, 0);
    out_.reserve(4096);
    for (std::size_t k = 0; k < kind_count; ++k)
        if (o_.kinds[k]) turn_.push_back(static_cast<kind>(k));
    build_templates();
}

void generator::build_templates()
{
    uint8_t buf[2048];
    auto make = [&](uint32_t src, uint16_t dport, const std::string& payload,
                    std::initializer_list<std::string_view> marks) {
        tmpl t;
        const std::size_t n = write_frame(buf, o_.sbc_mac, src, dport, 0, payload);
        t.bytes.assign(buf, buf + n);
        for (std::string_view mk : marks) {
            const std::size_t at = payload.find(mk);
            t.patch[t.patches++] = static_cast<uint16_t>(42 + at + mk.size() - 8);
        }
        return t;
    };
    // (a) what svmap sends: OPTIONS to the SIP port; the Via branch is unique per frame.
    unknown_ = make(unknown_base, trusted_port,
                    "OPTIONS sip:100@198.18.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 198.19.0.1:5060;branch=z9hG4bK-u00000000\r\n"
                    "Max-Forwards: 70\r\nFrom: <sip:100@198.19.0.1>;tag=u1\r\nTo: <sip:100@198.18.0.1>\r\n"
                    "Call-ID: 1@198.19.0.1\r\nCSeq: 1 OPTIONS\r\nContact: <sip:100@198.19.0.1:5060>\r\n"
                    "Accept: application/sdp\r\nContent-Length: 0\r\n\r\n",
                    {"z9hG4bK-u00000000"});
    // (b) a new call per frame: branch, From tag and Call-ID unique; (d) the same INVITE from
    // forged sources the untrusted trunk allows (the source is set per frame).
    const auto flood_invite = [&](uint32_t src, const std::string& host) {
        return make(src, untrusted_port,
                    "INVITE sip:bob@198.18.0.1:5062 SIP/2.0\r\nVia: SIP/2.0/UDP " + host +
                        ":5060;branch=z9hG4bK-f00000000\r\nMax-Forwards: 70\r\nFrom: <sip:mallory@" + host +
                        ">;tag=f00000000\r\nTo: <sip:bob@198.18.0.1>\r\nCall-ID: 00000000@flood.bench\r\n"
                        "CSeq: 1 INVITE\r\nContact: <sip:mallory@" + host + ":5060>\r\nContent-Length: 0\r\n\r\n",
                    {"branch=z9hG4bK-f00000000", "tag=f00000000", "Call-ID: 00000000"});
    };
    invite_ = flood_invite(untrusted_ip, "198.18.0.3");
    spoofed_ = flood_invite(spoofed_base, "198.18.128.0");
    // The floor: a 64-byte frame (60 without the CRC) of the local experimental EtherType.
    floor_.bytes.assign(60, 0);
    std::memcpy(floor_.bytes.data(), o_.sbc_mac, 6);
    mac_of(unknown_base, floor_.bytes.data() + 6);
    floor_.bytes[12] = 0x88;
    floor_.bytes[13] = 0xb5;
    // (c) malformed: junk after a request line; no From, To, Call-ID, CSeq; a start line that is
    // not SIP; a Content-Length beyond the datagram.
    std::string junk = "INVITE sip:bob@198.18.0.1:5062 SIP/2.0\r\n";
    for (int i = 0; i < 160; ++i) junk.push_back(static_cast<char>(i % 3 == 0 ? 0xff : 0x01 + i % 120));
    malformed_.push_back(make(untrusted_ip, untrusted_port, junk, {}));
    malformed_.push_back(make(untrusted_ip, untrusted_port,
                              "INVITE sip:bob@198.18.0.1:5062 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.0.3:5060;branch=z9hG4bK-m1\r\n"
                              "Max-Forwards: 70\r\nContent-Length: 0\r\n\r\n",
                              {}));
    malformed_.push_back(make(untrusted_ip, untrusted_port,
                              "GET / HTTP/1.1\r\nHost: 198.18.0.1\r\nUser-Agent: x\r\n\r\n", {}));
    malformed_.push_back(make(untrusted_ip, untrusted_port,
                              "INVITE sip:bob@198.18.0.1:5062 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.0.3:5060;branch=z9hG4bK-m3\r\n"
                              "Max-Forwards: 70\r\nFrom: <sip:m@198.18.0.3>;tag=m3\r\nTo: <sip:bob@198.18.0.1>\r\n"
                              "Call-ID: m3@flood.bench\r\nCSeq: 1 INVITE\r\nContent-Length: 9999\r\n\r\nv=0\r\n",
                              {}));
}

void generator::send(uint32_t src, uint16_t dport, std::string_view payload)
{
    rte_mbuf* m = rte_pktmbuf_alloc(o_.pool);
    if (m == nullptr) {
        ++no_mbuf_;
        return;
    }
    char* p = rte_pktmbuf_append(m, static_cast<uint16_t>(42 + payload.size()));
    if (p == nullptr) {
        rte_pktmbuf_free(m);
        ++unexpected_;
        return;
    }
    write_frame(reinterpret_cast<uint8_t*>(p), o_.sbc_mac, src, dport, ip_id_++, payload);
    out_.push_back(m);
}

void generator::invite(uint32_t id)
{
    char b[1024];
    int n = std::snprintf(b, sizeof b,
                          "INVITE sip:bob@198.18.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-i%08x\r\n"
                          "Max-Forwards: 70\r\nFrom: <sip:alice@198.18.0.2>;tag=f%08x\r\nTo: <sip:bob@198.18.0.1>\r\n"
                          "Call-ID: %08x@legit.bench\r\nCSeq: 1 INVITE\r\nContact: <sip:alice@198.18.0.2:5060>\r\n"
                          "Content-Type: application/sdp\r\nContent-Length: %zu\r\n\r\n%.*s",
                          id, id, id, sdp.size(), static_cast<int>(sdp.size()), sdp.data());
    send(caller_ip, trusted_port, {b, static_cast<std::size_t>(n)});
}

void generator::in_dialog(uint32_t id, std::string_view method, unsigned cseq)
{
    char b[1024];
    const int ml = static_cast<int>(method.size());
    int n = std::snprintf(b, sizeof b,
                          "%.*s sip:bob@198.18.0.11:5060 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-%.*s%08x\r\n"
                          "Route: <sip:198.18.0.1:5060;lr;w=00>\r\nMax-Forwards: 70\r\nFrom: <sip:alice@198.18.0.2>;tag=f%08x\r\n"
                          "To: <sip:bob@198.18.0.1>;tag=t%08x\r\nCall-ID: %08x@legit.bench\r\nCSeq: %u %.*s\r\n"
                          "Content-Length: 0\r\n\r\n",
                          ml, method.data(), ml, method.data(), id, id, id, id, cseq, ml, method.data());
    send(caller_ip, trusted_port, {b, static_cast<std::size_t>(n)});
}

/// The callee's response to `req`: its Via (and Record-Route with `tag`), From, To (with our
/// tag `t<call number>` with `tag`), Call-ID, CSeq.
void generator::respond(std::string_view req, std::string_view status, bool tag, bool body)
{
    std::string t;
    t.reserve(1024);
    t.append("SIP/2.0 ").append(status).append("\r\n");
    std::size_t pos = req.find("\r\n") + 2;
    while (pos < req.size()) {
        const std::size_t e = req.find("\r\n", pos);
        if (e == std::string_view::npos || e == pos) break;
        const std::string_view line = req.substr(pos, e - pos);
        if (line.starts_with("Via:") || (tag && line.starts_with("Record-Route:")) || line.starts_with("From:") ||
            line.starts_with("Call-ID:") || line.starts_with("CSeq:")) {
            t.append(line).append("\r\n");
        } else if (line.starts_with("To:")) {
            t.append(line);
            if (tag && line.find(";tag=") == std::string_view::npos) {
                const std::size_t ci = req.find("Call-ID: ");
                t.append(";tag=t").append(ci != std::string_view::npos ? req.substr(ci + 9, 8) : "0");
            }
            t.append("\r\n");
        }
        pos = e + 2;
    }
    if (tag) t.append("Contact: <sip:bob@198.18.0.11:5060>\r\n");
    if (body) {
        t.append("Content-Type: application/sdp\r\nContent-Length: ").append(std::to_string(sdp.size()));
        t.append("\r\n\r\n").append(sdp);
    } else {
        t.append("Content-Length: 0\r\n\r\n");
    }
    send(callee_ip, trusted_port, t);
}

void generator::fail(uint32_t id, unsigned code)
{
    calls_[id] = call_state::failed;
    ++failed_;
    ++failed_codes_[code];
}

void generator::on_caller(std::string_view msg)
{
    const unsigned code = status_of(msg);
    const std::size_t ci = msg.find("Call-ID: ");
    if (code == 0 || ci == std::string_view::npos || msg.substr(ci + 17, 12) != "@legit.bench") {
        if (unexpected_++ < 3) std::printf("unexpected to caller: %.*s\n", 60, msg.data());
        return;
    }
    const uint32_t id = get_hex(msg.substr(ci + 9, 8));
    if (id >= started_) {
        ++unexpected_;
        return;
    }
    const call_state s = calls_[id];
    if (code < 200) return;
    const std::size_t cs = msg.find("CSeq: ");
    const bool bye = cs != std::string_view::npos && msg.substr(cs + 6, 5) == "2 BYE";
    if (code >= 300) {
        if (s == call_state::inviting || s == call_state::established) fail(id, code);
        return;
    }
    if (!bye && s == call_state::inviting) {
        calls_[id] = call_state::established;
        in_dialog(id, "ACK", 1);
        in_dialog(id, "BYE", 2);
    } else if (bye && s == call_state::established) {
        calls_[id] = call_state::ok;
        ++ok_;
    }
}

void generator::on_sent(rte_mbuf* m)
{
    const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, 14);
    const auto* udp = reinterpret_cast<const rte_udp_hdr*>(ip + 1);
    const uint32_t dst = rte_be_to_cpu_32(ip->dst_addr);
    const std::string_view msg(reinterpret_cast<const char*>(udp + 1),
                               ip->next_proto_id == IPPROTO_UDP ? rte_be_to_cpu_16(udp->dgram_len) - 8u : 0u);
    if (dst == callee_ip) {
        if (msg.starts_with("INVITE ")) {
            if (msg.find("@flood.bench") != std::string_view::npos) {
                ++callee_flood_invites_;
                respond(msg, "486 Busy Here", true, false);
            } else {
                respond(msg, "100 Trying", false, false);
                respond(msg, "180 Ringing", true, false);
                respond(msg, "200 OK", true, true);
            }
        } else if (msg.starts_with("BYE ")) {
            respond(msg, "200 OK", false, false);
        } else if (!msg.starts_with("ACK ")) {
            if (unexpected_++ < 3) std::printf("unexpected to callee: %.*s\n", 60, msg.data());
        }
    } else if (dst == caller_ip) {
        on_caller(msg);
    } else if (dst == untrusted_ip) {
        ++untrusted_answers_[status_of(msg)];
    } else if ((dst & 0xffff0000u) == unknown_base) {
        ++unknown_answers_;
    } else {
        ++unexpected_;
    }
    rte_pktmbuf_free(m);
}

void generator::expire(uint64_t now)
{
    while (oldest_open_ < started_) {
        const call_state s = calls_[oldest_open_];
        if (s == call_state::ok || s == call_state::failed) {
            ++oldest_open_;
        } else if (now - started_at_[oldest_open_] > o_.call_timeout_tsc) {
            fail(static_cast<uint32_t>(oldest_open_), 0);
            ++timeouts_;
            ++oldest_open_;
        } else {
            break;
        }
    }
}

unsigned generator::rx_backlog() const { return rte_ring_count(o_.to_worker); }

kind generator::write_flood(rte_mbuf* m)
{
    const kind k = turn_[next_turn_];
    next_turn_ = next_turn_ + 1 == turn_.size() ? 0 : next_turn_ + 1;
    const uint64_t seq = flood_seq_++;
    const tmpl& t = k == kind::unknown   ? unknown_
                    : k == kind::invite  ? invite_
                    : k == kind::spoofed ? spoofed_
                    : k == kind::floor || k == kind::forward || k == kind::forward_nic
                        ? floor_
                        : malformed_[seq % malformed_.size()];
    auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(t.bytes.size())));
    std::memcpy(p, t.bytes.data(), t.bytes.size());
    for (uint8_t j = 0; j < t.patches; ++j)
        put_hex(reinterpret_cast<char*>(p + t.patch[j]), static_cast<uint32_t>(seq));
    if (k == kind::unknown || k == kind::spoofed) {
        auto* ip = reinterpret_cast<rte_ipv4_hdr*>(p + 14);
        ip->src_addr =
            rte_cpu_to_be_32(k == kind::unknown ? unknown_base + static_cast<uint32_t>(seq % o_.unknown_sources)
                                                : spoofed_base + static_cast<uint32_t>(seq % spoofed_sources));
        ip->hdr_checksum = 0;
        ip->hdr_checksum = rte_ipv4_cksum(ip);
    }
    return k;
}

std::size_t generator::longest_flood() const
{
    std::size_t n = std::max({unknown_.bytes.size(), invite_.bytes.size(), spoofed_.bytes.size(), floor_.bytes.size()});
    for (const tmpl& t : malformed_) n = std::max(n, t.bytes.size());
    return n;
}

void generator::offer_flood()
{
    if (turn_.empty()) return;
    const unsigned queued = rte_ring_count(o_.to_worker);
    if (queued >= o_.backlog) return;
    std::array<rte_mbuf*, 64> pkts;
    const unsigned n = std::min<unsigned>(64, o_.backlog - queued);
    if (rte_pktmbuf_alloc_bulk(o_.pool, pkts.data(), n) != 0) {
        ++no_mbuf_;
        return;
    }
    std::array<kind, 64> kinds;
    for (unsigned i = 0; i < n; ++i) kinds[i] = write_flood(pkts[i]);
    // The ring is larger than `backlog`, so all fit; never count what was not sent all the same.
    const unsigned sent = rte_ring_sp_enqueue_burst(o_.to_worker, reinterpret_cast<void**>(pkts.data()), n, nullptr);
    if (sent < n) rte_pktmbuf_free_bulk(pkts.data() + sent, n - sent);
    std::array<uint64_t, kind_count> made{};
    for (unsigned i = 0; i < sent; ++i) ++made[static_cast<std::size_t>(kinds[i])];
    for (std::size_t k = 0; k < kind_count; ++k) offered_[k] += made[k];
}

void generator::round(uint64_t now, uint64_t legit_due, bool flood)
{
    std::array<rte_mbuf*, 64> pkts;
    for (int k = 0; k < 16; ++k) {
        const unsigned n = rte_ring_sc_dequeue_burst(o_.from_worker, reinterpret_cast<void**>(pkts.data()), 64, nullptr);
        std::array<rte_mbuf*, 64> forwarded;
        unsigned nf = 0;
        for (unsigned i = 0; i < n; ++i) {
            if (rte_pktmbuf_mtod(pkts[i], const rte_ether_hdr*)->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
                on_sent(pkts[i]);
            else
                forwarded[nf++] = pkts[i];
        }
        unsigned handed = 0;
        if (nf != 0 && o_.completions != nullptr)
            handed = rte_ring_sp_enqueue_burst(o_.completions, reinterpret_cast<void**>(forwarded.data()), nf, nullptr);
        if (nf != handed) rte_pktmbuf_free_bulk(forwarded.data() + handed, nf - handed);
        returned_ += nf;
        if (n < 64) break;
    }
    std::array<dataplane::event, 64> ev;
    for (unsigned n = 64; n == 64;) {
        n = rte_ring_sc_dequeue_burst_elem(o_.events, ev.data(), sizeof(dataplane::event), 64, nullptr);
        if (o_.on_event != nullptr)
            for (unsigned i = 0; i < n; ++i) o_.on_event(ev[i], o_.event_ctx);
    }
    while (started_ < legit_due && started_ < calls_.size() && out_.size() < 2048) {
        calls_[started_] = call_state::inviting;
        started_at_[started_] = now;
        invite(static_cast<uint32_t>(started_));
        ++started_;
    }
    if (!out_.empty()) {
        const unsigned sent = rte_ring_sp_enqueue_burst(o_.to_worker, reinterpret_cast<void**>(out_.data()),
                                                        static_cast<unsigned>(out_.size()), nullptr);
        out_.erase(out_.begin(), out_.begin() + sent);
    }
    if (flood) offer_flood();
    expire(now);
}

}  // namespace sbc::bench::flood
