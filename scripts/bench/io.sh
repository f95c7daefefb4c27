#!/usr/bin/env bash
# io benchmark: the cost of sbcd's worker loop itself against DPDK's reference forwarder.
#
# What runs
#   sbcd:    tests/bench/io_bench, the production run_loop (dataplane/worker.h: rx burst, stage
#            call, inject drain, TX buffer + flush, RCU quiescent state, busy accounting) around
#            a bench-only stage that swaps MAC addresses and sends the burst out of the other
#            port with tx_enqueue. The stage lives in the bench executable, which links the
#            dataplane library; sbcd's config knows nothing of it.
#   testpmd: dpdk-testpmd --forward-mode=macswap --tx-first, non-interactive, --stats-period 1.
# Both on a pair of net_ring vdevs (each port's TX ring is its own RX ring, so what one port
# sends comes back to it and is forwarded to the other), 64-byte frames, one 32-packet burst
# injected per port at start, so the same 64 packets circulate for the whole run.
#
# One core each, fairly, on a 2-CPU machine: the two never run at the same time. Each run is
# `-l 0,1`: the main lcore (which only sleeps and prints once a second) on CPU 0, the
# forwarding lcore on CPU 1. Runs alternate sbcd, testpmd, sbcd, ... so that background load
# drifting over time hits both alike.
#
# What is reported
#   forwarded packets per second, both ports together: for sbcd the worker's tx_packets
#   counter read every second; for testpmd the sum of the two ports' Rx-pps lines (every
#   packet received is forwarded). Each run: warm-up, then SECONDS one-second samples, median.
#   Over RUNS runs: the median of the runs' medians. Last line:
#     io: sbcd_mpps=X testpmd_mpps=Y ratio=Z        (target: ratio >= 0.8)
#
# Usage (root): scripts/bench/io.sh        env: SECONDS_PER_RUN (5), RUNS (3), BUILD_DIR (build),
#                                              MAIN_CPU (0), WORKER_CPU (1)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/bench/lib.sh
. scripts/bench/lib.sh

seconds=${SECONDS_PER_RUN:-5}
runs=${RUNS:-3}

need_root io.sh
scripts/setup-deps.sh
build_bench tests/bench/io_bench
testpmd=$(command -v dpdk-testpmd || true)
if [ -z "$testpmd" ]; then
  echo "io.sh: dpdk-testpmd not found (package dpdk)" >&2
  exit 1
fi

logs=$(mktemp -d /tmp/sbc-io-bench.XXXXXX)
trap 'rm -rf "$logs"' EXIT

eal_common=(--lcores "0@${main_cpu},1@${worker_cpu}" --no-huge -m 1024 --no-pci
            --vdev=net_ring0 --vdev=net_ring1 --log-level=lib.eal:error)

run_sbcd() {
  local log="$logs/sbcd.$1.log"
  "$build/tests/bench/io_bench" --seconds "$seconds" --warmup 1 -- "${eal_common[@]}" \
    --file-prefix="sbc-io-sbcd-$$-$1" >"$log" 2>&1 || { cat "$log" >&2; return 1; }
  sed -n 's/^sbcd_mpps=//p' "$log"
}

run_testpmd() {
  local log="$logs/testpmd.$1.log"
  # SIGINT after start-up + warm-up + the samples: testpmd then stops its ports and exits.
  timeout -s INT $((seconds + 4)) "$testpmd" "${eal_common[@]}" --file-prefix="sbc-io-tpmd-$$-$1" -- \
    --forward-mode=macswap --tx-first --stats-period 1 --nb-cores=1 --burst=32 \
    </dev/null >"$log" 2>&1 || true
  # One "Rx-pps:" line per port per period: sum them per period, drop the first two periods
  # (baseline and the partial first second), keep the next SECONDS ones.
  awk '/Rx-pps:/ {s += $2; if (++k == 2) {print s / 1e6; s = 0; k = 0}}' "$log" |
    tail -n +3 | head -n "$seconds" > "$logs/testpmd.$1.samples"
  if [ ! -s "$logs/testpmd.$1.samples" ]; then
    echo "io.sh: testpmd printed no rates:" >&2
    tail -20 "$log" >&2
    return 1
  fi
  median < "$logs/testpmd.$1.samples"
}

: > "$logs/sbcd"
: > "$logs/testpmd"
for r in $(seq 1 "$runs"); do
  s=$(run_sbcd "$r")
  t=$(run_testpmd "$r")
  printf 'run %d: sbcd_mpps=%.2f testpmd_mpps=%.2f\n' "$r" "$s" "$t"
  echo "$s" >> "$logs/sbcd"
  echo "$t" >> "$logs/testpmd"
done

s=$(median < "$logs/sbcd")
t=$(median < "$logs/testpmd")
ratio=$(awk -v s="$s" -v t="$t" 'BEGIN {printf "%.2f", (t > 0 ? s / t : 0)}')
printf 'io: sbcd_mpps=%.2f testpmd_mpps=%.2f ratio=%s\n' "$s" "$t" "$ratio"
