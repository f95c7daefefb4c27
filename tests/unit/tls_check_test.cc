// What the config loader reports for bad TLS settings (transport/tls_context.h
// check_tls_settings): the file, the key and OpenSSL's reason, against the shared test PKI.
// Test thread only.
#include <openssl/err.h>

#include <gtest/gtest.h>

#include "tests/unit/tls_test_pki.h"
#include "transport/tls_context.h"

namespace sbc::streams {
namespace {

using testutil::client_settings;
using testutil::server_settings;
const testutil::pki& files() { return testutil::test_pki(); }

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

}  // namespace
}  // namespace sbc::streams
