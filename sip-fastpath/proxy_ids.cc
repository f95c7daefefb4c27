// Minting and reading the SBC's own identifiers (see proxy_ids.h). Any thread.
#include "sip-fastpath/proxy_ids.h"

#include <cstring>

namespace sbc::sip {

char* put_hex(char* out, uint64_t v, unsigned digits) noexcept
{
    static constexpr char hex[] = "0123456789abcdef";
    for (unsigned i = digits; i > 0; --i) {
        out[i - 1] = hex[v & 0xf];
        v >>= 4;
    }
    return out + digits;
}

bool get_hex(std::string_view s, uint64_t& v) noexcept
{
    if (s.empty() || s.size() > 16) return false;
    v = 0;
    for (char c : s) {
        unsigned d;
        if (c >= '0' && c <= '9')
            d = static_cast<unsigned>(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = static_cast<unsigned>(c - 'a' + 10);
        else
            return false;
        v = (v << 4) | d;
    }
    return true;
}

void write_branch(char* out, const txn_id& id) noexcept
{
    std::memcpy(out, branch_stateful.data(), branch_stateful.size());
    char* p = out + branch_stateful.size();
    p = put_hex(p, id.worker, 2);
    p = put_hex(p, id.slot, 8);
    p = put_hex(p, id.gen, 4);
    put_hex(p, id.attempt, 1);
}

bool read_branch(std::string_view b, txn_id& id) noexcept
{
    if (b.size() != branch_stateful_len || b.substr(0, branch_stateful.size()) != branch_stateful) return false;
    uint64_t w, s, g, a;
    const std::size_t o = branch_stateful.size();
    if (!get_hex(b.substr(o, 2), w) || !get_hex(b.substr(o + 2, 8), s) || !get_hex(b.substr(o + 10, 4), g) ||
        !get_hex(b.substr(o + 14, 1), a))
        return false;
    id = {static_cast<uint8_t>(w), static_cast<uint32_t>(s), static_cast<uint16_t>(g), static_cast<uint8_t>(a)};
    return true;
}

std::size_t write_stateless_branch(char* out, uint8_t worker, uint64_t key) noexcept
{
    char* p = out;
    std::memcpy(p, branch_stateless.data(), branch_stateless.size());
    p += branch_stateless.size();
    p = put_hex(p, worker, 2);
    p = put_hex(p, key, 12);
    return static_cast<std::size_t>(p - out);
}

int stateless_owner(std::string_view b) noexcept
{
    uint64_t w;
    if (b.size() < branch_stateless.size() + 2 || b.substr(0, branch_stateless.size()) != branch_stateless) return -1;
    if (!get_hex(b.substr(branch_stateless.size(), 2), w)) return -1;
    return static_cast<int>(w);
}

namespace {

/// Appends to a bounded buffer; `ok` turns false (and stays so) when something does not fit.
struct appender {
    std::span<char> out;
    std::size_t n = 0;
    bool ok = true;

    void put(std::string_view s) noexcept
    {
        if (!ok || n + s.size() > out.size()) {
            ok = false;
            return;
        }
        std::memcpy(out.data() + n, s.data(), s.size());
        n += s.size();
    }
    void hex(uint64_t v, unsigned digits) noexcept
    {
        char tmp[16];
        put_hex(tmp, v, digits);
        put({tmp, digits});
    }
    /// A port in decimal.
    void port(uint16_t v) noexcept
    {
        char tmp[5];
        unsigned n = 0;
        do {
            tmp[4 - n++] = static_cast<char>('0' + v % 10);
            v = static_cast<uint16_t>(v / 10);
        } while (v != 0);
        put({tmp + 5 - n, n});
    }
    /// host:port as in a Via sent-by or a SIP URI (IPv6 in brackets).
    void host_port(const endpoint& e) noexcept
    {
        if (!ok) return;
        const std::size_t len = format_endpoint(e, out.subspan(n));  // in place: no copy
        if (len == 0) ok = false;
        n += len;
    }
    [[nodiscard]] std::size_t done() const noexcept { return ok ? n : 0; }
};

}  // namespace

std::size_t write_via(std::span<char> out, const endpoint& local, std::string_view branch, const endpoint& src,
                      bool advertise_oc) noexcept
{
    appender a{out};
    a.put("SIP/2.0/");
    a.put(transport_via_name(local.proto));
    a.put(" ");
    a.host_port(local);
    a.put(";branch=");
    a.put(branch);
    a.put(";sbc-src=");
    if (src.addr.is_v6()) {
        for (uint8_t b : src.addr.v6_bytes()) a.hex(b, 2);
    } else {
        a.hex(src.addr.v4_host(), 8);
    }
    a.put(".");
    a.hex(src.port, 4);
    if (src.proto != transport::udp) {
        a.put(src.proto == transport::tcp ? ".t" : ".s");
        a.hex(src.conn, 8);
    }
    if (advertise_oc) a.put(";oc;oc-algo=\"loss\"");
    return a.done();
}

bool read_via_source(std::string_view v, endpoint& src) noexcept
{
    const std::size_t dot = v.find('.');
    if (dot != 8 && dot != 32) return false;
    uint64_t word;
    endpoint e;
    if (dot == 8) {
        if (!get_hex(v.substr(0, 8), word)) return false;
        e.addr = ip_address::v4(static_cast<uint32_t>(word));
    } else {
        std::array<uint8_t, 16> b{};
        for (std::size_t i = 0; i < 16; ++i) {
            if (!get_hex(v.substr(2 * i, 2), word)) return false;
            b[i] = static_cast<uint8_t>(word);
        }
        e.addr = ip_address::v6(b);
    }
    v.remove_prefix(dot + 1);
    if (v.size() < 4 || !get_hex(v.substr(0, 4), word)) return false;
    e.port = static_cast<uint16_t>(word);
    v.remove_prefix(4);
    if (!v.empty()) {
        if (v.size() != 10 || v[0] != '.' || (v[1] != 't' && v[1] != 's') || !get_hex(v.substr(2), word)) return false;
        e.proto = v[1] == 't' ? transport::tcp : transport::tls;
        e.conn = static_cast<connection_id>(word);
    }
    src = e;
    return true;
}

std::size_t write_record_route(std::span<char> out, const endpoint& local, uint8_t worker) noexcept
{
    return write_record_route(out, local, {}, worker);
}

std::size_t write_record_route(std::span<char> out, const endpoint& local, std::string_view host,
                               uint8_t worker) noexcept
{
    if (host.size() > max_fqdn_size) return 0;
    appender a{out};
    a.put("<sip:");
    if (host.empty()) {
        a.host_port(local);
    } else {
        a.put(host);
        a.put(":");
        a.port(local.port);
    }
    if (local.proto != transport::udp) {
        a.put(";transport=");
        a.put(transport_param_name(local.proto));
    }
    a.put(";lr;w=");
    a.hex(worker, 2);
    a.put(">");
    return a.done();
}

std::string_view param_value(std::string_view params, std::string_view name, bool& found) noexcept
{
    found = false;
    std::size_t i = 0;
    while (i < params.size()) {
        while (i < params.size() && (params[i] == ';' || params[i] == ' ' || params[i] == '\t')) ++i;
        std::size_t end = params.find(';', i);
        if (end == std::string_view::npos) end = params.size();
        std::string_view p = params.substr(i, end - i);
        const std::size_t eq = p.find('=');
        std::string_view n = p.substr(0, eq);
        while (!n.empty() && (n.back() == ' ' || n.back() == '\t')) n.remove_suffix(1);
        bool same = n.size() == name.size();
        for (std::size_t k = 0; same && k < n.size(); ++k) {
            char c = n[k];
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
            same = c == name[k];
        }
        if (same) {
            found = true;
            if (eq == std::string_view::npos) return {};
            std::string_view v = p.substr(eq + 1);
            while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
            return v;
        }
        i = end;
    }
    return {};
}

}  // namespace sbc::sip
