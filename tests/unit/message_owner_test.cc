// Unit tests of finding the worker that owns a message from its text (sip-fastpath/proxy_ids.h
// message_owner): the stream thread hands a message to that worker, and the worker, deciding
// on its own parse, must find itself, or it would hand the message on again. Table-driven:
// responses by our stateful and stateless branches, in-dialog requests by our Record-Route's
// ;w= (the plain form we write and other spellings), and what names no worker.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "sip-fastpath/proxy_ids.h"
#include "sip-fastpath/sip_message.h"

namespace sip = sbc::sip;

namespace {

std::string stateful(uint8_t worker)
{
    std::array<char, sip::branch_stateful_len> b{};
    sip::write_branch(b.data(), sip::txn_id{worker, 0x1234, 7, 1});
    return {b.data(), b.size()};
}

std::string stateless(uint8_t worker)
{
    std::array<char, sip::branch_stateless_len> b{};
    return {b.data(), sip::write_stateless_branch(b.data(), worker, 0xabcdef)};
}

std::string response(const std::string& branch, std::string_view cseq = "1 INVITE")
{
    return "SIP/2.0 200 OK\r\nVia: SIP/2.0/TLS 198.18.0.1:5061;branch=" + branch +
           "\r\nVia: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-caller\r\n"
           "From: <sip:a@example.com>;tag=a1\r\nTo: <sip:b@example.net>;tag=b1\r\nCall-ID: c1\r\n"
           "CSeq: " + std::string(cseq) + "\r\nContent-Length: 0\r\n\r\n";
}

std::string request(std::string_view method, std::string_view route)
{
    std::string m = std::string(method) + " sip:b@198.18.1.11:5061;transport=tls SIP/2.0\r\n"
                    "Via: SIP/2.0/TLS 198.18.1.11:5061;branch=z9hG4bK-peer\r\n";
    if (!route.empty()) m += "Route: " + std::string(route) + "\r\n";
    m += "Max-Forwards: 70\r\nFrom: <sip:b@example.net>;tag=b1\r\nTo: <sip:a@example.com>;tag=a1\r\n"
         "Call-ID: c1\r\nCSeq: 2 " + std::string(method) + "\r\nContent-Length: 0\r\n\r\n";
    return m;
}

struct owner_case {
    const char* description;
    std::string text;
    int owner;  ///< -1: names no worker (handled where it arrives)
};

std::vector<owner_case> owner_cases()
{
    return {
        {"a_response_to_our_invite_names_the_worker_in_our_stateful_branch", response(stateful(2)), 2},
        {"a_response_to_a_stateless_forward_names_the_worker_in_that_branch", response(stateless(5), "2 BYE"), 5},
        {"worker_zero_is_a_worker", response(stateful(0)), 0},
        {"a_response_with_a_branch_not_ours_names_none", response("z9hG4bK-someone-else"), -1},
        {"a_response_to_a_probe_names_none", response("z9hG4bKsP0001000000ff", "1 OPTIONS"), -1},
        {"a_bye_inside_a_dialog_names_the_worker_of_our_record_route",
         request("BYE", "<sip:198.18.0.1:5061;transport=tls;lr;w=03>"), 3},
        {"an_ack_of_a_2xx_follows_the_route_too", request("ACK", "<sip:198.18.0.1:5061;transport=tls;lr;w=01>"), 1},
        {"a_route_with_a_display_name_is_read_by_the_full_parse",
         request("BYE", "\"sbc\" <sip:198.18.0.1:5061;transport=tls;lr;w=04>"), 4},
        {"a_new_invite_names_none", request("INVITE", ""), -1},
        {"a_cancel_without_route_names_none_and_stays_with_its_connection", request("CANCEL", ""), -1},
        {"a_route_without_our_parameter_names_none", request("BYE", "<sip:198.18.9.9;lr>"), -1},
        {"text_that_is_not_sip_names_none", "hello\r\n\r\n", -1},
    };
}

TEST(message_owner, finds_from_the_text_the_worker_that_owns_each_message)
{
    sip::message scratch;
    for (const owner_case& c : owner_cases()) EXPECT_EQ(sip::message_owner(c.text, scratch), c.owner) << c.description;
}

TEST(message_owner, from_the_text_agrees_with_the_workers_own_decision_on_its_parse)
{
    for (const owner_case& c : owner_cases()) {
        sip::message parsed;
        if (sip::parse(c.text, parsed) != sip::error::none) continue;
        sip::message scratch;
        EXPECT_EQ(sip::message_owner(c.text, scratch), sip::message_owner(parsed)) << c.description;
    }
}

TEST(message_owner, a_scratch_used_before_does_not_leak_into_the_next_answer)
{
    sip::message scratch;
    EXPECT_EQ(sip::message_owner(response(stateful(6)), scratch), 6);
    EXPECT_EQ(sip::message_owner("not sip", scratch), -1);
    EXPECT_EQ(sip::message_owner(request("INVITE", ""), scratch), -1);
}

}  // namespace
