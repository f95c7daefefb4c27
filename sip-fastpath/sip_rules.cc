// Header and number rules (see sip_rules.h), the worker's half: apply_rules(). The rules edit a
// view of the message (per field the user part as it now is, per header line removed or
// replaced, headers added); the message is written once at the end, and only when a rule
// changed something. Worker only (any thread with its own rule_work); no heap.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "sip-fastpath/sip_rules.h"

#include <pcre2.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "common/counter.h"
#include "sip-fastpath/sip_writer.h"

namespace sbc::sip {

namespace {

bool iequals(std::string_view a, std::string_view b) noexcept
{
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}


/// A URI a number rule may rewrite, located in the message, and its user part as it now is.
struct field_state {
    bool located = false;
    bool present = false;   ///< has a user part to rewrite
    bool phone_ok = false;  ///< sip or sips: ;user=phone may be set
    bool angle = true;      ///< in <...> (or the Request-URI): a URI parameter may follow
    uint8_t line = no_header;  ///< its header line; no_header: the start line
    span uri;
    span user;
    span user_param;        ///< value of an existing user= parameter
    bool has_user_param = false;
    uint32_t insert_at = 0; ///< where ";user=phone" goes
    const char* cur = nullptr;
    uint32_t cur_len = 0;
    bool changed = false;
    bool phone = false;
    char buf[max_rule_user];
};

struct added_header {
    const rule* name_from;
    const rule* value_from;
};

/// What the rules made of a message so far. The arrays are not cleared (two of them per
/// message, on every new INVITE): replacement[i] is read only where `replaced` has bit i,
/// added only below n_added, a field's buf only once its rule wrote it.
struct state {
    state(const message& msg, const rule_context& c) noexcept : m(msg), ctx(c) {}
    const message& m;
    const rule_context& ctx;
    std::array<field_state, rule_field_count> f;
    uint64_t removed = 0;
    uint64_t replaced = 0;
    std::array<const rule*, max_headers> replacement;
    std::array<added_header, max_added_headers> added;
    uint32_t n_added = 0;
    bool changed = false;
};

/// The user part of `u` (the URI `text`, parsed) and where a `;user=` goes.
void locate_parsed_uri(std::string_view raw, span text, const uri& u, field_state& fs) noexcept
{
    fs.uri = text;
    if (u.scheme == uri_scheme::sip || u.scheme == uri_scheme::sips) {
        fs.user = u.user;
        fs.phone_ok = true;
        param p;
        if (find_param(raw, u.params, "user", p) && p.has_value) {
            fs.has_user_param = true;
            fs.user_param = p.value;
        }
        fs.insert_at = !u.params.empty() ? u.params.end() : !u.headers.empty() ? u.headers.off - 1u : text.end();
    } else if (u.scheme == uri_scheme::tel) {
        // tel:+4420... : the number runs to the first parameter.
        const std::string_view o = u.opaque.in(raw);
        const std::size_t n = std::min(o.find(';'), o.size());
        fs.user = span{u.opaque.off, static_cast<uint16_t>(n)};
    }
    fs.present = !fs.user.empty();
    fs.cur = raw.data() + fs.user.off;
    fs.cur_len = fs.user.len;
}

void locate_uri(std::string_view raw, span text, field_state& fs) noexcept
{
    uri u;
    if (parse_uri(raw, text, u)) locate_parsed_uri(raw, text, u, fs);
}

/// `parsed`: the parser's own read of this header (From, To of a message without errors),
/// the same call as below; else the header is read here.
void locate_name_addr(std::string_view raw, const header& h, uint8_t line, field_state& fs,
                      const name_addr* parsed = nullptr) noexcept
{
    name_addr na;
    uint32_t next = 0;
    if (parsed != nullptr)
        na = *parsed;
    else if (parse_name_addr_at(raw, h.value.off, h.value.end(), na, error::bad_header_line, next, false) != error::none)
        return;
    fs.line = line;
    fs.angle = na.angle;
    locate_uri(raw, na.uri_text, fs);
}

field_state& field(state& s, rule_field which) noexcept
{
    field_state& fs = s.f[static_cast<std::size_t>(which)];
    if (fs.located) return fs;
    fs.located = true;
    const message& m = s.m;
    // A message the parser found nothing wrong with: its Request-URI, From and To as it read
    // them (each parsed by the same calls as here), not parsed again.
    const bool clean = m.first_error == error::none && m.errors.empty();
    switch (which) {
    case rule_field::ruri:
        if (clean)
            locate_parsed_uri(m.raw, m.request_uri, m.ruri, fs);
        else
            locate_uri(m.raw, m.request_uri, fs);
        break;
    case rule_field::from:
        if (m.h_from != no_header) locate_name_addr(m.raw, m.headers[m.h_from], m.h_from, fs, clean ? &m.from : nullptr);
        break;
    case rule_field::to:
        if (m.h_to != no_header) locate_name_addr(m.raw, m.headers[m.h_to], m.h_to, fs, clean ? &m.to : nullptr);
        break;
    case rule_field::pai:
        for (unsigned i = 0; i < m.header_count; ++i)
            if (m.headers[i].id == header_id::other && iequals(m.text(m.headers[i].name), "P-Asserted-Identity")) {
                locate_name_addr(m.raw, m.headers[i], static_cast<uint8_t>(i), fs);
                break;
            }
        break;
    }
    return fs;
}

bool run_number(state& s, const rule& r, rule_work& work, pcre2_match_context* mctx, bool& failed) noexcept
{
    field_state& fs = field(s, r.field);
    if (!fs.present) return false;  // no such URI, or no user part: nothing to run
    pcre2_match_data* md = work.data();
    const int rc = pcre2_match(r.code.get(), reinterpret_cast<PCRE2_SPTR>(fs.cur), fs.cur_len, 0, 0, md, mctx);
    if (rc == PCRE2_ERROR_NOMATCH) return false;
    if (rc <= 0) {
        failed = true;  // the match limit, or another PCRE2 error: the rule is skipped
        return false;
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    char tmp[max_rule_user];
    writer w({tmp, sizeof tmp});
    const std::string_view cur(fs.cur, fs.cur_len);
    w.put(cur.substr(0, ov[0]));
    for (const rule_piece& p : r.replacement) {
        if (p.t == rule_piece::type::text) {
            w.put(p.text);
        } else if (static_cast<int>(p.group) < rc && ov[2 * p.group] != PCRE2_UNSET) {
            w.put(cur.substr(ov[2 * p.group], ov[2 * p.group + 1] - ov[2 * p.group]));
        }
    }
    w.put(cur.substr(ov[1]));
    const write_result res = w.result();
    if (!res.ok() || res.len == 0) {
        failed = true;  // longer than max_rule_user, or nothing left of the user part
        return false;
    }
    if (std::string_view(tmp, res.len) != cur) {
        std::memcpy(fs.buf, tmp, res.len);
        fs.cur = fs.buf;
        fs.cur_len = res.len;
        fs.changed = true;
    }
    if (r.user_phone && fs.phone_ok) fs.phone = fs.changed = true;
    s.changed |= fs.changed;
    return true;
}

bool names_line(const message& m, unsigned i, const rule& r) noexcept
{
    const header& h = m.headers[i];
    if (r.hid != header_id::other) return h.id == r.hid;
    return h.id == header_id::other && iequals(m.text(h.name), r.header);
}

bool names_added(const added_header& a, const rule& r) noexcept
{
    return r.hid != header_id::other ? a.name_from->hid == r.hid : iequals(a.name_from->header, r.header);
}

bool run_header(state& s, const rule& r, bool& failed) noexcept
{
    const message& m = s.m;
    bool did = false;
    switch (r.kind) {
    case rule_kind::header_add:
        if (s.n_added == max_added_headers) {
            failed = true;
            return false;
        }
        s.added[s.n_added++] = {&r, &r};
        did = true;
        break;
    case rule_kind::header_remove:
        for (unsigned i = 0; i < m.header_count; ++i)
            if ((s.removed >> i & 1) == 0 && names_line(m, i, r)) s.removed |= uint64_t{1} << i, did = true;
        for (uint32_t k = 0; k < s.n_added;)
            if (names_added(s.added[k], r)) {
                std::copy(s.added.begin() + k + 1, s.added.begin() + s.n_added, s.added.begin() + k);
                --s.n_added;
                did = true;
            } else {
                ++k;
            }
        break;
    case rule_kind::header_replace:
        for (unsigned i = 0; i < m.header_count; ++i)
            if ((s.removed >> i & 1) == 0 && names_line(m, i, r)) {
                s.replaced |= uint64_t{1} << i;
                s.replacement[i] = &r;
                did = true;
            }
        for (uint32_t k = 0; k < s.n_added; ++k)
            if (names_added(s.added[k], r)) s.added[k].value_from = &r, did = true;
        break;
    case rule_kind::number: break;
    }
    s.changed |= did;
    return did;
}

void put_value(writer& w, const state& s, const rule& r) noexcept
{
    for (const rule_piece& p : r.value) {
        switch (p.t) {
        case rule_piece::type::text: w.put(p.text); break;
        case rule_piece::type::trunk_fqdn: w.put(s.ctx.trunk_fqdn); break;
        case rule_piece::type::peer: w.put(s.ctx.peer); break;
        case rule_piece::type::ruri: w.put(s.m.text(s.m.request_uri)); break;
        case rule_piece::type::group: break;
        }
    }
}

/// raw[a, b) with field `fs`'s URI rewritten (new user, ;user=phone, <> when it needs them).
void put_with_field(writer& w, std::string_view raw, uint32_t a, uint32_t b, const field_state& fs) noexcept
{
    const bool wrap = fs.phone && !fs.has_user_param && !fs.angle;
    auto copy = [&](uint32_t from, uint32_t to) { w.put(raw.substr(from, to - from)); };
    uint32_t at = a;
    if (wrap) {
        copy(at, fs.uri.off);
        w.put("<");
        at = fs.uri.off;
    }
    copy(at, fs.user.off);
    w.put(std::string_view(fs.cur, fs.cur_len));
    at = fs.user.end();
    if (fs.phone && fs.has_user_param) {
        copy(at, fs.user_param.off);
        w.put("phone");
        at = fs.user_param.end();
    } else if (fs.phone) {
        copy(at, fs.insert_at);
        w.put(";user=phone");
        at = fs.insert_at;
    }
    if (wrap) {
        copy(at, fs.uri.end());
        w.put(">");
        at = fs.uri.end();
    }
    copy(at, b);
}

/// Header line `i` of the message as its header_replace rule made it.
void put_replaced(writer& w, const state& s, unsigned i) noexcept
{
    w.put(s.m.text(s.m.headers[i].name));
    w.put(": ");
    put_value(w, s, *s.replacement[i]);
    w.put("\r\n");
}

/// The headers the rules added, one line each, in their order.
void put_added(writer& w, const state& s) noexcept
{
    for (uint32_t k = 0; k < s.n_added; ++k) {
        w.put(s.added[k].name_from->header);
        w.put(": ");
        put_value(w, s, *s.added[k].value_from);
        w.put("\r\n");
    }
}

/// The message as the rules left it, into `out`; `map` says which lines are the original's
/// (parse_rewritten() takes what they parsed to instead of parsing them again).
write_result write_message(const state& s, std::span<char> out, rewrite_map& map) noexcept
{
    const message& m = s.m;
    const std::string_view raw = m.raw;
    writer w(out);
    const uint32_t first_line = m.headers[0].line.off;
    const field_state& ruri = s.f[static_cast<std::size_t>(rule_field::ruri)];
    map.start_line_kept = !ruri.changed;
    map.count = 0;
    if (ruri.changed) put_with_field(w, raw, 0, first_line, ruri);
    else w.put(raw.substr(0, first_line));
    for (unsigned i = 0; i < m.header_count; ++i) {
        const header& h = m.headers[i];
        if ((s.removed >> i & 1) != 0) continue;
        line_origin& o = map.lines[map.count < max_headers ? map.count++ : max_headers - 1];
        o = line_origin{no_header, 0};
        if ((s.replaced >> i & 1) != 0) {
            put_replaced(w, s, i);
            continue;
        }
        const field_state* fs = nullptr;
        for (std::size_t k = 1; k < rule_field_count; ++k)
            if (s.f[k].changed && s.f[k].line == i) fs = &s.f[k];
        if (fs != nullptr) {
            put_with_field(w, raw, h.line.off, h.line.end(), *fs);
        } else {
            o = line_origin{static_cast<uint8_t>(i), static_cast<int32_t>(w.p - w.begin) - h.line.off};
            w.put(m.text(h.line));
        }
    }
    put_added(w, s);
    const uint32_t last = m.headers[m.header_count - 1].line.end();
    w.put(raw.substr(last, m.headers_end > last ? m.headers_end - last : 0));  // the empty line
    w.put(m.text(m.body));
    return w.result();
}

/// The header rules' changes of `s` (no field changed) as line edits, their text into `out`;
/// false when they need more than rule_edits::capacity lines or `out` is too small.
bool write_edits(const state& s, std::span<char> out, rule_edits& re) noexcept
{
    const message& m = s.m;
    writer w(out);
    re.n = 0;
    auto text_from = [&](char* start) { return std::string_view(start, static_cast<std::size_t>(w.p - start)); };
    for (unsigned i = 0; i < m.header_count; ++i) {
        const bool removed = (s.removed >> i & 1) != 0;
        if (!removed && (s.replaced >> i & 1) == 0) continue;
        if (re.n == rule_edits::capacity) return false;
        const header& h = m.headers[i];
        char* start = w.p;
        if (!removed) put_replaced(w, s, i);
        re.lines[re.n++] = line_edit{h.line.off, h.line.len, text_from(start)};
    }
    if (s.n_added != 0) {
        if (re.n == rule_edits::capacity) return false;
        char* start = w.p;
        put_added(w, s);
        re.lines[re.n++] = line_edit{m.headers[m.header_count - 1].line.end(), 0, text_from(start)};
    }
    return w.result().ok();
}

/// The rule sets run over `s` in turn, counting each rule's hits and failures.
void run_rules(const rule_tables& rt, std::span<const rule_set> sets, state& s, rule_work& work,
               rule_counts counts) noexcept
{
    for (const rule_set& set : sets) {
        for (uint32_t i = set.first; i < set.first + set.count && i < rt.rules.size(); ++i) {
            const rule& r = rt.rules[i];
            bool failed = false;
            const bool hit = r.kind == rule_kind::number ? run_number(s, r, work, rt.match_context, failed)
                                                         : run_header(s, r, failed);
            if (hit && i < max_rules) counts.hits[i].bump();
            if (failed && i < max_rules) counts.failures[i].bump();
        }
    }
}

/// The message as the rules of `s` left it, written into `out` and parsed into `out_msg`.
rule_outcome rewrite(const state& s, std::span<char> out, message& out_msg) noexcept
{
    const message& m = s.m;
    rewrite_map map;
    const write_result w = write_message(s, out, map);
    if (!w.ok()) return rule_outcome::too_long;
    parse_rewritten(std::string_view(out.data(), w.len), m, map, out_msg);
    if (!out_msg.is_request() || (out_msg.first_error != error::none && m.first_error == error::none))
        return rule_outcome::too_long;
    return rule_outcome::rewritten;
}

bool any_field_changed(const state& s) noexcept
{
    for (const field_state& f : s.f)
        if (f.changed) return true;
    return false;
}

}  // namespace

rule_outcome apply_rules(const rule_tables& rt, std::span<const rule_set> sets, const message& m,
                         const rule_context& ctx, rule_work& work, rule_counts counts, std::span<char> out,
                         message& out_msg) noexcept
{
    if (!m.is_request() || m.header_count == 0) return rule_outcome::unchanged;
    state s(m, ctx);
    run_rules(rt, sets, s, work, counts);
    if (!s.changed) return rule_outcome::unchanged;
    return rewrite(s, out, out_msg);
}

rule_outcome apply_rules_as_edits(const rule_tables& rt, std::span<const rule_set> sets, const message& m,
                                  const rule_context& ctx, rule_work& work, rule_counts counts,
                                  std::span<char> out, message& out_msg, rule_edits& edits) noexcept
{
    edits.n = 0;
    if (!m.is_request() || m.header_count == 0) return rule_outcome::unchanged;
    state s(m, ctx);
    run_rules(rt, sets, s, work, counts);
    if (!s.changed) return rule_outcome::unchanged;
    if (!any_field_changed(s) && write_edits(s, out, edits)) return rule_outcome::as_edits;
    edits.n = 0;
    return rewrite(s, out, out_msg);
}

}  // namespace sbc::sip
