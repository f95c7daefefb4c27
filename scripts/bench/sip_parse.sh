#!/usr/bin/env bash
# SIP parse benchmark: the sbc parser against libosip2's osip_message_parse, side by side
# in one process on one core, on a fixed set of realistic messages (a call: INVITE with
# SDP, 100, 180, 200 with SDP, ACK, BYE; and an OPTIONS probe).
#
# What is reported, per message and as the mean over the set:
#   sbc_ns     sbc::sip::parse() (the fast pass: framing, header index, numbers, top Via,
#              From/To, Request-URI, all the single-value and mandatory-header checks)
#   sbc+v_ns   parse() plus proxy_verdict(), which adds the full grammar check of every
#              Via, Contact, Route and Record-Route element and of the From/To URIs
#   osip_ns    osip_message_init + osip_message_parse + osip_message_free
#   msg/s      1e9 / ns, messages per second on one core
# Each cell is the median of REPS repetitions (interleaved sbc / sbc+v / osip, so that
# drifting background load hits all alike) of a timed loop of at least MIN_MS ms of this
# thread's CPU time. Last line:
#   sip_parse: sbc_ns=X osip_ns=Y ratio=Z      (ratio = osip_ns / sbc_ns; target >= 10)
#
# Usage: scripts/bench/sip_parse.sh        env: BUILD_DIR (build), REPS (9), MIN_MS (40)
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${BUILD_DIR:-build}"
if [ "$build" = build ]; then
  if [ -x scripts/build.sh ]; then
    scripts/build.sh >&2
  else
    [ -f build/build.ninja ] || meson setup build >&2
    ninja -C build >&2
  fi
else
  [ -f "$build/build.ninja" ] || meson setup "$build" >&2
  ninja -C "$build" -j2 tests/bench/sip_parse_bench >&2
fi
bench="$build/tests/bench/sip_parse_bench"
if [ ! -x "$bench" ]; then
  echo "sip_parse: $bench was not built (is libosip2-dev installed?)" >&2
  exit 1
fi
echo "sip_parse: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
exec "$bench" --reps "${REPS:-9}" --min-ms "${MIN_MS:-40}"
