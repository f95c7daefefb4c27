// What the operator sets for SIP over TCP and TLS, as plain structs with named defaults:
// `[tls]` (and its per-trunk and per-region overrides) and `[streams]`. The config loader
// (control/config_tls.cc) fills them; the TLS contexts (transport/tls_context.h) and the
// stream thread (transport/stream_thread.h) read them. Control core and stream thread at
// start and reload; never a worker.
#pragma once

#include <cstdint>
#include <string>

#include "common/limits.h"

namespace sbc::streams {

enum class tls_version : uint8_t { v1_2, v1_3 };

/// One TLS identity and trust policy. Empty strings mean "not set" (an override then keeps
/// the value of `[tls]`).
struct tls_settings {
    std::string certificate;      ///< PEM file: our certificate first, then its chain
    std::string private_key;      ///< PEM file: the key of `certificate`
    std::string ca_file;          ///< PEM bundle the other side's chain is verified against
    std::string ca_path;          ///< or a hashed directory of CA certificates (openssl rehash)
    tls_version min_version = tls_version::v1_2;
    tls_version max_version = tls_version::v1_3;
    std::string ciphers;          ///< TLS 1.2 cipher list (OpenSSL syntax); "": OpenSSL's default
    std::string ciphersuites;     ///< TLS 1.3 suites; "": OpenSSL's default
    /// Server side (a trunk's TLS port): a client certificate is required and verified.
    bool require_client_certificate = false;
    /// Server side: the name (DNS SAN or CN) the client's certificate must carry; "": any trusted.
    std::string client_name;
    int line = 0;                 ///< of the table in the config file, for later messages
};

/// `[streams]`: the stream thread and the connections it keeps.
struct stream_settings {
    int cpu = -1;                              ///< CPU the stream thread is pinned to; -1: not pinned
    uint32_t max_message_bytes = default_stream_message_bytes;  ///< a longer SIP message closes its connection
    uint32_t idle_timeout_ms = 300000;         ///< an inbound connection silent this long is closed
    uint32_t partial_timeout_ms = 5000;        ///< a message begun and not finished in this closes it
    uint32_t connect_timeout_ms = 3000;        ///< TCP connect to a peer
    uint32_t handshake_timeout_ms = 5000;      ///< TLS handshake, either side
    uint32_t keepalive_interval_ms = 30000;    ///< CRLF ping (RFC 5626) on connections to peers
    uint32_t reconnect_min_ms = 500;           ///< backoff after a failed connection to a peer,
    uint32_t reconnect_max_ms = 30000;         ///< doubling up to this
    uint32_t max_connections = 4096;           ///< all connections together, at most 65535 (ids hold a 16-bit slot)
    uint32_t max_connections_per_source = 64;  ///< inbound, per remote address
    uint32_t max_handshakes_per_s_per_source = 50;  ///< inbound TLS handshakes begun, per remote address
    uint16_t connections_per_peer = 1;         ///< persistent connections kept to each TCP/TLS peer
    /// How long an idle stream thread waits before it looks at the workers' rings again (its
    /// sockets and the exception port wake it at once): the most a worker's message or an
    /// arriving TCP segment waits when the thread was idle; lower costs idle CPU.
    uint32_t idle_wait_us = 1000;
    int line = 0;
};

/// Why a connection ended or could not be made: in `sbcctl peers` WHY, `sbcctl conns` and the
/// handshake metrics.
enum class conn_reason : uint8_t {
    none,
    refused,             ///< TCP RST to our SYN
    reset,               ///< TCP RST on an established connection
    timeout,             ///< connect or handshake took too long
    closed,              ///< the other side closed it
    unreachable,         ///< no route, host unreachable
    tls_handshake,       ///< the handshake failed for another reason (protocol, cipher, version)
    tls_untrusted,       ///< the certificate chain does not verify against our CA
    tls_name_mismatch,   ///< the certificate does not carry the expected name
    tls_expired,         ///< the certificate (or one in its chain) is expired or not yet valid
    tls_no_client_cert,  ///< a client certificate was required and none was sent
    idle,                ///< silent past idle_timeout_ms
    partial_message,     ///< a message begun and not finished within partial_timeout_ms
    too_big,             ///< a message longer than max_message_bytes
    bad_framing,         ///< no or a bad Content-Length (RFC 3261 §18.3)
    limit,               ///< over max_connections or a per-source limit
    shutdown,            ///< sbcd stopping, or the peer removed from the config
};
inline constexpr std::size_t conn_reason_count = static_cast<std::size_t>(conn_reason::shutdown) + 1;

/// A short operator-facing text ("connection refused", "certificate name mismatch", ...).
const char* reason_text(conn_reason r) noexcept;
/// The metric label ("refused", "name_mismatch", ...).
const char* reason_label(conn_reason r) noexcept;

}  // namespace sbc::streams
