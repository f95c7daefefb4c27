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
# With a rule set (issue 12): RULES_CONFIG (default scripts/bench/cps_rules.toml; "" skips it)
#   names a second configuration, measured in the same run against BASE_CONFIG (default
#   scripts/bench/cps_base.toml, the same without the rules). Both are built by sbcd's own
#   loader and builder (cps_bench --config) and run alternately, A then B, RUNS times each, so
#   that the machine's drift falls on both; B's runs hold no calls (HOLD is A's: memory per
#   call is A's figure). Printed before the last line:
#   cps_rules: calls_per_s=B base_calls_per_s=A ratio=B/A     (target: ratio >= 0.7)
#   BASE_CONFIG="" runs A on cps_bench's hand-built tables instead.
#
# With call detail records (issue 16): CDR=1 (default; 0 skips it) runs A's configuration again
#   with cps_bench --cdr FILE (the worker hands every ended call to its ring; the main lcore
#   drains it every millisecond with sbcd's CDR writer into FILE), alternately with A, RUNS
#   times. Printed before the last line:
#   cps_cdr: calls_per_s=B base_calls_per_s=A ratio=B/A (target >= 0.9)
#
# With a full SIP capture (issue 16): CAPTURE=1 (default; 0 skips it) runs A's configuration
#   again with cps_bench --capture FILE (a capture matching every message: the worker copies
#   every SIP frame in and out to its ring, sbcd's capture thread writes them as pcap),
#   alternately with A, RUNS times. Printed before the last line:
#   cps_capture: calls_per_s=B base_calls_per_s=A ratio=B/A (target >= 0.6)
#
# Ratios: each ratio is the median over the RUNS rounds of B/A within the round (a round runs A
#   then each B back to back), not the ratio of the medians: this machine's speed flips between
#   levels (seen: 50,000 and 72,000 calls/s for the same base run minutes apart), and a B compared
#   with an A of another level says nothing about B. pairs= lists each round's B/A.
#
# Usage (root): scripts/bench/cps.sh    env: SECONDS_PER_RUN (3), RUNS (3), HOLD (20000),
#                                          BUILD_DIR (build), MAIN_CPU (0), WORKER_CPU (1),
#                                          BASE_CONFIG, RULES_CONFIG (above)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/bench/lib.sh
. scripts/bench/lib.sh

seconds=${SECONDS_PER_RUN:-3}
runs=${RUNS:-3}
hold=${HOLD:-20000}
base_config=${BASE_CONFIG-scripts/bench/cps_base.toml}
rules_config=${RULES_CONFIG-scripts/bench/cps_rules.toml}
cdr_run=${CDR:-1}
capture_run=${CAPTURE:-1}

need_root cps.sh
build_bench tests/bench/cps_bench

logs=$(mktemp -d /tmp/sbc-cps-bench.XXXXXX)
trap 'rm -rf "$logs"' EXIT

: > "$logs/cps"
: > "$logs/cps_rules"
: > "$logs/cps_cdr"
: > "$logs/cps_capture"
bytes=""
# bench NAME HOLD CONFIG OUT [ARGS...]: one cps_bench run (CONFIG "": the hand-built tables; ARGS
# more cps_bench options); its calls per second appended to OUT, its report lines printed as "NAME: ...".
bench() {
  local name=$1 h=$2 config=$3 out=$4 log="$logs/${1// /_}.log" c
  shift 4
  local args=(--seconds "$seconds" --warmup 1 --hold "$h" "$@")
  [ -n "$config" ] && args+=(--config "$config")
  "$build/tests/bench/cps_bench" "${args[@]}" -- \
    --lcores "0@${main_cpu},1@${worker_cpu}" --no-huge -m 2048 --no-pci \
    --file-prefix="sbc-cps-$$-${name// /_}" --log-level=lib.eal:error --log-level=user1:warning >"$log" 2>&1 ||
    { tail -20 "$log" >&2; exit 1; }
  grep -E '^(tables|memory|throughput|proxy|drop|cdr|capture):' "$log" | sed "s/^/$name: /"
  c=$(sed -n 's/^cps: calls_per_s=\([0-9.]*\).*/\1/p' "$log")
  echo "$c" >> "$out"
  [ -z "$bytes" ] && bytes=$(sed -n 's/^cps: .*bytes_per_call=\([0-9.]*\).*/\1/p' "$log")
  return 0
}
a_config=""; [ -n "$rules_config" ] && a_config=$base_config
for r in $(seq 1 "$runs"); do
  h=$hold; [ "$r" -gt 1 ] && h=0
  bench "run $r" "$h" "$a_config" "$logs/cps"
  [ -n "$rules_config" ] && bench "run $r rules" 0 "$rules_config" "$logs/cps_rules"
  if [ "$cdr_run" = 1 ]; then
    rm -f "$logs/cdr.jsonl"
    bench "run $r cdr" 0 "$a_config" "$logs/cps_cdr" --cdr "$logs/cdr.jsonl"
  fi
  if [ "$capture_run" = 1 ]; then
    rm -f "$logs/capture.pcap"
    bench "run $r capture" 0 "$a_config" "$logs/cps_capture" --capture "$logs/capture.pcap"
    rm -f "$logs/capture.pcap"
  fi
done
a=$(median < "$logs/cps")
# pair_ratio FILE: the median over rounds of FILE's value over the base's in the same round;
# pair_list FILE: the rounds' ratios, comma separated.
pair_ratio() { paste "$logs/cps" "$1" | awk '$1 > 0 && $2 != "" { printf "%.4f\n", $2 / $1 }' | median; }
pair_list() { paste "$logs/cps" "$1" | awk '$1 > 0 && $2 != "" { printf "%s%.2f", n++ ? "," : "", $2 / $1 }'; }
if [ -n "$rules_config" ]; then
  b=$(median < "$logs/cps_rules")
  printf 'cps_rules: calls_per_s=%.0f base_calls_per_s=%.0f ratio=%.2f pairs=%s config=%s base_config=%s\n' "$b" "$a" \
    "$(pair_ratio "$logs/cps_rules")" "$(pair_list "$logs/cps_rules")" "$rules_config" "${a_config:-hand-built}"
fi
if [ "$cdr_run" = 1 ]; then
  b=$(median < "$logs/cps_cdr")
  printf 'cps_cdr: calls_per_s=%.0f base_calls_per_s=%.0f ratio=%.2f pairs=%s (target >= 0.9)\n' "$b" "$a" \
    "$(pair_ratio "$logs/cps_cdr")" "$(pair_list "$logs/cps_cdr")"
fi
if [ "$capture_run" = 1 ]; then
  b=$(median < "$logs/cps_capture")
  printf 'cps_capture: calls_per_s=%.0f base_calls_per_s=%.0f ratio=%.2f pairs=%s (target >= 0.6)\n' "$b" "$a" \
    "$(pair_ratio "$logs/cps_capture")" "$(pair_list "$logs/cps_capture")"
fi
printf 'cps: calls_per_s=%.0f bytes_per_call=%.0f\n' "$a" "$bytes"
