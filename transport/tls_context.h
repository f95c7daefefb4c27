// TLS contexts (OpenSSL 3) built from tls_settings: one per role and settings, shared by every
// connection that uses them and replaced whole on reload (a connection keeps the context it
// was made with: SSL_CTX is reference counted). Also the checks the config loader runs on
// certificate, key and CA files, and the names of handshake failures.
// Built by the control core (start, reload); SSL objects made and used by the stream thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "transport/stream_config.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace sbc::streams {

enum class tls_role : uint8_t { client, server };

/// A built SSL_CTX and what operators see of its certificate.
struct tls_context {
    SSL_CTX* ctx = nullptr;        ///< owned (SSL_CTX_free in the destructor)
    tls_role role = tls_role::client;
    std::string certificate;       ///< file our certificate came from ("" when none)
    std::string subject;           ///< of our certificate, one line ("" when none)
    int64_t not_after = 0;         ///< our certificate's expiry, Unix seconds (0 when none)
    std::string client_name;       ///< server: name required in the client's certificate ("" any)

    tls_context() = default;
    tls_context(const tls_context&) = delete;
    tls_context& operator=(const tls_context&) = delete;
    ~tls_context();
};

/// A problem with TLS settings: which key (certificate, private_key, ca_file, ca_path,
/// ciphers, ciphersuites, min_version, client_name, ...) and what is wrong, with OpenSSL's reason.
struct tls_error {
    std::string key;
    std::string message;
};

/// Builds a context for `role` from `s`: our chain and key (required for a server, optional
/// for a client: mutual TLS), trust from ca_file/ca_path (required for a client, and for a
/// server that requires client certificates), versions, cipher lists, peer verification
/// (SSL_VERIFY_PEER; a server requiring client certificates adds FAIL_IF_NO_PEER_CERT), and
/// SSL_MODE_RELEASE_BUFFERS (idle connections hold no record buffers). nullptr and `err` on failure.
std::shared_ptr<tls_context> make_tls_context(const tls_settings& s, tls_role role, tls_error& err);

/// What the config loader runs: make_tls_context, and nothing kept. nullopt when good.
std::optional<tls_error> check_tls_settings(const tls_settings& s, tls_role role);

/// A client SSL on connected socket `fd` toward `server_name`: SNI, and the name checked in
/// the handshake (SSL_set1_host); an IPv4 literal is checked as an IP address; "" checks no name.
SSL* new_client_ssl(const tls_context& c, int fd, const std::string& server_name);
/// A server SSL on accepted socket `fd`.
SSL* new_server_ssl(const tls_context& c, int fd);

/// Why a handshake on `ssl` failed, after SSL_do_handshake returned `ret` (<= 0): from the
/// verify result and OpenSSL's error queue (which it clears). `detail` gets OpenSSL's text.
/// conn_reason::none when the handshake only waits for the socket (SSL_ERROR_WANT_READ/WRITE).
conn_reason handshake_failure(SSL* ssl, int ret, std::string& detail);

/// Server, after the handshake: whether the client's certificate carries `name` (DNS SAN, or
/// the CN when it has no SAN). True when `name` is empty.
bool client_name_ok(SSL* ssl, const std::string& name);

/// For `sbcctl conns`: the negotiated version ("TLSv1.3"), cipher, and the peer certificate's subject.
struct tls_session_info {
    std::string version;
    std::string cipher;
    std::string peer_subject;
};
tls_session_info session_info(SSL* ssl);

}  // namespace sbc::streams
