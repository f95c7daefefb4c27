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

int stateless_owner(std::string_view b) noexcept
{
    uint64_t w;
    if (b.size() < branch_stateless.size() + 2 || b.substr(0, branch_stateless.size()) != branch_stateless) return -1;
    if (!get_hex(b.substr(branch_stateless.size(), 2), w)) return -1;
    return static_cast<int>(w);
}

char* put_ipv4(char* out, uint32_t ip) noexcept
{
    for (int i = 3; i >= 0; --i) {
        unsigned o = (ip >> (i * 8)) & 0xff;
        if (o >= 100) *out++ = static_cast<char>('0' + o / 100);
        if (o >= 10) *out++ = static_cast<char>('0' + (o / 10) % 10);
        *out++ = static_cast<char>('0' + o % 10);
        if (i != 0) *out++ = '.';
    }
    return out;
}

bool parse_ipv4_text(std::string_view s, uint32_t& ip) noexcept
{
    uint32_t v = 0;
    unsigned parts = 0, digits = 0, octet = 0;
    for (char c : s) {
        if (c >= '0' && c <= '9') {
            octet = octet * 10 + static_cast<unsigned>(c - '0');
            if (++digits > 3 || octet > 255) return false;
        } else if (c == '.') {
            if (digits == 0 || parts == 3) return false;
            v = (v << 8) | octet;
            ++parts;
            octet = digits = 0;
        } else {
            return false;
        }
    }
    if (digits == 0 || parts != 3) return false;
    ip = (v << 8) | octet;
    return true;
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
