// TLS contexts (OpenSSL 3) from tls_settings, the config loader's check of them, the SSL
// objects of one connection, and the names of handshake failures (see tls_context.h).
// make_tls_context and check_tls_settings: control core (start, reload). new_*_ssl,
// handshake_failure, client_name_ok, session_info: the stream thread. OpenSSL's error queue
// is per thread, so each function reads and clears only its own thread's errors.
#include "transport/tls_context.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

namespace sbc::streams {

tls_context::~tls_context() { SSL_CTX_free(ctx); }

namespace {

/// The earliest error in this thread's OpenSSL queue as text ("key values mismatch"), then an
/// empty queue: a later failure must not report this one.
std::string take_openssl_error()
{
    const unsigned long e = ERR_peek_error();
    std::string text;
    if (e != 0) {
        // The reason alone reads best in a config error; the coded form when OpenSSL has no
        // text for the reason (a provider's private code).
        if (const char* r = ERR_reason_error_string(e); r != nullptr) {
            text = r;
        } else {
            char buf[256];
            ERR_error_string_n(e, buf, sizeof buf);
            text = buf;
        }
    }
    ERR_clear_error();
    return text;
}

/// The reason code of the earliest queued error, without taking it.
int first_reason() { return ERR_GET_REASON(ERR_peek_error()); }

std::string with_reason(std::string message, const std::string& reason)
{
    if (!reason.empty()) {
        message += " (";
        message += reason;
        message += ')';
    }
    return message;
}

/// Whether `path` opens for reading as a regular file (or a directory when `dir`): OpenSSL's
/// own message for a missing file is "system lib", which names neither the file nor the cause.
bool readable(const std::string& path, bool dir, std::string& why)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
    if (fd < 0) {
        why = path + ": " + std::strerror(errno);
        return false;
    }
    struct stat st {};
    const bool ok = ::fstat(fd, &st) == 0 && (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
    ::close(fd);
    if (!ok) {
        why = path + (dir ? ": not a directory" : ": not a regular file");
    }
    return ok;
}

int openssl_version(tls_version v) { return v == tls_version::v1_3 ? TLS1_3_VERSION : TLS1_2_VERSION; }

const char* version_text(tls_version v) { return v == tls_version::v1_3 ? "1.3" : "1.2"; }

/// An encrypted key must fail to load, not wait for a password on sbcd's terminal.
int no_password(char*, int, int, void*) { return 0; }

std::string name_line(const X509_NAME* name)
{
    if (name == nullptr) {
        return {};
    }
    char buf[512];
    if (X509_NAME_oneline(name, buf, sizeof buf) == nullptr) {
        ERR_clear_error();
        return {};
    }
    return buf;
}

int64_t unix_seconds(const ASN1_TIME* t)
{
    struct tm tm {};
    if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) {
        ERR_clear_error();
        return 0;
    }
    return static_cast<int64_t>(timegm(&tm));
}

bool fail(tls_error& err, const char* key, std::string message)
{
    err.key = key;
    err.message = std::move(message);
    ERR_clear_error();
    return false;
}

/// Checks that need no file: what each role requires.
bool check_shape(const tls_settings& s, tls_role role, tls_error& err)
{
    if (s.min_version > s.max_version) {
        return fail(err, "min_version",
                    std::string("min_version ") + version_text(s.min_version) + " is above max_version " +
                        version_text(s.max_version));
    }
    const bool has_ca = !s.ca_file.empty() || !s.ca_path.empty();
    if (role == tls_role::server) {
        if (s.certificate.empty()) {
            return fail(err, "certificate", "a TLS server needs a certificate");
        }
        if (s.private_key.empty()) {
            return fail(err, "private_key", "a TLS server needs the private key of its certificate");
        }
        if (s.require_client_certificate && !has_ca) {
            return fail(err, "ca_file",
                        "require_client_certificate needs ca_file or ca_path to verify client certificates");
        }
        if (!s.client_name.empty() && !s.require_client_certificate) {
            return fail(err, "client_name",
                        "client_name is checked in the client's certificate: it needs "
                        "require_client_certificate = true");
        }
    } else {
        if (!has_ca) {
            return fail(err, "ca_file", "a TLS client must verify its peers: set ca_file or ca_path");
        }
        if (!s.certificate.empty() && s.private_key.empty()) {
            return fail(err, "private_key", "a client certificate needs its private_key");
        }
    }
    if (s.certificate.empty() && !s.private_key.empty()) {
        return fail(err, "certificate", "private_key is set without its certificate");
    }
    return true;
}

bool load_identity(tls_context& c, const tls_settings& s, tls_error& err)
{
    if (s.certificate.empty()) {
        return true;
    }
    std::string why;
    if (!readable(s.certificate, false, why)) {
        return fail(err, "certificate", why);
    }
    if (SSL_CTX_use_certificate_chain_file(c.ctx, s.certificate.c_str()) != 1) {
        return fail(err, "certificate",
                    with_reason(s.certificate + ": not a PEM certificate chain", take_openssl_error()));
    }
    if (!readable(s.private_key, false, why)) {
        return fail(err, "private_key", why);
    }
    SSL_CTX_set_default_passwd_cb(c.ctx, no_password);
    if (SSL_CTX_use_PrivateKey_file(c.ctx, s.private_key.c_str(), SSL_FILETYPE_PEM) != 1) {
        // OpenSSL already compares a key with the certificate of its type here.
        const bool mismatch =
            ERR_GET_LIB(ERR_peek_error()) == ERR_LIB_X509 && first_reason() == X509_R_KEY_VALUES_MISMATCH;
        return fail(err, "private_key",
                    with_reason(s.private_key + (mismatch ? ": does not match the certificate"
                                                          : ": no unencrypted PEM private key in it"),
                                take_openssl_error()));
    }
    if (SSL_CTX_check_private_key(c.ctx) != 1) {
        return fail(err, "private_key",
                    with_reason(s.private_key + ": does not match the certificate", take_openssl_error()));
    }
    c.certificate = s.certificate;
    if (X509* cert = SSL_CTX_get0_certificate(c.ctx); cert != nullptr) {
        c.subject = name_line(X509_get_subject_name(cert));
        c.not_after = unix_seconds(X509_get0_notAfter(cert));
    }
    return true;
}

bool load_trust(tls_context& c, const tls_settings& s, tls_error& err)
{
    std::string why;
    if (!s.ca_file.empty()) {
        if (!readable(s.ca_file, false, why)) {
            return fail(err, "ca_file", why);
        }
        if (SSL_CTX_load_verify_locations(c.ctx, s.ca_file.c_str(), nullptr) != 1) {
            return fail(err, "ca_file",
                        with_reason(s.ca_file + ": no usable PEM CA certificate", take_openssl_error()));
        }
        if (c.role == tls_role::server && s.require_client_certificate) {
            // Tells clients which issuers we accept, so one with several certificates picks right.
            if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(s.ca_file.c_str()); names != nullptr) {
                SSL_CTX_set_client_CA_list(c.ctx, names);
            }
            ERR_clear_error();
        }
    }
    if (!s.ca_path.empty()) {
        if (!readable(s.ca_path, true, why)) {
            return fail(err, "ca_path", why);
        }
        if (SSL_CTX_load_verify_locations(c.ctx, nullptr, s.ca_path.c_str()) != 1) {
            return fail(err, "ca_path",
                        with_reason(s.ca_path + ": cannot use as a CA directory", take_openssl_error()));
        }
    }
    return true;
}

bool set_protocol(tls_context& c, const tls_settings& s, tls_error& err)
{
    if (SSL_CTX_set_min_proto_version(c.ctx, openssl_version(s.min_version)) != 1) {
        return fail(err, "min_version", with_reason("cannot set the minimum TLS version", take_openssl_error()));
    }
    if (SSL_CTX_set_max_proto_version(c.ctx, openssl_version(s.max_version)) != 1) {
        return fail(err, "max_version", with_reason("cannot set the maximum TLS version", take_openssl_error()));
    }
    if (!s.ciphers.empty() && SSL_CTX_set_cipher_list(c.ctx, s.ciphers.c_str()) != 1) {
        return fail(err, "ciphers",
                    with_reason("\"" + s.ciphers + "\": no usable TLS 1.2 cipher", take_openssl_error()));
    }
    if (!s.ciphersuites.empty() && SSL_CTX_set_ciphersuites(c.ctx, s.ciphersuites.c_str()) != 1) {
        return fail(
            err, "ciphersuites",
            with_reason("\"" + s.ciphersuites + "\": not a list of TLS 1.3 ciphersuites", take_openssl_error()));
    }
    // Non-blocking sockets: a write may take part of a buffer, and its retry may come from a
    // moved buffer. RELEASE_BUFFERS: an idle connection holds no record buffers.
    SSL_CTX_set_mode(c.ctx,
                     SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    // Read ahead: one recv takes every record the socket holds, not two (header, body) per
    // record; the stream thread reads on while SSL_has_pending says OpenSSL holds more.
    SSL_CTX_set_read_ahead(c.ctx, 1);
    // Renegotiation (TLS 1.2) is a way to make a server spend CPU and gains SIP nothing.
    SSL_CTX_set_options(c.ctx, SSL_OP_NO_RENEGOTIATION);
    if (c.role == tls_role::server) {
        SSL_CTX_set_options(c.ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
        // A resumed session with a verified client certificate needs a context id; without it
        // OpenSSL fails the resumption instead of doing a full handshake.
        static constexpr unsigned char sid[] = "sbc";
        SSL_CTX_set_session_id_context(c.ctx, sid, sizeof sid - 1);
        const int mode =
            s.require_client_certificate ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT : SSL_VERIFY_NONE;
        SSL_CTX_set_verify(c.ctx, mode, nullptr);
    } else {
        SSL_CTX_set_verify(c.ctx, SSL_VERIFY_PEER, nullptr);
    }
    return true;
}

bool is_ip_literal(const std::string& name)
{
    unsigned char buf[16];
    return inet_pton(AF_INET, name.c_str(), buf) == 1 || inet_pton(AF_INET6, name.c_str(), buf) == 1;
}

conn_reason verify_reason(long v)
{
    switch (v) {
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
    case X509_V_ERR_EMAIL_MISMATCH: return conn_reason::tls_name_mismatch;
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
    case X509_V_ERR_ERROR_IN_CERT_NOT_BEFORE_FIELD:
    case X509_V_ERR_ERROR_IN_CERT_NOT_AFTER_FIELD:
    case X509_V_ERR_CRL_HAS_EXPIRED:
    case X509_V_ERR_CRL_NOT_YET_VALID: return conn_reason::tls_expired;
    default:
        // Every other verify failure (no issuer, self-signed, untrusted, bad signature, wrong
        // purpose, weak key, ...) means the chain is not one we trust.
        return conn_reason::tls_untrusted;
    }
}

/// The other side's alert about our certificate, named as the same failure seen from there.
conn_reason alert_reason(int reason)
{
    switch (reason) {
    case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED: return conn_reason::tls_no_client_cert;
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED: return conn_reason::tls_expired;
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE: return conn_reason::tls_untrusted;
    case SSL_R_UNEXPECTED_EOF_WHILE_READING: return conn_reason::closed;
    default: return conn_reason::tls_handshake;
    }
}

}  // namespace

std::shared_ptr<tls_context> make_tls_context(const tls_settings& s, tls_role role, tls_error& err)
{
    // Errors left by other code in this thread must not be reported as ours.
    ERR_clear_error();
    if (!check_shape(s, role, err)) {
        return nullptr;
    }
    auto c = std::make_shared<tls_context>();
    c->role = role;
    c->ctx = SSL_CTX_new(TLS_method());
    if (c->ctx == nullptr) {
        fail(err, "certificate", with_reason("cannot create a TLS context", take_openssl_error()));
        return nullptr;
    }
    if (!set_protocol(*c, s, err) || !load_identity(*c, s, err) || !load_trust(*c, s, err)) {
        return nullptr;
    }
    if (role == tls_role::server) {
        c->client_name = s.client_name;
    }
    return c;
}

std::optional<tls_error> check_tls_settings(const tls_settings& s, tls_role role)
{
    tls_error err;
    if (make_tls_context(s, role, err) == nullptr) {
        return err;
    }
    return std::nullopt;
}

SSL* new_client_ssl(const tls_context& c, int fd, const std::string& server_name)
{
    SSL* ssl = SSL_new(c.ctx);
    if (ssl == nullptr || SSL_set_fd(ssl, fd) != 1) {
        SSL_free(ssl);
        ERR_clear_error();
        return nullptr;
    }
    bool ok = true;
    if (server_name.empty()) {
        // Chain only: the caller chose to check no name.
    } else if (is_ip_literal(server_name)) {
        // RFC 6066 §3: no SNI for an address; the certificate must carry it as an IP SAN.
        ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), server_name.c_str()) == 1;
    } else {
        SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        ok = SSL_set_tlsext_host_name(ssl, server_name.c_str()) == 1 && SSL_set1_host(ssl, server_name.c_str()) == 1;
    }
    if (!ok) {
        SSL_free(ssl);
        ERR_clear_error();
        return nullptr;
    }
    SSL_set_connect_state(ssl);
    return ssl;
}

SSL* new_server_ssl(const tls_context& c, int fd)
{
    SSL* ssl = SSL_new(c.ctx);
    if (ssl == nullptr || SSL_set_fd(ssl, fd) != 1) {
        SSL_free(ssl);
        ERR_clear_error();
        return nullptr;
    }
    SSL_set_accept_state(ssl);
    return ssl;
}

conn_reason handshake_failure(SSL* ssl, int ret, std::string& detail)
{
    const int saved_errno = errno;  // before OpenSSL or anything else can change it
    const int e = SSL_get_error(ssl, ret);
    conn_reason r = conn_reason::tls_handshake;
    detail.clear();
    switch (e) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE: ERR_clear_error(); return conn_reason::none;
    case SSL_ERROR_ZERO_RETURN:
        r = conn_reason::closed;
        detail = "closed by the other side during the handshake";
        break;
    case SSL_ERROR_SYSCALL: {
        // OpenSSL 3 queues the socket's errno as an ERR_LIB_SYS error; older code left it in errno.
        const unsigned long q = ERR_peek_error();
        if (q != 0 && ERR_GET_LIB(q) != ERR_LIB_SYS) {
            detail = take_openssl_error();
            break;
        }
        const int sys = q != 0 ? ERR_GET_REASON(q) : saved_errno;
        if (sys == 0 || (q == 0 && ret == 0)) {
            r = conn_reason::closed;
            detail = "closed by the other side during the handshake";
        } else {
            r = (sys == ECONNRESET || sys == EPIPE) ? conn_reason::reset : conn_reason::tls_handshake;
            detail = std::strerror(sys);
        }
        break;
    }
    case SSL_ERROR_SSL:
        if (const long v = SSL_get_verify_result(ssl); v != X509_V_OK) {
            r = verify_reason(v);
            detail = X509_verify_cert_error_string(v);
        } else {
            r = alert_reason(first_reason());
            detail = take_openssl_error();
        }
        break;
    default: detail = take_openssl_error(); break;
    }
    ERR_clear_error();
    return r;
}

bool client_name_ok(SSL* ssl, const std::string& name)
{
    if (name.empty()) {
        return true;
    }
    const X509* cert = SSL_get0_peer_certificate(ssl);
    if (cert == nullptr) {
        return false;
    }
    const bool ok = X509_check_host(const_cast<X509*>(cert), name.data(), name.size(),
                                    X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS, nullptr) == 1;
    ERR_clear_error();
    return ok;
}

tls_session_info session_info(SSL* ssl)
{
    tls_session_info info;
    if (const char* v = SSL_get_version(ssl); v != nullptr) {
        info.version = v;
    }
    if (const char* c = SSL_get_cipher_name(ssl); c != nullptr) {
        info.cipher = c;
    }
    if (const X509* peer = SSL_get0_peer_certificate(ssl); peer != nullptr) {
        info.peer_subject = name_line(X509_get_subject_name(peer));
    }
    return info;
}

}  // namespace sbc::streams
