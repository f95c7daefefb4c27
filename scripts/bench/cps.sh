#!/usr/bin/env bash
# cps benchmark: calls per second through one sbcd worker core, and memory per active call.
#
# What runs
#   tests/bench/cps_bench: the production worker loop (run_loop(production): rx burst, classify,
#   IPv4, UDP, the SIP stage with the stateful proxy, framing with software UDP checksums, TX)
#   on its own lcore, over a net_ring port whose rings the bench's main lcore owns. The main
#   lcore plays callers (198.18.0.2) and the callee (198.18.0.11, the only peer): INVITE, 100,
#   180, 200, ACK, BYE, 200, from templates with unique Call-IDs and branches, answering what
#   the worker sends. A call counts when the caller gets the 200 to its BYE.
#
# What is reported (last line)
#   cps: calls_per_s=X bytes_per_call=Y
#   calls_per_s: calls completed / CPU seconds of the worker thread while busy (its busy share
#     from the loop's own accounting times the CPU time the kernel gave its thread), so that a
#     shared machine does not count another process's time as the worker's. Median over RUNS.
#   bytes_per_call: process RSS growth while HOLD calls are established and held (no BYE),
#     divided by HOLD: the pages the proxy's setup and dialog tables touch per call (measured,
#     not computed; the table sizes per entry are printed too). From the first run.
#   Targets (issue 4): calls_per_s >= 100000, bytes_per_call <= 2048.
#
# Usage (root): scripts/bench/cps.sh    env: SECONDS_PER_RUN (3), RUNS (3), HOLD (20000),
#                                          BUILD_DIR (build), MAIN_CPU (0), WORKER_CPU (1)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/bench/lib.sh
. scripts/bench/lib.sh

seconds=${SECONDS_PER_RUN:-3}
runs=${RUNS:-3}
hold=${HOLD:-20000}

need_root cps.sh
build_bench tests/bench/cps_bench

logs=$(mktemp -d /tmp/sbc-cps-bench.XXXXXX)
trap 'rm -rf "$logs"' EXIT

: > "$logs/cps"
bytes=""
for r in $(seq 1 "$runs"); do
  log="$logs/run.$r.log"
  h=$hold; [ "$r" -gt 1 ] && h=0
  "$build/tests/bench/cps_bench" --seconds "$seconds" --warmup 1 --hold "$h" -- \
    --lcores "0@${main_cpu},1@${worker_cpu}" --no-huge -m 2048 --no-pci \
    --file-prefix="sbc-cps-$$-$r" --log-level=lib.eal:error --log-level=user1:warning >"$log" 2>&1 ||
    { tail -20 "$log" >&2; exit 1; }
  grep -E '^(memory|throughput|proxy|drop):' "$log" | sed "s/^/run $r: /"
  c=$(sed -n 's/^cps: calls_per_s=\([0-9.]*\).*/\1/p' "$log")
  echo "$c" >> "$logs/cps"
  [ -z "$bytes" ] && bytes=$(sed -n 's/^cps: .*bytes_per_call=\([0-9.]*\).*/\1/p' "$log")
done
printf 'cps: calls_per_s=%.0f bytes_per_call=%.0f\n' "$(median < "$logs/cps")" "$bytes"
