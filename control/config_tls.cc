// Loads the sections of sbc.toml for SIP over TCP and TLS: [streams], [tls], and the `tls`
// tables of [[trunk]]s (server side) and [[region]]s (client side), each stored merged over
// [tls]; and checks the certificate, key and CA files with OpenSSL (transport/tls_context.h),
// so that a bad file stops a start or a reload with its line and key, not a handshake later.
// Control core only (also sbcctl and tests); see config.cc for how problems are reported.
#include "control/config_reader.h"

#include "transport/tls_context.h"

namespace sbc::control::config_detail {

namespace {

using streams::tls_role;
using streams::tls_settings;
using streams::tls_version;

// One tls table as read: the settings merged over their base, which keys it set, and where.
struct tls_table {
    tls_settings merged;
    std::set<std::string, std::less<>> set;  // keys the table itself gave
    std::string prefix;                      // "tls", "trunk[2].tls", "region[0].tls"
    int line = 0;                            // of the table; 0: no such table
};

// "1.2" or "1.3".
void read_version(loader& l, table_reader& r, std::string_view k, tls_version& out)
{
    std::string text;
    if (auto v = r.get_string(k, text)) {
        if (text == "1.2")
            out = tls_version::v1_2;
        else if (text == "1.3")
            out = tls_version::v1_3;
        else
            l.error(line_of(*v), r.key(k), "expected \"1.2\" or \"1.3\", got " + quoted(text));
    }
}

// A file or directory name: not empty (an override cannot unset what [tls] gives).
void read_path(loader& l, table_reader& r, std::string_view k, std::string& out)
{
    std::string text;
    if (auto v = r.get_string(k, text)) {
        if (text.empty())
            l.error(line_of(*v), r.key(k), "expected a path such as \"/etc/sbc/tls/sbc.pem\", got \"\"");
        else
            out = std::move(text);
    }
}

// Reads table `t` over `out.merged` (a copy of the base), recording the keys it gives.
void read_tls_table(loader& l, const toml::table& t, bool server, tls_table& out)
{
    table_reader r(l, t, out.prefix);
    out.line = r.line();
    out.merged.line = out.line;
    tls_settings& s = out.merged;
    read_path(l, r, "certificate", s.certificate);
    read_path(l, r, "private_key", s.private_key);
    read_path(l, r, "ca_file", s.ca_file);
    read_path(l, r, "ca_path", s.ca_path);
    read_version(l, r, "min_version", s.min_version);
    read_version(l, r, "max_version", s.max_version);
    r.get_string("ciphers", s.ciphers);
    r.get_string("ciphersuites", s.ciphersuites);
    if (server) {
        r.get_bool("require_client_certificate", s.require_client_certificate);
        r.get_string("client_name", s.client_name);
    }
    for (const auto& [k, v] : t) out.set.emplace(k.str());
    if (s.min_version == tls_version::v1_3 && s.max_version == tls_version::v1_2 &&
        (out.set.count("min_version") != 0 || out.set.count("max_version") != 0)) {
        // Either may come from [tls]: name the one this table gave (max_version when both).
        const char* k = out.set.count("max_version") ? "max_version" : "min_version";
        const toml::node* n = t.get(k);
        l.error(n ? line_of(*n) : out.line, r.key(k),
                "expected min_version at most max_version, got min_version \"1.3\" and max_version \"1.2\"");
    }
    r.finish();
}

// Whose key `k` is in `t`'s merged settings: the table's own when it set it, else [tls]'s when
// that set it, else the table's (a default): the prefix and line an error about it names.
std::pair<std::string, int> owner_of(const tls_table& t, const tls_table& base, std::string_view k, int fallback_line)
{
    if (t.line != 0 && (t.set.count(k) != 0 || base.line == 0 || base.set.count(k) == 0))
        return {t.prefix + "." + std::string(k), t.line};
    if (base.line != 0 && base.set.count(k) != 0) return {base.prefix + "." + std::string(k), base.line};
    return {t.prefix + "." + std::string(k), t.line != 0 ? t.line : fallback_line};
}

// Errors already reported (one [tls] shared by many trunks is reported once).
using seen_set = std::set<std::tuple<int, std::string, std::string>>;

// OpenSSL's verdict on settings already checked: many trunks and regions share [tls], and each
// check reads the files.
using verdict_cache = std::map<std::string, std::optional<streams::tls_error>>;

std::optional<streams::tls_error> checked(verdict_cache& cache, const tls_settings& s, tls_role role)
{
    std::string key = role == tls_role::server ? "s" : "c";
    for (const std::string* f : {&s.certificate, &s.private_key, &s.ca_file, &s.ca_path, &s.ciphers, &s.ciphersuites,
                                 &s.client_name})
        key += '\0' + *f;
    key += static_cast<char>('0' + static_cast<int>(s.min_version));
    key += static_cast<char>('0' + static_cast<int>(s.max_version));
    key += s.require_client_certificate ? 'r' : '-';
    auto it = cache.find(key);
    if (it == cache.end()) it = cache.emplace(key, streams::check_tls_settings(s, role)).first;
    return it->second;
}

void report(loader& l, seen_set& seen, int line, const std::string& key, const std::string& message)
{
    if (seen.emplace(line, key, message).second) l.error(line, key, message);
}

// What every merged settings must hold, then OpenSSL's word on the files. `what` names the
// user (`trunk "x"`); `fallback_line` is the line of its [[trunk]] or [[region]] header.
void check_merged(loader& l, seen_set& seen, verdict_cache& cache, const tls_table& t, const tls_table& base, tls_role role,
                  const std::string& what, int fallback_line)
{
    const tls_settings& s = t.merged;
    // min_version above max_version was reported where the table was read.
    bool complete = !(s.min_version == tls_version::v1_3 && s.max_version == tls_version::v1_2);
    if (role == tls_role::server) {
        for (std::string_view k : {"certificate", "private_key"}) {
            if (!(k == "certificate" ? s.certificate : s.private_key).empty()) continue;
            auto [key, line] = owner_of(t, base, k, fallback_line);
            report(l, seen, line, key,
                   "missing; " + what + " takes TLS and needs " + (k == "certificate" ? "a certificate" : "its private key") +
                       ": set " + std::string(k) + " in [tls] or in its tls table");
            complete = false;
        }
        if (s.require_client_certificate && s.ca_file.empty() && s.ca_path.empty()) {
            auto [key, line] = owner_of(t, base, "require_client_certificate", fallback_line);
            report(l, seen, line, key,
                   "expected ca_file or ca_path with it (client certificates are verified against them), got neither");
            complete = false;
        }
        if (!s.client_name.empty() && !s.require_client_certificate) {
            auto [key, line] = owner_of(t, base, "client_name", fallback_line);
            report(l, seen, line, key,
                   "expected only with require_client_certificate = true (a client without a certificate would pass)");
            complete = false;
        }
    } else if (s.ca_file.empty() && s.ca_path.empty()) {
        report(l, seen, t.line != 0 ? t.line : fallback_line, t.prefix,
               "missing ca_file or ca_path; " + what +
                   " verifies its peers' certificates and needs the CAs to trust: set ca_file or ca_path in [tls] or "
                   "in its tls table");
        complete = false;
    }
    if (!complete) return;
    if (auto err = checked(cache, s, role)) {
        auto [key, line] = owner_of(t, base, err->key.empty() ? std::string_view("certificate") : err->key, fallback_line);
        report(l, seen, line, key, err->message);
    }
}

// The `tls` entry of an array-of-tables entry: nullptr when absent or (reported) not a table.
const toml::table* tls_of(loader& l, const toml::table& entry, const std::string& prefix)
{
    const toml::node* n = entry.get("tls");
    if (!n) return nullptr;
    if (auto t = n->as_table()) return t;
    l.error(line_of(*n), prefix + ".tls",
            "expected a table such as tls = { certificate = \"/etc/sbc/tls/trunk.pem\" } or [" +
                prefix.substr(0, prefix.find('[')) + ".tls], got " + type_name(*n));
    return nullptr;
}

}  // namespace

void read_streams(loader& l, const toml::table& t, streams::stream_settings& s)
{
    table_reader r(l, t, "streams");
    s.line = r.line();
    // get_uint stores -1 as its unsigned image; the conversion back is modular (C++20).
    unsigned cpu = static_cast<unsigned>(s.cpu);
    r.get_uint("cpu", cpu, -1, 1023, "CPU the stream thread is pinned to; -1: not pinned");
    s.cpu = static_cast<int>(cpu);
    r.get_uint("max_message_bytes", s.max_message_bytes, 1024, 65535, "bytes");
    r.get_uint("idle_timeout_ms", s.idle_timeout_ms, 1000, 86400000, "milliseconds");
    r.get_uint("partial_timeout_ms", s.partial_timeout_ms, 100, 600000, "milliseconds");
    r.get_uint("connect_timeout_ms", s.connect_timeout_ms, 100, 60000, "milliseconds");
    r.get_uint("handshake_timeout_ms", s.handshake_timeout_ms, 100, 60000, "milliseconds");
    r.get_uint("keepalive_interval_ms", s.keepalive_interval_ms, 0, 3600000, "milliseconds; 0: off");
    if (s.keepalive_interval_ms > 0 && s.keepalive_interval_ms < 1000)
        l.error(line_of(*t.get("keepalive_interval_ms")), r.key("keepalive_interval_ms"),
                "expected 0 (off) or an integer in 1000..3600000 (milliseconds), got " +
                    std::to_string(s.keepalive_interval_ms));
    r.get_uint("reconnect_min_ms", s.reconnect_min_ms, 10, 60000, "milliseconds");
    r.get_uint("reconnect_max_ms", s.reconnect_max_ms, 10, 3600000, "milliseconds");
    if (s.reconnect_max_ms < s.reconnect_min_ms) {
        const toml::node* n = t.get("reconnect_max_ms");
        if (!n) n = t.get("reconnect_min_ms");
        l.error(n ? line_of(*n) : r.line(), r.key("reconnect_max_ms"),
                "expected at least reconnect_min_ms (" + std::to_string(s.reconnect_min_ms) + "), got " +
                    std::to_string(s.reconnect_max_ms));
    }
    r.get_uint("max_connections", s.max_connections, 1, 65535, "connections, all together");
    r.get_uint("max_connections_per_source", s.max_connections_per_source, 1, 1048576, "inbound, per remote address");
    r.get_uint("max_handshakes_per_s_per_source", s.max_handshakes_per_s_per_source, 1, 100000,
               "TLS handshakes begun per second, per remote address");
    r.get_u16("connections_per_peer", s.connections_per_peer, 1, 16, "persistent connections to each TCP/TLS peer");
    r.get_uint("idle_wait_us", s.idle_wait_us, 50, 100000, "microseconds");
    r.finish();
}

void read_tls(loader& l, const toml::node* tls_node, const toml::node* trunk_node, const toml::node* region_node,
              config& cfg)
{
    tls_table base;
    base.prefix = "tls";
    if (const toml::table* t = section(l, tls_node, "tls")) read_tls_table(l, *t, false, base);
    cfg.tls = base.merged;
    seen_set seen;
    verdict_cache cache;

    // Entries that table_array refused were reported by read_trunks/read_regions; their
    // structs are in file order, one per entry.
    const toml::array* trunks = trunk_node ? trunk_node->as_array() : nullptr;
    for (std::size_t i = 0; trunks && trunks->is_array_of_tables() && i < trunks->size() && i < cfg.trunks.size(); ++i) {
        trunk_config& tc = cfg.trunks[i];
        tls_table own;
        own.prefix = "trunk[" + std::to_string(i) + "].tls";
        own.merged = base.merged;
        const toml::table* t = tls_of(l, *trunks->get(i)->as_table(), "trunk[" + std::to_string(i) + "]");
        if (t) read_tls_table(l, *t, true, own);
        if (!tc.takes(transport::tls)) {
            if (t)
                l.error(own.line, own.prefix,
                        "expected only on a trunk with \"tls\" in transports; add it there or remove this table");
            continue;
        }
        if (own.merged.line == 0) own.merged.line = base.line != 0 ? base.line : tc.line;
        check_merged(l, seen, cache, own, base, tls_role::server, "trunk " + quoted(tc.name), tc.line);
        tc.tls = own.merged;
    }

    const toml::array* regions = region_node ? region_node->as_array() : nullptr;
    for (std::size_t i = 0; regions && regions->is_array_of_tables() && i < regions->size() && i < cfg.regions.size();
         ++i) {
        region_config& rc = cfg.regions[i];
        tls_table own;
        own.prefix = "region[" + std::to_string(i) + "].tls";
        own.merged = base.merged;
        const toml::table* t = tls_of(l, *regions->get(i)->as_table(), "region[" + std::to_string(i) + "]");
        if (t) read_tls_table(l, *t, false, own);
        if (!rc.uses_tls()) {
            if (t)
                l.error(own.line, own.prefix,
                        "expected only on a region whose peers use TLS (srv \"_sip._tls.<domain>\" or a peer with "
                        "transport = \"tls\"); remove this table");
            continue;
        }
        if (own.merged.line == 0) own.merged.line = base.line != 0 ? base.line : rc.line;
        check_merged(l, seen, cache, own, base, tls_role::client, "region " + quoted(rc.name), rc.line);
        rc.tls = own.merged;
    }

    // [tls] on its own is the client side toward anyone else reached over TLS (a UA by its
    // Contact) once sbcd runs streams at all and [tls] can verify (control/stream_service.cc).
    const bool streams_used =
        std::any_of(cfg.trunks.begin(), cfg.trunks.end(),
                    [](const trunk_config& t) { return t.takes(transport::tcp) || t.takes(transport::tls); }) ||
        std::any_of(cfg.regions.begin(), cfg.regions.end(), [](const region_config& r) {
            if (!r.srv.empty()) return r.srv_proto != transport::udp;
            return std::any_of(r.peers.begin(), r.peers.end(),
                               [](const peer_config& p) { return p.proto != transport::udp; });
        });
    if (base.line != 0 && streams_used && (!base.merged.ca_file.empty() || !base.merged.ca_path.empty()))
        check_merged(l, seen, cache, base, base, tls_role::client, "[tls]", base.line);
}

}  // namespace sbc::control::config_detail
