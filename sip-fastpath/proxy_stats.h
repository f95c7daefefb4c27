// The proxy's counters (one writer: the worker whose proxy it is; the control core and the
// HTTP thread read them relaxed): the list of named counters, expanded into an enum and its
// texts once, and the per-peer, per-trunk, per-route and per-rule tallies beside them.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

#include "common/counter.h"
#include "common/counter_list.h"
#include "common/limits.h"

namespace sbc::sip {

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


struct proxy_stats {
    std::array<single_writer<uint64_t>, proxy_counter_count> c{};
    single_writer<uint64_t> setups_active;
    single_writer<uint64_t> dialogs_active;
    /// Active calls per peer id (dialogs plus setups under way on it).
    std::array<single_writer<uint32_t>, max_peers> active_by_peer{};
    /// Final failures per peer id by class: [0] 4xx, [1] 5xx, [2] 6xx, [3] timeout, [4] ICMP.
    std::array<std::array<single_writer<uint32_t>, 5>, max_peers> failures_by_peer{};
    std::array<single_writer<uint32_t>, max_peers> attempts_by_peer{};
    static constexpr std::size_t max_counted = sbc::max_counted;  ///< trunks and routes counted one by one
    /// New INVITEs by arrival trunk index, and by the route they took (the last slot: none).
    std::array<single_writer<uint64_t>, max_counted> invites_by_trunk{};
    std::array<single_writer<uint64_t>, max_counted + 1> invites_by_route{};
    /// Calls moved to their route's fallback group, by route index (route_fallback.h).
    std::array<single_writer<uint64_t>, max_counted> fallbacks_by_route{};
    /// New calls refused by admission, by arrival trunk index (any reason: trunk, rate, node, peers full).
    std::array<single_writer<uint64_t>, max_counted> refused_by_trunk{};
    /// Times each peer id was passed over by selection because it was at its max_calls.
    std::array<single_writer<uint32_t>, max_peers> full_skips_by_peer{};
    /// Requests that matched a scanner signature, by [set * 3 + field]: set 0 the shipped list,
    /// 1 the operator's patterns; field 0 User-Agent, 1 From, 2 To (sip::scanner_field).
    std::array<single_writer<uint64_t>, 6> scanner_matches{};
    /// Header and number rules by rule index (sip::rule_tables, at most max_counted): times each
    /// applied (hits) and times it could not be (failures: match limit, result too long).
    std::array<single_writer<uint64_t>, max_counted> rule_hits{};
    std::array<single_writer<uint64_t>, max_counted> rule_failures{};

    void add(proxy_counter k, uint64_t n = 1) noexcept
    {
        c[static_cast<std::size_t>(k)].add(n);
    }
    [[nodiscard]] uint64_t get(proxy_counter k) const noexcept
    {
        return c[static_cast<std::size_t>(k)].get();
    }
};

}  // namespace sbc::sip
