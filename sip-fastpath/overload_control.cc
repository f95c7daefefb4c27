// RFC 7339 overload control on byte spans (see overload_control.h). Any thread, except
// oc_server::stamp (worker only). No heap, no exceptions.
#include "sip-fastpath/overload_control.h"

#include "sip-fastpath/sip_numbers.h"
#include "sip-fastpath/sip_uri.h"

namespace sbc::sip {
namespace {

bool name_is(std::string_view n, std::string_view lower) noexcept
{
    if (n.size() != lower.size()) return false;
    for (std::size_t i = 0; i < n.size(); ++i) {
        char c = n[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != lower[i]) return false;
    }
    return true;
}

/// Digits only, at most `max_digits` of them (so the value fits); false otherwise.
bool read_digits(std::string_view s, std::size_t max_digits, uint64_t& v) noexcept
{
    if (s.empty() || s.size() > max_digits) return false;
    v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    return true;
}

/// oc-seq = 1*12DIGIT "." 1*5DIGIT (RFC 7339 section 9); a plain integer is taken too. In
/// units of 10^-5, so that any two values compare as numbers.
bool read_seq(std::string_view s, uint64_t& v) noexcept
{
    const std::size_t dot = s.find('.');
    uint64_t whole = 0, frac = 0;
    if (!read_digits(s.substr(0, dot), 12, whole)) return false;
    std::size_t frac_digits = 0;
    if (dot != std::string_view::npos) {
        const std::string_view f = s.substr(dot + 1);
        if (!read_digits(f, 5, frac)) return false;
        frac_digits = f.size();
    }
    for (std::size_t i = frac_digits; i < 5; ++i) frac *= 10;
    v = whole * 100000 + frac;
    return true;
}

/// Whether a quoted oc-algo list ("loss" or "loss,A", quotes optional) names the loss algorithm.
bool lists_loss(std::string_view v) noexcept
{
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    while (!v.empty()) {
        std::size_t comma = v.find(',');
        std::string_view tok = v.substr(0, comma);
        while (!tok.empty() && (tok.front() == ' ' || tok.front() == '\t')) tok.remove_prefix(1);
        while (!tok.empty() && (tok.back() == ' ' || tok.back() == '\t')) tok.remove_suffix(1);
        if (name_is(tok, "loss")) return true;
        if (comma == std::string_view::npos) break;
        v.remove_prefix(comma + 1);
    }
    return false;
}

/// Walks the parameters of a Via element, calling f(name, param, whole) for each; `whole`
/// spans the parameter with its ';' (and the white space before it). False on bad syntax.
template <class F>
bool each_param(std::string_view raw, span params, F f) noexcept
{
    param_iter it(raw, params.off, params.end(), true);
    it.strict = false;
    param p;
    bool bad = false;
    for (uint32_t start = it.pos; it.next(p, bad); start = it.pos) f(p.name.in(raw), p, make_span(start, it.pos));
    return !bad;
}

/// Whether `text` holds "oc=" in any case: a quick refusal looked for at each '=' (a Via has a
/// few), not at each 'o' (a hidden Via's encoded sbc-th value is full of them).
bool may_hold_oc_value(std::string_view text) noexcept
{
    for (std::size_t eq = text.find('='); eq != std::string_view::npos; eq = text.find('=', eq + 1))
        if (eq >= 2 && name_is(text.substr(eq - 2, 2), "oc")) return true;
    return false;
}

}  // namespace

oc_read read_oc_feedback(std::string_view raw, span params, oc_feedback& out) noexcept
{
    // Nearly every response from a peer carries our own bare ";oc" back: only "oc=" is news.
    // Branch and sbc-src values are hex, so they never hold "oc=".
    if (!may_hold_oc_value(params.in(raw))) return oc_read::none;
    oc_feedback f;
    bool has_value = false, invalid = false;
    const bool parsed = each_param(raw, params, [&](std::string_view n, const param& p, span) {
        const std::string_view v = p.value.in(raw);
        uint64_t x = 0;
        if (name_is(n, "oc")) {
            if (!p.has_value) return;
            has_value = true;
            if (read_digits(v, 3, x) && x <= 100)
                f.reduction = static_cast<uint8_t>(x);
            else
                invalid = true;
        } else if (name_is(n, "oc-algo")) {
            if (!p.has_value || !lists_loss(v)) invalid = true;  // another algorithm: not ours to follow
        } else if (name_is(n, "oc-validity")) {
            if (p.has_value && read_digits(v, 10, x))
                f.validity_ms = static_cast<uint32_t>(x < oc_max_validity_ms ? x : oc_max_validity_ms);
            else
                invalid = true;
        } else if (name_is(n, "oc-seq")) {
            if (p.has_value && read_seq(v, x)) {
                f.seq = x;
                f.has_seq = true;
            } else {
                invalid = true;
            }
        }
    });
    if (!has_value) return parsed ? oc_read::none : oc_read::invalid;
    if (!parsed || invalid) return oc_read::invalid;
    out = f;
    return oc_read::feedback;
}

bool oc_advertised(std::string_view raw, const via& v, via_splice& out) noexcept
{
    // Quick refusal: no "oc" anywhere in the parameters (most clients).
    const std::string_view text = v.params.in(raw);
    if (text.find("oc") == std::string_view::npos && text.find("OC") == std::string_view::npos) return false;
    via_splice s;
    bool oc = false, loss = true;
    const bool parsed = each_param(raw, v.params, [&](std::string_view n, const param& p, span whole) {
        const bool ours = name_is(n, "oc") || name_is(n, "oc-algo") || name_is(n, "oc-validity") || name_is(n, "oc-seq");
        if (!ours) return;
        if (name_is(n, "oc")) oc = true;
        if (name_is(n, "oc-algo")) loss = p.has_value && lists_loss(p.value.in(raw));
        if (s.n_cut < s.cut.size())
            s.cut[s.n_cut++] = whole;
        else
            loss = false;  // the same parameter over and over: not a client to answer
    });
    if (!parsed || !oc || !loss) return false;
    s.at = v.params.end();
    out = s;
    return true;
}

bool second_via(const message& m, via& out) noexcept
{
    if (m.h_via == no_header) return false;
    const header& first = m.headers[m.h_via];
    via top;
    uint32_t next = 0;
    if (!parse_via_at(m.raw, first.value.off, first.value.end(), top, next, false)) return false;
    while (next < first.value.end() && (m.raw[next] == ' ' || m.raw[next] == '\t' || m.raw[next] == '\r' ||
                                        m.raw[next] == '\n'))
        ++next;
    if (next < first.value.end() && m.raw[next] == ',')  // "ours, theirs"
        return parse_via_at(m.raw, next + 1, first.value.end(), out, next, false);
    for (unsigned i = m.h_via + 1u; i < m.header_count; ++i) {
        const header& h = m.headers[i];
        if (h.id == header_id::via) return parse_via_at(m.raw, h.value.off, h.value.end(), out, next, false);
    }
    return false;
}

std::size_t write_oc_stamp(std::span<char> out, uint8_t reduction, uint32_t validity_ms, uint64_t seq_ms) noexcept
{
    char buf[oc_stamp_max];
    std::size_t n = 0;
    auto put = [&](std::string_view s) {
        for (char c : s) buf[n++] = c;
    };
    auto num = [&](uint64_t v) {
        char tmp[20];
        std::size_t k = 0;
        do {
            tmp[k++] = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v != 0);
        while (k > 0) buf[n++] = tmp[--k];
    };
    put(";oc=");
    num(reduction);
    put(";oc-algo=\"loss\";oc-validity=");
    num(validity_ms);
    put(";oc-seq=");
    num(seq_ms / 1000);  // at most 20 digits; the whole text stays under oc_stamp_max
    put(".");
    const auto ms = static_cast<unsigned>(seq_ms % 1000);
    buf[n++] = static_cast<char>('0' + ms / 100);
    buf[n++] = static_cast<char>('0' + ms / 10 % 10);
    buf[n++] = static_cast<char>('0' + ms % 10);
    if (n > out.size()) return 0;
    for (std::size_t i = 0; i < n; ++i) out[i] = buf[i];
    return n;
}

std::string_view oc_server::stamp() noexcept
{
    const uint8_t r = reduction.load(std::memory_order_relaxed);
    if (!policy.stamp || (r == 0 && last == 0 && now_ms >= ending_until_ms)) return {};
    if (r == 0 && last != 0) ending_until_ms = now_ms + policy.validity_ms;  // it just ended: say so for a while
    last = r;
    if (r == 0 && now_ms >= ending_until_ms) return {};
    const std::size_t n = write_oc_stamp(text, r, r == 0 ? 0 : policy.validity_ms, now_ms);
    return {text.data(), n};
}

}  // namespace sbc::sip
