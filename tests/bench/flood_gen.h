// The flood benchmark's traffic generator (tests/bench/flood_bench.cc): on the bench's main
// lcore only, it owns the RX and TX rings of the net_ring port the worker polls. It plays
//   - the trusted caller 198.18.0.2 (trunk "carrier", port 5060): legitimate calls at a fixed
//     rate, INVITE / ACK / BYE, no retransmissions (one lost message fails its call);
//   - the callee 198.18.0.11, the only peer: 100, 180, 200 to a legitimate INVITE, 200 to a BYE,
//     486 Busy Here to a flood INVITE (a peer that has nothing for it);
//   - the flood, three kinds: (a) `unknown`: SIP OPTIONS to 5060 from sources no trunk allows,
//     rotating over 198.19.0.0/16; (b) `invite`: INVITEs with unique Call-IDs from the allowed
//     but untrusted source 198.18.0.3 (trunk "customers", port 5062), never ACKed (a scanner);
//     (c) `malformed`: four kinds of broken SIP from 198.18.0.3 to 5062; on its own, (d)
//     `spoofed`: INVITEs to 5062 from 32,768 sources the untrusted trunk allows
//     (198.18.128.0/17), each a new source to the per-source buckets, as a flood with forged
//     sources against an open trunk; and, on its own, the `floor` and `forward` yardsticks
//     (below);
//   - the control core's event ring: each event handed to `on_event` (flood_control.h).
// Frames carry a zero UDP checksum (what a NIC's RX offload saves the worker). Flood frames are
// offered only while the worker's RX ring holds fewer than `backlog` frames, so the flood keeps
// the worker saturated without ever crowding the legitimate calls' frames out of the ring
// (those are enqueued first, every round).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dataplane/events.h"

namespace sbc::bench::flood {

constexpr uint32_t ip4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return a << 24 | b << 16 | c << 8 | d; }
constexpr uint32_t sbc_ip = ip4(198, 18, 0, 1);
constexpr uint32_t caller_ip = ip4(198, 18, 0, 2);     ///< trusted trunk source
constexpr uint32_t untrusted_ip = ip4(198, 18, 0, 3);  ///< allowed, untrusted trunk source
constexpr uint32_t callee_ip = ip4(198, 18, 0, 11);    ///< the only peer
constexpr uint32_t unknown_base = ip4(198, 19, 0, 0);  ///< unknown sources: 198.19.0.0/16
constexpr uint32_t spoofed_base = ip4(198, 18, 128, 0);  ///< untrusted trunk's forged sources: 198.18.128.0/17
constexpr uint32_t spoofed_sources = 32768;
constexpr uint16_t trusted_port = 5060;
constexpr uint16_t untrusted_port = 5062;

/// The flood's kinds; `floor` and `forward` are not floods but yardsticks, the same 64-byte
/// frames of an EtherType nobody handles, written here like every flood frame: `floor`, with
/// the production stages, dropped by the first stage (the cost of taking a fresh frame from
/// another core and freeing it, which every flood packet pays too); `forward`, with the io
/// benchmark's macswap stage instead, sent back out of the port (what forwarding a fresh frame
/// costs the worker); `forward_nic`, the same forwarding as a NIC would have the worker do it,
/// with the free of what it sent (TX completion) and the production loop's poll work
/// (flood_bench.cc). Frames that come back with another EtherType than IPv4 are counted in
/// `returned()` and freed, or, with `completions` set, handed back to the worker to free.
enum class kind : uint8_t { unknown, invite, malformed, floor, forward, spoofed, forward_nic };
constexpr std::size_t kind_count = 7;
constexpr std::array<std::string_view, kind_count> kind_names = {"unknown", "invite",  "malformed",  "floor",
                                                                 "forward", "spoofed", "forward_nic"};

/// One legitimate call's progress.
enum class call_state : uint8_t { unused, inviting, established, ok, failed };

struct generator_options {
    rte_mempool* pool = nullptr;
    rte_ring* to_worker = nullptr;    ///< the port's RX ring
    rte_ring* from_worker = nullptr;  ///< the port's TX ring
    rte_ring* events = nullptr;       ///< the control core's event ring: drained and dropped
    uint8_t sbc_mac[6]{};
    uint64_t hz = 0;
    std::array<bool, kind_count> kinds{true, true, true, false, false, false, false};  ///< flood kinds offered, in turn
    /// Where frames the worker forwarded go back to it, to be freed on its core as a NIC's TX
    /// completion frees them (null: the generator frees them).
    rte_ring* completions = nullptr;
    unsigned backlog = 2048;         ///< flood only while the RX ring holds fewer frames
    uint32_t unknown_sources = 65536;
    uint64_t call_timeout_tsc = 0;   ///< a call not done this long after its INVITE failed
    std::size_t max_calls = 0;       ///< legitimate calls this run may start
    /// Called with each event the worker sends the control core (nullptr: they are dropped).
    void (*on_event)(const dataplane::event&, void* ctx) = nullptr;
    void* event_ctx = nullptr;
};

class generator {
public:
    explicit generator(const generator_options& o);

    /// One round: drains what the worker sent (answering as callee, ACK and BYE as caller),
    /// starts the legitimate calls due by `legit_due` (a running total), pushes pending frames,
    /// then, with `flood`, tops the RX ring up with flood frames to `backlog`. Expires calls.
    void round(uint64_t now, uint64_t legit_due, bool flood);

    /// Writes the next flood frame of the turn (the kinds offered, in order) into the empty
    /// mbuf `m`; returns its kind. What offer_flood sends, and what `--port null` preloads.
    kind write_flood(rte_mbuf* m);
    /// The longest flood frame of any kind, in bytes.
    [[nodiscard]] std::size_t longest_flood() const;

    /// Frames waiting in the worker's RX ring.
    [[nodiscard]] unsigned rx_backlog() const;
    /// Legitimate calls started and not yet ok or failed.
    [[nodiscard]] uint64_t legit_open() const { return started_ - ok_ - failed_; }

    uint64_t started() const { return started_; }
    uint64_t ok() const { return ok_; }
    uint64_t failed() const { return failed_; }
    uint64_t timeouts() const { return timeouts_; }
    /// Final error codes legitimate calls got, by code (index 0: none).
    const std::array<uint64_t, 700>& failed_codes() const { return failed_codes_; }
    /// Flood frames enqueued to the worker, by kind.
    const std::array<uint64_t, kind_count>& offered() const { return offered_; }
    /// Responses the worker sent to the untrusted source, by status code.
    const std::array<uint64_t, 700>& untrusted_answers() const { return untrusted_answers_; }
    /// Frames the worker sent to an unknown source (a leak: always 0 expected).
    uint64_t unknown_answers() const { return unknown_answers_; }
    uint64_t flood_invites_seen_by_callee() const { return callee_flood_invites_; }
    /// Frames the worker sent back that are not IPv4 (the `forward` kind's, forwarded).
    uint64_t returned() const { return returned_; }
    uint64_t unexpected() const { return unexpected_; }
    uint64_t no_mbuf() const { return no_mbuf_; }

private:
    void send(uint32_t src, uint16_t dport, std::string_view payload);
    void invite(uint32_t id);
    void in_dialog(uint32_t id, std::string_view method, unsigned cseq);
    void respond(std::string_view req, std::string_view status, bool tag, bool body);
    void on_sent(rte_mbuf* m);
    void on_caller(std::string_view msg);
    void fail(uint32_t id, unsigned code);
    void expire(uint64_t now);
    void offer_flood();
    void build_templates();

    /// A flood frame, ready to copy; `patch` offsets of 8 hex digits rewritten per frame.
    struct tmpl {
        std::vector<uint8_t> bytes;
        std::array<uint16_t, 3> patch{};
        uint8_t patches = 0;
    };

    generator_options o_;
    std::vector<rte_mbuf*> out_;  ///< legit and callee frames waiting for the RX ring
    std::vector<call_state> calls_;
    std::vector<uint64_t> started_at_;
    uint64_t started_ = 0, ok_ = 0, failed_ = 0, timeouts_ = 0;
    uint64_t oldest_open_ = 0;
    std::array<uint64_t, 700> failed_codes_{};
    std::array<uint64_t, kind_count> offered_{};
    std::array<uint64_t, 700> untrusted_answers_{};
    uint64_t unknown_answers_ = 0, callee_flood_invites_ = 0, unexpected_ = 0, no_mbuf_ = 0, returned_ = 0;
    uint16_t ip_id_ = 0;
    std::vector<kind> turn_;        ///< the kinds offered, in turn
    std::size_t next_turn_ = 0;
    uint64_t flood_seq_ = 0;
    tmpl unknown_;
    tmpl invite_;
    tmpl spoofed_;
    tmpl floor_;
    std::vector<tmpl> malformed_;
};

}  // namespace sbc::bench::flood
