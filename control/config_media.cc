// Loads [media] of sbc.toml: the media addresses (each must be an interface's address), the
// port range (even start, no trunk port inside it on a media address), latching, the
// inactivity timeout and the port quarantine. Control core only (also sbcctl and tests).
#include <string>

#include "control/config_reader.h"

namespace sbc::control::config_detail {

void read_media(loader& l, const toml::table& t, const config& c, media_config_section& m)
{
    table_reader r(l, t, "media");
    m.enabled = true;
    m.line = r.line();
    auto check_address = [&](const toml::node& n, const std::string& key, const std::string& text) {
        const auto ip = parse_ipv4(text);
        if (is_ipv6_text(text)) {
            l.error(line_of(n), key, ipv6_refused(text));
            return;
        }
        if (!ip) {
            l.error(line_of(n), key, "expected an IPv4 address in dotted quad, got " + quoted(text));
            return;
        }
        bool found = false;
        for (const auto& ic : c.interfaces) found = found || ic.address.addr == *ip;
        if (!found) {
            std::string known;
            for (const auto& ic : c.interfaces) known += (known.empty() ? "" : ", ") + to_string(ic.address.addr);
            l.error(line_of(n), key, "expected the address of an [[interface]] (" + (known.empty() ? "none" : known) +
                                         "), got " + quoted(text));
            return;
        }
        for (auto a : m.addresses)
            if (a == *ip) {
                l.error(line_of(n), key, "expected each address once, got " + quoted(text) + " again");
                return;
            }
        m.addresses.push_back(*ip);
    };
    std::string one;
    if (auto v = r.get_string("address", one)) check_address(*v, r.key("address"), one);
    std::vector<std::string> many;
    std::vector<const toml::node*> nodes;
    r.get_string_array("addresses", many, &nodes);
    for (std::size_t i = 0; i < many.size() && i < nodes.size(); ++i)
        check_address(*nodes[i], r.key("addresses") + "[" + std::to_string(i) + "]", many[i]);
    // Without an address: the interface of the first trunk (else the first interface), and its
    // media_ports as the range unless [media] gives one.
    const interface_config* home = nullptr;
    if (!c.trunks.empty())
        for (const auto& ic : c.interfaces)
            if (ic.name == c.trunks.front().interface) home = &ic;
    if (home == nullptr && !c.interfaces.empty()) home = &c.interfaces.front();
    if (!t.contains("address") && !t.contains("addresses")) {
        if (home == nullptr)
            l.error(m.line, r.key("address"), "missing; expected the media address (one of the interfaces' addresses)");
        else
            m.addresses.push_back(home->address.addr);
    }
    for (const auto& ic : c.interfaces)
        if (!m.addresses.empty() && ic.address.addr == m.addresses.front()) home = &ic;
    if (home != nullptr) {
        m.port_min = static_cast<uint16_t>(home->media_port_min & ~1u);
        m.port_max = home->media_port_max;
    }
    if (m.addresses.size() > max_media_addresses)
        l.error(m.line, r.key("addresses"), "expected " + at_most(max_media_addresses, "addresses"));

    r.get_u16("port_min", m.port_min, 1024, 65534, "even");
    r.get_u16("port_max", m.port_max, 1025, 65535, "");
    if (const toml::node* n = t.get("port_min"); n && m.port_min % 2 != 0)
        l.error(line_of(*n), r.key("port_min"), "expected an even port (RTP even, RTCP the odd one above), got " +
                                                     std::to_string(m.port_min));
    const unsigned workers = c.node.workers == 0 ? 1 : c.node.workers;
    if (m.port_max <= m.port_min || (m.port_max - m.port_min + 1u) / 2 < 2u * workers) {
        const toml::node* n = t.get("port_max");
        l.error(n ? line_of(*n) : m.line, r.key("port_max"),
                "expected a range of at least 2 port pairs per worker above port_min " + std::to_string(m.port_min) +
                    " (" + std::to_string(workers) + " workers), got " + std::to_string(m.port_max));
    }
    for (const auto& tc : c.trunks) {
        if (tc.port < m.port_min || tc.port > m.port_max) continue;
        for (const auto& ic : c.interfaces)
            for (auto a : m.addresses)
                if (ic.name == tc.interface && ic.address.addr == a)
                    l.error(tc.line, "trunk." + tc.name + ".port",
                            "expected a SIP port outside the media range " + std::to_string(m.port_min) + ".." +
                                std::to_string(m.port_max) + " on media address " + to_string(a) + ", got " +
                                std::to_string(tc.port));
    }
    // In the order of rtp::latching: get_choice stores the index.
    constexpr std::array<std::string_view, 2> latching_names{"symmetric", "strict"};
    static_assert(static_cast<std::size_t>(rtp::latching::strict) + 1 == latching_names.size());
    r.get_choice("latching", latching_names, m.mode);
    r.get_uint("inactivity_timeout_s", m.inactivity_timeout_s, 0, 86400, "seconds, 0: never");
    r.get_uint("quarantine_ms", m.quarantine_ms, 1000, 600000, "milliseconds, longer than any RCU grace period");
    unsigned quarantine_s = 0;
    r.get_uint("port_quarantine_s", quarantine_s, 1, 600, "seconds, the same as quarantine_ms / 1000");
    if (quarantine_s != 0) {
        if (t.contains("quarantine_ms"))
            l.error(line_of(*t.get("port_quarantine_s")), r.key("port_quarantine_s"),
                    "expected either quarantine_ms or port_quarantine_s, got both");
        m.quarantine_ms = quarantine_s * 1000;
    }
    r.get_uint("sessions_per_worker", m.sessions_per_worker, 16, 4194304, "calls with media per worker");
    r.finish();
}

}  // namespace sbc::control::config_detail
