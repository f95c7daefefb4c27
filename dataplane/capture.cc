// The worker's side of SIP capture (see capture.h). Worker only: no heap, locks, system calls
// or logging.
#include "dataplane/capture.h"

#include <array>
#include <cstring>

#include <rte_cycles.h>
#include <rte_ip.h>
#include <rte_ring.h>
#include <rte_udp.h>

namespace sbc::dataplane {

namespace {

/// Per worker, indexed by its id; only that worker touches its entry.
struct alignas(64) capture_worker_state {
    bool input_matched = false;  ///< the input being handled was selected: so is what it produces
    sip::message out;            ///< an outgoing message parsed to be matched on its own
};
std::array<capture_worker_state, max_workers> states;

void enqueue(worker& w, rte_mbuf* c) noexcept
{
    capture_meta_of(c)->tsc = rte_rdtsc();
    if (rte_ring_sp_enqueue(w.capture_out, c) != 0) {
        rte_pktmbuf_free(c);
        w.capture_stats.ring_full.bump();
        return;
    }
    w.capture_stats.copied.bump();
}

/// Whether the ring to the capture thread has room; a full one is counted as a drop without
/// copying anything (the capture thread is behind: a copy now would only be freed again).
bool room(worker& w) noexcept
{
    if (rte_ring_full(w.capture_out) == 0) return true;
    w.capture_stats.ring_full.bump();
    return false;
}

/// Makes the IPv4 header at `l2` of the copy `c` describe one whole packet of c's length, with
/// its checksum: a datagram DPDK reassembled has its length and fragment fields fixed but keeps
/// the first fragment's header checksum; one we fragment is copied from its first fragment.
void whole_ipv4(rte_mbuf* c, uint32_t l2, bool dont_fragment) noexcept
{
    auto* ip = rte_pktmbuf_mtod_offset(c, rte_ipv4_hdr*, l2);
    const auto len = static_cast<uint16_t>(rte_pktmbuf_pkt_len(c) - l2);
    const uint16_t frag = dont_fragment ? RTE_IPV4_HDR_DF_FLAG : 0;
    ip->total_length = rte_cpu_to_be_16(len);
    ip->fragment_offset = rte_cpu_to_be_16(frag);
    ip->hdr_checksum = 0;
    ip->hdr_checksum = rte_ipv4_cksum(ip);
}

/// Appends `len` bytes to the chain `head` (last segment `last`), taking segments from `pool`.
bool append(rte_mbuf* head, rte_mbuf*& last, rte_mempool* pool, const char* data, uint32_t len) noexcept
{
    while (len != 0) {
        uint32_t room = rte_pktmbuf_tailroom(last);
        if (room == 0) {
            rte_mbuf* s = rte_pktmbuf_alloc(pool);
            if (s == nullptr) return false;
            s->data_off = 0;  // a later segment needs no headroom
            last->next = s;
            last = s;
            ++head->nb_segs;
            room = rte_pktmbuf_tailroom(s);
        }
        const uint32_t k = len < room ? len : room;
        std::memcpy(rte_pktmbuf_mtod_offset(last, char*, last->data_len), data, k);
        last->data_len = static_cast<uint16_t>(last->data_len + k);
        head->pkt_len += k;
        data += k;
        len -= k;
    }
    return true;
}

}  // namespace

bool capture_input(worker& w, const capture_filter& f, const rte_mbuf* m, const sip_handoff& in,
                   const sip::message* msg) noexcept
{
    bool matched = f.matcher == nullptr;
    if (!matched) {
        std::array<char, max_endpoint_text> text;
        const std::string_view src{text.data(), format_endpoint(in.src, text)};
        if (msg != nullptr) {
            matched = f.matcher->match(w.id, *msg, src);
        } else {
            std::array<std::string_view, sip::capture_field_count> v{};
            v[static_cast<std::size_t>(sip::capture_field::source)] = src;
            matched = f.matcher->match(w.id, v);
        }
    }
    states[w.id].input_matched = matched;
    // TCP and TLS messages come from the stream thread without their segments' headers: not
    // copied (what the call sends over UDP still is).
    if (!matched || in.local.proto != transport::udp || w.capture_out == nullptr || !room(w)) return matched;
    rte_mbuf* c = rte_pktmbuf_copy(m, f.pool, 0, in.off + in.len);
    if (c == nullptr) {
        w.capture_stats.no_buffer.bump();
        return matched;
    }
    // Only a datagram DPDK reassembled (a chain of its fragments) needs its header made whole.
    if (m->nb_segs > 1) whole_ipv4(c, m->l2_len, false);
    enqueue(w, c);
    return matched;
}

void capture_input_done(worker& w) noexcept { states[w.id].input_matched = false; }

bool capture_wanted(worker& w, const capture_filter& f, const sip::out_message& d) noexcept
{
    capture_worker_state& st = states[w.id];
    if (f.matcher == nullptr || st.input_matched) return true;
    (void)sip::parse(d.bytes(), st.out);  // a message we wrote; what parsed is matched anyway
    std::array<char, max_endpoint_text> text;
    return f.matcher->match(w.id, st.out, std::string_view{text.data(), format_endpoint(d.dst, text)});
}

void capture_frame(worker& w, const capture_filter& f, const rte_mbuf* m) noexcept
{
    if (w.capture_out == nullptr || !room(w)) return;
    rte_mbuf* c = rte_pktmbuf_copy(m, f.pool, 0, UINT32_MAX);
    if (c == nullptr) {
        w.capture_stats.no_buffer.bump();
        return;
    }
    enqueue(w, c);
}

void capture_fragments(worker& w, const capture_filter& f, const rte_mbuf* first, std::string_view payload) noexcept
{
    if (w.capture_out == nullptr || !room(w)) return;
    const uint32_t headers = first->l2_len + static_cast<uint32_t>(sizeof(rte_ipv4_hdr) + sizeof(rte_udp_hdr));
    rte_mbuf* c = rte_pktmbuf_alloc(f.pool);
    if (c == nullptr) {
        w.capture_stats.no_buffer.bump();
        return;
    }
    rte_mbuf* last = c;
    if (!append(c, last, f.pool, rte_pktmbuf_mtod(first, const char*), headers) ||
        !append(c, last, f.pool, payload.data(), static_cast<uint32_t>(payload.size()))) {
        rte_pktmbuf_free(c);
        w.capture_stats.no_buffer.bump();
        return;
    }
    whole_ipv4(c, first->l2_len, true);  // as frame_udp4 sends a datagram that fits
    enqueue(w, c);
}

}  // namespace sbc::dataplane
