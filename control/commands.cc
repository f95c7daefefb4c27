// The table of operator commands (see commands.h). Constant data; any thread.
#include "control/commands.h"

#include <array>

namespace sbc::control {

namespace {

using enum command_args;

// Rows in command_id order (checked below). The served ones also give the order of the
// control socket's "known: ..." list, which is why peer comes before drain.
constexpr std::array<command_info, command_count> table{{
    {command_id::status, "status", none, "",
     "node, state and uptime; interfaces with address, MAC, link and whether the gateway is resolved; "
     "workers and how busy they are",
     true, "nothing"},
    {command_id::stats, "stats", none, "",
     "packet totals, packets per pipeline stage, drops by reason (non-zero first) and per-worker counters, with the calls each worker owns", true,
     "nothing"},
    {command_id::calls, "calls", own, "[--media]",
     "active calls: established and being set up, per peer; --media: each call's media streams "
     "(our ports, far ends, packets, bytes, loss and jitter per direction)",
     true, "\"media\": true with --media"},
    {command_id::peers, "peers", none, "",
     "every peer: region, address, state (up, down, trial, draining, disabled), why, last probe RTT, no-answer timer, active calls, "
     "attempts and failures by cause",
     true, "nothing"},
    {command_id::top, "top", own, "[--interval S] [--count N]",
     "live view redrawn every S seconds (default 1): per-worker busy %, packets per second in and out, drops per "
     "second by reason; --count N stops after N refreshes (for scripts); the screen is cleared only on a terminal",
     false, "(sbcctl sends \"stats\" every S seconds)"},
    {command_id::peer, "peer", own, "drain|undrain|disable|enable|promote NAME, or canary NAME --match FIELD:PATTERN",
     "take one peer out of rotation or put it back (NAME as `sbcctl peers` shows it): drain stops new calls to it "
     "while its calls up go on; disable takes it out of service; undrain and enable undo them. canary sends the "
     "peer only the new calls whose FIELD (ruri, from or to: the user part) matches PATTERN (a Hyperscan/PCRE "
     "expression, e.g. 'from:^\\+15550100'), and sends it every such call it can; promote puts it in normal "
     "rotation. A canary survives reloads",
     true, "\"action\": drain|undrain|disable|enable|canary|promote, \"name\": NAME; canary: \"match\": FIELD:PATTERN"},
    {command_id::drain, "drain", own, "[--wait] [--timeout S]",
     "stop taking new calls (they get 503 with Retry-After; OPTIONS to the SBC and /healthz answer 503) and let "
     "the calls up finish; sbcd exits 0 when none is left or after S seconds (default: [self] drain_timeout_s, "
     "600). --wait returns only once sbcd has exited: use it as a Kubernetes preStop hook",
     true, "\"timeout_s\": S with --timeout (default [self] drain_timeout_s)"},
    {command_id::reload, "reload", none, "",
     "re-read the config file, validate it and publish it to the workers without stopping calls; "
     "a file with problems is refused with every problem listed and the running config stays "
     "(also on SIGHUP). Interfaces, workers, the control addresses, [media] and [cdr] need a restart "
     "(a reload that changes them is refused and names them)",
     true, "nothing"},
    {command_id::conns, "conns", none, "",
     "SIP connections over TCP and TLS: each with its id, direction, transport, state, local and remote "
     "address, owner (trunk or peer), TLS version, cipher and the other side's certificate subject, age, "
     "messages and bytes each way; then each TCP/TLS peer's established connections and last error, and "
     "the listeners that could not be opened",
     true, "nothing"},
    {command_id::deny, "deny", own, "list | add ADDRESS [--seconds N] [--reason TEXT] | remove ADDRESS",
     "the deny list of flood protection ([flood]): sources whose UDP SIP every worker drops before parsing. "
     "list shows each denied address with why (rate, malformed, scanner, operator), since and until when and "
     "the seconds left; add denies ADDRESS (IPv4, or an IPv6 address or /64: IPv6 sources are denied per /64) for N seconds (default [flood] deny_s, 300) with TEXT as its note "
     "(refused for a trusted source: a peer, or one a trunk with trusted = true allows); remove ends a denial "
     "at once. Workers report untrusted sources over their rate or sending malformed messages; the control "
     "core denies them for deny_s",
     true, "\"action\": list|add|remove; add, remove: \"address\": A.B.C.D, or an IPv6 address or /64 (its /64 is denied); add: \"seconds\": N, \"reason\": TEXT"},
    {command_id::capture, "capture", own, "start [--match FIELD:PATTERN]... [--max-mb N] [--seconds S] FILE | stop | status",
     "SIP capture to a pcap file that sbcd writes (tshark, Wireshark, sngrep read it): every SIP message over UDP "
     "in and out, as on the wire, or only those where any --match holds: FIELD callid, from, to (whole header "
     "value), ruri or source (the other side as A.B.C.D:PORT), PATTERN a Hyperscan/PCRE expression; the "
     "messages sbcd sends in answer to a matching one are kept with it. The file stops at N MiB (default 100) "
     "or after S seconds (default 0: until `capture stop`); one capture at a time; status shows the file, "
     "messages and bytes written, drops by reason and why it stopped",
     true, "\"action\": start|stop|status; start: \"file\": PATH, \"match\": [FIELD:PATTERN...], \"max_mb\": N, \"seconds\": S"},
    {command_id::cdr, "cdr", own, "tail [-n N] [--follow]",
     "call detail records ([cdr]): the last N records sbcd wrote (default 20, at most the 1000 it keeps) as a "
     "table: start time, Call-ID (cut to 20), From and To users, trunk, every peer tried as NAME:OUTCOME[/CODE] "
     "(outcome answered, code, timeout, icmp, connection, cancelled or not_sent), final code and who sent it "
     "(peer or sbc), setup time to the answer in ms, duration in s, why it ended (failed, cancelled, "
     "bye_caller, bye_callee, media_timeout, bye_timeout, drain, refused) and the estimated MOS of each "
     "direction (A: from the caller, B: from the callee). --follow then prints new records every 500 ms "
     "until interrupted; --json prints each record as its JSON line in the file",
     true, "\"action\": tail|since; tail: \"n\": N; since: \"seq\": SEQ (the records after it)"},
    {command_id::help, "help", ignored, "", "this text", false, "(sbcctl only)"},
}};

constexpr bool in_id_order()
{
    for (std::size_t i = 0; i < table.size(); ++i)
        if (static_cast<std::size_t>(table[i].id) != i) return false;
    return true;
}
static_assert(in_id_order(), "commands: rows must be in command_id order (command_of indexes the table)");

}  // namespace

std::span<const command_info> commands() noexcept { return table; }

const command_info& command_of(command_id id) noexcept { return table[static_cast<std::size_t>(id)]; }

const command_info* find_command(std::string_view name) noexcept
{
    for (const auto& c : table)
        if (c.name == name) return &c;
    return nullptr;
}

const command_info* find_served(std::string_view cmd) noexcept
{
    const command_info* c = find_command(cmd);
    return c != nullptr && c->served ? c : nullptr;
}

std::string unknown_command_error(std::string_view cmd)
{
    std::string known;
    for (const auto& c : table)
        if (c.served) known += (known.empty() ? "" : ", ") + std::string(c.name);
    return "unknown command '" + std::string(cmd) + "' (known: " + known + ")";
}

}  // namespace sbc::control
