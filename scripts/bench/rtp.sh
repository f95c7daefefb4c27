#!/usr/bin/env bash
# rtp benchmark: G.711 20 ms packets (214-byte frames) relayed by one sbcd worker core for
# 1,000, 100,000 and 1,000,000 active flows, against (a) the ceiling, the same loop doing only
# testpmd's 5tswap work, and (b) rtpengine 10.5 in userspace on one core.
#
# What runs
#   sbcd:      tests/bench/rtp_bench (see its header): the production run_loop around the relay
#              stage (rtp::relay_burst: lookup, latching check, RFC 3550 counters, header
#              rewrite, incremental checksums) on one net_ring port whose TX ring is its RX
#              ring; 262,144 mbufs in flight (2 KiB buffers, --no-huge), so packet data is not
#              cache-hot. Flows are set up through rtp::media_sessions (SDP offer and answer per
#              call) and chained so that every relayed packet arrives as another flow's input.
#              A flow is one direction of one call's RTP (its RTCP port allocated beside it).
#   pipeline:  the same, but sbcd's whole production loop (classify, IPv4, UDP, RTP stage,
#              media brought up by start_media) on one media address, so at most 32,256 flows
#              (1,000 and 30,000 here); frames flagged checksum-good as a NIC's RX offload does.
#   ceiling:   the same process, loop, ring and mbufs; the stage swaps MAC, IPv4 and UDP
#              source and destination (testpmd --forward-mode=5tswap), no lookup.
#   rtpengine: rtpengine 10.5 (Debian rtpengine-daemon) in userspace only (--table=-1, no
#              kernel module), pinned to WORKER_CPU with taskset, 1,000 calls set up through
#              its ng protocol (offer/answer), driven over loopback by tests/bench/rtpengine_drive
#              (on MAIN_CPU): G.711 RTP from the callers, counted at the callees' socket, at
#              most 2,048 packets outstanding (rtpengine 10.5 stops relaying altogether once
#              its sockets overflow, so a flood would measure that stall, not its rate).
#
# What is reported
#   Every figure is packets relayed per CPU-second of the relaying thread(s): for sbcd the
#   worker's tx_packets over its thread's CPU time, for rtpengine the packets received over
#   the CPU time of all its threads (/proc/PID/stat). On this shared 2-CPU machine wall-clock
#   rates would count other processes' time against whichever ran then; the wall rates and
#   CPU shares are printed too. Per run: median of SECONDS_PER_RUN one-second samples after a warm-up;
#   over RUNS runs: the median. bytes_per_flow: process RSS growth from before the flow table
#   was built until the end of the 1,000,000-flow run (table, sessions, port pools, all pages
#   touched), divided by the flows; from the first run.
#   Targets (issue 6): at 100,000 flows >= 0.5 of the ceiling; >= 20x rtpengine's per-core
#   rate; >= 5.25 Mpps per core; 1,000,000 flows in under 1 GiB. Last line:
#     rtp: flows=100000 sbc_mpps=X ceiling_mpps=Y rtpengine_mpps=Z bytes_per_flow=W
#
# Usage (root): scripts/bench/rtp.sh   env: RUNS (3), SECONDS_PER_RUN (3), BUILD_DIR (build),
#                                        MAIN_CPU (0), WORKER_CPU (1), RTPENGINE_ROUNDS (5)
# Bounded: every process runs under `timeout` and no run starts after 150 s: about 2.5 minutes,
# at most 5 (after the build).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/bench/lib.sh
. scripts/bench/lib.sh

runs=${RUNS:-3}
seconds=${SECONDS_PER_RUN:-3}
re_rounds=${RTPENGINE_ROUNDS:-5}

need_root rtp.sh
scripts/setup-deps.sh
build_bench tests/bench/rtp_bench tests/bench/rtpengine_drive
rtpengine=$(command -v rtpengine || true)
[ -n "$rtpengine" ] || { echo "rtp.sh: rtpengine not found (package rtpengine-daemon)" >&2; exit 1; }

logs=$(mktemp -d /tmp/sbc-rtp-bench.XXXXXX)
re_pid=
cleanup() {
  if [ -n "$re_pid" ]; then kill "$re_pid" 2>/dev/null || true; wait "$re_pid" 2>/dev/null || true; fi
  rm -rf "$logs"
}
trap cleanup EXIT

# field LOG MODE-REGEX KEY: the value of KEY= on the line of LOG matching MODE-REGEX.
field() { grep -E "$2" "$1" | head -n 1 | sed -n "s/.*[ ]$3=\([0-9.]*\).*/\1/p"; }

flow_counts=(1000 100000 1000000)
modes=(ceiling sbc.1000 sbc.100000 sbc.1000000 pipeline.1000 pipeline.30000)
for m in "${modes[@]}"; do : > "$logs/$m"; done
# keep FILE VALUE: a mode's figure from one run; a mode in which the worker got no CPU at all
# (another process held CPU 1 for the whole mode) has no samples and is left out of that run.
keep() { if awk -v v="$2" 'BEGIN {exit !(v > 0)}'; then echo "$2" >> "$logs/$1"; fi; }
short_of_runs() { local m; for m in "${modes[@]}"; do [ "$(wc -l < "$logs/$m")" -ge "$runs" ] || return 0; done; return 1; }
# Runs until every mode has RUNS figures, at most 2 x RUNS runs. Time bound: no new run starts
# after 150 s (each is killed at 90 s, rtpengine's part at 60 s).
r=0
SECONDS=0
while short_of_runs && [ "$r" -lt $((2 * runs)) ] && [ "$SECONDS" -lt 150 ]; do
  r=$((r + 1))
  log="$logs/sbc.$r.log"
  # The 1,000,000-flow run comes first after the ceiling: its RSS growth is then the first
  # allocation of flow state in the process (later runs reuse freed heap).
  timeout 90 "$build/tests/bench/rtp_bench" --modes ceiling,1000000,100000,1000,p1000,p30000 --seconds "$seconds" --warmup 1 -- \
    --lcores "0@${main_cpu},1@${worker_cpu}" --no-huge -m 1536 --no-pci \
    --file-prefix="sbc-rtp-$$-$r" --log-level=lib.eal:error --log-level=user1:warning >"$log" 2>&1 ||
    { tail -20 "$log" >&2; exit 1; }
  grep -E '^(mode=|  drop )' "$log" | sed "s/^/run $r: /"
  if grep -E '^mode=' "$log" | awk '{for (i = 1; i <= NF; i++) if ($i ~ /^cpu_share=/) {split($i, a, "="); if (a[2] < 0.5) busy = 1}} END {exit !busy}'; then
    echo "run $r: warning: the worker got under half of CPU $worker_cpu in some mode (other load there); per-CPU figures hold, shared caches may not" >&2
  fi
  keep ceiling "$(field "$log" '^mode=ceiling' mpps)"
  for f in "${flow_counts[@]}"; do
    keep "sbc.$f" "$(field "$log" "^mode=relay flows=$f " mpps)"
    d=$(field "$log" "^mode=relay flows=$f " drops)
    [ "${d:-1}" = 0 ] || { echo "rtp.sh: the relay dropped $d packets at $f flows (see the drop lines)" >&2; exit 1; }
  done
  for f in 1000 30000; do
    keep "pipeline.$f" "$(field "$log" "^mode=pipeline flows=$f " mpps)"
    d=$(field "$log" "^mode=pipeline flows=$f " drops)
    [ "${d:-1}" = 0 ] || { echo "rtp.sh: sbcd's pipeline dropped $d packets at $f flows" >&2; exit 1; }
  done
  [ -s "$logs/bytes" ] || field "$log" '^mode=relay flows=1000000 ' bytes_per_flow > "$logs/bytes"
done
for m in "${modes[@]}"; do
  n=$(wc -l < "$logs/$m")
  [ "$n" -ge 1 ] || { echo "rtp.sh: no run had the worker running in mode $m (machine busy)" >&2; exit 1; }
  [ "$n" -ge "$runs" ] || echo "rtp.sh: warning: mode $m has $n of $runs runs (machine busy)" >&2
done

# rtpengine: one daemon, several measured rounds.
ng_port=$((22300 + $$ % 500))
taskset -c "$worker_cpu" "$rtpengine" --config-file=none --table=-1 --interface=127.0.0.1 \
  --listen-ng="127.0.0.1:$ng_port" --foreground --log-stderr --log-level=2 \
  --port-min=30000 --port-max=39999 --num-threads=1 >"$logs/rtpengine.log" 2>&1 &
re_pid=$!
timeout 60 taskset -c "$main_cpu" "$build/tests/bench/rtpengine_drive" --ng "$ng_port" --pid "$re_pid" \
  --flows 1000 --rounds "$re_rounds" --seconds "$seconds" --warmup 1 >"$logs/re.log" 2>&1 ||
  { cat "$logs/re.log" >&2; tail -5 "$logs/rtpengine.log" >&2; exit 1; }
sed 's/^/rtpengine: /' "$logs/re.log"
kill "$re_pid" 2>/dev/null || true
wait "$re_pid" 2>/dev/null || true
re_pid=

ceiling=$(median < "$logs/ceiling")
re=$(sed -n 's/^rtpengine_mpps=//p' "$logs/re.log")
bytes=$(cat "$logs/bytes")
echo
printf '%-10s %12s %14s %16s\n' flows sbc_mpps of_ceiling x_rtpengine
for f in "${flow_counts[@]}"; do
  s=$(median < "$logs/sbc.$f")
  echo "$s" > "$logs/median.$f"
  awk -v f="$f" -v s="$s" -v c="$ceiling" -v r="$re" \
    'BEGIN {printf "%-10s %12.3f %14.2f %16.1f\n", f, s, (c > 0 ? s / c : 0), (r > 0 ? s / r : 0)}'
done
for f in 1000 30000; do
  awk -v f="$f" -v s="$(median < "$logs/pipeline.$f")" -v c="$ceiling" -v r="$re" \
    'BEGIN {printf "%-10s %12.3f %14.2f %16.1f   (whole pipeline: classify, IPv4, UDP, RTP stage)\n", "p" f, s, (c > 0 ? s / c : 0), (r > 0 ? s / r : 0)}'
done
printf 'ceiling (5tswap) %.3f Mpps; rtpengine (1000 flows) %.4f Mpps; 1,000,000 flows take %s MiB\n' \
  "$ceiling" "$re" "$(awk -v b="$bytes" 'BEGIN {printf "%.0f", b * 1e6 / 1048576}')"
s=$(cat "$logs/median.100000")
printf 'rtp: flows=100000 sbc_mpps=%.3f ceiling_mpps=%.3f rtpengine_mpps=%.4f bytes_per_flow=%.0f\n' \
  "$s" "$ceiling" "$re" "$bytes"
