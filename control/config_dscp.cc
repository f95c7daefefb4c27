// DSCP values of the config (see config_dscp.h and parse_dscp in config.h): the names of
// RFC 2474 (class selectors), RFC 2597 (assured forwarding), RFC 3246 (expedited forwarding),
// RFC 5865 (voice admit) and RFC 8622 (lower effort), or a number. Control core, sbcctl and
// tests only.
#include "control/config_dscp.h"

#include <array>
#include <cctype>
#include <string>

namespace sbc::control {

std::optional<uint8_t> parse_dscp(std::string_view text)
{
    std::string up;
    for (char c : text) up += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (!up.empty() && up.size() <= 2 && std::isdigit(static_cast<unsigned char>(up[0])) != 0) {
        const auto v = config_detail::parse_decimal(up, 2);
        if (v && *v <= 63) return static_cast<uint8_t>(*v);
        return std::nullopt;
    }
    struct named {
        std::string_view name;
        uint8_t value;
    };
    static constexpr std::array<named, 4> fixed{{{"EF", 46}, {"VA", 44}, {"LE", 1}, {"DF", 0}}};
    for (const named& n : fixed)
        if (up == n.name) return n.value;
    // CSn = 8n (n 0..7); AFxy = 8x + 2y (x 1..4, y 1..3).
    if (up.size() == 3 && up.starts_with("CS") && up[2] >= '0' && up[2] <= '7')
        return static_cast<uint8_t>(8 * (up[2] - '0'));
    if (up.size() == 4 && up.starts_with("AF") && up[2] >= '1' && up[2] <= '4' && up[3] >= '1' && up[3] <= '3')
        return static_cast<uint8_t>(8 * (up[2] - '0') + 2 * (up[3] - '0'));
    return std::nullopt;
}

namespace config_detail {

void read_dscp(loader& l, table_reader& r, std::string_view key, uint8_t& out)
{
    const toml::node* n = r.get(key);
    if (n == nullptr) return;
    static const std::string expected =
        "expected a DSCP: a number 0..63 or a name (CS0..CS7, AF11..AF43, EF, VA, LE, DF) such as \"CS3\" or \"EF\"";
    if (const auto* i = n->as_integer()) {
        if (i->get() >= 0 && i->get() <= 63) out = static_cast<uint8_t>(i->get());
        else l.error(line_of(*n), r.key(key), expected + ", got " + std::to_string(i->get()));
    } else if (const auto* s = n->as_string()) {
        if (const auto v = parse_dscp(s->get())) out = *v;
        else l.error(line_of(*n), r.key(key), expected + ", got " + quoted(s->get()));
    } else {
        l.error(line_of(*n), r.key(key), expected + ", got " + type_name(*n));
    }
}

}  // namespace config_detail
}  // namespace sbc::control
