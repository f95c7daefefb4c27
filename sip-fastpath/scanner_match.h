// Scanner signatures with Hyperscan: patterns over the values of User-Agent, From and To that
// name the tools attackers use to map SIP services (SIPVicious's "friendly-scanner", sipcli,
// ...). One block-mode database per field holds the shipped list (unless [scanner] defaults =
// false) and the operator's own patterns; every pattern matches without regard to case. One
// scan per field, stopping at the first signature that matches, tells the proxy to drop or
// refuse a request (sip-fastpath/stage_guard.cc) and whether to report its source for denial.
// compile() and the destructor run on the control core (the matcher lives in proxy_tables and
// is freed with its snapshot after an RCU grace period); match() runs on worker `w` only, with
// that worker's scratch: no heap, no locks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sip-fastpath/hs_fields.h"
#include "sip-fastpath/sip_message.h"

namespace sbc::sip {

/// The header a signature looks at (its whole value, display name and parameters included).
enum class scanner_field : uint8_t { user_agent, from, to };
constexpr std::size_t scanner_field_count = 3;
static_assert(scanner_field_count <= match_field_count, "hs_fields holds one database per field");

/// "user_agent", "from", "to".
std::string_view scanner_field_name(scanner_field f) noexcept;

/// One signature of the shipped list, with the tool it names (docs/config.md lists them).
struct scanner_signature {
    scanner_field field;
    const char* pattern;  ///< Hyperscan expression, matched without regard to case
    const char* tool;
};
/// The shipped list, on unless [scanner] defaults = false.
std::span<const scanner_signature> default_scanner_signatures() noexcept;

/// What happens to a request that matches: no answer at all, or a final response.
enum class scanner_action : uint8_t { drop, respond };

struct scanner_policy {
    scanner_action action = scanner_action::drop;
    uint16_t respond_code = 403;  ///< action respond: the final response, 400..699
    bool deny = true;             ///< report the source for the deny list
};

/// One pattern to compile: the field, the expression, and whether it came from the shipped list.
struct scanner_pattern {
    scanner_field field = scanner_field::user_agent;
    std::string expr;
    bool builtin = false;
};

/// The outcome of match(): the first signature found (fields in the order User-Agent, From, To).
struct scanner_hit {
    bool matched = false;
    scanner_field field = scanner_field::user_agent;
    bool builtin = false;  ///< a signature of the shipped list (else the operator's)
};

class scanner_matcher {
public:
    /// Compiles `patterns` (block mode, caseless, single match) into one database per field and
    /// allocates one scratch per worker. nullptr with `error` naming the pattern, its field and
    /// Hyperscan's message when one does not compile, or when scratch cannot be allocated.
    /// An empty list gives a matcher that never matches. Control core only.
    static std::shared_ptr<scanner_matcher> compile(const std::vector<scanner_pattern>& patterns,
                                                    const scanner_policy& policy, unsigned workers,
                                                    std::string& error);
    /// The shipped list (when `defaults`) followed by `extra`.
    static std::vector<scanner_pattern> with_defaults(bool defaults, std::vector<scanner_pattern> extra);
    /// Whether `expr` compiles as a scanner pattern; false with Hyperscan's message in `error`
    /// (the config loader refuses the file with it). Control core only (allocates).
    static bool check(const std::string& expr, std::string& error);

    ~scanner_matcher() = default;  ///< frees databases and scratches (hs_fields)
    scanner_matcher(const scanner_matcher&) = delete;
    scanner_matcher& operator=(const scanner_matcher&) = delete;

    /// Worker `w` only: the first signature that matches the request `m` (User-Agent, then
    /// From, then To; each field scanned once, absent headers skipped). No heap, no locks.
    [[nodiscard]] scanner_hit match(unsigned w, const message& m) const noexcept;
    /// The same over bare values (tests, tools); an empty value is not scanned.
    [[nodiscard]] scanner_hit match(unsigned w, std::string_view user_agent, std::string_view from,
                                    std::string_view to) const noexcept;

    [[nodiscard]] const scanner_policy& policy() const noexcept { return policy_; }
    [[nodiscard]] unsigned workers() const noexcept { return hs_.workers(); }
    /// Patterns compiled for `f` (for tests and logs).
    [[nodiscard]] std::size_t patterns(scanner_field f) const noexcept { return counts_[static_cast<std::size_t>(f)]; }

private:
    scanner_matcher() = default;

    hs_fields hs_;
    scanner_policy policy_;
    std::array<std::size_t, scanner_field_count> counts_{};
};

}  // namespace sbc::sip
