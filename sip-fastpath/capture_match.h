// Which SIP messages a capture (`sbcctl capture start --match FIELD:PATTERN ...`) keeps: one
// Hyperscan block-mode database per field (Call-ID, From, To, Request-URI, source address),
// compiled on the control core, one scratch per worker (sip-fastpath/hs_fields.h, as the scanner
// signatures). A message is kept when ANY of the patterns matches (several --match on the same
// or on different fields are alternatives, never conditions that must all hold).
// parse_capture_match(), compile() and the destructor run on the control core; match() and
// match_source() run on worker `w` only, with that worker's scratch: no heap, no locks.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sip-fastpath/hs_fields.h"
#include "sip-fastpath/sip_message.h"

namespace sbc::sip {

/// What a capture pattern looks at:
///   callid  the Call-ID header's value;
///   from    the whole From header value (display name, URI, parameters);
///   to      the whole To header value;
///   ruri    the Request-URI (requests only; a response never matches it);
///   source  the other side's address as "A.B.C.D:PORT": the sender of a message sbcd
///           received, the receiver of a message sbcd sent.
enum class capture_field : uint8_t { callid, from, to, ruri, source };
constexpr std::size_t capture_field_count = 5;
static_assert(capture_field_count <= hs_fields::max_fields);

/// "callid", "from", "to", "ruri", "source".
std::string_view capture_field_name(capture_field f) noexcept;

struct capture_pattern {
    capture_field field = capture_field::callid;
    std::string expr;  ///< Hyperscan expression (PCRE subset), matched as written (case-sensitive)
};

/// "FIELD:PATTERN" as typed after --match; nullopt with `error` (naming the fields) when FIELD
/// is unknown or PATTERN empty. Any thread.
std::optional<capture_pattern> parse_capture_match(std::string_view text, std::string& error);

class capture_matcher {
public:
    /// Compiles `patterns` (at least one) for `workers` workers. nullptr with `error` naming the
    /// pattern, its field and Hyperscan's message when one does not compile. Control core only.
    static std::shared_ptr<capture_matcher> compile(const std::vector<capture_pattern>& patterns, unsigned workers,
                                                    std::string& error);

    ~capture_matcher() = default;
    capture_matcher(const capture_matcher&) = delete;
    capture_matcher& operator=(const capture_matcher&) = delete;

    /// Worker `w` only: whether any pattern matches the parsed message `m` or, for source,
    /// `other_side` ("A.B.C.D:PORT"; empty: not scanned). No heap, no locks.
    [[nodiscard]] bool match(unsigned w, const message& m, std::string_view other_side) const noexcept;
    /// Worker `w` only: the same over bare values (empty values are not scanned).
    [[nodiscard]] bool match(unsigned w, const std::array<std::string_view, capture_field_count>& values) const noexcept;
    /// Whether a source pattern exists (then a message's other side alone may select it).
    [[nodiscard]] bool has_source() const noexcept { return hs_.has(static_cast<std::size_t>(capture_field::source)); }
    [[nodiscard]] unsigned workers() const noexcept { return hs_.workers(); }

private:
    capture_matcher() = default;
    hs_fields hs_;
};

}  // namespace sbc::sip
