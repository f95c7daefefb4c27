// One TCP or TLS connection of the stream thread and the table that holds them (ids that
// name a slot and its generation, so that a stale id never reaches a new connection).
// Stream thread only.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <rte_mbuf.h>

#include "common/address.h"
#include "transport/stream_config.h"
#include "transport/stream_framer.h"
#include "transport/tls_context.h"

namespace sbc::streams {

enum class conn_state : uint8_t { free, connecting, handshaking, established };

inline constexpr uint32_t no_owner_peer = 0xffffffff;
/// An outbound TLS connection that no refusal followed for this long counts as up.
inline constexpr uint64_t confirm_after_ms = 300;
/// INVITEs sent on a connection to a peer whose branches are kept, so that a lost connection
/// fails those attempts over at once (as an ICMP unreachable does for UDP).
inline constexpr std::size_t invite_memory = 64;
inline constexpr std::size_t branch_bytes = 40;

struct conn {
    uint32_t id = 0;
    conn_state state = conn_state::free;
    bool outbound = false;
    bool want_write = false;      ///< EPOLLOUT is armed
    bool ping_outstanding = false;
    bool dirty = false;           ///< in the stream thread's list of connections to flush
    bool confirmed = false;       ///< up for its peer (see stream_thread::impl::established)
    uint64_t handshake_read = 0;  ///< bytes read from the socket when the handshake ended
    uint64_t confirm_at_ms = 0;   ///< unconfirmed: taken as up at this time
    int fd = -1;
    SSL* ssl = nullptr;
    std::shared_ptr<tls_context> tls;  ///< kept alive while the connection uses it
    endpoint local;
    endpoint remote;              ///< remote.conn == id
    uint16_t trunk = 0;
    uint32_t peer_id = no_owner_peer;
    std::string server_name;
    /// What the socket has not taken yet, in order: TCP, the bytes of messages a write left
    /// over; TLS, records that SSL_write made (written here by the connection's write BIO,
    /// stream_io.cc) and the socket has not taken.
    std::string out;
    /// Plaintext queued before a TLS connection is established (SSL_write once it is).
    std::string early;
    /// TCP: messages of this iteration, written from their mbufs in one sendmsg (flush); only
    /// while `out` is empty, so that the order holds. Freed when written or closed.
    std::vector<rte_mbuf*> pending;
    std::unique_ptr<stream_framer> framer;
    uint64_t opened_ms = 0, deadline_ms = 0, last_rx_ms = 0, partial_since_ms = 0, ping_ms = 0;
    uint64_t msgs_in = 0, msgs_out = 0, bytes_in = 0, bytes_out = 0;
    tls_session_info session;
    struct invite {
        uint8_t worker = 0;
        uint8_t len = 0;
        std::array<char, branch_bytes> branch{};
    };
    std::vector<invite> invites;  ///< ring of the last invite_memory INVITEs (outbound only)
    std::size_t next_invite = 0;
};

/// Fixed table of connections; an id is (generation << 16) | (slot + 1), never 0.
class conn_table {
public:
    explicit conn_table(uint32_t capacity) : slots_(capacity), gen_(capacity, 1), at_(capacity, 0)
    {
        for (uint32_t i = capacity; i-- > 0;) free_.push_back(i);
        open_.reserve(capacity);
    }
    /// A free connection with a fresh id, or null when the table is full.
    conn* open()
    {
        if (free_.empty()) return nullptr;
        const uint32_t slot = free_.back();
        free_.pop_back();
        conn& c = slots_[slot];
        c = conn{};
        c.id = (static_cast<uint32_t>(gen_[slot]) << 16) | (slot + 1);
        at_[slot] = static_cast<uint32_t>(open_.size());
        open_.push_back(slot);
        return &c;
    }
    void release(conn& c)
    {
        const uint32_t slot = (c.id & 0xffff) - 1;
        ++gen_[slot];
        if (gen_[slot] == 0) gen_[slot] = 1;
        c = conn{};
        free_.push_back(slot);
        // The last open slot takes this one's place in open_ (open_at's order is no order).
        const uint32_t last = open_.back();
        open_[at_[slot]] = last;
        at_[last] = at_[slot];
        open_.pop_back();
    }
    /// The connection `id` names, or null when it is gone.
    conn* find(uint32_t id)
    {
        const uint32_t slot = (id & 0xffff) - 1;
        if ((id & 0xffff) == 0 || slot >= slots_.size()) return nullptr;
        conn& c = slots_[slot];
        return c.state != conn_state::free && c.id == id ? &c : nullptr;
    }
    [[nodiscard]] uint32_t slot_of(uint32_t id) const noexcept { return (id & 0xffff) - 1; }
    [[nodiscard]] std::size_t used() const noexcept { return open_.size(); }
    std::vector<conn>& all() noexcept { return slots_; }
    /// The open connections, `used()` of them, by index: walking from the last index down
    /// visits each once even when the walk releases the one it is at (release moves the last
    /// one into its place), without touching the free slots (thousands, with a large
    /// max_connections).
    conn& open_at(std::size_t i) noexcept { return slots_[open_[i]]; }

private:
    std::vector<conn> slots_;
    std::vector<uint16_t> gen_;
    std::vector<uint32_t> free_;
    std::vector<uint32_t> open_;  ///< slots in use
    std::vector<uint32_t> at_;    ///< by slot: its index in open_ (while in use)
};

}  // namespace sbc::streams
