// The stateful SIP proxy of one worker: call setup (INVITE server and client transactions
// with retry and failover across peers and regions), CANCEL, hop-by-hop ACK, in-dialog
// requests by loose routing, stateless relay of other responses, dialogs for active calls,
// and the timers that drive them. Pure over byte spans and transport-neutral: SIP inputs in
// (one call each, whatever transport carried them), messages tagged with their transport and
// connection (and events for the control core) out, through an outbox the dataplane sends.
// Worker only: every table here belongs to the worker that created it; no heap after start,
// no locks, no system calls.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "common/counter_list.h"
#include "common/counter.h"
#include "common/address.h"
#include "sip-fastpath/cdr_sink.h"
#include "sip-fastpath/media_hook.h"
#include "sip-fastpath/overload_control.h"
#include "sip-fastpath/peer_select.h"
#include "sip-fastpath/proxy_tables.h"
#include "sip-fastpath/sip_message.h"
#include "sip-fastpath/timer_wheel.h"

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
/// (proxy_large.cc): setups that may hold an INVITE larger than max_out_size at once, per
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
    /// max_out_size, or an empty span when all are taken until clear() (proxy_large.cc).
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

/// The proxy's counters, one writer (the worker); other threads read them relaxed.
#define SBC_PROXY_COUNTERS(X)                                                            \
    X(requests, "SIP requests received")                                                 \
    X(source_denied, "messages from a source the trunk does not allow (dropped, no answer)") \
    X(responses, "SIP responses received")                                               \
    X(invites, "new INVITEs (calls offered)")                                            \
    X(calls_answered, "calls answered (2xx relayed)")                                    \
    X(calls_failed, "calls that ended with a final failure upstream")                    \
    X(calls_cancelled, "calls cancelled by the caller")                                  \
    X(retries_code, "attempts retried after a retryable final response")                 \
    X(retries_timeout, "attempts retried after the no-response timer")                   \
    X(retries_icmp, "attempts retried after ICMP unreachable")                          \
    X(failover_region, "calls moved to the next region")                                \
    X(fallbacks, "calls moved to their route's fallback_group after a final response in its fallback_codes") \
    X(fallback_exhausted, "fallen-back calls whose fallback group had no peer left (the primary group's answer sent)") \
    X(exhausted, "calls that ran out of peers (503 sent)")                              \
    X(all_down_tried, "calls sent to peers marked down because no peer was up")        \
    X(no_route, "requests no route matched (404 sent)")                                  \
    X(table_full, "requests refused because the call table was full (503 sent)")        \
    X(refused_draining, "new calls refused while the SBC drains (503 sent)")            \
    X(shed_overload, "new INVITEs and other out-of-dialog requests refused while their worker was overloaded (503 with Retry-After)") \
    X(scanner_dropped, "requests that matched a scanner signature, dropped without an answer") \
    X(scanner_answered, "requests that matched a scanner signature, answered with [scanner] respond_code") \
    X(rejected, "requests answered with an error by the verdict (400, 483, ...)")       \
    X(malformed_dropped, "malformed messages dropped")                                   \
    X(retransmissions_absorbed, "request retransmissions answered from state")           \
    X(stale_responses, "responses for no known transaction")                             \
    X(relayed_stateless, "responses and requests relayed without transaction state")    \
    X(in_dialog, "in-dialog requests routed by Route")                                   \
    X(in_dialog_refused, "in-dialog requests toward neither a peer nor a party of a dialog we hold (481, 403; ACK dropped)") \
    X(th_no_route, "in-dialog requests of a topology-hidden dialog without our Route (to our address or the Contact we wrote), forwarded by the dialog") \
    X(th_undecodable, "messages whose topology-hiding parameter (sbc-th) did not decode: changed, cut or foreign (dropped; a request answered 400)") \
    X(th_too_big, "messages toward a topology-hidden side whose Vias, route set or Contact did not fit what sbc-th carries (513 to the sender; not sent)") \
    X(options_answered, "OPTIONS addressed to the SBC answered")                         \
    X(options_unanswered, "OPTIONS to the SBC left unanswered while draining or overloaded") \
    X(oc_stamped, "responses to clients that advertised RFC 7339 overload control stamped with our oc feedback") \
    X(oc_feedback, "responses from peers with RFC 7339 oc feedback (passed to the control core)") \
    X(oc_invalid, "RFC 7339 oc feedback from peers ignored: a value outside 0-100, another algorithm, a bad oc-validity or oc-seq") \
    X(oc_diverted, "new calls sent to another peer than one under an RFC 7339 oc reduction") \
    X(acks_absorbed, "ACKs for non-2xx finals absorbed")                                 \
    X(retransmits_sent, "requests or responses we retransmitted")                        \
    X(dialogs_created, "dialogs created")                                                \
    X(dialogs_ended, "dialogs ended")                                                    \
    X(outbox_full, "messages not sent because the outbox was full")                     \
    X(send_failed_too_big, "messages too big for their transport (513 to the sender where it can be answered)") \
    X(large_busy, "messages over 4 KiB refused or not relayed: every large-message buffer was in use (503 to a new INVITE)") \
    X(send_failed_unresolved, "messages not sent because their next hop never resolved")  \
    X(send_failed_no_route, "messages not sent because no interface or next hop reaches their destination") \
    X(send_failed_no_buffer, "messages not sent for want of a buffer or queue room")      \
    X(send_failed_no_connection, "messages not sent for want of a stream transport")      \
    X(in_dialog_timeouts, "BYEs, re-INVITEs and UPDATEs a peer left unanswered past its no-answer timer or that ICMP said did not arrive (408 to the sender; a BYE's dialog ended)") \
    X(in_dialog_untracked, "BYEs, re-INVITEs and UPDATEs relayed to a peer without a no-answer timer (the per-worker pending table was full)") \
    X(admission_trunk_calls, "new calls refused: their trunk had max_calls calls (the [admission] refuse_code sent)") \
    X(admission_trunk_rate, "new calls refused: their trunk was over max_calls_per_second (the [admission] refuse_code sent)") \
    X(admission_node_calls, "new calls refused: the node had [admission] max_calls calls (refuse_code sent)") \
    X(admission_peers_full, "calls refused because every peer left to try was at its max_calls (refuse_code sent)") \
    X(admission_peer_skips, "times a peer at its max_calls was passed over by selection (the call went to another)") \
    X(rules_rewritten, "requests rewritten by header and number rules (each direction counted)") \
    X(rules_too_long, "requests the header and number rules would have made larger than 65535 bytes: sent unchanged")

SBC_LIST_ENUM(proxy_counter, SBC_PROXY_COUNTERS);
constexpr std::size_t proxy_counter_count = list_size<proxy_counter>;
std::string_view proxy_counter_name(proxy_counter c) noexcept;
std::string_view proxy_counter_help(proxy_counter c) noexcept;

struct th_scratch;  // topology_hiding.h
struct th_target;
struct edits;
struct cdr_call;  // proxy_cdr.h

struct proxy_stats {
    std::array<std::atomic<uint64_t>, proxy_counter_count> c{};
    std::atomic<uint64_t> setups_active{0};
    std::atomic<uint64_t> dialogs_active{0};
    /// Active calls per peer id (dialogs plus setups under way on it).
    std::array<std::atomic<uint32_t>, max_peers> active_by_peer{};
    /// Final failures per peer id by class: [0] 4xx, [1] 5xx, [2] 6xx, [3] timeout, [4] ICMP.
    std::array<std::array<std::atomic<uint32_t>, 5>, max_peers> failures_by_peer{};
    std::array<std::atomic<uint32_t>, max_peers> attempts_by_peer{};
    static constexpr std::size_t max_counted = sbc::max_counted;  ///< trunks and routes counted one by one
    /// New INVITEs by arrival trunk index, and by the route they took (the last slot: none).
    std::array<std::atomic<uint64_t>, max_counted> invites_by_trunk{};
    std::array<std::atomic<uint64_t>, max_counted + 1> invites_by_route{};
    /// Calls moved to their route's fallback group, by route index (route_fallback.h).
    std::array<std::atomic<uint64_t>, max_counted> fallbacks_by_route{};
    /// New calls refused by admission, by arrival trunk index (any reason: trunk, rate, node, peers full).
    std::array<std::atomic<uint64_t>, max_counted> refused_by_trunk{};
    /// Times each peer id was passed over by selection because it was at its max_calls.
    std::array<std::atomic<uint32_t>, max_peers> full_skips_by_peer{};
    /// Requests that matched a scanner signature, by [set * 3 + field]: set 0 the shipped list,
    /// 1 the operator's patterns; field 0 User-Agent, 1 From, 2 To (sip::scanner_field).
    std::array<std::atomic<uint64_t>, 6> scanner_matches{};
    /// Header and number rules by rule index (sip::rule_tables, at most max_counted): times each
    /// applied (hits) and times it could not be (failures: match limit, result too long).
    std::array<std::atomic<uint64_t>, max_counted> rule_hits{};
    std::array<std::atomic<uint64_t>, max_counted> rule_failures{};

    void add(proxy_counter k, uint64_t n = 1) noexcept
    {
        sw_add(c[static_cast<std::size_t>(k)], n);
    }
    [[nodiscard]] uint64_t get(proxy_counter k) const noexcept
    {
        return sw_get(c[static_cast<std::size_t>(k)]);
    }
};

/// Whether a response carries a Via below the top one (it can be relayed).
bool has_second_via(const message& m) noexcept;

/// The worker that owns a message's state, from the branch or Record-Route parameter the
/// SBC minted; -1 when none of ours is in it (any worker may handle it).
int message_owner(const message& m) noexcept;

class proxy {
public:
    proxy(uint8_t worker, uint32_t setups, uint32_t dialogs, uint64_t seed);
    /// Control core, at start (before the worker runs): `n` (1..max_large_setups) buffers for
    /// setups whose INVITE is larger than max_out_size instead of large_setups_per_worker
    /// ([limits] large_messages_per_worker; proxy_large.cc).
    void set_large_setups(uint32_t n) { init_large(n); }
    ~proxy();
    proxy(const proxy&) = delete;
    proxy& operator=(const proxy&) = delete;

    /// A SIP message arrived: parses `in.bytes` and handles it (answer, forward, or drop and
    /// count), putting what is to be sent into `out`.
    void on_input(const proxy_tables& t, const peer_health& h, const sip_input& in, outbox& out) noexcept;
    /// The same for a message the caller has parsed already (`m` parsed from `in.bytes`, for
    /// instance to find its owner worker with message_owner): nothing is parsed twice. `m`
    /// must stay valid for the call.
    void on_message(const proxy_tables& t, const peer_health& h, const sip_input& in, const message& m,
                    outbox& out) noexcept;
    /// An ICMP destination-unreachable quoting `quoted` (the start of a datagram we sent to
    /// `to`): the attempt it belongs to is failed over at once; an in-dialog request relayed
    /// to a peer and waiting for its answer gets its 408 to the sender at once.
    void on_icmp_unreachable(const proxy_tables& t, const peer_health& h, std::string_view quoted, const endpoint& to,
                             uint64_t now_ms, outbox& out) noexcept;
    /// A message this proxy produced (`sent`, its bytes as they were to leave, at least up to
    /// the end of the header block; `to`, its destination) could not be sent for a local
    /// reason `why`. The peer is never blamed: no peer event, no failure counted against it.
    /// When it is the INVITE of a call's current attempt (our branch of that attempt, the call
    /// still calling or proceeding), the caller gets its final answer at once: 513 for
    /// too_big, 503 otherwise, 487 when it was cancelled meanwhile. A request relayed
    /// statelessly that was too_big is answered 513 to its sender (named by our Via's
    /// sbc-src) when the sender's Via is below ours; ACKs, responses and anything else are
    /// only counted. Every call counts one send_failed_* counter. What it produces goes into
    /// `out`, to be sent once: a failure among those is only counted, never reported again.
    /// Worker only, by the worker that owns this proxy (a failure of another worker's message
    /// finds no call here: counted, nothing else).
    void on_send_failed(const proxy_tables& t, const peer_health& h, std::string_view sent, const endpoint& to,
                        send_failure why, uint64_t now_ms, outbox& out) noexcept;
    /// Runs the timers due by now_ms (retransmissions, no-response, clean-up).
    void on_tick(const proxy_tables& t, const peer_health& h, uint64_t now_ms, outbox& out) noexcept;

    [[nodiscard]] const proxy_stats& stats() const noexcept { return *stats_; }
    [[nodiscard]] uint8_t worker() const noexcept { return worker_; }
    /// Control core, before the worker runs: anchor the media of every call through `m`
    /// (SDP rewritten both ways, flows torn down with the call, silent calls ended with BYE).
    void set_media(media_hook* m);
    /// Control core, before the worker runs: every call this worker handles is handed to `s`
    /// as one sbc::call_record when it ends (proxy_cdr.cc); allocates the records of calls
    /// under way. Null (the default): no records, nothing allocated or done for them.
    void set_cdr_sink(cdr_sink* s);
    /// Worker only, after its loop ended: the calls still under way are handed over as ended
    /// by the drain (cdr_end::drain) at now_ms; each is handed over once. Nothing without a sink.
    void cdr_drain(uint64_t now_ms) noexcept;
    /// RFC 7339 (server): the percent of new requests this worker asks its clients to send
    /// elsewhere (0: not overloaded), stamped into responses to clients that advertised `oc`.
    /// Any thread (one relaxed store); the worker's overload detection calls it.
    void set_overload(uint8_t percent) noexcept
    {
        oc_.reduction.store(percent > 100 ? 100 : percent, std::memory_order_relaxed);
    }
    [[nodiscard]] uint8_t overload() const noexcept { return oc_.reduction.load(std::memory_order_relaxed); }
    /// Control core, before the worker runs: admit calls against the node-wide counts `a`
    /// (sip-fastpath/admission.h), shared by every worker; null: this proxy's own counts
    /// (alone in the node, as in tests).
    void set_admission(admission* a) noexcept;
    /// The counts this proxy admits against.
    [[nodiscard]] const admission& admission_counts() const noexcept { return *adm_; }

    struct setup;
    struct setup_table;
    struct dialog_table;
    struct media_dialog;
    struct pending_table;
    struct rule_scratch;
    struct cdr_state;

private:
    // Topology hiding (proxy_hiding.cc, topology_hiding.h).
    /// The INVITE `inv` of setup `slot` leaving from `local` with `branch`: when its peer's
    /// trunk hides, our Via, Record-Route and Contact in `e` take their hiding forms (written
    /// into `th`). False when they do not fit (counted): the INVITE is not to be sent.
    bool th_invite(const proxy_tables& t, uint32_t slot, const message& inv, std::string_view branch,
                   const endpoint& local, edits& e, th_scratch& th) noexcept;
    /// A response (msg_) relayed from our endpoint `local` toward `dst`: a hidden Via of ours
    /// restores the Vias it replaced (and sets `dst`, when given, to its sender); toward a
    /// hidden side (`hide_to`) its Contact and Record-Routes are hidden; our Record-Route
    /// gives back the route set it hid. False when something of ours does not decode (counted:
    /// not to be relayed).
    /// `hide_to`: 1 or 0, or -1 to ask the dialog of msg_ (toward `dst`, decoded first).
    bool th_response(const proxy_tables& t, const endpoint& local, int hide_to, endpoint* dst, edits& e,
                     th_scratch& th) noexcept;
    /// An in-dialog request (msg_) of a dialog topology hiding covers: routed by our Route
    /// (the route set it hid given back), or without one to our address or the Contact we
    /// wrote (the other side's target from the dialog); hidden toward a hidden side. False
    /// when it is not such a request (the usual handling goes on).
    /// `dl`: the request's dialog slot (none_slot: none), looked up once by the caller.
    bool th_forward(const proxy_tables& t, const peer_health& h, const sip_input& a, uint32_t dl, outbox& out) noexcept;
    /// Setup `slot`'s call was answered (the 2xx in msg_) into dialog slot `d`: which sides
    /// it hides, and the callee's target when it does.
    void th_dialog_started(uint32_t slot, uint32_t d) noexcept;
    const proxy_tables* tables_ = nullptr;  ///< the snapshot of the message being handled (on_message)
    std::unique_ptr<th_target[]> th_targets_;  ///< by dialog slot: the callee's Contact URI of a hidden dialog

    void on_request(const proxy_tables& t, const peer_health& h, const sip_input& a, outbox& out) noexcept;
    void on_response(const proxy_tables& t, const peer_health& h, const sip_input& a, outbox& out) noexcept;
    void new_invite(const proxy_tables& t, const peer_health& h, const sip_input& a, outbox& out) noexcept;
    void forward_out_of_dialog(const proxy_tables& t, const peer_health& h, const sip_input& a, outbox& out) noexcept;
    /// The peer group of the route msg_ takes, or -1 after answering 404; `count` per route.
    /// `route_index`, when given, receives the route's index.
    int route_group(const proxy_tables& t, const sip_input& a, bool count, outbox& out,
                    uint16_t* route_index = nullptr) noexcept;
    // Route fallback on failure classes (proxy_fallback.cc).
    /// Setup `slot`'s attempt got final `code` (msg_, ACKed, not retried): when its route's
    /// fallback takes that code and nothing but 100 was heard, the call moves to the fallback
    /// group (once; msg_ kept as the answer should that group run out) and true.
    bool fall_back(const proxy_tables& t, const peer_health& h, uint32_t slot, uint16_t code, uint64_t now,
                   outbox& out) noexcept;
    /// Setup `slot` ran out of peers: when it had fallen back, the caller gets the primary
    /// group's answer kept by fall_back (not 503) and true.
    bool fallback_exhausted(uint32_t slot, uint64_t now, outbox& out) noexcept;
    /// "z9hG4bKsL" + this worker + the key: the branch of a stateless forward; returns its length.
    std::size_t write_stateless_branch(char* out, uint64_t key) const noexcept;
    void on_cancel(const sip_input& a, outbox& out) noexcept;
    bool forward_in_dialog(const proxy_tables& t, const peer_health& h, const sip_input& a, outbox& out) noexcept;
    /// Whether a response from `src`, a source no trunk allows and no peer has, may still be
    /// relayed: the dialog of its Call-ID names `src` as a party, and our Via sends it back to
    /// someone who may talk to us (a peer, a trunk source, a party).
    bool party_response(const proxy_tables& t, const message& m, const endpoint& src) const noexcept;
    /// A call was answered (setup `slot`, the 2xx in msg_): the dialog of its Call-ID learns
    /// its parties and legs.
    void dialog_parties(uint32_t slot) noexcept;
    void invite_response(const proxy_tables& t, const peer_health& h, uint32_t slot, const sip_input& a,
                         outbox& out) noexcept;
    void next_attempt(const proxy_tables& t, const peer_health& h, uint32_t slot, failure_cause why, uint64_t now,
                      outbox& out) noexcept;
    /// The INVITE of setup `slot`'s current attempt to its peer; false when not sent. One
    /// too big to send answers the caller 513 at once (the setup is then completed).
    bool send_invite(const proxy_tables& t, uint32_t slot, uint64_t now, outbox& out) noexcept;
    void send_to_peer_simple(uint32_t slot, std::string_view method, std::string_view to_value, outbox& out) noexcept;
    /// After a final non-2xx went upstream: ends the call's counts and media, waits for its ACK.
    void await_ack(uint32_t slot, uint64_t now) noexcept;
    void respond_upstream(uint32_t slot, uint16_t code, bool retry_after, uint32_t retry_after_s, uint64_t now,
                          outbox& out, std::string_view reason = {}) noexcept;
    /// The edits that take a peer's response of call `s` to its caller: our Via off, topology
    /// hiding's restores, the anchored media's SDP. False: a hidden value did not decode (counted).
    bool upstream_edits(const proxy_tables& t, const setup& s, edits& e, th_scratch& th) noexcept;
    void relay_upstream(uint32_t slot, outbox& out) noexcept;
    bool relay_by_via(const sip_input& a, outbox& out) noexcept;
    void respond(const sip_input& a, uint16_t code, std::string_view reason, outbox& out, bool retry_after = false,
                 uint32_t retry_after_s = 0, std::string_view extra = {}) noexcept;
    void fire(const proxy_tables& t, const peer_health& h, uint32_t slot, uint64_t now, outbox& out) noexcept;
    void arm(uint32_t slot) noexcept;
    void release(uint32_t slot) noexcept;
    // Storage of messages above max_out_size (proxy_large.cc).
    /// Where setup `slot` keeps its INVITE and, after it, its last final response: its slot
    /// of buffers_, or the large buffer it took; and how many bytes that holds.
    char* store_of(uint32_t slot) noexcept;
    std::size_t store_room(uint32_t slot) noexcept;
    /// Whether a large buffer is free for a new setup (without taking it).
    [[nodiscard]] bool large_free() const noexcept { return n_large_free_ != 0; }
    /// Gives setup `slot` a large buffer when its INVITE needs one (`len` over max_out_size);
    /// false when none is free (counted large_busy). The slot gives it back in release().
    bool take_large(uint32_t slot, std::size_t len) noexcept;
    void give_back_large(uint32_t slot) noexcept;
    void init_large(uint32_t n);  ///< allocates n large buffers and fills the free stack
    /// edit() into the outbox message `d`: into its own buffer, or one of the outbox's large
    /// buffers (setting d.large) when the result may not fit; error::no_space when neither
    /// holds it (none free: counted large_busy).
    struct write_result edit_out(const message& m, const struct edits& e, outbox& out, out_message& d) noexcept;
    /// The dialog of an answered call takes over its admission counts (the peer's, and the
    /// trunk's and node's when `admitted`); when no dialog entry is made they are given back.
    /// Returns the new dialog slot, or none_slot when no entry was made.
    uint32_t dialog_started(uint64_t callid_hash, uint32_t peer_id, uint16_t trunk = 0, bool admitted = false) noexcept;
    /// A BYE from `from` of the dialog of `callid_hash` was relayed at `now`.
    void dialog_bye_seen(uint64_t callid_hash, uint64_t now, const endpoint& from) noexcept;
    /// The dialog is over: `why` is its call record's end (bye_caller: the side whose BYE was
    /// seen, bye_caller or bye_callee; bye_timeout; media_timeout), at `now` for media_timeout.
    void dialog_end(uint64_t callid_hash, sbc::cdr_end why = sbc::cdr_end::bye_caller, uint64_t now = 0) noexcept;
    /// The current attempt of setup `slot` failed (`why`, `code`) at `now`: its peer event and counts.
    void failure(uint32_t slot, failure_cause why, uint16_t code, outbox& out, uint64_t now) noexcept;
    uint32_t find_setup(uint64_t up_key) const noexcept;
    // Call admission (proxy_admission.cc).
    /// A new INVITE (msg_) on trunk a.trunk: counted against the trunk and the node, or
    /// refused (the configured answer sent, counted) and false.
    bool admit(const proxy_tables& t, const sip_input& a, outbox& out) noexcept;
    /// The next peer of region `region` for setup `slot`, its call counted (a peer at its limit
    /// is passed over); no_peer when none. `saw_full`: set when a full peer was passed over.
    uint32_t pick_peer(const proxy_tables& t, const peer_health& h, uint32_t slot, uint16_t region, bool ignore_down,
                       bool& saw_full) noexcept;
    /// A setup's current attempt is over: its peer's counts go down.
    void peer_put(uint32_t& peer_id) noexcept;
    /// A setup ended without a dialog: its trunk and node counts go down (once).
    void call_done(uint32_t slot) noexcept;
    // RFC 7339 overload control (proxy_oc.cc).
    /// `out` gets the splice that stamps our feedback into Via element `v` of `m` (the client's)
    /// when the client advertised oc and there is something to say now; false otherwise.
    /// (With the policy and time oc_ was last refreshed with, at each message and tick.)
    bool oc_stamp(const message& m, const via& v, via_splice& out) noexcept;
    /// The same for a response relayed upstream: the client's Via is the second one of msg_.
    bool oc_stamp_relayed(via_splice& out) noexcept;
    /// A response (msg_) from peer `a.src`: its feedback in our Via goes to the control core.
    void oc_from_peer(const proxy_tables& t, const sip_input& a, outbox& out) noexcept;
    // Header and number rules (proxy_rules.cc).
    /// A new INVITE or other out-of-dialog request (msg_) from a.src on trunk a.trunk: the
    /// inbound rules of the trunk, then of the sending peer's region; msg_ then points at the
    /// rewritten request (before routing: routes see the normalised numbers).
    void rules_in(const proxy_tables& t, const sip_input& a) noexcept;
    /// The request `m` as it goes to peer `p`: the outbound rules of its region, then of its
    /// trunk, applied; `m` itself when none changed it.
    const message& rules_out(const proxy_tables& t, uint32_t p, const message& m) noexcept;
    // Guards before a request is handled (proxy_guard.cc).
    /// A request (msg_) from a source that is not trusted matched a scanner signature: dropped
    /// or answered as [scanner] says, counted, out.fault = scanner when [scanner]
    /// deny; true when it was (the request goes no further).
    bool scanner_refused(const proxy_tables& t, const sip_input& a, outbox& out) noexcept;
    /// A new INVITE or other out-of-dialog request (msg_) while this worker is overloaded
    /// (overload() > 0): refused with 503 and Retry-After for that share of them, counted;
    /// true when it was. A retransmission of an INVITE being set up is never refused.
    bool overload_shed(const proxy_tables& t, const sip_input& a, outbox& out) noexcept;
    // Media anchoring (proxy_media.cc); each does nothing without a media hook.
    /// Puts the body `to` must see into `e` (unchanged when no SDP); false when refused.
    bool media_body(const message& m, uint64_t call, media_leg to, struct edits& e) noexcept;
    /// The leg at `ep` in call `call`: A when it is the caller the dialog keeps; before the
    /// dialog exists (early UPDATE, PRACK), B when `ep` is one of the peers.
    media_leg media_leg_of(uint64_t call, const endpoint& ep, const proxy_tables* t = nullptr) const noexcept;
    void media_end(uint64_t call) noexcept;
    /// A call was answered (setup `slot`, the 2xx in msg_): keeps what a BYE to each side needs.
    void media_dialog_started(uint32_t slot) noexcept;
    /// BYE to one side of dialog slot `d`; `to_a`: to the caller.
    void media_bye(uint32_t d, bool to_a, outbox& out) noexcept;
    /// Ends calls whose media went silent: BYE to both sides.
    void media_silence(uint64_t now_ms, outbox& out) noexcept;
    // In-dialog requests waiting for a peer's answer (proxy_pending.cc).
    /// msg_, just relayed statelessly to `next` with our branch key `key`: a BYE, re-INVITE or
    /// UPDATE to a peer over UDP waits for its answer until the peer's no-answer timer.
    void pending_track(const proxy_tables& t, const peer_health& h, const sip_input& a, const endpoint& next,
                       uint64_t key) noexcept;
    /// A response with top Via branch `branch` came back: whatever it answers is no longer pending.
    void pending_answered(std::string_view branch) noexcept;
    /// An ICMP unreachable from `to` quoting `quoted`: answers the pending request it names at
    /// once; false when it names none.
    bool pending_unreachable(std::string_view quoted, const endpoint& to, outbox& out) noexcept;
    /// Answers the requests whose deadline passed by now_ms.
    void pending_expire(uint64_t now_ms, outbox& out) noexcept;
    /// 408 to the sender of pending slot `slot`, counted; a BYE ends its dialog.
    void pending_answer(uint32_t slot, outbox& out) noexcept;

    uint8_t worker_;
    uint32_t n_setups_;
    /// Setups by upstream key (LIFO free list: hot slots reused); slot_table<setup>, held by
    /// pointer so that this header needs not know setup.
    std::unique_ptr<setup_table> setups_;
    std::unique_ptr<char[]> buffers_;   ///< one max_out_size buffer per setup
    /// large_setups_per_worker buffers of max_udp_message, for setups whose INVITE is larger
    /// than max_out_size, and the stack of free ones (proxy_large.cc); allocated at start.
    std::unique_ptr<char[]> large_;
    std::unique_ptr<uint16_t[]> large_free_;
    uint32_t n_large_free_ = 0;
    std::unique_ptr<dialog_table> dialogs_;
    timer_wheel timers_;
    select_state select_;
    std::unique_ptr<proxy_stats> stats_;
    const message* msg_ = nullptr;   ///< the message being handled (on_message's `m`)
    std::unique_ptr<message> own_;   ///< what on_input parses into
    std::unique_ptr<message> aux_;   ///< a stored INVITE re-parsed
    bool first_attempt_ = false;     ///< send_invite may edit msg_, the INVITE just received
    media_hook* media_ = nullptr;
    oc_server oc_;  ///< RFC 7339 server side: the reduction we ask for, what we last said
    shed_credit shed_;  ///< untrusted sources: turns overload() into which new requests are refused (proxy_guard.cc)
    shed_credit shed_trusted_;  ///< the same for trusted sources (shed_shares)
    std::unique_ptr<admission> own_admission_;  ///< used until set_admission names the node's
    admission* adm_ = nullptr;
    std::unique_ptr<std::array<char, max_udp_message>> sdp_buf_;  ///< a rewritten SDP body
    std::unique_ptr<media_dialog[]> media_dialogs_;  ///< by dialog slot, with a media hook only
    std::unique_ptr<pending_table> pending_;  ///< in-dialog requests a peer has yet to answer
    std::unique_ptr<rule_scratch> rules_;  ///< header and number rules: match data, rewritten requests
    // Call records (proxy_cdr.cc); each is called only while cdr_ is set.
    std::unique_ptr<cdr_state> cdr_;  ///< null: no sink, no records
    /// A new INVITE (msg_) from `a` was refused with `code` before any attempt (route: its
    /// route index, or 0xffff): a record of its own, unless it is a retransmission of one.
    void cdr_refused(const sip_input& a, uint16_t code, uint16_t route = 0xffff) noexcept;
    /// Setup `slot` took the new INVITE (msg_) from `a` on route `route`.
    void cdr_setup_started(uint32_t slot, const sip_input& a, uint16_t route) noexcept;
    /// Setup `slot` sent an attempt to peer id `peer_id` at `now`.
    void cdr_attempt_sent(uint32_t slot, uint32_t peer_id, uint64_t now) noexcept;
    /// The current attempt of setup `slot` ended with `o` (`code` for answered and code) at
    /// `now`; nothing when it has its outcome already.
    void cdr_attempt_end(uint32_t slot, sbc::cdr_outcome o, uint16_t code, uint64_t now) noexcept;
    /// A provisional above 100 went to the caller of setup `slot` at `now`.
    void cdr_provisional(uint32_t slot, uint64_t now) noexcept;
    /// The final `code` the caller of setup `slot` gets, and who sent it.
    void cdr_final(uint32_t slot, uint16_t code, sbc::cdr_final_by by) noexcept;
    /// Setup `slot` ended without an answer (its final went upstream) at `now`: handed over.
    void cdr_setup_end(uint32_t slot, uint64_t now) noexcept;
    /// Setup `slot` was answered with `code` at `now` into dialog slot `d` (none_slot: no
    /// dialog entry, handed over at once): its record moves to the dialog.
    void cdr_answered(uint32_t slot, uint32_t d, uint16_t code, uint64_t now) noexcept;
    /// A BYE of the dialog in slot `d` came from `from` at `now` (the first one counts).
    void cdr_bye(uint32_t d, const endpoint& from, uint64_t now) noexcept;
    /// The dialog in slot `d` ended (dialog_end's `why` and `now`): handed over.
    void cdr_dialog_end(uint32_t d, sbc::cdr_end why, uint64_t now) noexcept;
    /// Hands `c` over (its media figures filled in first) and marks it done.
    void cdr_emit(cdr_call& c) noexcept;
};

}  // namespace sbc::sip
