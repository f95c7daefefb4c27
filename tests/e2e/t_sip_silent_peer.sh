#!/usr/bin/env bash
# A peer that goes silent under load: 50 calls/s to region1 (198.18.1.11 first, .12 second),
# and 3 s in, .11's address is removed (no ICMP: a host or link that is gone). .11 answers
# each call at once (scripts/sipp/uas_answer.xml): at its death every call on it is either
# not yet answered (a new call: it must not be lost) or established (its BYE gets sbcd's 408;
# the caller ends it as "bye_lost", not failed); none is ringing. One run of
# scripts/bench/convergence.sh in passive mode (no OPTIONS probes): sbcd must lose no call,
# delay none more than 250 ms beyond the run's median setup (the first silence makes the peer
# suspect: no more new calls to it; the calls already sent to it fail over after its learned
# no-answer timer, not the fixed second), and never take the healthy peer down.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
out=$(VICTIM_SCENARIO=uas_answer.xml RUNS=1 RATE=50 SECONDS_PER_RUN=8 DEATH_AT=3 "$ROOT/scripts/bench/convergence.sh" passive 2>&1) ||
  { echo "$out" | tail -n 30; echo "FAIL: the convergence run failed"; exit 1; }
line=$(grep '^convergence:' <<<"$out" | tail -n 1)
echo "-- $line"
field() { grep -oE "(^| )$1=[^ ]+" <<<"$line" | head -n 1 | cut -d= -f2; }
failed=$(field calls_failed); delayed=$(field delayed_over_250ms); flaps=$(field healthy_peer_down)
[ -n "$failed" ] && [ -n "$delayed" ] || { echo "$out" | tail -n 20; echo "FAIL: no figures in: $line"; exit 1; }
[ "$failed" -eq 0 ] || { echo "FAIL: $failed call(s) lost while a healthy peer remained"; exit 1; }
[ "$flaps" -eq 0 ] || { echo "FAIL: the healthy peer was marked down $flaps time(s)"; exit 1; }
[ "$delayed" -eq 0 ] || { echo "FAIL: $delayed call(s) delayed more than 250 ms beyond the median setup (max $(field max_delay_ms) ms)"; exit 1; }
echo "ok: silent death under 50 calls/s: no call lost, none delayed over 250 ms, converge_ms=$(field converge_ms)"
