// The test PKI the TLS unit tests share (made once per test process with OpenSSL, removed at
// exit): roots, a server leaf for sip.example.com and 192.0.2.10 (valid, expired, wrong name),
// a client leaf, a file that is not PEM; and the settings the tests start from. Test thread
// only.
#pragma once

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "transport/tls_context.h"

namespace sbc::streams::testutil {

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

/// The PKI, made on first use (ok false when it could not be).
const pki& test_pki();
/// A server with the valid leaf and its key; a client trusting the root.
tls_settings server_settings();
tls_settings client_settings();
/// make_tls_context, failing the test (with the loader's error) when it returns null.
std::shared_ptr<tls_context> build(const tls_settings& s, tls_role role);

}  // namespace sbc::streams::testutil

#define SBC_REQUIRE_PKI()                                                                  \
    ASSERT_TRUE(::sbc::streams::testutil::test_pki().ok)                                   \
        << "test PKI could not be made in " << ::sbc::streams::testutil::test_pki().dir
