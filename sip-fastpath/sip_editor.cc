// Proxy edits applied in one pass: a sorted list of (offset, bytes removed, bytes added)
// operations over the received message, copied into the output buffer.
// Any thread; no heap, no exceptions.
#include "sip-fastpath/sip_editor.h"

#include <cstring>

namespace sbc::sip {
namespace {

struct op {
  uint32_t at = 0;   // input offset
  uint32_t del = 0;  // input bytes skipped from `at`
  std::string_view piece[3];
  char num[10];      // digits for piece[1] when a number is written
  uint32_t size() const noexcept {
    return static_cast<uint32_t>(piece[0].size() + piece[1].size() + piece[2].size());
  }
};

constexpr std::size_t max_ops = 48;  // every edit once, up to 4 Route values popped, a Via splice,
                                     // and the Via and Record-Route lines topology hiding drops

struct op_list {
  op ops[max_ops];
  std::size_t n = 0;

  op& add(uint32_t at, uint32_t del) noexcept {
    op& o = ops[n++];
    o = op{};
    o.at = at;
    o.del = del;
    return o;
  }
  void set_number(op& o, std::string_view before, uint32_t v, std::string_view after) noexcept {
    o.piece[0] = before;
    o.piece[1] = std::string_view(o.num, write_uint(o.num, v));
    o.piece[2] = after;
  }
  // Stable: operations at one offset keep the order they were added in, except that pure
  // insertions go before an operation that removes input there (topology hiding drops the
  // first Via or Record-Route line where another edit inserts).
  void sort() noexcept {
    for (std::size_t i = 1; i < n; ++i) {
      op tmp = ops[i];
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

}  // namespace

write_result edit(const message& m, const edits& e, std::span<char> out) noexcept {
  if (m.kind == message_kind::invalid || m.headers_end == 0)
    return {m.first_error == error::none ? error::bad_start_line : m.first_error, 0};
  const std::string_view raw = m.raw;
  op_list ops;
  const uint32_t header_start = static_cast<uint32_t>(m.start_line.end()) +
                                ((m.raw[m.start_line.end()] == '\r') ? 2U : 1U);
  const uint32_t blank = blank_line(m);

  if (!e.request_uri.empty()) {
    if (!m.is_request()) return {error::bad_request_uri, 0};
    ops.add(m.request_uri.off, m.request_uri.len).piece[0] = e.request_uri;
  }
  const uint32_t via_at = m.h_via != no_header ? m.headers[m.h_via].line.off : header_start;
  if (!e.push_via.empty()) {
    op& o = ops.add(via_at, 0);
    o.piece[0] = "Via: ";
    o.piece[1] = e.push_via;
    o.piece[2] = "\r\n";
  }
  if (e.pop_via) {
    if (m.h_via == no_header) return {error::missing_via, 0};
    const header& h = m.headers[m.h_via];
    value_iter it(raw, h.value);
    span first;
    span second;
    error err = error::none;
    if (!it.next(first, err)) return {error::bad_via, 0};
    if (it.next(second, err)) {
      ops.add(first.off, second.off - first.off);  // "a, b" -> "b"
    } else {
      ops.add(h.line.off, h.line.len);
    }
  }
  if (e.drop_vias) {
    // After push_via: at the first line's offset the insertion comes first (stable sort).
    for (unsigned i = 0; i < m.header_count; ++i) {
      if (m.headers[i].id != header_id::via) continue;
      if (e.pop_via && i == m.h_via) continue;  // removed (in part) above already
      if (ops.n + 12 > max_ops) return {error::no_space, 0};
      ops.add(m.headers[i].line.off, m.headers[i].line.len);
    }
  }
  if (!e.contact.empty() && m.h_contact != no_header) {
    for (unsigned i = m.h_contact; i < m.header_count; ++i) {
      if (m.headers[i].id != header_id::contact) continue;
      if (ops.n + 12 > max_ops) return {error::no_space, 0};
      if (i == m.h_contact)
        ops.add(m.headers[i].value.off, m.headers[i].value.len).piece[0] = e.contact;
      else
        ops.add(m.headers[i].line.off, m.headers[i].line.len);
    }
  }
  if (!e.push_route.empty()) {
    // Before the pop_routes operations: at the first Route line's offset it comes first.
    op& o = ops.add(m.h_route != no_header ? m.headers[m.h_route].line.off : blank, 0);
    o.piece[0] = "Route: ";
    o.piece[1] = e.push_route;
    o.piece[2] = "\r\n";
  }
  if (e.via_params != nullptr && !e.via_params->text.empty()) {
    const via_splice& sp = *e.via_params;
    for (uint8_t k = 0; k < sp.n_cut && k < sp.cut.size(); ++k) ops.add(sp.cut[k].off, sp.cut[k].len);
    ops.add(sp.at, 0).piece[0] = sp.text;
  }
  if (unsigned k = e.pop_routes > 0 ? e.pop_routes : (e.pop_route ? 1u : 0u); k > 0 && m.h_route != no_header) {
    // The first k values of the Route headers, in order: a header whose values all go is
    // removed whole, a header that keeps some loses the span up to its first kept value.
    for (unsigned i = m.h_route; i < m.header_count && k > 0; ++i) {
      const header& h = m.headers[i];
      if (h.id != header_id::route) continue;
      value_iter it(raw, h.value);
      span v;
      error err = error::none;
      if (!it.next(v, err)) return {error::bad_route, 0};
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
      if (ops.n + 8 > max_ops) return {error::bad_route, 0};  // room for the edits after these
    }
  }
  if (!e.record_route.empty()) {
    uint32_t at = m.h_record_route != no_header ? m.headers[m.h_record_route].line.off
                                                : header_start;
    op& o = ops.add(at, 0);
    o.piece[0] = "Record-Route: ";
    o.piece[1] = e.record_route;
    o.piece[2] = "\r\n";
    if (!e.record_route_2.empty()) {
      op& o2 = ops.add(at, 0);  // same offset: the stable sort keeps it below the first
      o2.piece[0] = "Record-Route: ";
      o2.piece[1] = e.record_route_2;
      o2.piece[2] = "\r\n";
    }
  }
  if (e.drop_record_routes) {
    // After record_route: at the first line's offset the insertion comes first.
    for (unsigned i = 0; i < m.header_count; ++i) {
      if (m.headers[i].id != header_id::record_route) continue;
      if (ops.n + 8 > max_ops) return {error::no_space, 0};
      ops.add(m.headers[i].line.off, m.headers[i].line.len);
    }
  }
  if (e.decrement_max_forwards && m.is_request()) {
    if (m.h_max_forwards != no_header) {
      if (m.max_forwards <= 0) return {error::bad_max_forwards, 0};
      const header& h = m.headers[m.h_max_forwards];
      op& o = ops.add(h.value.off, h.value.len);
      ops.set_number(o, {}, static_cast<uint32_t>(m.max_forwards - 1), {});
    } else {
      ops.add(blank, 0).piece[0] = "Max-Forwards: 70\r\n";
    }
  }
  const std::string_view body = e.replace_body ? e.body : m.body.in(raw);
  if (e.replace_body && !e.content_type.empty()) {
    if (m.h_content_type != no_header) {
      const header& h = m.headers[m.h_content_type];
      ops.add(h.value.off, h.value.len).piece[0] = e.content_type;
    } else {
      op& o = ops.add(blank, 0);
      o.piece[0] = "Content-Type: ";
      o.piece[1] = e.content_type;
      o.piece[2] = "\r\n";
    }
  }
  if (body.size() > max_message_size) return {error::no_space, 0};
  if (m.h_content_length != no_header) {
    const header& h = m.headers[m.h_content_length];
    op& o = ops.add(h.value.off, h.value.len);
    ops.set_number(o, {}, static_cast<uint32_t>(body.size()), {});
  } else {
    op& o = ops.add(blank, 0);
    ops.set_number(o, "Content-Length: ", static_cast<uint32_t>(body.size()), "\r\n");
  }
  // The body: replaced, or cut to the declared length.
  {
    op& o = ops.add(m.headers_end, static_cast<uint32_t>(raw.size()) - m.headers_end);
    o.piece[0] = body;
  }
  ops.sort();
  // set_number views point into op::num, which moved with its op: re-point them.
  for (std::size_t i = 0; i < ops.n; ++i) {
    op& o = ops.ops[i];
    if (!o.piece[1].empty() && o.piece[1].data() >= reinterpret_cast<const char*>(&ops.ops[0]) &&
        o.piece[1].data() < reinterpret_cast<const char*>(&ops.ops[max_ops]))
      o.piece[1] = std::string_view(o.num, o.piece[1].size());
  }

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
    std::size_t chunk = o.at - r;
    std::memmove(w, in + r, chunk);
    w += chunk;
    r = o.at + o.del;
    // In place, inserted bytes must not overwrite input that is still to be read.
    if (overlap && w + o.size() > in + r) return {error::no_space, 0};
    for (std::string_view p : o.piece) {
      // memmove: an unchanged body is copied from the input, which may overlap.
      if (!p.empty()) std::memmove(w, p.data(), p.size());
      w += p.size();
    }
  }
  std::memmove(w, in + r, raw.size() - r);
  w += raw.size() - r;
  return {error::none, static_cast<uint32_t>(w - out.data())};
}

}  // namespace sbc::sip
