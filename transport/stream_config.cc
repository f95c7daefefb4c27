// Names of connection outcomes (see stream_config.h). Any thread.
#include "transport/stream_config.h"

#include <array>

namespace sbc::streams {

namespace {
struct names {
    const char* text;
    const char* label;
};
constexpr std::array<names, conn_reason_count> table{{
    {"", "ok"},
    {"connection refused", "refused"},
    {"connection reset", "reset"},
    {"timed out", "timeout"},
    {"closed by the other side", "closed"},
    {"unreachable", "unreachable"},
    {"TLS handshake failed", "handshake"},
    {"certificate not trusted", "untrusted"},
    {"certificate name mismatch", "name_mismatch"},
    {"certificate expired or not yet valid", "expired"},
    {"no client certificate", "no_client_cert"},
    {"idle timeout", "idle"},
    {"partial message timeout", "partial_message"},
    {"message too big", "too_big"},
    {"bad framing (Content-Length)", "bad_framing"},
    {"connection limit", "limit"},
    {"shut down", "shutdown"},
}};
}  // namespace

const char* reason_text(conn_reason r) noexcept
{
    const auto i = static_cast<std::size_t>(r);
    return i < table.size() ? table[i].text : "?";
}

const char* reason_label(conn_reason r) noexcept
{
    const auto i = static_cast<std::size_t>(r);
    return i < table.size() ? table[i].label : "unknown";
}

}  // namespace sbc::streams
