// TLS contexts (transport/tls_context.h) against the shared test PKI (tls_test_pki.h): real
// handshakes between a client and a server SSL over a non-blocking socketpair, the reasons an
// operator sees when one fails, and what an idle connection costs. The config loader's errors
// are in tls_check_test.cc. Test thread only.
#include "transport/tls_context.h"

#include "tests/unit/tls_test_pki.h"

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

using testutil::build;
using testutil::client_settings;
using testutil::server_settings;
const testutil::pki& files() { return testutil::test_pki(); }

// ---- Settings and handshakes -----------------------------------------------------------

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
