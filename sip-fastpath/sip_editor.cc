// Proxy edits applied in one pass: a sorted list of (offset, bytes removed, bytes added)
// operations over the received message, copied into the output buffer. edit() collects the
// operations in named steps (start line, Vias, Contact, Routes, Record-Routes, Max-Forwards,
// body), then sorts and writes them. Any thread; no heap, no exceptions.
#include "sip-fastpath/sip_editor.h"

#include <cstring>

namespace sbc::sip {
namespace {

/// A piece of text an operation inserts. Plain data on purpose: the list below is not cleared
/// before use (an edit of a call's INVITE adds about eight operations out of 48 slots).
struct piece {
  const char* p;
  uint32_t n;
};

struct op {
  uint32_t at;   // input offset
  uint32_t del;  // input bytes skipped from `at`
  piece pieces[3];
  [[nodiscard]] uint32_t size() const noexcept { return pieces[0].n + pieces[1].n + pieces[2].n; }
};

constexpr std::size_t max_ops = 48;  // every edit once, up to 4 Route values popped, a Via splice,
                                     // and the Via and Record-Route lines topology hiding drops
constexpr std::size_t max_numbers = 2;  // Max-Forwards and Content-Length

struct op_list {
  op ops[max_ops];  // ops[0, n) are written; the rest is never read
  std::size_t n = 0;
  char num[max_numbers][10];  // digits written for an operation (stable: the list does not move)
  std::size_t n_num = 0;

  [[nodiscard]] bool room(std::size_t k) const noexcept { return n + k <= max_ops; }
  op& add(uint32_t at, uint32_t del) noexcept {
    op& o = ops[n++];
    o.at = at;
    o.del = del;
    o.pieces[0] = o.pieces[1] = o.pieces[2] = piece{nullptr, 0};
    return o;
  }
  /// An operation that writes `before`, a number, `after` (its digits kept in num[]).
  void set_number(op& o, std::string_view before, uint32_t v, std::string_view after) noexcept {
    char* d = num[n_num++];
    o.pieces[0] = {before.data(), static_cast<uint32_t>(before.size())};
    o.pieces[1] = {d, static_cast<uint32_t>(write_uint(d, v))};
    o.pieces[2] = {after.data(), static_cast<uint32_t>(after.size())};
  }
  /// A whole line "name" + value + CRLF inserted at `at`.
  void insert_line(uint32_t at, std::string_view name, std::string_view value) noexcept {
    op& o = add(at, 0);
    o.pieces[0] = {name.data(), static_cast<uint32_t>(name.size())};
    o.pieces[1] = {value.data(), static_cast<uint32_t>(value.size())};
    o.pieces[2] = {"\r\n", 2};
  }
  /// Replaces input [at, at + del) by `text`.
  void replace(uint32_t at, uint32_t del, std::string_view text) noexcept {
    add(at, del).pieces[0] = {text.data(), static_cast<uint32_t>(text.size())};
  }
  // Stable: operations at one offset keep the order they were added in, except that pure
  // insertions go before an operation that removes input there (topology hiding drops the
  // first Via or Record-Route line where another edit inserts).
  void sort() noexcept {
    for (std::size_t i = 1; i < n; ++i) {
      const op tmp = ops[i];
      std::size_t j = i;
      while (j > 0 && (ops[j - 1].at > tmp.at || (ops[j - 1].at == tmp.at && ops[j - 1].del != 0 && tmp.del == 0))) {
        ops[j] = ops[j - 1];
        --j;
      }
      ops[j] = tmp;
    }
  }
};

// Offset of the empty line that ends the header block.
uint32_t blank_line(const message& m) noexcept {
  uint32_t he = m.headers_end;
  return (he >= 2 && m.raw[he - 2] == '\r') ? he - 2 : he - 1;
}

/// Where the first header line starts.
uint32_t header_start(const message& m) noexcept {
  return static_cast<uint32_t>(m.start_line.end()) + ((m.raw[m.start_line.end()] == '\r') ? 2U : 1U);
}

/// Removes every line of header `id` (from `first` on), but line `skip`; no_space when the
/// list cannot take them and `reserve` more.
error drop_lines(const message& m, header_id id, unsigned first, unsigned skip, std::size_t reserve,
                 op_list& ops) noexcept {
  for (unsigned i = first; i < m.header_count; ++i) {
    if (m.headers[i].id != id || i == skip) continue;
    if (!ops.room(reserve + 1)) return error::no_space;
    ops.add(m.headers[i].line.off, m.headers[i].line.len);
  }
  return error::none;
}

/// push_via, pop_via, drop_vias and the RFC 7339 splice.
error via_ops(const message& m, const edits& e, op_list& ops) noexcept {
  if (!e.push_via.empty())
    ops.insert_line(m.h_via != no_header ? m.headers[m.h_via].line.off : header_start(m), "Via: ", e.push_via);
  if (e.pop_via) {
    if (m.h_via == no_header) return error::missing_via;
    const header& h = m.headers[m.h_via];
    value_iter it(m.raw, h.value);
    span first;
    span second;
    error err = error::none;
    if (!it.next(first, err)) return error::bad_via;
    if (it.next(second, err))
      ops.add(first.off, second.off - first.off);  // "a, b" -> "b"
    else
      ops.add(h.line.off, h.line.len);
  }
  // After push_via: at the first line's offset the insertion comes first (stable sort).
  if (e.drop_vias && drop_lines(m, header_id::via, 0, e.pop_via ? m.h_via : no_header, 11, ops) != error::none)
    return error::no_space;
  if (e.via_params != nullptr && !e.via_params->text.empty()) {
    const via_splice& sp = *e.via_params;
    for (uint8_t k = 0; k < sp.n_cut && k < sp.cut.size(); ++k) ops.add(sp.cut[k].off, sp.cut[k].len);
    ops.replace(sp.at, 0, sp.text);
  }
  return error::none;
}

/// The first Contact line's value replaced, the others removed.
error contact_ops(const message& m, const edits& e, op_list& ops) noexcept {
  if (e.contact.empty() || m.h_contact == no_header) return error::none;
  ops.replace(m.headers[m.h_contact].value.off, m.headers[m.h_contact].value.len, e.contact);
  return drop_lines(m, header_id::contact, m.h_contact + 1u, no_header, 11, ops);
}

/// push_route, then the first k values of the Route headers, in order: a header whose values
/// all go is removed whole, a header that keeps some loses the span up to its first kept value.
error route_ops(const message& m, const edits& e, op_list& ops) noexcept {
  if (!e.push_route.empty())  // before the pops: at the first Route line's offset it comes first
    ops.insert_line(m.h_route != no_header ? m.headers[m.h_route].line.off : blank_line(m), "Route: ", e.push_route);
  unsigned k = e.pop_routes > 0 ? e.pop_routes : (e.pop_route ? 1u : 0u);
  if (k == 0 || m.h_route == no_header) return error::none;
  for (unsigned i = m.h_route; i < m.header_count && k > 0; ++i) {
    const header& h = m.headers[i];
    if (h.id != header_id::route) continue;
    value_iter it(m.raw, h.value);
    span v;
    error err = error::none;
    if (!it.next(v, err)) return error::bad_route;
    const uint32_t first = v.off;
    bool kept = false;
    while (k > 0) {
      --k;
      if (!it.next(v, err)) break;
      if (k == 0) kept = true;
    }
    if (kept)
      ops.add(first, v.off - first);  // "<a>, <b>" -> "<b>"
    else
      ops.add(h.line.off, h.line.len);
    if (!ops.room(8)) return error::bad_route;  // room for the edits after these
  }
  return error::none;
}

/// Our Record-Route(s) on top, and drop_record_routes.
error record_route_ops(const message& m, const edits& e, op_list& ops) noexcept {
  if (!e.record_route.empty()) {
    const uint32_t at = m.h_record_route != no_header ? m.headers[m.h_record_route].line.off : header_start(m);
    ops.insert_line(at, "Record-Route: ", e.record_route);
    // Same offset: the stable sort keeps it below the first.
    if (!e.record_route_2.empty()) ops.insert_line(at, "Record-Route: ", e.record_route_2);
  }
  // After record_route: at the first line's offset the insertion comes first.
  if (e.drop_record_routes && drop_lines(m, header_id::record_route, 0, no_header, 7, ops) != error::none)
    return error::no_space;
  return error::none;
}

/// Max-Forwards decremented (RFC 3261 16.6 step 3), or added when absent.
error max_forwards_ops(const message& m, const edits& e, op_list& ops) noexcept {
  if (!e.decrement_max_forwards || !m.is_request()) return error::none;
  if (m.h_max_forwards == no_header) {
    ops.replace(blank_line(m), 0, "Max-Forwards: 70\r\n");
    return error::none;
  }
  if (m.max_forwards <= 0) return error::bad_max_forwards;
  const header& h = m.headers[m.h_max_forwards];
  ops.set_number(ops.add(h.value.off, h.value.len), {}, static_cast<uint32_t>(m.max_forwards - 1), {});
  return error::none;
}

/// The body (replaced, or cut to the declared length), its Content-Type when given, and a
/// Content-Length that matches it.
error body_ops(const message& m, const edits& e, op_list& ops) noexcept {
  const std::string_view body = e.replace_body ? e.body : m.body.in(m.raw);
  if (e.replace_body && !e.content_type.empty()) {
    if (m.h_content_type != no_header)
      ops.replace(m.headers[m.h_content_type].value.off, m.headers[m.h_content_type].value.len, e.content_type);
    else
      ops.insert_line(blank_line(m), "Content-Type: ", e.content_type);
  }
  if (body.size() > max_message_size) return error::no_space;
  const auto len = static_cast<uint32_t>(body.size());
  if (m.h_content_length != no_header) {
    const header& h = m.headers[m.h_content_length];
    ops.set_number(ops.add(h.value.off, h.value.len), {}, len, {});
  } else {
    ops.set_number(ops.add(blank_line(m), 0), "Content-Length: ", len, "\r\n");
  }
  ops.replace(m.headers_end, static_cast<uint32_t>(m.raw.size()) - m.headers_end, body);
  return error::none;
}

/// Another stage's line edits (edits::lines), last: at an offset where the steps above
/// inserted too (the blank line), they come after them.
error line_ops(const message& m, const edits& e, op_list& ops) noexcept {
  if (!ops.room(e.lines.size())) return error::no_space;
  for (const line_edit& l : e.lines) {
    if (l.at > m.raw.size() || l.del > m.raw.size() - l.at) return error::bad_header_line;
    ops.replace(l.at, l.del, l.text);
  }
  return error::none;
}

/// Copies the input with the sorted operations applied into `out`; in place (out holding the
/// input) only while no write overtakes input not yet read.
write_result write_ops(std::string_view raw, const op_list& ops, std::span<char> out) noexcept {
  // Size first, so that a message that does not fit leaves the input untouched.
  uint64_t total = raw.size();
  for (std::size_t i = 0; i < ops.n; ++i) total = total - ops.ops[i].del + ops.ops[i].size();
  if (total > out.size() || total > max_message_size) return {error::no_space, 0};
  const char* in = raw.data();
  char* w = out.data();
  const bool overlap = in < out.data() + out.size() && out.data() < in + raw.size();
  uint32_t r = 0;
  for (std::size_t i = 0; i < ops.n; ++i) {
    const op& o = ops.ops[i];
    if (o.at < r) return {error::bad_header_line, 0};  // overlapping edits: cannot happen
    // In place, the writer must never be ahead of the reader.
    if (overlap && w > in + r) return {error::no_space, 0};
    const std::size_t chunk = o.at - r;
    std::memmove(w, in + r, chunk);
    w += chunk;
    r = o.at + o.del;
    // In place, inserted bytes must not overwrite input that is still to be read.
    if (overlap && w + o.size() > in + r) return {error::no_space, 0};
    for (const piece& p : o.pieces) {
      // memmove: an unchanged body is copied from the input, which may overlap.
      if (p.n != 0) std::memmove(w, p.p, p.n);
      w += p.n;
    }
  }
  std::memmove(w, in + r, raw.size() - r);
  w += raw.size() - r;
  return {error::none, static_cast<uint32_t>(w - out.data())};
}

write_result edit_impl(const message& m, const edits& e, std::span<char> out, edit_shifts* shifts) noexcept {
  if (m.kind == message_kind::invalid || m.headers_end == 0)
    return {m.first_error == error::none ? error::bad_start_line : m.first_error, 0};
  op_list ops;
  if (!e.request_uri.empty()) {
    if (!m.is_request()) return {error::bad_request_uri, 0};
    ops.replace(m.request_uri.off, m.request_uri.len, e.request_uri);
  }
  for (error (*step)(const message&, const edits&, op_list&) :
       {via_ops, contact_ops, route_ops, record_route_ops, max_forwards_ops, body_ops, line_ops}) {
    if (const error err = step(m, e, ops); err != error::none) return {err, 0};
  }
  ops.sort();
  if (shifts != nullptr) {
    shifts->n = 0;
    shifts->complete = ops.n <= edit_shifts::capacity;
    for (std::size_t i = 0; i < ops.n && i < edit_shifts::capacity; ++i) {
      const op& o = ops.ops[i];
      shifts->ops[shifts->n++] = {o.at, static_cast<int32_t>(o.size()) - static_cast<int32_t>(o.del), o.del == 0};
    }
  }
  return write_ops(m.raw, ops, out);
}

}  // namespace

write_result edit(const message& m, const edits& e, std::span<char> out) noexcept {
  return edit_impl(m, e, out, nullptr);
}

write_result edit(const message& m, const edits& e, std::span<char> out, edit_shifts& shifts) noexcept {
  return edit_impl(m, e, out, &shifts);
}

}  // namespace sbc::sip
