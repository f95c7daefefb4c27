// Header and number rules: per trunk and per region, inbound and outbound, applied in the order
// written to new INVITEs and other out-of-dialog requests (docs/config.md "Header and number
// rules", docs/sip-engine.md). A rule adds, removes or replaces a header by name (its value may
// name ${trunk_fqdn}, ${peer}, ${ruri}), or rewrites the user part of the Request-URI, From, To
// or P-Asserted-Identity with a PCRE2 expression (JIT) and a replacement naming its groups
// ($1, ${12}), optionally setting ;user=phone.
//
// compile_rule() and rule_tables' destructor run on the control core (the tables live in
// proxy_tables and are freed with their snapshot after an RCU grace period; immutable once
// published). apply_rules() runs on a worker with that worker's rule_work (its PCRE2 match
// data): no heap, no locks; the rules edit a view of the message, and only when one changed
// something is the message written once into the caller's buffer and parsed again (what it
// copied unchanged taken from the original's parse: parse_rewritten in sip_message.h).
// Compiling is in sip_rules_compile.cc, applying in sip_rules.cc.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/counter.h"
#include "sip-fastpath/sip_editor.h"
#include "sip-fastpath/sip_message.h"

struct pcre2_real_code_8;
struct pcre2_real_match_data_8;
struct pcre2_real_match_context_8;

namespace sbc::sip {

enum class rule_kind : uint8_t { header_add, header_remove, header_replace, number };
/// The URI whose user part a number rule rewrites.
enum class rule_field : uint8_t { ruri, from, to, pai };
constexpr std::size_t rule_field_count = 4;

/// Rules in one snapshot (all trunks and regions together): each is counted on its own.
constexpr std::size_t max_rules = 256;
/// Longest header value or replacement text a rule may give (before variables are expanded).
constexpr std::size_t max_rule_text = 256;
/// Longest user part a number rule may produce; a longer result is a failure (rule skipped).
constexpr std::size_t max_rule_user = 128;
/// Capture groups a pattern may have ($0 is the whole match).
constexpr std::size_t max_rule_groups = 15;
/// Headers the rules may add to one message; more is a failure of the rule that adds.
constexpr std::size_t max_added_headers = 32;

/// "ruri", "from", "to", "pai"; "header_add", "header_remove", "header_replace", "number".
std::string_view rule_field_name(rule_field f) noexcept;
std::string_view rule_kind_name(rule_kind k) noexcept;

/// One piece of a value or replacement template: text, a variable, or a capture group.
struct rule_piece {
    enum class type : uint8_t { text, trunk_fqdn, peer, ruri, group };
    type t = type::text;
    uint8_t group = 0;
    std::string text;
};

/// A rule as the config gives it (control/config_rules.cc reads it from sbc.toml).
struct rule_spec {
    std::string name;  ///< for counters; "" gets "<owner>:<in|out>:<n>" from the loader
    rule_kind kind = rule_kind::number;
    std::string header;     ///< header rules: the header's name
    std::string value;      ///< header_add, header_replace: the value (variables allowed)
    rule_field field = rule_field::ruri;  ///< number
    std::string match;      ///< number: PCRE2 expression
    std::string replace;    ///< number: replacement ($N, ${N}, $$)
    bool user_phone = false;  ///< number: set ;user=phone on a URI it rewrote
};

struct regex_code_free {
    void operator()(pcre2_real_code_8* c) const noexcept;
};

/// A compiled rule. Immutable once its tables are published.
struct rule {
    std::string name;
    std::string owner;        ///< "trunk:NAME" or "region:NAME" (counters, sbc-sipcheck)
    bool outbound = false;    ///< direction "out"
    rule_kind kind = rule_kind::number;
    std::string header;       ///< as written (header_add writes it so)
    header_id hid = header_id::other;  ///< a known header matches its compact form too
    std::vector<rule_piece> value;     ///< header_add, header_replace
    rule_field field = rule_field::ruri;
    std::unique_ptr<pcre2_real_code_8, regex_code_free> code;  ///< number
    std::vector<rule_piece> replacement;  ///< number
    bool user_phone = false;
};

/// Where a refused rule went wrong: the key of the rule ("match", "replace", "header",
/// "value") and why.
struct rule_error {
    std::string key;
    std::string message;
};

/// Compiles `spec` into `out` (PCRE2 with JIT when the CPU has it). Refused: a pattern that
/// does not compile, with more than max_rule_groups groups, a replacement naming a group the
/// pattern lacks, a header name that is not a token or is one the proxy manages (Via, From, To,
/// Call-ID, CSeq, Contact, Route, Record-Route, Max-Forwards, Content-Length, Content-Type), a
/// value with CR, LF or an unknown ${variable}, text over max_rule_text. Control core only.
std::optional<rule_error> compile_rule(const rule_spec& spec, rule& out);

/// A run of consecutive rules in rule_tables::rules (one owner, one direction).
struct rule_set {
    uint32_t first = 0;
    uint32_t count = 0;
};

/// Every rule of a snapshot; a rule's index is its counter's index. Built by the control core
/// (control/config_rules.cc), read by workers.
struct rule_tables {
    std::vector<rule> rules;
    std::vector<rule_set> trunk_in, trunk_out;    ///< by trunk index
    std::vector<rule_set> region_in, region_out;  ///< by region index

    rule_tables();
    ~rule_tables();
    rule_tables(const rule_tables&) = delete;
    rule_tables& operator=(const rule_tables&) = delete;

    /// Shared by every worker (read only while matching): bounds a pattern's work per match.
    pcre2_real_match_context_8* match_context = nullptr;
};

/// One worker's PCRE2 match data (sized for max_rule_groups), created with the worker's
/// proxy on the control core; apply_rules() writes it. One owner.
class rule_work {
public:
    rule_work();
    ~rule_work();
    rule_work(const rule_work&) = delete;
    rule_work& operator=(const rule_work&) = delete;
    [[nodiscard]] pcre2_real_match_data_8* data() const noexcept { return md_; }

private:
    pcre2_real_match_data_8* md_ = nullptr;
};

/// What the variables of header values stand for while a rule set runs.
struct rule_context {
    std::string_view trunk_fqdn;  ///< the trunk's FQDN, else its address
    std::string_view peer;        ///< the peer's name ("" when the sender is none)
};

/// The per-rule counters apply_rules bumps (one writer: the worker), by rule index.
struct rule_counts {
    sbc::single_writer<uint64_t>* hits = nullptr;      ///< max_rules entries
    sbc::single_writer<uint64_t>* failures = nullptr;  ///< max_rules entries
};

enum class rule_outcome : uint8_t {
    unchanged,  ///< no rule changed anything (the message was not copied)
    rewritten,  ///< `out_msg` holds the rewritten message
    too_long,   ///< rules changed it, but the result did not fit `out` (or did not parse): unchanged
    as_edits,   ///< apply_rules_as_edits: `edits` holds the changes, for the editor to make
};

/// What header rules changed, as line edits of the message they ran on (sip_editor.h): lines
/// removed, lines replaced, the added headers before the blank line. Their text is in the
/// buffer apply_rules_as_edits was given.
struct rule_edits {
    static constexpr std::size_t capacity = 12;
    std::array<line_edit, capacity> lines;
    uint32_t n = 0;
    [[nodiscard]] std::span<const line_edit> view() const noexcept { return {lines.data(), n}; }
};

/// Applies the rule sets `sets` in turn (each in its order) to the request `m`; each rule sees
/// what the rules before it made. ${ruri} is m's Request-URI. When something changed, writes
/// the message into `out` and parses it into `out_msg` (which then points into `out`).
/// Worker only (with its own `work`); no heap.
rule_outcome apply_rules(const rule_tables& rt, std::span<const rule_set> sets, const message& m,
                         const rule_context& ctx, rule_work& work, rule_counts counts, std::span<char> out,
                         message& out_msg) noexcept;

/// apply_rules() for a message that is edited next anyway (an INVITE toward a peer): when only
/// header rules changed it, and in at most rule_edits::capacity lines, the changes go into
/// `edits` (their text into `out`) and the message is neither copied nor parsed again
/// (as_edits); otherwise as apply_rules (a number rule's rewrite: rewritten into `out_msg`).
rule_outcome apply_rules_as_edits(const rule_tables& rt, std::span<const rule_set> sets, const message& m,
                                  const rule_context& ctx, rule_work& work, rule_counts counts,
                                  std::span<char> out, message& out_msg, rule_edits& edits) noexcept;

}  // namespace sbc::sip
