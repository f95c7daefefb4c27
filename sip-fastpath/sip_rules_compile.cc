// Header and number rules (see sip_rules.h), the control core's half: a rule from the config
// checked and compiled (PCRE2 with JIT, replacement and value templates split into pieces), the
// tables' shared match context and each worker's match data. Control core only (allocates).
#define PCRE2_CODE_UNIT_WIDTH 8
#include "sip-fastpath/sip_rules.h"

#include <pcre2.h>

#include <algorithm>
#include <array>

namespace sbc::sip {

namespace {

/// Work one match may do (backtracking steps): a pathological pattern fails, it never stalls a worker.
constexpr uint32_t rule_match_limit = 100000;

bool is_token_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("-.!%*_+`'~").find(c) != std::string_view::npos;
}

bool managed_header(header_id h)
{
    switch (h) {
    case header_id::via: case header_id::from: case header_id::to: case header_id::call_id: case header_id::cseq:
    case header_id::contact: case header_id::route: case header_id::record_route: case header_id::max_forwards:
    case header_id::content_length: case header_id::content_type: return true;
    default: return false;
    }
}

// A header value: text with ${trunk_fqdn}, ${peer}, ${ruri}.
std::optional<std::string> parse_value(std::string_view v, std::vector<rule_piece>& out)
{
    if (v.size() > max_rule_text) return "expected at most " + std::to_string(max_rule_text) + " characters, got " +
                                          std::to_string(v.size());
    if (v.find_first_of("\r\n") != std::string_view::npos) return "expected one line (no CR or LF)";
    std::string text;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i] != '$' || i + 1 >= v.size() || v[i + 1] != '{') {
            text += v[i];
            continue;
        }
        const std::size_t close = v.find('}', i);
        if (close == std::string_view::npos) return "expected '}' to close the variable at offset " + std::to_string(i);
        const std::string_view name = v.substr(i + 2, close - i - 2);
        rule_piece p;
        if (name == "trunk_fqdn") p.t = rule_piece::type::trunk_fqdn;
        else if (name == "peer") p.t = rule_piece::type::peer;
        else if (name == "ruri") p.t = rule_piece::type::ruri;
        else return "unknown variable ${" + std::string(name) + "}; expected ${trunk_fqdn}, ${peer} or ${ruri}";
        if (!text.empty()) out.push_back({rule_piece::type::text, 0, std::move(text)});
        text.clear();
        out.push_back(std::move(p));
        i = close;
    }
    if (!text.empty()) out.push_back({rule_piece::type::text, 0, std::move(text)});
    return std::nullopt;
}

// A replacement: text with $N, ${N} and $$ (a '$').
std::optional<std::string> parse_replacement(std::string_view v, uint32_t groups, std::vector<rule_piece>& out)
{
    if (v.size() > max_rule_text) return "expected at most " + std::to_string(max_rule_text) + " characters, got " +
                                          std::to_string(v.size());
    std::string text;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i] != '$') {
            text += v[i];
            continue;
        }
        unsigned n = 0;
        std::size_t digits = 0;
        if (i + 1 < v.size() && v[i + 1] == '$') {
            text += '$';
            ++i;
            continue;
        }
        if (i + 1 < v.size() && v[i + 1] >= '0' && v[i + 1] <= '9') {
            n = static_cast<unsigned>(v[i + 1] - '0');
            digits = 1;
            i += 1;
        } else if (i + 1 < v.size() && v[i + 1] == '{') {
            std::size_t j = i + 2;
            while (j < v.size() && v[j] >= '0' && v[j] <= '9' && j - i - 2 < 3) n = n * 10 + static_cast<unsigned>(v[j++] - '0');
            digits = j - i - 2;
            if (digits == 0 || j >= v.size() || v[j] != '}')
                return "expected $N, ${N} or $$ at offset " + std::to_string(i);
            i = j;
        } else {
            return "expected $N, ${N} or $$ at offset " + std::to_string(i) + " ('$' alone is written $$)";
        }
        if (n > groups)
            return "names group $" + std::to_string(n) + " but the pattern has " + std::to_string(groups) +
                   " capture group" + (groups == 1 ? "" : "s");
        if (!text.empty()) out.push_back({rule_piece::type::text, 0, std::move(text)});
        text.clear();
        out.push_back({rule_piece::type::group, static_cast<uint8_t>(n), {}});
    }
    if (!text.empty()) out.push_back({rule_piece::type::text, 0, std::move(text)});
    return std::nullopt;
}

}  // namespace

void regex_code_free::operator()(pcre2_real_code_8* c) const noexcept { pcre2_code_free_8(c); }

std::string_view rule_field_name(rule_field f) noexcept
{
    static constexpr std::array<std::string_view, rule_field_count> names{"ruri", "from", "to", "pai"};
    return names[static_cast<std::size_t>(f)];
}

std::string_view rule_kind_name(rule_kind k) noexcept
{
    static constexpr std::array<std::string_view, 4> names{"header_add", "header_remove", "header_replace", "number"};
    return names[static_cast<std::size_t>(k)];
}

std::optional<rule_error> compile_rule(const rule_spec& spec, rule& out)
{
    out = rule{};
    out.name = spec.name;
    out.kind = spec.kind;
    if (spec.kind != rule_kind::number) {
        if (spec.header.empty() || spec.header.size() > 64 ||
            !std::all_of(spec.header.begin(), spec.header.end(), is_token_char))
            return rule_error{"header", "expected a header name (1 to 64 letters, digits or -.!%*_+`'~), got \"" +
                                            spec.header + "\""};
        out.header = spec.header;
        out.hid = header_from_name(spec.header);
        if (managed_header(out.hid))
            return rule_error{"header", "\"" + spec.header +
                                            "\" is managed by the proxy and cannot be added, removed or replaced "
                                            "(a number rule rewrites the user part of From and To)"};
        if (spec.kind != rule_kind::header_remove)
            if (auto why = parse_value(spec.value, out.value)) return rule_error{"value", *why};
        return std::nullopt;
    }
    out.field = spec.field;
    out.user_phone = spec.user_phone;
    int code = 0;
    PCRE2_SIZE at = 0;
    pcre2_code* re = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(spec.match.data()), spec.match.size(), 0, &code, &at,
                                   nullptr);
    if (re == nullptr) {
        std::array<PCRE2_UCHAR, 256> msg{};
        pcre2_get_error_message(code, msg.data(), msg.size());
        return rule_error{"match", "expected a PCRE2 expression: " + std::string(reinterpret_cast<char*>(msg.data())) +
                                       " at offset " + std::to_string(at)};
    }
    out.code.reset(re);
    uint32_t groups = 0;
    pcre2_pattern_info(re, PCRE2_INFO_CAPTURECOUNT, &groups);
    if (groups > max_rule_groups)
        return rule_error{"match", "expected at most " + std::to_string(max_rule_groups) + " capture groups, got " +
                                       std::to_string(groups)};
    pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);  // without JIT (no support): interpreted
    if (auto why = parse_replacement(spec.replace, groups, out.replacement)) return rule_error{"replace", *why};
    return std::nullopt;
}

rule_tables::rule_tables() : match_context(pcre2_match_context_create(nullptr))
{
    if (match_context != nullptr) pcre2_set_match_limit(match_context, rule_match_limit);
}

rule_tables::~rule_tables() { pcre2_match_context_free(match_context); }

rule_work::rule_work() : md_(pcre2_match_data_create(max_rule_groups + 1, nullptr)) {}
rule_work::~rule_work() { pcre2_match_data_free(md_); }

}  // namespace sbc::sip
