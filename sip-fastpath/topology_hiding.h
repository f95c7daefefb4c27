// Topology hiding ([[trunk]] topology_hiding = true): what the SBC encodes into its own Via,
// Record-Route and Contact so that the far side sees only the SBC, and reading it back. A
// request that leaves toward a hidden side carries one Via (ours: the sender's address and
// every Via it replaced go masked into its ;sbc-th= parameter), our Record-Route alone (the
// route set it replaced masked into ;sbc-th= of its URI) and, in place of the Contact, our
// address with the original Contact URI masked into ;sbc-th=. Responses and in-dialog
// requests bring these back; the hiding stage (stage_hiding.cc) restores them for the other side.
//
// Masking: a 32-bit tag (a keyed hash of the plain text) then the plain text XORed with a
// keystream seeded by the key and the tag, in base64url without padding (valid in a Via
// parameter token and in a URI parameter). The tag both varies the keystream per text and
// detects a changed or foreign value (th_decode fails: counted, the message refused). This
// hides addresses from the far side; it is no cipher against a determined attacker.
// Any thread; pure, no heap (process_hiding_key: control core, once).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/address.h"
#include "sip-fastpath/proxy_ids.h"
#include "sip-fastpath/sip_message.h"

namespace sbc::sip {

/// The parameter name of what we encode, in our Via, our Record-Route URI and our Contact URI.
constexpr std::string_view th_param = "sbc-th";
/// The most plain text one encoded value carries (the Vias of a request, a route set, a URI).
constexpr std::size_t th_max_plain = 1024;
/// Room an encoding of `plain` bytes takes.
constexpr std::size_t th_encoded_size(std::size_t plain) noexcept { return ((plain + 4) * 4 + 2) / 3; }
/// The largest value th_encode writes.
constexpr std::size_t th_max_encoded = th_encoded_size(th_max_plain);

/// The process's masking key: random, made on first use and the same ever after (dialogs
/// outlive snapshots). Control core (it may read /dev/urandom).
uint64_t process_hiding_key();

/// `plain` masked with `key` into `out`; its length, 0 when `plain` is longer than
/// th_max_plain or `out` too small.
std::size_t th_encode(std::span<char> out, std::string_view plain, uint64_t key) noexcept;
/// The plain text of `enc` into `out`; its length, or -1 when `enc` is not a value th_encode
/// wrote with `key` (changed, cut, foreign) or does not fit `out`.
int th_decode(std::string_view enc, uint64_t key, std::span<char> out) noexcept;

/// Every Via line's value of `m`, in order, joined with "\r\nVia: " (restored as the same
/// lines) into `out`; its length, 0 when none or `out` is too small.
std::size_t join_vias(const message& m, std::span<char> out) noexcept;
/// Every Record-Route line's value, joined with ", ".
std::size_t join_record_routes(const message& m, std::span<char> out) noexcept;

/// Our Via for a request sent toward a hidden side: "SIP/2.0/UDP host:port;branch=B;sbc-th=X"
/// where X masks the sender (`src`, as sbc-src writes it) and every Via of `m`; with
/// `advertise_oc`, RFC 7339's ";oc;oc-algo=\"loss\"". Its length, 0 when `out` is too small.
std::size_t write_hidden_via(std::span<char> out, const endpoint& local, std::string_view branch,
                             const endpoint& src, const message& m, uint64_t key, bool advertise_oc) noexcept;

/// What our hidden Via (the top Via of a response, or of a message we sent) holds.
struct hidden_via {
    endpoint src;           ///< where the response goes back (as sbc-src)
    std::string_view vias;  ///< the Vias to restore below ours, in the caller's buffer
};
enum class th_found : uint8_t { absent, ok, bad };
/// Reads the ;sbc-th= of `m`'s top Via: absent (not a hidden Via), ok (`out` set, its text in
/// `buf`) or bad (changed or foreign: the message is not to be relayed).
th_found read_hidden_via(const message& m, uint64_t key, std::span<char> buf, hidden_via& out) noexcept;

/// Whether `text` holds "sbc-th" anywhere (memmem: a cheap look before any parse).
bool holds_th(std::string_view text) noexcept;

/// `uri` ("<sip:...>" or a bare URI) with ";sbc-th=" + `enc` added to its parameters (before
/// '>' when in brackets) into `out`; its length, 0 when it does not fit.
std::size_t add_th_param(std::span<char> out, std::string_view uri, std::string_view enc) noexcept;

/// The Contact we write toward a hidden side: "<sip:host:port;transport=x;w=WW;sbc-th=X>",
/// X masking `original` (the URI of the Contact it replaces); `host` empty: local's address.
/// Its length, 0 when `out` is too small.
std::size_t write_hidden_contact(std::span<char> out, const endpoint& local, std::string_view host, uint8_t worker,
                                 std::string_view original, uint64_t key) noexcept;

/// `via` (a Via value write_via wrote) without its ;sbc-src= parameter, in place; its new length.
std::size_t without_via_source(std::span<char> via) noexcept;

/// The URI of the first Contact of `m` (without brackets, display name, header parameters);
/// empty when none.
std::string_view contact_uri(const message& m) noexcept;

/// Whether `m`'s top Via carries ;sbc-th= (a hidden Via of ours: the Vias below it are in it).
bool has_hidden_via(const message& m) noexcept;
/// The sender our hidden top Via names (as sbc-src would); false when it has none or it does
/// not decode.
bool hidden_via_source(const message& m, uint64_t key, endpoint& src) noexcept;
/// The worker named by the Contact we wrote, when a request's Request-URI is one (;sbc-th=
/// and ;w=); -1 otherwise.
int hidden_contact_owner(const message& m) noexcept;

/// What a request toward a hidden side needs written, on the stack of the function that
/// edits it (the edits point into it).
struct th_scratch {
    std::array<char, max_via_size + th_max_encoded> via;            ///< our hidden Via
    std::array<char, th_max_plain> vias;                            ///< the Vias to restore
    std::array<char, th_max_plain + th_max_encoded> rr;             ///< the Record-Route set to write
    std::array<char, max_record_route_size + th_max_encoded> contact;  ///< our Contact
    std::array<char, th_max_plain> routes;                          ///< a route set restored
    std::array<char, th_max_plain> ruri;                            ///< a Request-URI restored
};

/// The callee's Contact URI of a hidden dialog (its 2xx's), by dialog slot: where requests
/// sent to the SBC's own address in the dialog go (a caller that ignores Record-Route and
/// Contact), and where the caller's requests to the Contact we wrote go once it is decoded
/// (`next`, read from the 2xx's parse: not parsed again per request). Written when the dialog
/// starts, only for hidden dialogs.
struct th_target {
    uint8_t len = 0;  ///< 0: none kept (too long, or no Contact)
    std::array<char, 127> uri;
    bool routable = false;  ///< `next` holds the URI's own target (an address, not a name)
    endpoint next;
};

}  // namespace sbc::sip
