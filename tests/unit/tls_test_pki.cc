// The TLS unit tests' PKI and settings (tls_test_pki.h). Test thread only.
#include "tests/unit/tls_test_pki.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace sbc::streams::testutil {
namespace {

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

}  // namespace

const pki& test_pki()
{
    if (the_pki == nullptr) {
        the_pki = new pki(make_pki());
    }
    return *the_pki;
}

tls_settings server_settings()
{
    tls_settings s;
    s.certificate = test_pki().server;
    s.private_key = test_pki().server_key;
    return s;
}

tls_settings client_settings()
{
    tls_settings s;
    s.ca_file = test_pki().ca;
    return s;
}

std::shared_ptr<tls_context> build(const tls_settings& s, tls_role role)
{
    tls_error err;
    auto c = make_tls_context(s, role, err);
    EXPECT_NE(c, nullptr) << err.key << ": " << err.message;
    return c;
}

}  // namespace sbc::streams::testutil
