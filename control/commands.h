// The operator's commands, listed once: what sbcctl accepts and prints in its usage, and what
// sbcd's control socket serves. sbcctl (its main thread) and the control core (dispatch in
// control_commands.cc) read the table; it is constant, so any thread may.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace sbc::control {

/// One per row of commands(); indexes the handler arrays of sbcctl and of the control loop.
enum class command_id : uint8_t { status, stats, calls, peers, top, peer, drain, reload, conns, deny, capture, cdr, help };
inline constexpr std::size_t command_count = static_cast<std::size_t>(command_id::help) + 1;

/// What sbcctl does with the words after the command's name.
enum class command_args : uint8_t {
    none,     ///< any word is a usage error ("status takes no arguments, got 'x'")
    own,      ///< the command parses them itself (`args` is their synopsis)
    ignored,  ///< accepted and not looked at (help)
};

struct command_info {
    command_id id;
    std::string_view name;  ///< as typed after `sbcctl`, and the request's "cmd" when `served`
    command_args args_kind;
    std::string_view args;  ///< synopsis of its own arguments, for the usage text
    std::string_view help;  ///< one paragraph for `sbcctl --help`
    /// Whether sbcd answers {"cmd": name, ...}; false for what only sbcctl does (top asks for
    /// "stats" again and again, help prints the usage).
    bool served;
    std::string_view request;  ///< what the request JSON carries besides "cmd" (for readers)
};

/// Every command, in the order `sbcctl --help` lists them. Any thread.
[[nodiscard]] std::span<const command_info> commands() noexcept;

/// The row of `id`. Any thread.
[[nodiscard]] const command_info& command_of(command_id id) noexcept;

/// The row named `name` (as typed after sbcctl), or nullptr. Any thread.
[[nodiscard]] const command_info* find_command(std::string_view name) noexcept;

/// The row whose request sbcd serves for "cmd": `cmd`, or nullptr (also for sbcctl-only
/// commands). Any thread.
[[nodiscard]] const command_info* find_served(std::string_view cmd) noexcept;

/// The control socket's answer text to an unknown "cmd": "unknown command 'x' (known: status,
/// stats, ...)", the served commands in table order. Any thread.
[[nodiscard]] std::string unknown_command_error(std::string_view cmd);

}  // namespace sbc::control
