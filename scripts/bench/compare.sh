#!/usr/bin/env bash
# compare: HEAD against another commit (REF), side by side on this machine in one sitting: calls
# per second, RTP relayed, SIP parse time, and HEAD's calls per second with a realistic rule set.
#
# What runs
#   REF (any git ref) is built in a git worktree of its own, CACHE_DIR/<commit id>/src, into
#   CACHE_DIR/<commit id>/build (meson --buildtype=debugoptimized, only the three bench targets);
#   both are kept, so a second run with the same commit does not build again. build/ and the
#   checkout's working tree are not touched. HEAD is the checkout as it is, uncommitted changes
#   included (HEAD_DIR, default the repository root), built into its build/ with ninja (the same
#   three targets; configured as scripts/build.sh does when it has no build.ninja).
#   ROUNDS rounds, one bench at a time; in each round every bench runs REF then HEAD (odd
#   rounds) or HEAD then REF (even rounds), so that the machine's drift falls on both:
#   cps     tests/bench/cps_bench --seconds SECONDS_PER_RUN --warmup 1 --hold 0 on the bench's
#           hand-built tables (old commits have no --config; it is never passed to REF), EAL as
#           cps.sh: calls per busy CPU-second of the worker (`cps: calls_per_s=`)
#   rtp     tests/bench/rtp_bench --modes 100000 --seconds RTP_SECONDS --warmup 1: the relay
#           stage with 100,000 active flows, rtp.sh's headline figure (6972e96 and HEAD both
#           have the mode): Mpps per CPU-second of the worker (`mode=relay flows=100000 mpps=`)
#   parse   tests/bench/sip_parse_bench --reps PARSE_REPS --min-ms PARSE_MIN_MS (fewer than
#           sip_parse.sh's 9 x 40 ms): the mean sbc_ns over its seven messages
#   rules   HEAD only, in the same rounds: cps_bench --config scripts/bench/cps_base.toml and
#           --config scripts/bench/cps_rules.toml (both from HEAD's checkout), alternately
#   A bench, option or output line that one side's bench source lacks makes that ratio "na",
#   with the reason, instead of a failure.
#
# What is reported
#   Each round's ratios, then the medians over the rounds of those within-round ratios (never
#   the ratio of the medians: this machine's speed flips between levels within minutes, and a
#   HEAD run set against a REF run of another level says nothing). Above 1: HEAD is faster
#   (cps: HEAD/REF calls/s; rtp: HEAD/REF Mpps; parse: REF ns / HEAD ns per message; rules:
#   rules/base calls/s, HEAD only). Last two lines:
#     compare: head_rules_ratio=X (cps_rules.toml over cps_base.toml, HEAD)
#     compare: ref=REF cps_ratio=X rtp_ratio=Y parse_ratio=Z rounds=N
#   Targets (issue 29): `compare.sh 6972e96`: cps_ratio >= 1.0; against 508ec75 (the commit
#   before issue 29's work): rtp_ratio and parse_ratio >= 0.98; head_rules_ratio >= 0.85.
#
# Instructions per call
#   Where perf counts instructions (`perf stat -e instructions true` gives a number), perf stat
#   -t counts the worker thread (rte-worker-1) of every cps run of REF and HEAD, and each round
#   also prints its instructions over the INVITEs the bench reports (polling included); then
#     compare: instr_per_call ref=A head=B ratio=A/B (perf stat, ...)
#   before the last lines. Where it does not (VMs without counters, as here): CALLGRIND=1 runs
#   each side's cps_bench once more, REF then HEAD, under valgrind --tool=callgrind
#   --fair-sched=yes --separate-threads=yes (cps_bench --seconds 8 --warmup 2 --window 32
#   --hold 0 --setups 65536) and prints
#     compare: instr_per_call ref=A head=B ratio=A/B (callgrind, ...)
#   A, B: the inclusive instructions of sbc::dataplane::process_burst in the worker thread's
#   profile (the thread that ran it; the generator's may have more instructions in all) over
#   the INVITEs the bench reports: the packet path's instructions per call, the polling loop's
#   idle spins left out. The machine's load does not move them. About 20 s a side.
#
# Usage (root): scripts/bench/compare.sh REF      (REF: a commit, tag or branch, e.g. 6972e96)
#   env: ROUNDS (9), SECONDS_PER_RUN (3: each cps run), RTP_SECONDS (3), PARSE_REPS (3),
#        PARSE_MIN_MS (20), CALLGRIND (0; 1 adds the callgrind runs), HEAD_DIR (the
#        repository root: a checkout to measure as HEAD), BUILD_DIR (build: HEAD's build
#        directory, under HEAD_DIR when relative), CACHE_DIR (/tmp/sbc-compare), JOBS (nproc:
#        ninja -j), BUILD_TIMEOUT (3600 s a build step), MAIN_CPU (0), WORKER_CPU (1)
# Bounded: every build step and run under `timeout`; a round takes about 35 s at the defaults
# (4 cps runs of SECONDS_PER_RUN + 2 s, 2 rtp runs of RTP_SECONDS + 2 s, 2 parse runs of 1-2 s):
# about 5 minutes for 9 rounds, on top of the builds (REF's three benches: about 5 minutes with
# 2 CPUs, once per commit). Temporary files and the runs' DPDK runtime dirs are removed on exit.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }
case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  "") echo "usage: scripts/bench/compare.sh REF   (the git ref to compare HEAD against, e.g. 6972e96; --help says more)" >&2; exit 2 ;;
  -*) echo "compare.sh: unknown option $1 (--help says more)" >&2; exit 2 ;;
esac
[ $# -eq 1 ] || { echo "compare.sh: one REF only (--help says more)" >&2; exit 2; }
ref=$1

cd "$(dirname "$0")/../.."
root=$PWD
# shellcheck source=scripts/bench/lib.sh
. scripts/bench/lib.sh

rounds=${ROUNDS:-9}
cps_seconds=${SECONDS_PER_RUN:-3}
rtp_seconds=${RTP_SECONDS:-3}
parse_reps=${PARSE_REPS:-3}
parse_min_ms=${PARSE_MIN_MS:-20}
callgrind=${CALLGRIND:-0}
cache=${CACHE_DIR:-/tmp/sbc-compare}
jobs=${JOBS:-$(nproc)}
build_timeout=${BUILD_TIMEOUT:-3600}
for v in ROUNDS:rounds SECONDS_PER_RUN:cps_seconds RTP_SECONDS:rtp_seconds PARSE_REPS:parse_reps \
  PARSE_MIN_MS:parse_min_ms JOBS:jobs BUILD_TIMEOUT:build_timeout; do
  x=${v#*:}
  [[ ${!x} =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: ${v%%:*} must be a positive whole number, not '${!x}'" >&2; exit 2; }
done
head_dir=$(cd "${HEAD_DIR:-$root}" 2>/dev/null && pwd) || { echo "compare.sh: HEAD_DIR ${HEAD_DIR:-} is not a directory" >&2; exit 2; }
[ -f "$head_dir/meson.build" ] || { echo "compare.sh: HEAD_DIR $head_dir is not a checkout of sbc (no meson.build)" >&2; exit 2; }
hb=${BUILD_DIR:-build}
case $hb in /*) head_build=$hb ;; *) head_build=$head_dir/$hb ;; esac
sha=$(git rev-parse --verify --quiet "$ref^{commit}") || { echo "compare.sh: $ref is not a commit of this repository" >&2; exit 2; }

need_root compare.sh

logs=$(mktemp -d /tmp/sbc-compare-run.XXXXXX)
cleanup() {
  rm -rf "$logs"
  rm -rf "/var/run/dpdk/sbc-cmp-$$-"*
}
trap cleanup EXIT

targets=(tests/bench/cps_bench tests/bench/rtp_bench tests/bench/sip_parse_bench)
# built_targets DIR: which of the bench targets DIR's build.ninja has (sip_parse_bench only with
# libosip2), one a line.
built_targets() {
  local t
  timeout "$build_timeout" ninja -C "$1" -t targets all > "$logs/targets" 2>/dev/null || true
  for t in "${targets[@]}"; do
    if grep -q "^$t: " "$logs/targets"; then echo "$t"; fi
  done
}
# build_in NAME SRC DIR: configures DIR from SRC when it has no build.ninja, builds the bench
# targets it has; on failure prints the log's tail and exits.
build_in() {
  local name=$1 src=$2 dir=$3 log="$logs/build.$1.log" have
  if [ ! -f "$dir/build.ninja" ]; then
    echo "compare: configuring $dir" >&2
    (cd "$src" && timeout "$build_timeout" meson setup "$dir" --buildtype=debugoptimized) > "$log" 2>&1 ||
      { echo "compare.sh: meson setup of $name's build ($dir) failed:" >&2; tail -n 30 "$log" >&2; exit 1; }
  fi
  timeout "$build_timeout" ninja -C "$dir" build.ninja >> "$log" 2>&1 || true # meson's regeneration, if its files changed
  mapfile -t have < <(built_targets "$dir")
  [ "${#have[@]}" -gt 0 ] || { echo "compare.sh: $dir has none of the bench targets" >&2; tail -n 30 "$log" >&2; exit 1; }
  echo "compare: building $name in $dir: ${have[*]}" >&2
  timeout "$build_timeout" ninja -C "$dir" -j "$jobs" "${have[@]}" >> "$log" 2>&1 ||
    { echo "compare.sh: building $name's benches failed (ninja -C $dir ${have[*]}):" >&2; tail -n 30 "$log" >&2; exit 1; }
}

# REF: a worktree and build directory per commit id, built once (flock: two runs at once wait).
ref_top=$cache/$sha
ref_src=$ref_top/src
ref_build=$ref_top/build
mkdir -p "$ref_top"
exec 9> "$ref_top/lock"
flock -w "$build_timeout" 9 || { echo "compare.sh: $ref_top is locked by another compare.sh" >&2; exit 1; }
if [ ! -f "$ref_src/.git" ]; then
  rm -rf "$ref_src" "$ref_build" "$ref_top/built"
  # --force: a worktree that was registered here and removed with /tmp is added again.
  git worktree add --force --detach "$ref_src" "$sha" > "$logs/worktree.log" 2>&1 ||
    { echo "compare.sh: git worktree add $ref_src $sha failed:" >&2; cat "$logs/worktree.log" >&2; exit 1; }
fi
ref_cached=0
if [ -s "$ref_top/built" ]; then
  ref_cached=1
  while read -r t; do [ -x "$ref_build/$t" ] || ref_cached=0; done < "$ref_top/built"
fi
if [ "$ref_cached" = 1 ]; then
  echo "compare: REF $ref ($sha) already built in $ref_build" >&2
else
  [ -f "$ref_build/build.ninja" ] || rm -rf "$ref_build" # a setup cut short
  build_in ref "$ref_src" "$ref_build"
  built_targets "$ref_build" > "$ref_top/built"
fi
exec 9>&-

# HEAD: the checkout as it is.
build_in head "$head_dir" "$head_build"

# Sides: ref and head, their sources (to check what their benches take) and binaries.
declare -A src=([ref]=$ref_src [head]=$head_dir) bin=([ref]=$ref_build/tests/bench [head]=$head_build/tests/bench)
# lacks SIDE FILE WORD...: nothing when SIDE's tests/bench/FILE has every WORD (options are
# looked for as "--opt" string literals, other words as they are); else why not.
lacks() {
  local side=$1 name=${2%.cc} w
  local f=${src[$side]}/tests/bench/$2
  shift 2
  [ -f "$f" ] || { echo "${side^^} has no tests/bench/$name.cc"; return 0; }
  for w; do
    case $w in --*) grep -qF -- "\"$w\"" "$f" ;; *) grep -qF -- "$w" "$f" ;; esac ||
      { echo "${side^^}'s tests/bench/$name.cc has no $w"; return 0; }
  done
  [ -x "${bin[$side]}/$name" ] || echo "${side^^} has no tests/bench/$name target (sip_parse_bench: libosip2-dev missing?)"
}
# why_na BENCH: why BENCH cannot be compared (nothing when it can).
why_na() {
  local s r
  for s in ref head; do
    case $1 in
      cps) r=$(lacks "$s" cps_bench.cc --seconds --warmup --hold 'cps: calls_per_s=') ;;
      rtp) r=$(lacks "$s" rtp_bench.cc --modes --seconds --warmup 'mode=relay flows=') ;;
      parse) r=$(lacks "$s" sip_parse_bench.cc --reps --min-ms 'sip_parse: sbc_ns=') ;;
      callgrind) r=$(lacks "$s" cps_bench.cc --seconds --warmup --window --hold --setups 'proxy: invites=') ;;
      rules)
        [ "$s" = head ] || continue
        r=$(lacks head cps_bench.cc --config 'cps: calls_per_s=')
        for f in cps_base.toml cps_rules.toml; do
          [ -n "$r" ] || [ -f "$head_dir/scripts/bench/$f" ] || r="HEAD has no scripts/bench/$f"
        done ;;
    esac
    [ -z "$r" ] || { echo "$r"; return 0; }
  done
}
declare -A na=()
for b in cps rtp parse rules; do na[$b]=$(why_na "$b"); done
[ "$callgrind" != 1 ] || na[callgrind]=$(why_na callgrind)

perf_on=0 perf_event=instructions
if command -v perf > /dev/null && perf stat -x , -e "$perf_event" -o "$logs/perf.probe" true > /dev/null 2>&1 &&
  grep -qE '^[0-9]+,' "$logs/perf.probe"; then
  perf_on=1
fi

head_at=$(git -C "$head_dir" rev-parse --short HEAD 2>/dev/null || echo "not a git checkout")
# --no-optional-locks: status would otherwise refresh the index of a checkout someone works in.
[ -z "$(git -C "$head_dir" --no-optional-locks status --porcelain --untracked-files=no 2>/dev/null || true)" ] ||
  head_at="$head_at with uncommitted changes"
echo "compare: ref=$ref ($sha) head=$head_dir ($head_at); $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
for b in cps rtp parse rules callgrind; do
  [ -z "${na[$b]:-}" ] || echo "compare: $b not compared: ${na[$b]}"
done

# run LABEL LIMIT MEM CMD...: CMD under timeout (LIMIT s), output in $logs/LABEL.log; MEM (MiB) not
# empty: CMD is a DPDK program, given the EAL arguments (main lcore on MAIN_CPU, the worker on
# WORKER_CPU, no hugepages, a file prefix of its own, its runtime dir removed after). A failed
# run prints its log's tail and ends the script.
eal_runs=0
run() {
  local label=$1 limit=$2 mem=$3 log="$logs/$1.log" rc=0 prefix=""
  shift 3
  local cmd=("$@")
  if [ -n "$mem" ]; then
    eal_runs=$((eal_runs + 1))
    prefix="sbc-cmp-$$-$eal_runs"
    cmd+=(-- --lcores "0@${main_cpu},1@${worker_cpu}" --no-huge -m "$mem" --no-pci --file-prefix="$prefix"
      --log-level=lib.eal:error --log-level=user1:warning)
  fi
  if [ -z "${perf_out:-}" ]; then
    timeout -k 10 "$limit" "${cmd[@]}" > "$log" 2>&1 || rc=$?
  else
    timeout -k 10 "$limit" "${cmd[@]}" > "$log" 2>&1 &
    local t=$! i
    perf_attach "$t" "$perf_out"
    wait "$t" || rc=$?
    if [ -n "$perf_pid" ]; then # perf ends with the thread; a moment to write, else it is told to
      for i in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$perf_pid" 2> /dev/null || break; sleep 0.5; done
      kill -INT "$perf_pid" 2> /dev/null || true
      wait "$perf_pid" || true
    fi
  fi
  [ -z "$prefix" ] || rm -rf "/var/run/dpdk/$prefix"
  if [ "$rc" -ne 0 ]; then
    if [ "$rc" -eq 124 ]; then
      echo "compare.sh: $label timed out after ${limit} s: ${cmd[*]}" >&2
    else
      echo "compare.sh: $label failed (exit $rc): ${cmd[*]}" >&2
    fi
    tail -n 20 "$log" >&2
    exit 1
  fi
}
# perf_attach TIMEOUT_PID OUT: once the DPDK worker thread (rte-worker-N) of TIMEOUT_PID's child
# exists (at most 20 s), perf stat counts its instructions into OUT, in the background (perf_pid;
# empty when no such thread was seen).
perf_attach() {
  local p="" tid="" i
  perf_pid=""
  for i in $(seq 1 200); do
    p=$(ps -o pid= --ppid "$1" | tr -d ' ' || true)
    [ -z "$p" ] || tid=$(grep -l worker /proc/"$p"/task/*/comm 2> /dev/null | head -n 1 | cut -d/ -f5 || true)
    [ -z "$tid" ] || break
    kill -0 "$1" 2> /dev/null || return 0
    sleep 0.1
  done
  [ -n "$tid" ] || { echo "compare.sh: warning: no worker thread to count instructions in (${i} tries)" >&2; return 0; }
  perf stat -x , -e "$perf_event" -t "$tid" -o "$2" > /dev/null 2>&1 &
  perf_pid=$!
}
# number LABEL SED: the number SED's \1 takes from LABEL's log; none: the log's tail, and exit.
number() {
  local v
  v=$(sed -n "$2" "$logs/$1.log" | head -n 1)
  [ -n "$v" ] || { echo "compare.sh: $1 printed no figure (${2})" >&2; tail -n 20 "$logs/$1.log" >&2; exit 1; }
  echo "$v"
}
# figure LABEL SED: number's, a rate: 0 is said to be a round without a ratio.
figure() {
  local v
  v=$(number "$1" "$2")
  if awk -v v="$v" 'BEGIN { exit !(v == 0) }'; then
    echo "compare.sh: warning: $1's figure is 0 (its worker got no CPU, or nothing went through); its round has no ratio:" >&2
    grep -E '^(throughput|proxy|drop|mode)' "$logs/$1.log" | sed 's/^/  /' >&2 || true
  fi
  echo "$v"
}
# ratio A B: A/B to 4 places; nothing when either is not above 0 (a run whose worker got no CPU).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.4f\n", a / b }'; }
# keep NAME VALUE: VALUE (when there is one) appended to NAME's list of per-round ratios.
keep() { [ -z "$2" ] || echo "$2" >> "$logs/$1.ratios"; }
# worker_instr LABEL: the instructions perf counted in the worker thread of LABEL's run (nothing
# when it counted none).
worker_instr() { [ ! -f "$logs/$1.perf" ] || awk -F , '$1 ~ /^[0-9.]+$/ { print $1; exit }' "$logs/$1.perf"; }

cps_run() { # cps_run SIDE ROUND
  local label="r$2.cps.$1" perf_out=""
  [ "$perf_on" = 0 ] || perf_out=$logs/$label.perf
  run "$label" $((cps_seconds + 90)) 2048 "${bin[$1]}/cps_bench" --seconds "$cps_seconds" --warmup 1 --hold 0
  figure "$label" 's/^cps: calls_per_s=\([0-9.]*\).*/\1/p' > "$logs/$label.v"
  if [ "$perf_on" = 1 ]; then
    awk -v i="$(worker_instr "$label")" -v n="$(number "$label" 's/^proxy: invites=\([0-9]*\).*/\1/p')" \
      'BEGIN { if (i > 0 && n > 0) printf "%.0f\n", i / n }' > "$logs/$label.ipc"
  fi
}
rules_run() { # rules_run base|rules ROUND
  local label="r$2.$1"
  run "$label" $((cps_seconds + 90)) 2048 "${bin[head]}/cps_bench" --seconds "$cps_seconds" --warmup 1 --hold 0 \
    --config "$head_dir/scripts/bench/cps_$1.toml"
  figure "$label" 's/^cps: calls_per_s=\([0-9.]*\).*/\1/p' > "$logs/$label.v"
}
rtp_run() { # rtp_run SIDE ROUND
  local label="r$2.rtp.$1" d
  run "$label" $((rtp_seconds + 120)) 1536 "${bin[$1]}/rtp_bench" --modes 100000 --seconds "$rtp_seconds" --warmup 1
  figure "$label" 's/^mode=relay flows=100000 .* mpps=\([0-9.]*\).*/\1/p' > "$logs/$label.v"
  d=$(number "$label" 's/^mode=relay flows=100000 .* drops=\([0-9]*\).*/\1/p')
  [ "$d" = 0 ] || { echo "compare.sh: ${1^^}'s relay dropped $d packets at 100,000 flows:" >&2; tail -n 20 "$logs/$label.log" >&2; exit 1; }
}
parse_run() { # parse_run SIDE ROUND
  local label="r$2.parse.$1"
  run "$label" $((60 + 84 * parse_reps * parse_min_ms / 1000)) "" "${bin[$1]}/sip_parse_bench" \
    --reps "$parse_reps" --min-ms "$parse_min_ms"
  figure "$label" 's/^sip_parse: sbc_ns=\([0-9.]*\).*/\1/p' > "$logs/$label.v"
}
val() { cat "$logs/$1.v"; }
# show ROUND BENCH TEXT RATIO: one round's line for BENCH ("-": no ratio that round).
show() { printf 'round %s: %-6s %s ratio=%s\n' "$1" "$2" "$3" "${4:--}"; }

for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then order=(ref head); else order=(head ref); fi
  if [ -z "${na[cps]}" ]; then
    for s in "${order[@]}"; do cps_run "$s" "$r"; done
    x=$(ratio "$(val "r$r.cps.head")" "$(val "r$r.cps.ref")")
    keep cps "$x"
    show "$r" cps "ref=$(val "r$r.cps.ref") head=$(val "r$r.cps.head") calls/s (${order[0]} first)" "$x"
    if [ "$perf_on" = 1 ]; then
      a=$(cat "$logs/r$r.cps.ref.ipc") b=$(cat "$logs/r$r.cps.head.ipc")
      [ -z "$a" ] || echo "$a" >> "$logs/ipc.ref"
      [ -z "$b" ] || echo "$b" >> "$logs/ipc.head"
      x=$(ratio "$a" "$b")
      keep ipc "$x"
      show "$r" instr "ref=$a head=$b instructions per call (perf, worker thread)" "$x"
    fi
  fi
  if [ -z "${na[rules]}" ]; then
    if [ $((r % 2)) = 1 ]; then rules_order=(base rules); else rules_order=(rules base); fi
    for c in "${rules_order[@]}"; do rules_run "$c" "$r"; done
    x=$(ratio "$(val "r$r.rules")" "$(val "r$r.base")")
    keep rules "$x"
    show "$r" rules "base=$(val "r$r.base") rules=$(val "r$r.rules") calls/s, HEAD (${rules_order[0]} first)" "$x"
  fi
  if [ -z "${na[rtp]}" ]; then
    for s in "${order[@]}"; do rtp_run "$s" "$r"; done
    x=$(ratio "$(val "r$r.rtp.head")" "$(val "r$r.rtp.ref")")
    keep rtp "$x"
    show "$r" rtp "ref=$(val "r$r.rtp.ref") head=$(val "r$r.rtp.head") Mpps at 100,000 flows" "$x"
  fi
  if [ -z "${na[parse]}" ]; then
    for s in "${order[@]}"; do parse_run "$s" "$r"; done
    x=$(ratio "$(val "r$r.parse.ref")" "$(val "r$r.parse.head")")
    keep parse "$x"
    show "$r" parse "ref=$(val "r$r.parse.ref") head=$(val "r$r.parse.head") ns per message (ref/head)" "$x"
  fi
done

# med NAME: the median of NAME's per-round ratios to 3 places (na when it has none).
med() { if [ -s "$logs/$1.ratios" ]; then median < "$logs/$1.ratios" | awk '{ printf "%.3f\n", $1 }'; else echo na; fi; }
# rounds_of NAME: NAME's per-round ratios, comma separated.
rounds_of() { if [ -s "$logs/$1.ratios" ]; then awk '{ printf "%s%.3f", (NR > 1 ? "," : ""), $1 }' "$logs/$1.ratios"; fi; }
for b in cps rules rtp parse; do
  if [ -n "${na[$b]}" ]; then
    printf 'compare: %-6s na: %s\n' "$b" "${na[$b]}"
  else
    k=0
    [ ! -f "$logs/$b.ratios" ] || k=$(wc -l < "$logs/$b.ratios")
    [ "$k" -ge "$rounds" ] || echo "compare.sh: warning: $b has a ratio in $k of $rounds rounds (a run's worker got no CPU)" >&2
    printf 'compare: %-6s median %s over %s rounds (%s)\n' "$b" "$(med "$b")" "$k" "$(rounds_of "$b")"
  fi
done
if [ "$perf_on" = 1 ] && [ -z "${na[cps]}" ] && [ -s "$logs/ipc.ref" ] && [ -s "$logs/ipc.head" ]; then
  printf 'compare: instr_per_call ref=%.0f head=%.0f ratio=%s (perf stat, the worker thread over the INVITEs, polling included; medians of %s rounds, ratio the median of the rounds'"'"' ref/head)\n' \
    "$(median < "$logs/ipc.ref")" "$(median < "$logs/ipc.head")" "$(med ipc)" "$rounds"
fi

# callgrind: each side's cps_bench once; the worker thread's process_burst over the INVITEs.
cg_run() { # cg_run SIDE: instructions per call
  local label="cg.$1" f ir inv best=0 best_file=""
  echo "compare: callgrind: ${1^^}'s cps_bench (about 20 s)" >&2
  # 1 GiB: 65,536 setups need less than cps.sh's 2 GiB, which valgrind would take longer to set up.
  run "$label" 1200 1024 valgrind --tool=callgrind --fair-sched=yes --separate-threads=yes \
    --callgrind-out-file="$logs/$label.out.%p" "${bin[$1]}/cps_bench" --seconds 8 --warmup 2 --window 32 --hold 0 --setups 65536
  # The worker is the thread whose profile has process_burst (the generator's, the main lcore's,
  # may have more instructions in all); of several, the one where it ran most.
  for f in "$logs/$label".out.*; do
    grep -q 'process_burst' "$f" || continue
    callgrind_annotate --inclusive=yes "$f" > "$f.annotate" 2>&1 ||
      { echo "compare.sh: callgrind_annotate $f failed" >&2; tail -n 5 "$f.annotate" >&2; exit 1; }
    ir=$(awk '/:sbc::dataplane::process_burst\(/ && !/=>/ { gsub(",", "", $1); print $1; exit }' "$f.annotate")
    if [ "${ir:-0}" -gt "$best" ]; then best=$ir; best_file=$f; fi
  done
  [ "$best" -gt 0 ] ||
    { echo "compare.sh: no thread's callgrind profile of ${1^^} has sbc::dataplane::process_burst" >&2; tail -n 20 "$logs/$label.log" >&2; exit 1; }
  inv=$(number "$label" 's/^proxy: invites=\([0-9]*\).*/\1/p')
  [ "$inv" -gt 0 ] || { echo "compare.sh: ${1^^}'s cps_bench under callgrind set up no call" >&2; tail -n 20 "$logs/$label.log" >&2; exit 1; }
  echo "compare: callgrind ${1^^}: process_burst inclusive Ir=$best invites=$inv (thread ${best_file##*-})" >&2
  rm -f "$logs/$label".out.*
  awk -v i="$best" -v n="$inv" 'BEGIN { printf "%.0f\n", i / n }'
}
if [ "$callgrind" = 1 ]; then
  if [ -n "${na[callgrind]}" ]; then
    echo "compare: instr_per_call na: ${na[callgrind]}"
  elif ! command -v valgrind > /dev/null || ! command -v callgrind_annotate > /dev/null; then
    echo "compare: instr_per_call na: valgrind (callgrind, callgrind_annotate) is not installed"
  else
    a=$(cg_run ref)
    b=$(cg_run head)
    echo "compare: instr_per_call ref=$a head=$b ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }') (callgrind, sbc::dataplane::process_burst inclusive in the worker thread over the INVITEs)"
  fi
fi

echo "compare: head_rules_ratio=$(med rules) (cps_rules.toml over cps_base.toml, HEAD)"
echo "compare: ref=$ref cps_ratio=$(med cps) rtp_ratio=$(med rtp) parse_ratio=$(med parse) rounds=$rounds"
