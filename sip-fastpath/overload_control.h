// RFC 7339 SIP overload control on byte spans: reading a server's feedback (oc, oc-algo,
// oc-validity, oc-seq) from a Via element, finding the parameters a client wrote into its
// Via, and writing our own feedback into the Via of a response (as a splice that the response
// builder and the editor apply). Also the policy ([overload_control] in sbc.toml, held in the
// proxy tables) and one worker's server-side state.
// Any thread for the parsers and writers; oc_server is worker only, except that its
// `reduction` may be set from any thread. No heap, no exceptions.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <string_view>

#include "sip-fastpath/sip_message.h"

namespace sbc::sip {

/// RFC 7339 section 4: oc-validity when a response names none.
constexpr uint32_t oc_default_validity_ms = 500;
/// The longest reduction a peer's feedback may ask for, from its last response: a peer that
/// asked for 100% and then got no request (so sent no response to lift it) is tried again after
/// this at the latest.
constexpr uint32_t oc_max_validity_ms = 3'600'000;

/// What the config says ([overload_control]); read-only in the proxy tables.
struct oc_policy {
    bool advertise = true;       ///< client: ";oc;oc-algo=\"loss\"" in our Via, and peers' feedback honoured
    bool stamp = true;           ///< server: our reduction stamped into the Via of responses to clients that advertised
    uint32_t validity_ms = 1000; ///< server: oc-validity we send while overloaded
};

/// One server's feedback, read from the Via it stamped (ours, on top of its response).
struct oc_feedback {
    uint8_t reduction = 0;       ///< percent of requests to send elsewhere (loss algorithm)
    uint32_t validity_ms = oc_default_validity_ms;  ///< 0: overload control ends now
    uint64_t seq = 0;            ///< oc-seq in units of 10^-5 (integer part * 100000 + fraction)
    bool has_seq = false;
};

enum class oc_read : uint8_t {
    none,     ///< no "oc=value" (a bare oc is our own advertisement echoed back)
    feedback, ///< valid loss-algorithm feedback in `out`
    invalid,  ///< an oc value we cannot honour: not a number 0..100, another algorithm, a bad
              ///< oc-validity or oc-seq; ignored (count it)
};

/// Reads the feedback in one Via element's parameters (`params`, a span of `raw`: via::params).
oc_read read_oc_feedback(std::string_view raw, span params, oc_feedback& out) noexcept;

/// Changes to one Via element's parameters: spans of the message to leave out (each whole
/// ";name=value", with its ';') and text to add at offset `at` (the element's end). An empty
/// `text` changes nothing.
struct via_splice {
    std::array<span, 4> cut{};
    uint8_t n_cut = 0;
    uint32_t at = 0;
    std::string_view text;
};

/// Whether the client that wrote Via element `v` (of `raw`) advertised overload control: an
/// `oc` parameter, and no oc-algo or one that lists "loss". When it did, `out` gets the cuts
/// (its oc, oc-algo, and any oc-validity and oc-seq) and `at` (the element's end); the caller
/// sets out.text.
bool oc_advertised(std::string_view raw, const via& v, via_splice& out) noexcept;

/// The Via element below the top one (the client's, in a response we relay after taking our
/// Via off); false when there is none or it does not parse.
bool second_via(const message& m, via& out) noexcept;

/// Longest text write_oc_stamp writes.
constexpr std::size_t oc_stamp_max = 80;
/// ";oc=N;oc-algo=\"loss\";oc-validity=V;oc-seq=S.mmm" (S.mmm: `seq_ms` in seconds with three
/// decimals, RFC 7339's oc-seq form). Returns the length (0 when `out` is too small).
std::size_t write_oc_stamp(std::span<char> out, uint8_t reduction, uint32_t validity_ms, uint64_t seq_ms) noexcept;

/// One worker's server side: the reduction it asks its clients for, and what it has told them.
struct oc_server {
    /// Percent of new requests clients should send elsewhere (0: not overloaded). Set by
    /// proxy::set_overload from any thread; the worker reads it relaxed (a change a few
    /// responses late is harmless: each response carries the value current when it left).
    std::atomic<uint8_t> reduction{0};
    // Worker only below.
    oc_policy policy;             ///< the tables' policy, refreshed at each message and tick
    uint64_t now_ms = 0;          ///< the worker's clock at the last refresh
    uint8_t last = 0;             ///< the reduction of the last stamp
    uint64_t ending_until_ms = 0; ///< after an overload ended, oc=0 is stamped until then
    std::array<char, oc_stamp_max> text{};
    /// Client side: the feedback last passed to the control core, by peer id modulo the size:
    /// the same values again go only once per quarter of their validity (a peer stamps every
    /// response; the control core needs to hear it only often enough to keep it in force).
    struct heard {
        uint32_t peer = 0xffffffff;
        uint8_t reduction = 0;
        uint32_t validity_ms = 0;
        uint64_t at_ms = 0;
    };
    std::array<heard, 16> heard_from{};
    /// Whether feedback `f` from peer `id` is news for the control core (and, if so, noted).
    bool news(uint32_t id, uint8_t reduction, uint32_t validity_ms) noexcept
    {
        heard& h = heard_from[id % heard_from.size()];
        if (h.peer == id && h.reduction == reduction && h.validity_ms == validity_ms &&
            now_ms < h.at_ms + validity_ms / 4)
            return false;
        h = heard{id, reduction, validity_ms, now_ms};
        return true;
    }

    /// The text to stamp into a response leaving now, or empty when there is nothing to say:
    /// while overloaded, the reduction with validity `policy.validity_ms`; for one validity period
    /// after the overload ended, "oc=0" with oc-validity=0 (RFC 7339 section 5.2: ends the
    /// clients' reduction at once rather than at its expiry); otherwise nothing (one relaxed
    /// load and a compare: no formatting cost while there is nothing to stamp).
    std::string_view stamp() noexcept;
    /// At each message and tick: the tables' policy and the time (never going back).
    void refresh(const oc_policy& p, uint64_t now) noexcept
    {
        policy = p;
        if (now > now_ms) now_ms = now;
    }
};

}  // namespace sbc::sip
