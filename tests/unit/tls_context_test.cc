// TLS contexts (transport/tls_context.h) against a PKI made here with OpenSSL: real handshakes
// between a client and a server SSL over a non-blocking socketpair, the reasons an operator
// sees when one fails, and the config loader's errors for bad TLS settings. Test thread only.
#include "transport/tls_context.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace sbc::streams {
namespace {

// ---- OpenSSL's heap, counted: what an idle connection costs -----------------------------

// Relaxed: only the test thread allocates through OpenSSL; the count is read on that thread.
std::atomic<int64_t> openssl_live_bytes{0};
constexpr std::size_t size_header = 16;  // keeps malloc's alignment for the caller

void* counting_malloc(std::size_t n, const char*, int)
{
    auto* p = static_cast<unsigned char*>(std::malloc(n + size_header));
    if (p == nullptr) {
        return nullptr;
    }
    *reinterpret_cast<std::size_t*>(p) = n;
    openssl_live_bytes.fetch_add(static_cast<int64_t>(n), std::memory_order_relaxed);
    return p + size_header;
}

void counting_free(void* q, const char*, int)
{
    if (q == nullptr) {
        return;
    }
    auto* p = static_cast<unsigned char*>(q) - size_header;
    openssl_live_bytes.fetch_sub(static_cast<int64_t>(*reinterpret_cast<std::size_t*>(p)), std::memory_order_relaxed);
    std::free(p);
}

void* counting_realloc(void* q, std::size_t n, const char* file, int line)
{
    if (q == nullptr) {
        return counting_malloc(n, file, line);
    }
    if (n == 0) {
        counting_free(q, file, line);
        return nullptr;
    }
    auto* p = static_cast<unsigned char*>(q) - size_header;
    const auto old = *reinterpret_cast<std::size_t*>(p);
    auto* np = static_cast<unsigned char*>(std::realloc(p, n + size_header));
    if (np == nullptr) {
        return nullptr;
    }
    *reinterpret_cast<std::size_t*>(np) = n;
    openssl_live_bytes.fetch_add(static_cast<int64_t>(n) - static_cast<int64_t>(old), std::memory_order_relaxed);
    return np + size_header;
}

// Must run before OpenSSL's first allocation, hence a static initializer; false when too late.
const bool openssl_heap_counted = CRYPTO_set_mem_functions(counting_malloc, counting_realloc, counting_free) == 1;

// ---- A test PKI, made once, removed at the end -----------------------------------------

struct pkey_free {
    void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct x509_free {
    void operator()(X509* x) const { X509_free(x); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, pkey_free>;
using x509_ptr = std::unique_ptr<X509, x509_free>;

pkey_ptr new_key() { return pkey_ptr(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")); }

struct cert_spec {
    std::string cn{};
    std::string san{};  ///< "DNS:a,IP:192.0.2.1"; "" none
    std::string eku{};  ///< "serverAuth", "clientAuth"; "" none
    bool ca = false;
    long from_days = -1;
    long to_days = 30;
};

bool add_ext(X509* x, X509* issuer, int nid, const std::string& value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, x, nullptr, nullptr, 0);
    X509_EXTENSION* e = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    if (e == nullptr) {
        return false;
    }
    const bool ok = X509_add_ext(x, e, -1) == 1;
    X509_EXTENSION_free(e);
    return ok;
}

/// A certificate for `key`, signed by `issuer_key` as `issuer` (self-signed when null).
x509_ptr make_cert(const cert_spec& s, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key)
{
    static long serial = 1;
    x509_ptr x(X509_new());
    X509_set_version(x.get(), X509_VERSION_3);
    ASN1_INTEGER_set(X509_get_serialNumber(x.get()), serial++);
    X509_gmtime_adj(X509_getm_notBefore(x.get()), s.from_days * 86400L);
    X509_gmtime_adj(X509_getm_notAfter(x.get()), s.to_days * 86400L);
    X509_set_pubkey(x.get(), key);
    X509_NAME* name = X509_get_subject_name(x.get());
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("sbc test"), -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(s.cn.c_str()), -1, -1,
                               0);
    X509* signer = issuer != nullptr ? issuer : x.get();
    X509_set_issuer_name(x.get(), X509_get_subject_name(signer));
    bool ok =
        add_ext(x.get(), signer, NID_basic_constraints, s.ca ? "critical,CA:TRUE" : "critical,CA:FALSE") &&
        add_ext(x.get(), signer, NID_key_usage, s.ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature") &&
        add_ext(x.get(), signer, NID_subject_key_identifier, "hash");
    if (ok && !s.san.empty()) {
        ok = add_ext(x.get(), signer, NID_subject_alt_name, s.san);
    }
    if (ok && !s.eku.empty()) {
        ok = add_ext(x.get(), signer, NID_ext_key_usage, s.eku);
    }
    if (!ok || X509_sign(x.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256()) <= 0) {
        return nullptr;
    }
    return x;
}

bool write_pem(const std::string& path, X509* cert)
{
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) {
        return false;
    }
    const bool ok = PEM_write_X509(f, cert) == 1;
    return std::fclose(f) == 0 && ok;
}

bool write_pem(const std::string& path, EVP_PKEY* key)
{
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) {
        return false;
    }
    const bool ok = PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
    return std::fclose(f) == 0 && ok;
}

/// Files of the test PKI. The server's certificates carry sip.example.com and 192.0.2.10.
struct pki {
    std::string dir;
    std::string ca, other_ca;        // roots
    std::string server, server_key;  // leaf of `ca`, valid now
    std::string expired;             // same name and key, expired yesterday
    std::string wrong_name;          // same key, for other.example.net
    std::string client, client_key;  // leaf of `ca` for pbx.example.com, clientAuth
    std::string garbage;             // not PEM
    bool ok = false;
};

pki make_pki()
{
    pki p;
    char tmpl[] = "/tmp/sbc-tls-test-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
        return p;
    }
    p.dir = tmpl;
    auto at = [&](const char* f) { return p.dir + "/" + f; };
    p.ca = at("ca.pem");
    p.other_ca = at("other_ca.pem");
    p.server = at("server.pem");
    p.server_key = at("server.key");
    p.expired = at("expired.pem");
    p.wrong_name = at("wrong_name.pem");
    p.client = at("client.pem");
    p.client_key = at("client.key");
    p.garbage = at("garbage.pem");

    const pkey_ptr ca_key = new_key(), other_key = new_key(), server_key = new_key(), client_key = new_key();
    if (!ca_key || !other_key || !server_key || !client_key) {
        return p;
    }
    const x509_ptr ca = make_cert({.cn = "sbc test root", .ca = true, .to_days = 365}, ca_key.get(), nullptr, nullptr);
    const x509_ptr other =
        make_cert({.cn = "unrelated root", .ca = true, .to_days = 365}, other_key.get(), nullptr, nullptr);
    if (!ca || !other) {
        return p;
    }
    const std::string server_san = "DNS:sip.example.com,IP:192.0.2.10";
    const x509_ptr server = make_cert({.cn = "sip.example.com", .san = server_san, .eku = "serverAuth"},
                                      server_key.get(), ca.get(), ca_key.get());
    const x509_ptr expired =
        make_cert({.cn = "sip.example.com", .san = server_san, .eku = "serverAuth", .from_days = -30, .to_days = -1},
                  server_key.get(), ca.get(), ca_key.get());
    const x509_ptr wrong = make_cert({.cn = "other.example.net", .san = "DNS:other.example.net", .eku = "serverAuth"},
                                     server_key.get(), ca.get(), ca_key.get());
    const x509_ptr client = make_cert({.cn = "pbx.example.com", .san = "DNS:pbx.example.com", .eku = "clientAuth"},
                                      client_key.get(), ca.get(), ca_key.get());
    if (!server || !expired || !wrong || !client) {
        return p;
    }
    FILE* g = std::fopen(p.garbage.c_str(), "w");
    if (g == nullptr || std::fputs("this is not a certificate\n", g) < 0 || std::fclose(g) != 0) {
        return p;
    }
    p.ok = write_pem(p.ca, ca.get()) && write_pem(p.other_ca, other.get()) && write_pem(p.server, server.get()) &&
           write_pem(p.server_key, server_key.get()) && write_pem(p.expired, expired.get()) &&
           write_pem(p.wrong_name, wrong.get()) && write_pem(p.client, client.get()) &&
           write_pem(p.client_key, client_key.get());
    return p;
}

pki* the_pki = nullptr;

const pki& files()
{
    if (the_pki == nullptr) {
        the_pki = new pki(make_pki());
    }
    return *the_pki;
}

class pki_cleanup : public ::testing::Environment {
public:
    void TearDown() override
    {
        if (the_pki != nullptr && !the_pki->dir.empty()) {
            std::error_code ec;
            std::filesystem::remove_all(the_pki->dir, ec);
        }
        delete the_pki;
        the_pki = nullptr;
    }
};
[[maybe_unused]] ::testing::Environment* const cleanup_env = ::testing::AddGlobalTestEnvironment(new pki_cleanup);

// ---- Settings and handshakes -----------------------------------------------------------

tls_settings server_settings()
{
    tls_settings s;
    s.certificate = files().server;
    s.private_key = files().server_key;
    return s;
}

tls_settings client_settings()
{
    tls_settings s;
    s.ca_file = files().ca;
    return s;
}

std::shared_ptr<tls_context> build(const tls_settings& s, tls_role role)
{
    tls_error err;
    auto c = make_tls_context(s, role, err);
    EXPECT_NE(c, nullptr) << err.key << ": " << err.message;
    return c;
}

struct side {
    SSL* ssl = nullptr;
    bool done = false;                       ///< handshake finished
    conn_reason reason = conn_reason::none;  ///< set when it failed
    std::string detail;
    bool finished() const { return done || reason != conn_reason::none; }
};

/// A client and a server SSL over a non-blocking socketpair, handshaken by turns.
struct connection_pair {
    int fds[2] = {-1, -1};
    side client, server;

    connection_pair(const tls_context& cc, const tls_context& sc, const std::string& server_name)
    {
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0) {
            return;
        }
        client.ssl = new_client_ssl(cc, fds[0], server_name);
        server.ssl = new_server_ssl(sc, fds[1]);
    }
    ~connection_pair()
    {
        SSL_free(client.ssl);
        SSL_free(server.ssl);
        for (int fd : fds) {
            if (fd >= 0) {
                close(fd);
            }
        }
    }
    connection_pair(const connection_pair&) = delete;
    connection_pair& operator=(const connection_pair&) = delete;

    static void step(side& s)
    {
        if (s.finished()) {
            return;
        }
        const int r = SSL_do_handshake(s.ssl);
        if (r == 1) {
            s.done = true;
        } else {
            s.reason = handshake_failure(s.ssl, r, s.detail);
        }
    }

    /// Both sides in turn until each has finished or failed; bounded, as a stuck handshake
    /// (one side waiting for bytes that never come) must fail the test, not hang it.
    void handshake()
    {
        ASSERT_NE(client.ssl, nullptr);
        ASSERT_NE(server.ssl, nullptr);
        for (int i = 0; i < 200 && !(client.finished() && server.finished()); ++i) {
            step(client);
            step(server);
        }
    }

    bool established() const { return client.done && server.done; }

    /// What the client sees on its first read after its handshake (TLS 1.3: the server's
    /// verdict on the client's certificate arrives only then).
    conn_reason client_read(std::string& detail)
    {
        char buf[64];
        for (int i = 0; i < 20; ++i) {
            const int r = SSL_read(client.ssl, buf, sizeof buf);
            const conn_reason why = handshake_failure(client.ssl, r, detail);
            if (why != conn_reason::none) {
                return why;
            }
        }
        return conn_reason::none;
    }

    /// Reads whatever is pending (TLS 1.3 session tickets) on both sides, so they sit idle.
    void settle()
    {
        char buf[64];
        std::string ignored;
        for (int i = 0; i < 4; ++i) {
            (void)SSL_read(client.ssl, buf, sizeof buf);
            (void)SSL_read(server.ssl, buf, sizeof buf);
        }
        ERR_clear_error();
    }
};

#define SBC_REQUIRE_PKI() ASSERT_TRUE(files().ok) << "test PKI could not be made in " << files().dir

// ---- Contexts ----------------------------------------------------------------------------

TEST(tls_context, server_context_shows_its_certificate_subject_and_expiry)
{
    SBC_REQUIRE_PKI();
    auto c = build(server_settings(), tls_role::server);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->certificate, files().server);
    EXPECT_NE(c->subject.find("CN=sip.example.com"), std::string::npos) << c->subject;
    const int64_t in_30_days = static_cast<int64_t>(std::time(nullptr)) + 30 * 86400;
    EXPECT_NEAR(static_cast<double>(c->not_after), static_cast<double>(in_30_days), 120.0);
}

TEST(tls_context, client_without_certificate_has_no_subject)
{
    SBC_REQUIRE_PKI();
    auto c = build(client_settings(), tls_role::client);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->subject, "");
    EXPECT_EQ(c->not_after, 0);
}

// ---- Handshakes --------------------------------------------------------------------------

TEST(tls_handshake, trusted_server_negotiates_tls_1_3_by_default)
{
    SBC_REQUIRE_PKI();
    auto sc = build(server_settings(), tls_role::server);
    auto cc = build(client_settings(), tls_role::client);
    ASSERT_TRUE(sc && cc);
    connection_pair p(*cc, *sc, "sip.example.com");
    p.handshake();
    ASSERT_TRUE(p.established()) << "client: " << p.client.detail << " server: " << p.server.detail;
    const tls_session_info ci = session_info(p.client.ssl);
    EXPECT_EQ(ci.version, "TLSv1.3");
    EXPECT_EQ(ci.cipher.rfind("TLS_", 0), 0u) << ci.cipher;
    EXPECT_NE(ci.peer_subject.find("CN=sip.example.com"), std::string::npos) << ci.peer_subject;
    EXPECT_EQ(session_info(p.server.ssl).peer_subject, "") << "no client certificate was asked for";
}

TEST(tls_handshake, max_version_1_2_negotiates_tls_1_2_with_the_configured_cipher)
{
    SBC_REQUIRE_PKI();
    auto sc = build(server_settings(), tls_role::server);
    tls_settings cs = client_settings();
    cs.max_version = tls_version::v1_2;
    cs.ciphers = "ECDHE-ECDSA-CHACHA20-POLY1305";
    auto cc = build(cs, tls_role::client);
    ASSERT_TRUE(sc && cc);
    connection_pair p(*cc, *sc, "sip.example.com");
    p.handshake();
    ASSERT_TRUE(p.established()) << "client: " << p.client.detail << " server: " << p.server.detail;
    EXPECT_EQ(session_info(p.client.ssl).version, "TLSv1.2");
    EXPECT_EQ(session_info(p.client.ssl).cipher, "ECDHE-ECDSA-CHACHA20-POLY1305");
    EXPECT_EQ(session_info(p.server.ssl).cipher, "ECDHE-ECDSA-CHACHA20-POLY1305");
}

TEST(tls_handshake, server_signed_by_another_ca_is_untrusted)
{
    SBC_REQUIRE_PKI();
    auto sc = build(server_settings(), tls_role::server);
    tls_settings cs = client_settings();
    cs.ca_file = files().other_ca;
    auto cc = build(cs, tls_role::client);
    ASSERT_TRUE(sc && cc);
    connection_pair p(*cc, *sc, "sip.example.com");
    p.handshake();
    EXPECT_FALSE(p.client.done);
    EXPECT_EQ(p.client.reason, conn_reason::tls_untrusted) << p.client.detail;
    EXPECT_NE(p.client.detail.find("local issuer"), std::string::npos) << p.client.detail;
    EXPECT_NE(p.server.reason, conn_reason::none) << "the server hears the client's alert";
}

TEST(tls_handshake, certificate_for_another_name_is_a_name_mismatch)
{
    SBC_REQUIRE_PKI();
    tls_settings ss = server_settings();
    ss.certificate = files().wrong_name;
    auto sc = build(ss, tls_role::server);
    auto cc = build(client_settings(), tls_role::client);
    ASSERT_TRUE(sc && cc);
    connection_pair p(*cc, *sc, "sip.example.com");
    p.handshake();
    EXPECT_EQ(p.client.reason, conn_reason::tls_name_mismatch) << p.client.detail;
    EXPECT_NE(p.client.detail.find("hostname mismatch"), std::string::npos) << p.client.detail;
}

TEST(tls_handshake, ip_literal_is_checked_against_the_certificates_addresses)
{
    SBC_REQUIRE_PKI();
    auto sc = build(server_settings(), tls_role::server);
    auto cc = build(client_settings(), tls_role::client);
    ASSERT_TRUE(sc && cc);
    connection_pair good(*cc, *sc, "192.0.2.10");
    good.handshake();
    EXPECT_TRUE(good.established()) << good.client.detail;
    EXPECT_EQ(SSL_get_servername(good.server.ssl, TLSEXT_NAMETYPE_host_name), nullptr) << "no SNI for an address";

    connection_pair bad(*cc, *sc, "192.0.2.11");
    bad.handshake();
    EXPECT_EQ(bad.client.reason, conn_reason::tls_name_mismatch) << bad.client.detail;
}

TEST(tls_handshake, client_sends_the_server_name_as_sni)
{
    SBC_REQUIRE_PKI();
    auto sc = build(server_settings(), tls_role::server);
    auto cc = build(client_settings(), tls_role::client);
    ASSERT_TRUE(sc && cc);
    connection_pair p(*cc, *sc, "sip.example.com");
    p.handshake();
    ASSERT_TRUE(p.established());
    const char* sni = SSL_get_servername(p.server.ssl, TLSEXT_NAMETYPE_host_name);
    ASSERT_NE(sni, nullptr);
    EXPECT_STREQ(sni, "sip.example.com");
}

TEST(tls_handshake, expired_server_certificate_is_reported_as_expired)
{
    SBC_REQUIRE_PKI();
    tls_settings ss = server_settings();
    ss.certificate = files().expired;
    auto sc = build(ss, tls_role::server);
    auto cc = build(client_settings(), tls_role::client);
    ASSERT_TRUE(sc && cc);
    connection_pair p(*cc, *sc, "sip.example.com");
    p.handshake();
    EXPECT_EQ(p.client.reason, conn_reason::tls_expired) << p.client.detail;
    EXPECT_NE(p.client.detail.find("expired"), std::string::npos) << p.client.detail;
}

TEST(tls_handshake, server_requiring_client_certificates_refuses_a_client_without_one)
{
    SBC_REQUIRE_PKI();
    tls_settings ss = server_settings();
    ss.require_client_certificate = true;
    ss.ca_file = files().ca;
    auto sc = build(ss, tls_role::server);
    auto cc = build(client_settings(), tls_role::client);
    ASSERT_TRUE(sc && cc);
    connection_pair p(*cc, *sc, "sip.example.com");
    p.handshake();
    EXPECT_FALSE(p.server.done);
    EXPECT_EQ(p.server.reason, conn_reason::tls_no_client_cert) << p.server.detail;
    // TLS 1.3: the client has finished its part and hears the refusal on its first read.
    std::string detail;
    const conn_reason seen = p.client.done ? p.client_read(detail) : p.client.reason;
    EXPECT_EQ(seen, conn_reason::tls_no_client_cert) << detail << p.client.detail;
}

TEST(tls_handshake, mutual_tls_accepts_a_trusted_client_and_checks_its_name)
{
    SBC_REQUIRE_PKI();
    tls_settings ss = server_settings();
    ss.require_client_certificate = true;
    ss.ca_file = files().ca;
    ss.client_name = "pbx.example.com";
    auto sc = build(ss, tls_role::server);
    tls_settings cs = client_settings();
    cs.certificate = files().client;
    cs.private_key = files().client_key;
    auto cc = build(cs, tls_role::client);
    ASSERT_TRUE(sc && cc);
    EXPECT_EQ(sc->client_name, "pbx.example.com");
    connection_pair p(*cc, *sc, "sip.example.com");
    p.handshake();
    ASSERT_TRUE(p.established()) << "client: " << p.client.detail << " server: " << p.server.detail;
    EXPECT_TRUE(client_name_ok(p.server.ssl, sc->client_name));
    EXPECT_FALSE(client_name_ok(p.server.ssl, "other.example.com"));
    EXPECT_TRUE(client_name_ok(p.server.ssl, ""));
    EXPECT_NE(session_info(p.server.ssl).peer_subject.find("CN=pbx.example.com"), std::string::npos);
}

TEST(tls_handshake, client_certificate_from_another_ca_is_untrusted_by_the_server)
{
    SBC_REQUIRE_PKI();
    tls_settings ss = server_settings();
    ss.require_client_certificate = true;
    ss.ca_file = files().other_ca;
    auto sc = build(ss, tls_role::server);
    tls_settings cs = client_settings();
    cs.certificate = files().client;
    cs.private_key = files().client_key;
    auto cc = build(cs, tls_role::client);
    ASSERT_TRUE(sc && cc);
    connection_pair p(*cc, *sc, "sip.example.com");
    p.handshake();
    EXPECT_EQ(p.server.reason, conn_reason::tls_untrusted) << p.server.detail;
}

TEST(tls_handshake, tls_1_3_only_server_and_tls_1_2_only_client_fail_as_a_handshake_error)
{
    SBC_REQUIRE_PKI();
    tls_settings ss = server_settings();
    ss.min_version = tls_version::v1_3;
    auto sc = build(ss, tls_role::server);
    tls_settings cs = client_settings();
    cs.max_version = tls_version::v1_2;
    auto cc = build(cs, tls_role::client);
    ASSERT_TRUE(sc && cc);
    connection_pair p(*cc, *sc, "sip.example.com");
    p.handshake();
    EXPECT_EQ(p.server.reason, conn_reason::tls_handshake) << p.server.detail;
    EXPECT_EQ(p.client.reason, conn_reason::tls_handshake) << p.client.detail;
    EXPECT_NE(p.server.detail.find("protocol"), std::string::npos) << p.server.detail;
    EXPECT_NE(p.client.detail.find("protocol"), std::string::npos) << p.client.detail;
}

TEST(tls_handshake, server_closing_mid_handshake_is_reported_as_closed)
{
    SBC_REQUIRE_PKI();
    auto sc = build(server_settings(), tls_role::server);
    auto cc = build(client_settings(), tls_role::client);
    ASSERT_TRUE(sc && cc);
    connection_pair p(*cc, *sc, "sip.example.com");
    connection_pair::step(p.client);  // ClientHello sent, waiting
    ASSERT_FALSE(p.client.finished());
    ASSERT_EQ(shutdown(p.fds[1], SHUT_WR), 0);  // a FIN: the client reads end of stream
    connection_pair::step(p.client);
    EXPECT_EQ(p.client.reason, conn_reason::closed) << p.client.detail;
}

TEST(tls_handshake, server_dropping_the_connection_unread_is_reported_as_reset)
{
    SBC_REQUIRE_PKI();
    auto sc = build(server_settings(), tls_role::server);
    auto cc = build(client_settings(), tls_role::client);
    ASSERT_TRUE(sc && cc);
    connection_pair p(*cc, *sc, "sip.example.com");
    connection_pair::step(p.client);  // ClientHello sent, waiting
    ASSERT_FALSE(p.client.finished());
    close(p.fds[1]);  // with the ClientHello unread: the client's next read fails ECONNRESET
    p.fds[1] = -1;
    connection_pair::step(p.client);
    EXPECT_EQ(p.client.reason, conn_reason::reset) << p.client.detail;
    EXPECT_EQ(p.client.detail, "Connection reset by peer");
}

// ---- What the config loader reports -------------------------------------------------------

TEST(tls_check, good_server_and_client_settings_pass)
{
    SBC_REQUIRE_PKI();
    EXPECT_EQ(check_tls_settings(server_settings(), tls_role::server), std::nullopt);
    EXPECT_EQ(check_tls_settings(client_settings(), tls_role::client), std::nullopt);
}

TEST(tls_check, missing_certificate_file_names_the_file_and_the_cause)
{
    SBC_REQUIRE_PKI();
    tls_settings s = server_settings();
    s.certificate = files().dir + "/nope.pem";
    const auto err = check_tls_settings(s, tls_role::server);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->key, "certificate");
    EXPECT_NE(err->message.find(s.certificate), std::string::npos) << err->message;
    EXPECT_NE(err->message.find("No such file or directory"), std::string::npos) << err->message;
}

TEST(tls_check, certificate_file_that_is_not_pem_carries_openssls_reason)
{
    SBC_REQUIRE_PKI();
    tls_settings s = server_settings();
    s.certificate = files().garbage;
    const auto err = check_tls_settings(s, tls_role::server);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->key, "certificate");
    EXPECT_NE(err->message.find(files().garbage), std::string::npos) << err->message;
    EXPECT_NE(err->message.find("(no start line)"), std::string::npos) << err->message;
}

TEST(tls_check, key_of_another_certificate_is_a_mismatch)
{
    SBC_REQUIRE_PKI();
    tls_settings s = server_settings();
    s.private_key = files().client_key;
    const auto err = check_tls_settings(s, tls_role::server);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->key, "private_key");
    EXPECT_EQ(err->message, files().client_key + ": does not match the certificate (key values mismatch)");
}

TEST(tls_check, key_file_that_is_a_certificate_is_refused)
{
    SBC_REQUIRE_PKI();
    tls_settings s = server_settings();
    s.private_key = files().ca;
    const auto err = check_tls_settings(s, tls_role::server);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->key, "private_key");
    EXPECT_NE(err->message.find(files().ca), std::string::npos) << err->message;
    EXPECT_NE(err->message.find('('), std::string::npos) << "OpenSSL's reason: " << err->message;
}

TEST(tls_check, client_without_ca_is_refused)
{
    SBC_REQUIRE_PKI();
    tls_settings s;
    const auto err = check_tls_settings(s, tls_role::client);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->key, "ca_file");
    EXPECT_NE(err->message.find("must verify"), std::string::npos) << err->message;
}

TEST(tls_check, missing_ca_file_and_ca_path_name_the_file)
{
    SBC_REQUIRE_PKI();
    tls_settings s = client_settings();
    s.ca_file = files().dir + "/no-ca.pem";
    auto err = check_tls_settings(s, tls_role::client);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->key, "ca_file");
    EXPECT_NE(err->message.find("no-ca.pem: No such file or directory"), std::string::npos) << err->message;

    s.ca_file = "";
    s.ca_path = files().ca;  // a file, not a directory
    err = check_tls_settings(s, tls_role::client);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->key, "ca_path");
    EXPECT_NE(err->message.find(files().ca), std::string::npos) << err->message;
}

TEST(tls_check, ca_path_directory_alone_is_enough_for_a_client)
{
    SBC_REQUIRE_PKI();
    tls_settings s;
    s.ca_path = files().dir;
    EXPECT_EQ(check_tls_settings(s, tls_role::client), std::nullopt);
}

TEST(tls_check, ca_file_without_certificates_carries_openssls_reason)
{
    SBC_REQUIRE_PKI();
    tls_settings s = client_settings();
    s.ca_file = files().garbage;
    const auto err = check_tls_settings(s, tls_role::client);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->key, "ca_file");
    EXPECT_NE(err->message.find(files().garbage), std::string::npos) << err->message;
    EXPECT_NE(err->message.find('('), std::string::npos) << "OpenSSL's reason: " << err->message;
}

TEST(tls_check, bad_cipher_list_carries_openssls_reason)
{
    SBC_REQUIRE_PKI();
    tls_settings s = client_settings();
    s.ciphers = "NOT-A-CIPHER";
    auto err = check_tls_settings(s, tls_role::client);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->key, "ciphers");
    EXPECT_NE(err->message.find("NOT-A-CIPHER"), std::string::npos) << err->message;
    EXPECT_NE(err->message.find("(no cipher match)"), std::string::npos) << err->message;

    s.ciphers = "";
    s.ciphersuites = "TLS_NOT_A_SUITE";
    err = check_tls_settings(s, tls_role::client);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->key, "ciphersuites");
    EXPECT_NE(err->message.find("TLS_NOT_A_SUITE"), std::string::npos) << err->message;
}

TEST(tls_check, min_version_above_max_version_is_refused)
{
    SBC_REQUIRE_PKI();
    tls_settings s = client_settings();
    s.min_version = tls_version::v1_3;
    s.max_version = tls_version::v1_2;
    const auto err = check_tls_settings(s, tls_role::client);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->key, "min_version");
    EXPECT_EQ(err->message, "min_version 1.3 is above max_version 1.2");
}

TEST(tls_check, server_needs_certificate_and_key)
{
    SBC_REQUIRE_PKI();
    tls_settings s = server_settings();
    s.certificate = "";
    s.private_key = "";
    auto err = check_tls_settings(s, tls_role::server);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->key, "certificate");

    s = server_settings();
    s.private_key = "";
    err = check_tls_settings(s, tls_role::server);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->key, "private_key");
}

TEST(tls_check, required_client_certificates_need_a_ca)
{
    SBC_REQUIRE_PKI();
    tls_settings s = server_settings();
    s.require_client_certificate = true;
    auto err = check_tls_settings(s, tls_role::server);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->key, "ca_file");

    s = server_settings();
    s.client_name = "pbx.example.com";
    err = check_tls_settings(s, tls_role::server);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->key, "client_name");
}

TEST(tls_check, leaves_no_openssl_error_behind)
{
    SBC_REQUIRE_PKI();
    tls_settings s = server_settings();
    s.private_key = files().client_key;
    ASSERT_TRUE(check_tls_settings(s, tls_role::server));
    EXPECT_EQ(ERR_peek_error(), 0u);
}

// ---- Cost of an idle connection ------------------------------------------------------------

int64_t idle_pair_bytes(const tls_context& cc, const tls_context& sc, bool release_buffers)
{
    const int64_t before = openssl_live_bytes.load(std::memory_order_relaxed);
    connection_pair p(cc, sc, "sip.example.com");
    if (!release_buffers) {
        SSL_clear_mode(p.client.ssl, SSL_MODE_RELEASE_BUFFERS);
        SSL_clear_mode(p.server.ssl, SSL_MODE_RELEASE_BUFFERS);
    }
    p.handshake();
    EXPECT_TRUE(p.established());
    p.settle();
    return openssl_live_bytes.load(std::memory_order_relaxed) - before;
}

TEST(tls_memory, idle_established_connection_holds_no_record_buffers)
{
    SBC_REQUIRE_PKI();
    if (!openssl_heap_counted) {
        GTEST_SKIP() << "OpenSSL allocated before the counting allocator could be installed";
    }
    auto sc = build(server_settings(), tls_role::server);
    auto cc = build(client_settings(), tls_role::client);
    ASSERT_TRUE(sc && cc);
    (void)idle_pair_bytes(*cc, *sc, true);  // OpenSSL's one-time caches (providers, algorithms)
    const int64_t released = idle_pair_bytes(*cc, *sc, true);
    const int64_t kept = idle_pair_bytes(*cc, *sc, false);
    std::cout << "[ info     ] one idle TLS 1.3 connection pair (client + server SSL, ECDSA P-256): " << released
              << " bytes of OpenSSL heap (" << kept << " without SSL_MODE_RELEASE_BUFFERS)\n";
    // A read buffer alone is over 16 KiB; an idle pair holds neither side's.
    EXPECT_LT(released + 2 * 16 * 1024, kept);
}

}  // namespace
}  // namespace sbc::streams
