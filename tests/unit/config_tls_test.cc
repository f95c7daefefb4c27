// Unit tests of the config for SIP over TCP and TLS: [streams], [tls] and the trunks' and
// regions' tls tables, trunk transports and ports, SRV names for TCP and TLS, static peers'
// transport and server_name, the peers an SRV answer gives; and the certificate, key and CA
// files checked at load with real files made by the openssl command line.
#include "control/config.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace sbc::control {
namespace {

// Lines 1-4: an interface; 5-8: trunk t1 on it. Cases append from line 9, inside the trunk.
const std::string base =
    "[[interface]]\nname = \"core\"\ndevice = \"net_null0\"\naddress = \"198.18.0.1/24\"\n"
    "[[trunk]]\nname = \"t1\"\ninterface = \"core\"\nallow = [\"198.18.0.2\"]\n";

// base, then [[region]] r1 at line 9 with its name at 10; `lines` from line 11.
std::string with_region(const std::string& lines) { return base + "[[region]]\nname = \"r1\"\n" + lines; }

config parsed(const std::string& text)
{
    auto r = parse_config(text, "tls.toml");
    EXPECT_TRUE(r.errors.empty()) << r.errors[0].to_string();
    return r.cfg ? *r.cfg : config{};
}

// The one error `text` has: its file, line, key and a part of its message.
void expect_error(const std::string& text, int line, const std::string& key, const std::string& part)
{
    auto r = parse_config(text, "tls.toml");
    EXPECT_FALSE(r.cfg);
    ASSERT_EQ(r.errors.size(), 1u) << (r.errors.empty() ? "no error" : r.errors.back().to_string());
    const config_error& e = r.errors[0];
    EXPECT_EQ(e.file, "tls.toml");
    EXPECT_EQ(e.line, line) << e.to_string();
    EXPECT_EQ(e.key, key) << e.to_string();
    EXPECT_NE(e.message.find(part), std::string::npos) << e.to_string();
}

// `text` has this error, maybe among others (the files named do not exist, say).
void expect_has_error(const std::string& text, int line, const std::string& key, const std::string& part)
{
    auto r = parse_config(text, "tls.toml");
    EXPECT_FALSE(r.cfg);
    std::string all;
    for (const auto& e : r.errors) {
        if (e.line == line && e.key == key && e.message.find(part) != std::string::npos) return;
        all += "\n  " + e.to_string();
    }
    ADD_FAILURE() << "no error at line " << line << " key " << key << " with \"" << part << "\"; got:" << all;
}

TEST(config_tls, defaults_every_new_key_when_the_file_does_not_set_it)
{
    const config c = parsed(with_region("srv = \"_sip._udp.x.example.net\"\n"));
    const trunk_config& t = c.trunks.at(0);
    EXPECT_EQ(t.transports, std::vector<transport>{transport::udp});
    EXPECT_EQ(t.port, 5060);
    EXPECT_EQ(t.tcp_port, 5060);
    EXPECT_EQ(t.tls_port, 5061);
    EXPECT_EQ(t.fqdn, "");
    EXPECT_FALSE(t.tls);
    const region_config& r = c.regions.at(0);
    EXPECT_EQ(r.srv_proto, transport::udp);
    EXPECT_EQ(r.fqdn, "");
    EXPECT_FALSE(r.tls);
    EXPECT_EQ(c.tls.line, 0);
    EXPECT_EQ(c.tls.certificate, "");
    EXPECT_EQ(c.tls.min_version, streams::tls_version::v1_2);
    EXPECT_EQ(c.tls.max_version, streams::tls_version::v1_3);

    const streams::stream_settings d;
    const streams::stream_settings& s = c.streams;
    EXPECT_EQ(s.line, 0);
    EXPECT_EQ(s.cpu, -1);
    EXPECT_EQ(s.max_message_bytes, d.max_message_bytes);
    EXPECT_EQ(s.idle_timeout_ms, d.idle_timeout_ms);
    EXPECT_EQ(s.partial_timeout_ms, d.partial_timeout_ms);
    EXPECT_EQ(s.connect_timeout_ms, d.connect_timeout_ms);
    EXPECT_EQ(s.handshake_timeout_ms, d.handshake_timeout_ms);
    EXPECT_EQ(s.keepalive_interval_ms, d.keepalive_interval_ms);
    EXPECT_EQ(s.reconnect_min_ms, d.reconnect_min_ms);
    EXPECT_EQ(s.reconnect_max_ms, d.reconnect_max_ms);
    EXPECT_EQ(s.max_connections, d.max_connections);
    EXPECT_EQ(s.max_connections_per_source, d.max_connections_per_source);
    EXPECT_EQ(s.max_handshakes_per_s_per_source, d.max_handshakes_per_s_per_source);
    EXPECT_EQ(s.connections_per_peer, d.connections_per_peer);
}

TEST(config_tls, tcp_port_follows_the_udp_port_unless_given)
{
    const config c = parsed(base + "port = 5070\ntransports = [\"udp\", \"tcp\"]\n");
    EXPECT_EQ(c.trunks[0].tcp_port, 5070);
    const config d = parsed(base + "port = 5070\ntransports = [\"tcp\"]\ntcp_port = 5080\nfqdn = \"sbc1.example.net\"\n");
    EXPECT_EQ(d.trunks[0].tcp_port, 5080);
    EXPECT_EQ(d.trunks[0].transports, std::vector<transport>{transport::tcp});
    EXPECT_EQ(d.trunks[0].fqdn, "sbc1.example.net");
}

TEST(config_tls, reads_every_key_of_streams)
{
    const config c = parsed(base +
                            "[streams]\ncpu = 3\nmax_message_bytes = 65535\nidle_timeout_ms = 60000\n"
                            "partial_timeout_ms = 2000\nconnect_timeout_ms = 1500\nhandshake_timeout_ms = 2500\n"
                            "keepalive_interval_ms = 0\nreconnect_min_ms = 100\nreconnect_max_ms = 100\n"
                            "max_connections = 65535\nmax_connections_per_source = 10\n"
                            "max_handshakes_per_s_per_source = 5\nconnections_per_peer = 16\nidle_wait_us = 200\n");
    const streams::stream_settings& s = c.streams;
    EXPECT_EQ(s.line, 9);
    EXPECT_EQ(s.cpu, 3);
    EXPECT_EQ(s.max_message_bytes, 65535u);
    EXPECT_EQ(s.idle_timeout_ms, 60000u);
    EXPECT_EQ(s.partial_timeout_ms, 2000u);
    EXPECT_EQ(s.connect_timeout_ms, 1500u);
    EXPECT_EQ(s.handshake_timeout_ms, 2500u);
    EXPECT_EQ(s.keepalive_interval_ms, 0u);
    EXPECT_EQ(s.reconnect_min_ms, 100u);
    EXPECT_EQ(s.reconnect_max_ms, 100u);
    EXPECT_EQ(s.max_connections, 65535u);
    EXPECT_EQ(s.max_connections_per_source, 10u);
    EXPECT_EQ(s.max_handshakes_per_s_per_source, 5u);
    EXPECT_EQ(s.connections_per_peer, 16);
    EXPECT_EQ(s.idle_wait_us, 200u);
    EXPECT_EQ(parsed(base).streams.idle_wait_us, 1000u);
    EXPECT_EQ(parsed(base + "[streams]\ncpu = -1\n").streams.cpu, -1);
}

struct bad_value {
    std::string line;     // one line under [streams] (line 10)
    std::string key;      // its dotted key
    std::string message;  // a part of the message
};

TEST(config_tls, refuses_stream_values_out_of_range_at_their_line_and_key)
{
    const bad_value cases[] = {
        {"cpu = -2", "streams.cpu", "-1..1023"},
        {"cpu = 1024", "streams.cpu", "-1..1023"},
        {"max_message_bytes = 1023", "streams.max_message_bytes", "1024..65535"},
        {"max_message_bytes = 65536", "streams.max_message_bytes", "1024..65535"},
        {"idle_timeout_ms = 999", "streams.idle_timeout_ms", "1000..86400000"},
        {"partial_timeout_ms = 99", "streams.partial_timeout_ms", "100..600000"},
        {"connect_timeout_ms = 60001", "streams.connect_timeout_ms", "100..60000"},
        {"handshake_timeout_ms = 0", "streams.handshake_timeout_ms", "100..60000"},
        {"keepalive_interval_ms = 500", "streams.keepalive_interval_ms", "0 (off) or an integer in 1000..3600000"},
        {"keepalive_interval_ms = 3600001", "streams.keepalive_interval_ms", "0..3600000"},
        {"reconnect_min_ms = 9", "streams.reconnect_min_ms", "10..60000"},
        {"reconnect_max_ms = 400", "streams.reconnect_max_ms", "at least reconnect_min_ms (500), got 400"},
        {"max_connections = 0", "streams.max_connections", "1..65535"},
        {"max_connections = 65536", "streams.max_connections", "1..65535"},
        {"idle_wait_us = 49", "streams.idle_wait_us", "50..100000"},
        {"max_connections_per_source = 0", "streams.max_connections_per_source", "1..1048576"},
        {"max_handshakes_per_s_per_source = 0", "streams.max_handshakes_per_s_per_source", "1..100000"},
        {"connections_per_peer = 0", "streams.connections_per_peer", "1..16"},
        {"connections_per_peer = 17", "streams.connections_per_peer", "1..16"},
        {"connections_per_peer = \"2\"", "streams.connections_per_peer", "expected an integer"},
        {"max_conections = 10", "streams.max_conections", "did you mean \"max_connections\""},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.line);
        expect_error(base + "[streams]\n" + c.line + "\n", 10, c.key, c.message);
    }
}

TEST(config_tls, reads_every_key_of_tls_and_refuses_bad_values_at_their_line_and_key)
{
    const config c = parsed(base +
                            "[tls]\ncertificate = \"/etc/sbc/sbc.pem\"\nprivate_key = \"/etc/sbc/sbc.key\"\n"
                            "ca_file = \"/etc/sbc/ca.pem\"\nca_path = \"/etc/ssl/certs\"\nmin_version = \"1.3\"\n"
                            "max_version = \"1.3\"\nciphers = \"ECDHE+AESGCM\"\nciphersuites = \"TLS_AES_128_GCM_SHA256\"\n");
    EXPECT_EQ(c.tls.line, 9);
    EXPECT_EQ(c.tls.certificate, "/etc/sbc/sbc.pem");
    EXPECT_EQ(c.tls.private_key, "/etc/sbc/sbc.key");
    EXPECT_EQ(c.tls.ca_file, "/etc/sbc/ca.pem");
    EXPECT_EQ(c.tls.ca_path, "/etc/ssl/certs");
    EXPECT_EQ(c.tls.min_version, streams::tls_version::v1_3);
    EXPECT_EQ(c.tls.max_version, streams::tls_version::v1_3);
    EXPECT_EQ(c.tls.ciphers, "ECDHE+AESGCM");
    EXPECT_EQ(c.tls.ciphersuites, "TLS_AES_128_GCM_SHA256");

    const bad_value cases[] = {
        {"min_version = \"1.1\"", "tls.min_version", "expected \"1.2\" or \"1.3\", got \"1.1\""},
        {"max_version = 1.3", "tls.max_version", "expected a string"},
        {"certificate = \"\"", "tls.certificate", "expected a path"},
        {"ca_file = 3", "tls.ca_file", "expected a string"},
        {"require_client_certificate = true", "tls.require_client_certificate", "unknown key"},
        {"client_name = \"x\"", "tls.client_name", "unknown key"},
        {"ca_fil = \"/x\"", "tls.ca_fil", "did you mean \"ca_file\""},
    };
    for (const auto& k : cases) {
        SCOPED_TRACE(k.line);
        expect_error(base + "[tls]\n" + k.line + "\n", 10, k.key, k.message);
    }
    expect_error(base + "tls = 3\n", 9, "trunk[0].tls", "expected a table");
    expect_error(base + "[tls]\nmin_version = \"1.3\"\nmax_version = \"1.2\"\n", 11, "tls.max_version",
                 "min_version at most max_version");
    expect_has_error(base + "[tls]\nmin_version = \"1.3\"\n[[region]]\nname = \"r1\"\nsrv = \"_sip._tls.x.example.net\"\n" +
                         "tls = { max_version = \"1.2\", ca_file = \"/ca.pem\" }\n",
                     14, "region[0].tls.max_version", "min_version at most max_version");
}

TEST(config_tls, reads_transports_each_once_and_at_least_one)
{
    const config c = parsed(base + "transports = [\"tcp\", \"udp\"]\n");
    EXPECT_EQ(c.trunks[0].transports, (std::vector<transport>{transport::tcp, transport::udp}));

    expect_error(base + "transports = []\n", 9, "trunk[0].transports", "at least one of \"udp\", \"tcp\" or \"tls\"");
    expect_error(base + "transports = [\"udp\", \"udp\"]\n", 9, "trunk[0].transports[1]",
                 "each transport once, got \"udp\" again");
    expect_error(base + "transports = [\"sctp\"]\n", 9, "trunk[0].transports[0]",
                 "expected \"udp\", \"tcp\" or \"tls\", got \"sctp\"");
    expect_error(base + "transports = \"udp\"\n", 9, "trunk[0].transports", "expected an array of strings");
    expect_error(base + "tcp_port = 0\n", 9, "trunk[0].tcp_port", "1..65535");
    expect_error(base + "tls_port = 70000\n", 9, "trunk[0].tls_port", "1..65535");
}

// base's trunk t1 takes UDP and TCP on 5060; a second trunk on the same interface from line 10.
const std::string two_trunks = base + "transports = [\"udp\", \"tcp\"]\n" +
                               "[[trunk]]\nname = \"t2\"\ninterface = \"core\"\nallow = [\"198.18.0.3\"]\n";

TEST(config_tls, a_port_is_unique_per_interface_and_transport_with_tcp_and_tls_sharing_tcp_ports)
{
    // UDP 5060 and TCP 5060 are two listeners; another trunk may take TCP where t1 took UDP only.
    EXPECT_EQ(parsed(base + "[[trunk]]\nname = \"t2\"\ninterface = \"core\"\nallow = [\"198.18.0.3\"]\n"
                            "transports = [\"tcp\"]\n")
                  .trunks.size(),
              2u);
    expect_error(two_trunks + "port = 5070\ntransports = [\"tcp\"]\ntcp_port = 5060\n", 16, "trunk[1].tcp_port",
                 "trunk[0] at line 5 already listens on 5060 with tcp");
    // t2's tcp_port defaults to its port: the clash is reported at `port`.
    expect_error(two_trunks + "port = 5060\ntransports = [\"tcp\"]\n", 14, "trunk[1].port",
                 "already listens on 5060 with tcp (tcp_port is port unless given)");
    // (these TLS trunks have no certificate: an error of its own, besides the one looked for)
    expect_has_error(two_trunks + "transports = [\"tls\"]\ntls_port = 5060\n", 15, "trunk[1].tls_port",
                     "TCP and TLS share the TCP ports");
    expect_has_error(base + "transports = [\"tcp\", \"tls\"]\ntls_port = 5060\n", 10, "trunk[0].tls_port",
                     "this trunk already listens on 5060 with tcp");
    expect_error(two_trunks, 10, "trunk[1].port", "trunk[0] at line 5 already listens on 5060 (the default) with udp");
}

TEST(config_tls, an_fqdn_or_server_name_is_a_dns_name)
{
    for (const char* good : {"sbc1.example.net", "a", "x-1.y", "198.18.0.1"}) EXPECT_TRUE(is_dns_name(good)) << good;
    for (const char* bad : {"", "-a.example", "a-.example", "a..b", "sbc_1.example", "a.example.", ".a",
                            "a b"})
        EXPECT_FALSE(is_dns_name(bad)) << bad;
    EXPECT_FALSE(is_dns_name(std::string(64, 'a')));
    EXPECT_TRUE(is_dns_name(std::string(63, 'a') + ".b"));
    expect_error(base + "fqdn = \"sbc_1.example.net\"\n", 9, "trunk[0].fqdn", "expected a DNS name");
    expect_error(with_region("srv = \"_sip._udp.x.example.net\"\nfqdn = \"a..b\"\n"), 12, "region[0].fqdn",
                 "expected a DNS name");
    EXPECT_EQ(parsed(with_region("srv = \"_sip._udp.x.example.net\"\nfqdn = \"edge.example.net\"\n")).regions[0].fqdn,
              "edge.example.net");
}

TEST(config_tls, accepts_srv_names_for_udp_tcp_and_tls_and_refuses_others)
{
    EXPECT_EQ(parsed(with_region("srv = \"_sip._tcp.x.example.net\"\n")).regions[0].srv_proto, transport::tcp);
    EXPECT_EQ(parsed(with_region("srv = \"_sip._udp.x.example.net.\"\n")).regions[0].srv_proto, transport::udp);
    EXPECT_EQ(srv_transport("_sip._tls.x.example.net"), transport::tls);
    EXPECT_EQ(srv_transport("_SIP._TCP.x"), transport::tcp);
    EXPECT_FALSE(srv_transport("_sips._tcp.x"));
    EXPECT_FALSE(srv_transport("_sip._sctp.x"));
    for (const char* bad : {"_sip._sctp.x.net", "_sips._tcp.x.net", "_sip._tls.", "_sip._tcp.bad_name.net", "x.net"})
        expect_error(with_region(std::string("srv = \"") + bad + "\"\n"), 11, "region[0].srv",
                     "\"_sip._udp.<domain>\", \"_sip._tcp.<domain>\" or \"_sip._tls.<domain>\"");
}

TEST(config_tls, a_static_peer_has_a_transport_and_for_tls_a_server_name)
{
    auto r = parse_config(with_region(
                              "peers = [ { address = \"198.18.0.11\" }, { address = \"198.18.0.12\", transport = \"tcp\" },\n"
                              "          { address = \"198.18.0.13\", transport = \"tls\", server_name = \"pbx.example.net\" },\n"
                              "          { address = \"198.18.0.14:5071\", transport = \"tls\" } ]\n"),
                          "tls.toml");
    // Without [tls] the TLS peers' region has no CA: the one error; the peers were read all the same.
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].key, "region[0].tls");
    EXPECT_EQ(r.errors[0].line, 9);
    EXPECT_NE(r.errors[0].message.find("missing ca_file or ca_path"), std::string::npos) << r.errors[0].to_string();

    expect_error(with_region("peers = [ { address = \"198.18.0.11\", transport = \"sctp\" } ]\n"), 11,
                 "region[0].peers[0].transport", "expected \"udp\", \"tcp\" or \"tls\", got \"sctp\"");
    expect_error(with_region("peers = [ { address = \"198.18.0.11\", server_name = \"a.example\" } ]\n"), 11,
                 "region[0].peers[0].server_name", "only with transport = \"tls\"");
    expect_has_error(
        with_region("peers = [ { address = \"198.18.0.11\", transport = \"tls\", server_name = \"a_b\" } ]\n"), 11,
        "region[0].peers[0].server_name", "expected a DNS name");
    const config t = parsed(with_region("peers = [ { address = \"198.18.0.11\", transport = \"tcp\" } ]\n"));
    EXPECT_EQ(t.regions[0].peers[0].proto, transport::tcp);
    EXPECT_EQ(t.regions[0].peers[0].port, 5060);
    EXPECT_FALSE(t.regions[0].tls);  // TCP needs no TLS settings
}

TEST(config_tls, a_tls_trunk_without_certificate_or_key_is_refused)
{
    expect_error(base + "transports = [\"tls\"]\ntls = { private_key = \"/k.pem\" }\n", 10, "trunk[0].tls.certificate",
                 "needs a certificate");
    // Missing in [tls] and in the trunk's table: the trunk's key, at the trunk.
    expect_error(base + "transports = [\"udp\", \"tls\"]\n[tls]\ncertificate = \"/c.pem\"\n", 5,
                 "trunk[0].tls.private_key", "needs its private key");
    auto r = parse_config(base + "transports = [\"tls\"]\n", "tls.toml");
    ASSERT_EQ(r.errors.size(), 2u);
    EXPECT_EQ(r.errors[0].key, "trunk[0].tls.certificate");
    EXPECT_EQ(r.errors[0].line, 5);
    EXPECT_EQ(r.errors[1].key, "trunk[0].tls.private_key");
    // Server-side choices need what they verify with.
    expect_error(base + "transports = [\"tls\"]\ntls = { certificate = \"/c.pem\", private_key = \"/k.pem\", "
                        "require_client_certificate = true }\n",
                 10, "trunk[0].tls.require_client_certificate", "ca_file or ca_path");
    expect_error(base + "transports = [\"tls\"]\ntls = { certificate = \"/c.pem\", private_key = \"/k.pem\", "
                        "ca_file = \"/ca.pem\", client_name = \"a.example\" }\n",
                 10, "trunk[0].tls.client_name", "only with require_client_certificate = true");
    // A tls table on a trunk that takes no TLS is a mistake, not something silently unused.
    expect_error(base + "tls = { certificate = \"/c.pem\" }\n", 9, "trunk[0].tls", "expected only on a trunk with \"tls\"");
}

TEST(config_tls, a_tls_region_without_a_ca_is_refused)
{
    expect_error(with_region("srv = \"_sip._tls.x.example.net\"\n"), 9, "region[0].tls", "missing ca_file or ca_path");
    expect_error(with_region("srv = \"_sip._tls.x.example.net\"\ntls = { certificate = \"/c.pem\" }\n"), 12,
                 "region[0].tls", "missing ca_file or ca_path");
    expect_error(with_region("srv = \"_sip._udp.x.example.net\"\ntls = { ca_file = \"/ca.pem\" }\n"), 12,
                 "region[0].tls", "expected only on a region whose peers use TLS");
    expect_has_error(with_region("srv = \"_sip._tls.x.example.net\"\ntls = { client_name = \"x\" }\n"), 12,
                     "region[0].tls.client_name", "unknown key");
}

TEST(config_tls, an_srv_answer_gives_peers_with_the_names_transport_and_for_tls_the_target_as_server_name)
{
    region_config rc;
    rc.line = 7;
    rc.srv = "_sip._tls.pstn.example.net";
    rc.srv_proto = *srv_transport(rc.srv);
    const peer_config p = srv_peer(rc, *parse_ipv4("198.18.3.21"), 5061, 10, 60, "pbx-a.pstn.example.net.");
    EXPECT_EQ(p.proto, transport::tls);
    EXPECT_EQ(p.server_name, "pbx-a.pstn.example.net");  // RFC 3263: the target, not the SRV domain
    EXPECT_EQ(p.port, 5061);
    EXPECT_EQ(p.priority, 10);
    EXPECT_EQ(p.weight, 60);
    EXPECT_EQ(p.line, 7);
    EXPECT_EQ(p.name, "");
    EXPECT_EQ(srv_peer(rc, *parse_ipv4("198.18.3.21"), 5061, 10, 60, "pbx-b.example.net").server_name,
              "pbx-b.example.net");

    rc.srv = "_sip._tcp.pstn.example.net";
    rc.srv_proto = *srv_transport(rc.srv);
    const peer_config t = srv_peer(rc, *parse_ipv4("198.18.3.22"), 5060, 10, 60, "pbx-a.pstn.example.net");
    EXPECT_EQ(t.proto, transport::tcp);
    EXPECT_EQ(t.server_name, "");  // no certificate to check
}

// A directory made at test time with a CA, a server certificate and key, another key, and a
// file that is no certificate; removed at the end.
class tls_files : public ::testing::Test {
protected:
    static void SetUpTestSuite()
    {
        std::string tmpl = (std::filesystem::temp_directory_path() / "sbc-config-tls-XXXXXX").string();
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        dir_ = tmpl;
        const std::string req = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 ";
        const std::string cmd = "cd '" + dir_ + "' && " + req + "-keyout ca.key -out ca.pem -subj /CN=test-ca && " + req +
                                "-keyout sbc.key -out sbc.pem -subj /CN=sbc.example.net && " +
                                "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out other.key && " +
                                "echo 'not a certificate' > junk.pem";
        ASSERT_EQ(std::system(("(" + cmd + ") >/dev/null 2>&1").c_str()), 0) << cmd;
    }
    static void TearDownTestSuite()
    {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    static std::string file(const char* name) { return dir_ + "/" + name; }

    // A trunk taking TLS (lines 5-10) and a region of TLS peers (11-14); [tls] at line 15
    // with `tls_lines`; `trunk_tls` and `region_tls` are the tls tables (lines 10 and 14).
    static std::string tls_config(const std::string& tls_lines, const std::string& trunk_tls = "{}",
                                  const std::string& region_tls = "{}")
    {
        return base + "transports = [\"udp\", \"tls\"]\ntls = " + trunk_tls + "\n" +
               "[[region]]\nname = \"r1\"\n" +
               "peers = [ { address = \"198.18.0.11\", transport = \"tls\", server_name = \"pbx.example.net\" } ]\n" +
               "tls = " + region_tls + "\n[tls]\n" + tls_lines;
    }
    static std::string good_tls()
    {
        return "certificate = \"" + file("sbc.pem") + "\"\nprivate_key = \"" + file("sbc.key") + "\"\nca_file = \"" +
               file("ca.pem") + "\"\n";
    }

    static inline std::string dir_;
};

TEST_F(tls_files, good_files_are_accepted_and_each_user_gets_tls_merged_over_its_own_table)
{
    const std::string text = base + "transports = [\"udp\", \"tls\"]\ntls_port = 5062\nfqdn = \"sbc.example.net\"\n" +
                             "tls = { require_client_certificate = true, client_name = \"carrier.example.net\", "
                             "min_version = \"1.3\" }\n"
                             "[[region]]\nname = \"r1\"\nsrv = \"_sip._tls.pstn.example.net\"\ntls = { ca_file = \"" +
                             file("sbc.pem") + "\" }\n" + "[tls]\n" + good_tls();
    const config c = parsed(text);
    ASSERT_EQ(c.trunks.size(), 1u);
    const trunk_config& t = c.trunks[0];
    EXPECT_EQ(t.tls_port, 5062);
    ASSERT_TRUE(t.tls);
    EXPECT_EQ(t.tls->certificate, file("sbc.pem"));  // from [tls]
    EXPECT_EQ(t.tls->ca_file, file("ca.pem"));
    EXPECT_TRUE(t.tls->require_client_certificate);  // its own
    EXPECT_EQ(t.tls->client_name, "carrier.example.net");
    EXPECT_EQ(t.tls->min_version, streams::tls_version::v1_3);
    EXPECT_EQ(t.tls->line, 12);  // its own table's
    ASSERT_TRUE(c.regions[0].tls);
    EXPECT_EQ(c.regions[0].tls->ca_file, file("sbc.pem"));  // its own over [tls]'s
    EXPECT_EQ(c.regions[0].tls->certificate, file("sbc.pem"));
    EXPECT_EQ(c.regions[0].tls->min_version, streams::tls_version::v1_2);  // [tls]'s, not the trunk's
    EXPECT_EQ(c.tls.line, 17);
    EXPECT_EQ(c.tls.private_key, file("sbc.key"));

    // The same override written as a [trunk.tls] table after its [[trunk]].
    const config b = parsed(base + "transports = [\"tls\"]\n[trunk.tls]\nprivate_key = \"" + file("sbc.key") +
                            "\"\n[tls]\ncertificate = \"" + file("sbc.pem") + "\"\n");
    ASSERT_TRUE(b.trunks[0].tls);
    EXPECT_EQ(b.trunks[0].tls->line, 10);
    EXPECT_EQ(b.trunks[0].tls->private_key, file("sbc.key"));
    EXPECT_EQ(b.trunks[0].tls->certificate, file("sbc.pem"));

    const config d = parsed(tls_config(good_tls()));
    ASSERT_TRUE(d.trunks[0].tls);
    EXPECT_EQ(d.trunks[0].tls->private_key, file("sbc.key"));
    EXPECT_EQ(d.regions[0].peers[0].proto, transport::tls);
    EXPECT_EQ(d.regions[0].peers[0].port, 5061);
    EXPECT_EQ(d.regions[0].peers[0].server_name, "pbx.example.net");
}

TEST_F(tls_files, a_file_that_is_no_certificate_is_refused_with_openssls_reason)
{
    auto r = parse_config(tls_config("certificate = \"" + file("junk.pem") + "\"\nprivate_key = \"" + file("sbc.key") +
                                     "\"\nca_file = \"" + file("ca.pem") + "\"\n"),
                          "tls.toml");
    ASSERT_EQ(r.errors.size(), 1u) << r.errors.back().to_string();  // once, though trunk and region share it
    const config_error& e = r.errors[0];
    EXPECT_EQ(e.file, "tls.toml");
    EXPECT_EQ(e.line, 15) << e.to_string();
    EXPECT_EQ(e.key, "tls.certificate") << e.to_string();
    EXPECT_NE(e.message.find(file("junk.pem")), std::string::npos) << e.to_string();
    EXPECT_NE(e.message.find("not a PEM certificate"), std::string::npos) << e.to_string();
    EXPECT_NE(e.message.find("no start line"), std::string::npos) << "OpenSSL's reason: " << e.to_string();
}

TEST_F(tls_files, a_key_that_does_not_match_the_certificate_is_refused_at_the_table_that_set_it)
{
    auto r = parse_config(tls_config(good_tls(), "{ private_key = \"" + file("other.key") + "\" }"), "tls.toml");
    ASSERT_EQ(r.errors.size(), 1u) << r.errors.back().to_string();
    const config_error& e = r.errors[0];
    EXPECT_EQ(e.line, 10) << e.to_string();
    EXPECT_EQ(e.key, "trunk[0].tls.private_key") << e.to_string();
    EXPECT_NE(e.message.find("does not match the certificate"), std::string::npos) << e.to_string();
    EXPECT_NE(e.message.find("key values mismatch"), std::string::npos) << "OpenSSL's reason: " << e.to_string();
}

TEST_F(tls_files, a_missing_ca_file_is_refused_with_the_systems_reason)
{
    auto r = parse_config(tls_config(good_tls(), "{}", "{ ca_file = \"" + file("none.pem") + "\" }"), "tls.toml");
    ASSERT_EQ(r.errors.size(), 1u) << r.errors.back().to_string();
    const config_error& e = r.errors[0];
    EXPECT_EQ(e.line, 14) << e.to_string();
    EXPECT_EQ(e.key, "region[0].tls.ca_file") << e.to_string();
    EXPECT_NE(e.message.find(file("none.pem")), std::string::npos) << e.to_string();
    EXPECT_NE(e.message.find("No such file or directory"), std::string::npos) << e.to_string();

    // Not a CA bundle either: OpenSSL's reason.
    auto j = parse_config(tls_config(good_tls(), "{}", "{ ca_file = \"" + file("junk.pem") + "\" }"), "tls.toml");
    ASSERT_EQ(j.errors.size(), 1u) << j.errors.back().to_string();
    EXPECT_EQ(j.errors[0].key, "region[0].tls.ca_file");
    EXPECT_NE(j.errors[0].message.find("no usable PEM CA certificate"), std::string::npos) << j.errors[0].to_string();
}

TEST_F(tls_files, tls_alone_is_checked_as_a_client_once_sbcd_runs_streams)
{
    // A TCP-only trunk: no TLS user, but [tls] with a CA is the client side toward UAs over TLS.
    const std::string tcp = base + "transports = [\"udp\", \"tcp\"]\n[tls]\nca_file = \"" + file("junk.pem") + "\"\n";
    auto r = parse_config(tcp, "tls.toml");
    ASSERT_EQ(r.errors.size(), 1u) << r.errors.back().to_string();
    EXPECT_EQ(r.errors[0].line, 10);
    EXPECT_EQ(r.errors[0].key, "tls.ca_file");
    EXPECT_NE(r.errors[0].message.find("no usable PEM CA certificate"), std::string::npos) << r.errors[0].to_string();
    // UDP only: [tls] is not used, and its files are not opened.
    EXPECT_TRUE(parse_config(base + "[tls]\nca_file = \"" + file("junk.pem") + "\"\n", "tls.toml").cfg);
}

TEST_F(tls_files, files_are_checked_again_at_each_load_so_a_reload_sees_a_file_that_went_bad)
{
    const std::string cert = file("reload.pem");
    std::filesystem::copy_file(file("sbc.pem"), cert, std::filesystem::copy_options::overwrite_existing);
    const std::string text = tls_config("certificate = \"" + cert + "\"\nprivate_key = \"" + file("sbc.key") +
                                        "\"\nca_file = \"" + file("ca.pem") + "\"\n");
    EXPECT_TRUE(parse_config(text, "tls.toml").cfg);
    std::filesystem::copy_file(file("other.key"), cert, std::filesystem::copy_options::overwrite_existing);
    auto r = parse_config(text, "tls.toml");
    ASSERT_FALSE(r.errors.empty());
    EXPECT_EQ(r.errors[0].key, "tls.certificate") << r.errors[0].to_string();
    EXPECT_EQ(r.errors[0].line, 15);
}

}  // namespace
}  // namespace sbc::control
