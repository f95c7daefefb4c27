// Realistic SIP messages shared by the SIP unit tests and the parse benchmark: one call
// (INVITE with SDP, 100, 180, 200 with SDP, ACK, BYE) and an OPTIONS probe.
// Test and benchmark code only.
#pragma once

#include <array>
#include <string_view>

namespace sbc::sip::testdata {

inline constexpr std::string_view invite =
    "INVITE sip:+15551230002@198.18.0.20:5060;user=phone SIP/2.0\r\n"
    "Via: SIP/2.0/UDP 198.18.0.10:5060;branch=z9hG4bK-524287-1---f1a6b2c3d4e5f607;rport\r\n"
    "Max-Forwards: 70\r\n"
    "Contact: <sip:+15551230001@198.18.0.10:5060;transport=udp>\r\n"
    "To: <sip:+15551230002@198.18.0.20>\r\n"
    "From: \"Alice \\\"A\\\" Smith\" <sip:+15551230001@198.18.0.10>;tag=8a7b6c5d\r\n"
    "Call-ID: 3c26700b5f2e4a1d9b8c7d6e5f4a3b2c@198.18.0.10\r\n"
    "CSeq: 1 INVITE\r\n"
    "Allow: INVITE, ACK, CANCEL, BYE, NOTIFY, REFER, MESSAGE, OPTIONS, INFO, SUBSCRIBE\r\n"
    "Content-Type: application/sdp\r\n"
    "Supported: replaces, timer\r\n"
    "Session-Expires: 1800\r\n"
    "User-Agent: sbc-test/1.0\r\n"
    "Content-Length: 335\r\n"
    "\r\n"
    "v=0\r\n"
    "o=- 3912345678 3912345678 IN IP4 198.18.0.10\r\n"
    "s=call\r\n"
    "c=IN IP4 198.18.0.10\r\n"
    "t=0 0\r\n"
    "m=audio 40000 RTP/AVP 0 8 18 101\r\n"
    "a=rtpmap:0 PCMU/8000\r\n"
    "a=rtpmap:8 PCMA/8000\r\n"
    "a=rtpmap:18 G729/8000\r\n"
    "a=fmtp:18 annexb=no\r\n"
    "a=rtpmap:101 telephone-event/8000\r\n"
    "a=fmtp:101 0-16\r\n"
    "a=ptime:20\r\n"
    "a=maxptime:150\r\n"
    "a=rtcp:40001 IN IP4 198.18.0.10\r\n"
    "a=sendrecv\r\n";

inline constexpr std::string_view trying =
    "SIP/2.0 100 Trying\r\n"
    "Via: SIP/2.0/UDP 198.18.0.10:5060;branch=z9hG4bK-524287-1---f1a6b2c3d4e5f607;rport=5060;received=198.18.0.10\r\n"
    "To: <sip:+15551230002@198.18.0.20>\r\n"
    "From: \"Alice \\\"A\\\" Smith\" <sip:+15551230001@198.18.0.10>;tag=8a7b6c5d\r\n"
    "Call-ID: 3c26700b5f2e4a1d9b8c7d6e5f4a3b2c@198.18.0.10\r\n"
    "CSeq: 1 INVITE\r\n"
    "Content-Length: 0\r\n"
    "\r\n";

inline constexpr std::string_view ringing =
    "SIP/2.0 180 Ringing\r\n"
    "Via: SIP/2.0/UDP 198.18.0.10:5060;branch=z9hG4bK-524287-1---f1a6b2c3d4e5f607;rport=5060;received=198.18.0.10\r\n"
    "Record-Route: <sip:198.18.0.20;lr>\r\n"
    "Contact: <sip:+15551230002@198.18.0.30:5060>\r\n"
    "To: <sip:+15551230002@198.18.0.20>;tag=as5f2c1b9e\r\n"
    "From: \"Alice \\\"A\\\" Smith\" <sip:+15551230001@198.18.0.10>;tag=8a7b6c5d\r\n"
    "Call-ID: 3c26700b5f2e4a1d9b8c7d6e5f4a3b2c@198.18.0.10\r\n"
    "CSeq: 1 INVITE\r\n"
    "Server: far-end/2.3\r\n"
    "Content-Length: 0\r\n"
    "\r\n";

inline constexpr std::string_view ok_sdp =
    "SIP/2.0 200 OK\r\n"
    "Via: SIP/2.0/UDP 198.18.0.10:5060;branch=z9hG4bK-524287-1---f1a6b2c3d4e5f607;rport=5060;received=198.18.0.10\r\n"
    "Record-Route: <sip:198.18.0.20;lr>\r\n"
    "Contact: <sip:+15551230002@198.18.0.30:5060>\r\n"
    "To: <sip:+15551230002@198.18.0.20>;tag=as5f2c1b9e\r\n"
    "From: \"Alice \\\"A\\\" Smith\" <sip:+15551230001@198.18.0.10>;tag=8a7b6c5d\r\n"
    "Call-ID: 3c26700b5f2e4a1d9b8c7d6e5f4a3b2c@198.18.0.10\r\n"
    "CSeq: 1 INVITE\r\n"
    "Allow: INVITE, ACK, CANCEL, OPTIONS, BYE, REFER, NOTIFY\r\n"
    "Supported: replaces, timer\r\n"
    "Content-Type: application/sdp\r\n"
    "Content-Length: 202\r\n"
    "\r\n"
    "v=0\r\n"
    "o=far 2890844527 2890844527 IN IP4 198.18.0.30\r\n"
    "s=-\r\n"
    "c=IN IP4 198.18.0.30\r\n"
    "t=0 0\r\n"
    "m=audio 30000 RTP/AVP 0 101\r\n"
    "a=rtpmap:0 PCMU/8000\r\n"
    "a=rtpmap:101 telephone-event/8000\r\n"
    "a=fmtp:101 0-16\r\n"
    "a=ptime:20\r\n";

inline constexpr std::string_view ack =
    "ACK sip:+15551230002@198.18.0.30:5060 SIP/2.0\r\n"
    "Via: SIP/2.0/UDP 198.18.0.10:5060;branch=z9hG4bK-524287-1---a9b8c7d6e5f40312;rport\r\n"
    "Max-Forwards: 70\r\n"
    "Route: <sip:198.18.0.20;lr>\r\n"
    "To: <sip:+15551230002@198.18.0.20>;tag=as5f2c1b9e\r\n"
    "From: \"Alice \\\"A\\\" Smith\" <sip:+15551230001@198.18.0.10>;tag=8a7b6c5d\r\n"
    "Call-ID: 3c26700b5f2e4a1d9b8c7d6e5f4a3b2c@198.18.0.10\r\n"
    "CSeq: 1 ACK\r\n"
    "Content-Length: 0\r\n"
    "\r\n";

inline constexpr std::string_view bye =
    "BYE sip:+15551230002@198.18.0.30:5060 SIP/2.0\r\n"
    "Via: SIP/2.0/UDP 198.18.0.10:5060;branch=z9hG4bK-524287-1---b1c2d3e4f5a6b7c8;rport\r\n"
    "Max-Forwards: 70\r\n"
    "Route: <sip:198.18.0.20;lr>\r\n"
    "To: <sip:+15551230002@198.18.0.20>;tag=as5f2c1b9e\r\n"
    "From: \"Alice \\\"A\\\" Smith\" <sip:+15551230001@198.18.0.10>;tag=8a7b6c5d\r\n"
    "Call-ID: 3c26700b5f2e4a1d9b8c7d6e5f4a3b2c@198.18.0.10\r\n"
    "CSeq: 2 BYE\r\n"
    "User-Agent: sbc-test/1.0\r\n"
    "Content-Length: 0\r\n"
    "\r\n";

inline constexpr std::string_view options =
    "OPTIONS sip:198.18.0.20:5060 SIP/2.0\r\n"
    "Via: SIP/2.0/UDP 198.18.0.1:5060;branch=z9hG4bK-opt-000001\r\n"
    "Max-Forwards: 70\r\n"
    "To: <sip:198.18.0.20:5060>\r\n"
    "From: <sip:sbc@198.18.0.1>;tag=probe1\r\n"
    "Call-ID: probe-000001@198.18.0.1\r\n"
    "CSeq: 1 OPTIONS\r\n"
    "Accept: application/sdp\r\n"
    "Content-Length: 0\r\n"
    "\r\n";

struct named {
  std::string_view name;
  std::string_view text;
};

inline constexpr std::array<named, 7> call = {{
    {"INVITE+SDP", invite},
    {"100", trying},
    {"180", ringing},
    {"200+SDP", ok_sdp},
    {"ACK", ack},
    {"BYE", bye},
    {"OPTIONS", options},
}};

}  // namespace sbc::sip::testdata
