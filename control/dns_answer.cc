// Raw DNS response reader (see dns_answer.h). Control core only.
#include "control/dns_answer.h"

#include <algorithm>

namespace sbc::control::dns {

namespace {

class reader {
public:
    explicit reader(std::span<const uint8_t> m) : m_(m) {}

    [[nodiscard]] bool has(std::size_t n) const { return pos_ <= m_.size() && m_.size() - pos_ >= n; }
    uint16_t u16()
    {
        const uint16_t v = static_cast<uint16_t>((m_[pos_] << 8) | m_[pos_ + 1]);
        pos_ += 2;
        return v;
    }
    uint32_t u32()
    {
        const uint32_t v = (uint32_t{m_[pos_]} << 24) | (uint32_t{m_[pos_ + 1]} << 16) | (uint32_t{m_[pos_ + 2]} << 8) |
                           uint32_t{m_[pos_ + 3]};
        pos_ += 4;
        return v;
    }
    /// 16 bytes (an AAAA's rdata) as an IPv6 address.
    ip_address v6()
    {
        const ip_address a = ip_address::v6(std::span<const uint8_t, 16>(m_.data() + pos_, 16));
        pos_ += 16;
        return a;
    }
    [[nodiscard]] std::size_t pos() const { return pos_; }
    void seek(std::size_t p) { pos_ = p; }

    // A possibly compressed name at the current position; the position moves past its
    // in-place part. Compression pointers must point backwards, which also bounds the loop.
    bool name(std::string& out)
    {
        out.clear();
        std::size_t p = pos_;
        std::size_t limit = pos_;  // a pointer must go below every place visited so far
        bool jumped = false;
        for (;;) {
            if (p >= m_.size()) return false;
            const uint8_t len = m_[p];
            if ((len & 0xc0) == 0xc0) {
                if (p + 1 >= m_.size()) return false;
                const std::size_t to = (std::size_t{len & 0x3fu} << 8) | m_[p + 1];
                if (!jumped) pos_ = p + 2;
                jumped = true;
                if (to >= limit) return false;
                limit = to;
                p = to;
                continue;
            }
            if ((len & 0xc0) != 0) return false;  // 0x40/0x80: label types nobody sends
            if (len == 0) {
                if (!jumped) pos_ = p + 1;
                return true;
            }
            if (p + 1 + len > m_.size() || out.size() + len + 1 > 255) return false;
            if (!out.empty()) out += '.';
            for (std::size_t i = 0; i < len; ++i) {
                char c = static_cast<char>(m_[p + 1 + i]);
                if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
                out += c;
            }
            p += 1 + len;
        }
    }

private:
    std::span<const uint8_t> m_;
    std::size_t pos_ = 0;
};

uint32_t clamp_ttl(uint32_t t) { return t > max_ttl ? 0 : t; }

}  // namespace

std::string normalize_name(std::string_view name)
{
    std::string s(name);
    if (!s.empty() && s.back() == '.') s.pop_back();
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
}

std::optional<answer> parse_answer(std::span<const uint8_t> msg, std::string& error)
{
    reader r(msg);
    if (!r.has(12)) {
        error = "response shorter than a DNS header (" + std::to_string(msg.size()) + " bytes)";
        return std::nullopt;
    }
    r.u16();  // id: c-ares matched it already
    const uint16_t flags = r.u16();
    const uint16_t qd = r.u16(), an = r.u16();
    r.u16();  // authority
    r.u16();  // additional
    if ((flags & 0x8000) == 0) {
        error = "not a response (QR bit clear)";
        return std::nullopt;
    }
    answer a;
    a.rcode = static_cast<uint8_t>(flags & 0x000f);
    a.truncated = (flags & 0x0200) != 0;
    std::string name;
    for (uint16_t i = 0; i < qd; ++i) {
        if (!r.name(name) || !r.has(4)) {
            error = "question " + std::to_string(i) + " runs off the end of the response";
            return std::nullopt;
        }
        r.seek(r.pos() + 4);
    }
    for (uint16_t i = 0; i < an; ++i) {
        const std::string where = "answer record " + std::to_string(i);
        if (!r.name(name) || !r.has(10)) {
            error = where + ": owner name or header runs off the end of the response";
            return std::nullopt;
        }
        const uint16_t type = r.u16();
        const uint16_t cls = r.u16();
        const uint32_t ttl = clamp_ttl(r.u32());
        const uint16_t rdlen = r.u16();
        if (!r.has(rdlen)) {
            error = where + ": rdata of " + std::to_string(rdlen) + " bytes runs off the end of the response";
            return std::nullopt;
        }
        const std::size_t end = r.pos() + rdlen;
        if (cls != class_in) {
            r.seek(end);
            continue;
        }
        if (type == type_a) {
            if (rdlen != 4) {
                error = where + ": A record with " + std::to_string(rdlen) + " bytes of rdata, expected 4";
                return std::nullopt;
            }
            a.a.push_back({name, ip_address::v4(r.u32()), ttl});
        } else if (type == type_aaaa) {
            if (rdlen != 16) {
                error = where + ": AAAA record with " + std::to_string(rdlen) + " bytes of rdata, expected 16";
                return std::nullopt;
            }
            a.a.push_back({name, r.v6(), ttl});
        } else if (type == type_srv) {
            if (rdlen < 7) {
                error = where + ": SRV record with " + std::to_string(rdlen) + " bytes of rdata, expected at least 7";
                return std::nullopt;
            }
            srv_record s;
            s.priority = r.u16();
            s.weight = r.u16();
            s.port = r.u16();
            s.ttl = ttl;
            if (!r.name(s.target) || r.pos() != end) {
                error = where + ": SRV target name does not fit its rdata";
                return std::nullopt;
            }
            a.srv.push_back(std::move(s));
        } else if (type == type_cname) {
            a.cname_ttl = std::min(a.cname_ttl, ttl);
        }
        r.seek(end);
    }
    return a;
}

}  // namespace sbc::control::dns
