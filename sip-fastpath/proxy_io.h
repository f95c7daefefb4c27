// What crosses the proxy's boundary, one call at a time: the SIP input it is handed (bytes,
// endpoints with transport and connection, trunk, time) and the outbox it fills (messages
// tagged with the leg they go on, peer events for the control core, what the input showed of
// its sender), with the size limits of both. Worker only: one outbox per worker, filled by its
// proxy and sent and cleared by the dataplane's send step.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "common/address.h"

namespace sbc::sip {

/// One SIP message as it arrived, whatever carried it: the bytes, who sent it and where, on
/// which transport and connection (both in the endpoints), the trunk it arrived on (found
/// once, by the receive step) and when. The bytes are valid for the call it is passed to.
struct sip_input {
    std::string_view bytes;
    endpoint src;          ///< the sender, with the transport and connection it used
    endpoint local;        ///< our address and port it arrived on (same transport)
    uint16_t trunk = 0;    ///< index into proxy_tables::trunks
    uint64_t now_ms = 0;
};

constexpr std::size_t max_out_size = 4096;
constexpr std::size_t outbox_capacity = 64;
/// Largest SIP message the proxy takes in and sends: what one UDP datagram carries (65,535
/// less the IPv4 and UDP headers; the dataplane sends a datagram over the MTU as IPv4
/// fragments, dataplane/udp_fragment.h, which asserts the two agree). A stream leg carries up
/// to [streams] max_message_bytes. A larger message is refused with 513.
constexpr std::size_t max_udp_message = 65535 - 28;
constexpr std::size_t max_udp_payload = max_udp_message;
/// Messages above max_out_size live outside the fixed per-setup and per-outbox buffers
/// (call_large.cc): setups that may hold an INVITE larger than max_out_size at once, per
/// worker, by default ([limits] large_messages_per_worker, up to max_large_setups; one more
/// is refused with 503 and counted large_busy) ...
constexpr uint32_t large_setups_per_worker = 256;
constexpr uint32_t max_large_setups = 4096;
/// ... and messages larger than max_out_size one outbox carries at once (one more is refused
/// like a setup, or not relayed, and counted large_busy).
constexpr uint32_t outbox_large_capacity = 16;

/// A message the proxy wants sent: from our `src` to `dst`, each naming the transport (and
/// for streams the connection) of the leg it goes on; the send step frames it for that
/// transport.
struct out_message {
    endpoint src;  ///< our address and port to send from
    endpoint dst;
    uint16_t len = 0;
    std::array<char, max_out_size> data;
    /// Null, or where the message is when larger than `data`: one of the outbox's large
    /// buffers (outbox::take_large), valid until the outbox is cleared.
    char* large = nullptr;
    /// The message's bytes, wherever they are.
    [[nodiscard]] std::string_view bytes() const noexcept { return {large != nullptr ? large : data.data(), len}; }
};

/// Why a message the proxy produced did not leave the SBC: a local failure, never the peer's.
enum class send_failure : uint8_t {
    too_big,        ///< larger than its transport carries (a UDP datagram over the MTU)
    unresolved,     ///< the next hop's MAC never resolved (a datagram held for ARP expired)
    no_route,       ///< no interface or next hop reaches the destination
    no_buffer,      ///< no mbuf, or a full queue toward the stream thread
    no_connection,  ///< no stream transport for a TCP or TLS leg
};

/// failed and answered: an attempt's outcome (passive health); responded: the first response
/// of an attempt, with its response time (the adaptive no-answer timer, control/peer_timer.h).
/// overload: the peer's RFC 7339 feedback (oc in our Via of its response), for the control core.
enum class peer_event_kind : uint8_t { failed, answered, responded, overload };
enum class failure_cause : uint8_t { none, code, timeout, icmp };

struct peer_event {
    peer_event_kind kind = peer_event_kind::failed;
    failure_cause cause = failure_cause::none;
    uint16_t code = 0;
    uint32_t peer_id = 0;
    /// responded: from sending the attempt's INVITE (its first copy) to its first response,
    /// whatever the code, in us; measured on the worker's ms clock, so whole ms.
    uint32_t rtt_us = 0;
    /// overload: percent of new calls to send elsewhere, for oc_validity_ms (0 ends it), with
    /// the peer's oc-seq (10^-5 units; has_oc_seq false when it sent none).
    uint8_t oc_reduction = 0;
    bool has_oc_seq = false;
    uint32_t oc_validity_ms = 0;
    uint64_t oc_seq = 0;
};

/// What an input showed of its sender: malformed (dropped as such, or refused by the verdict:
/// it counts toward the sender's denial), or a scanner signature under [scanner] deny (the
/// sender is reported for denial).
enum class source_fault : uint8_t { none, malformed, scanner };

/// What one call into the proxy produced; the caller sends and clears it.
struct outbox {
    std::array<out_message, outbox_capacity> msgs;
    uint32_t n = 0;
    std::array<peer_event, outbox_capacity> events;
    uint32_t n_events = 0;

    [[nodiscard]] bool room(uint32_t k = 4) const noexcept { return n + k <= outbox_capacity; }
    out_message* next() noexcept
    {
        if (n >= outbox_capacity) return nullptr;
        msgs[n].large = nullptr;
        return &msgs[n];
    }
    /// One of the outbox's buffers of max_udp_message bytes for a message larger than
    /// max_out_size, or an empty span when all are taken until clear() (call_large.cc).
    std::span<char> take_large() noexcept;
    void commit(const endpoint& src, const endpoint& dst, uint32_t len) noexcept
    {
        msgs[n].src = src;
        msgs[n].dst = dst;
        msgs[n].len = static_cast<uint16_t>(len);
        ++n;
    }
    void event(const peer_event& e) noexcept
    {
        if (n_events < events.size()) events[n_events++] = e;
    }
    /// What the input showed of its sender, for flood protection: the dataplane acts on it after
    /// the call (dispatch_input). One per input.
    source_fault fault = source_fault::none;
    void clear() noexcept
    {
        n = n_events = 0;
        fault = source_fault::none;
        large_used = 0;
    }
    /// outbox_large_capacity buffers of max_udp_message, allocated with the outbox (at start).
    std::unique_ptr<char[]> large_store{new char[outbox_large_capacity * max_udp_message]};
    uint32_t large_used = 0;
};

}  // namespace sbc::sip
