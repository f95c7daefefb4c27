#!/usr/bin/env bash
# flood benchmark: one worker core keeps carrying legitimate calls while it absorbs a flood,
# and what dropping a flood packet costs it against what forwarding a packet costs it, like
# with like: both on fresh frames that another core wrote (design.md: net_ring io forwarding
# only moves pointers; it is no ceiling for work that touches packets).
#
# What runs
#   tests/bench/flood_bench: the production worker loop (run_loop(production)) on its own lcore
#   (WORKER_CPU) over a net_ring port whose rings the bench's main lcore (MAIN_CPU) owns. Its
#   tables come from a config text through the control core's own code: trunk "carrier"
#   (198.18.0.2/32, UDP 5060, trusted = true), trunk "customers" (198.18.0.3/32, UDP 5062,
#   untrusted), one peer, the callee 198.18.0.11; [flood] at its defaults unless FLOOD_TOML
#   says otherwise. The main lcore plays, from templates:
#   - the trusted caller: LEGIT_CPS full calls per second (INVITE with SDP, 100, 180, 200, ACK,
#     BYE, 200) to the callee, which answers at once. The caller never retransmits, so one lost
#     message fails its call. ok: the 200 to its BYE came; failed: a final error, or nothing
#     within 4 s;
#   - the flood, in turn per packet: (a) unknown: SIP OPTIONS to 5060 from 65,536 sources of
#     198.19.0.0/16 that no trunk allows; (b) invite: INVITEs with unique Call-IDs from the
#     allowed untrusted source (the callee answers 486 to those that reach it; the source never
#     ACKs, as a scanner); (c) malformed: four kinds of broken SIP from the untrusted source;
#     and, run on its own only (not in the mix the issue defines), (d) spoofed: the same INVITEs
#     from 32,768 forged sources the untrusted trunk allows (198.18.128.0/17), each new to the
#     per-source buckets: what only the trunk's shared bucket ([flood] untrusted_trunk_rate) stops.
#     Flood frames are offered whenever the worker's RX ring holds fewer than 2,048 frames: the
#     worker stays saturated, and the legitimate calls' frames, queued first, never wait for
#     room;
#   - the control core's part in flood protection (tests/bench/flood_control.h: the worker's
#     source reports become deny entries, published to the worker as sbcd does).
#   Phases per run: warm-up, BASELINE_SECONDS of legitimate calls only, then flood seconds with
#   legitimate calls, then open calls end. Runs, each a fresh process (a kind's leftovers, such
#   as call slots held by unanswered INVITEs, do not leak into the next): floor, one per flood
#   kind alone (KIND_SECONDS each, spoofed included), forward_nic, forward, the mix
#   (SECONDS_PER_RUN), forward again. FLOOD_MIX=unknown|invite|malformed|spoofed|floor|forward|
#   forward_nic: that kind only, one run.
#
# The yardsticks: what the drop cost is compared with. A drop frees the frame's buffer; so does
# forwarding on a NIC, at TX completion, on the worker. The target (drop / forward <= 1) is read
# on the two yardsticks where both pay for their buffers alike: forward_nic (fresh frames) and
# the owned runs (cached frames).
#   forward_nic: the forwarding cost per packet as a NIC has the worker pay it. The same
#     generator writes fresh 64-byte frames exactly as it writes flood frames, at the same
#     backlog, to the same worker loop, which runs the io benchmark's macswap stage
#     (tests/bench/macswap_stage.h: swap the MACs, tx_enqueue out of the port) instead of the
#     production stages, and in each iteration the production loop's poll work and the free of
#     what was sent: the main lcore hands each forwarded frame back on a ring and the worker
#     frees it (TX completion, with the drop path's own free_dropped). Its buffers then travel
#     between the cores as the floor's and the flood's do. No legitimate calls in this run.
#     Measured with the same CPU accounting as the drop cost: compare: drop / forward_nic.
#   owned (flood_bench --port null): the worker's port is net_null, whose RX takes each mbuf
#     from the worker's own pool and whose TX frees on the worker, as a NIC's RX refill and TX
#     completion do; every mbuf of that pool holds a flood frame written before the start, and
#     the worker's mempool cache hands it the same few again and again, so the frames stay in
#     its cache, as io's circulate. Runs floor, unknown, invite, malformed, the mix and forward
#     (the macswap stage), KIND_SECONDS each, in the steady state (the untrusted source denied
#     from the start), without legitimate calls; the worker is saturated (net_null is never
#     empty) and nothing else runs on its CPU. What the stages cost around a packet, without
#     the cross-core misses of fresh frames: compare: owned drop / owned forward. OWNED=0
#     skips these runs.
#   forward (reference): the same as forward_nic, but without the poll work, and the main
#     lcore frees what comes out: the worker forwards without paying for the buffers, while a
#     drop frees its own, which go back to the generator's pool across the cores (the floor
#     below pays that too). It runs right before and right after the mix: on this shared,
#     virtual machine the cost of a frame that crosses cores has been seen to change threefold
#     from one minute to the next (the host placing the two vCPUs); two forward figures more
#     than 25% apart print `forward: UNSTABLE`, and no ratio of that run is to be trusted.
#   floor: the same fresh frames with the production stages: an EtherType nobody handles,
#     dropped by the first stage (eth): the least any frame written by another core costs the
#     worker to take and free, which every flood packet pays as well.
#   io (reference only): tests/bench/io_bench, the io benchmark's sbcd side (scripts/bench/io.sh):
#     the same loop and stage forwarding between two net_ring ports the same 64 frames, which
#     circulate for the whole run and so stay in the worker's cache, and are never freed, for
#     IO_SECONDS. What the loop and the stage cost around a packet no other core touched and no
#     buffer taken or freed: a lower bound, not the cost of forwarding traffic.
#
# What is reported
#   Per run: flood packets offered per kind, the worker's drops by reason and proxy counters,
#   answers that reached flood sources, deny list activity, then
#     flood_mpps      = flood packets / the worker's busy CPU seconds in the flood phase
#                       (legitimate calls included): the flood one fully used worker core
#                       absorbs while it carries the calls. Not wall time: the machine may be
#                       shared; flood_wall_mpps is printed too.
#     drop_ns_per_pkt = (busy CPU seconds of the flood phase - the legitimate calls' busy CPU
#                       per second in the baseline x the phase's seconds) / flood packets.
#     Busy CPU = the worker thread's CPU clock x the loop's busy share (as cps.sh). The
#     baseline's calls come in small bursts, dearer per message than among the flood's full
#     bursts: the subtraction leans toward a lower drop cost (by at most legit_share_cpu_s).
#     A run whose worker was below 90% busy says so: the generator, not the worker, set the
#     rate, bursts were smaller and each packet dearer.
#   forward: fresh_ns_per_pkt, the forward runs' figures (before, after the mix). io: ns_per_pkt = the io worker's CPU
#   seconds x busy share / packets forwarded: the same accounting. Then
#     compare: drop_ns_per_pkt=D forward_nic_ns_per_pkt=F ratio=D/F (target <= 1 ...)
#     compare: owned drop_ns_per_pkt=D forward_ns_per_pkt=F ratio=D/F floor_ns_per_pkt=L (target <= 1 ...)
#   and the same against forward, io's circulating frames and the floor, for reference. Last line:
#     flood: legit_ok=X legit_failed=Y flood_mpps=Z drop_ns_per_pkt=W
#   legit_ok and legit_failed summed over every run (every legitimate call counts; target
#   legit_failed=0); flood_mpps and drop_ns_per_pkt from the mix. Each run also prints the
#   worker's page faults per phase and `overload:` (the worker's overload state as sampled: why
#   and when new requests were shed), to explain a failed legitimate call, and `loops:` (frames
#   per busy loop iteration, what a busy and an idle iteration cost: whether the per-packet
#   figure is the burst's work or the loop's).
#
# Usage (root): scripts/bench/flood.sh   env: SECONDS_PER_RUN (5), KIND_SECONDS (2),
#   BASELINE_SECONDS (2), LEGIT_CPS (2000), FLOOD_MIX (all), IO_SECONDS (3), FLOOD_TOML (TOML
#   appended to the config, e.g. $'[flood]\nenabled = false' for the unprotected worker),
#   BUILD_DIR (build), MAIN_CPU (0), WORKER_CPU (1)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/bench/lib.sh
. scripts/bench/lib.sh

seconds=${SECONDS_PER_RUN:-5}
kind_seconds=${KIND_SECONDS:-2}
baseline=${BASELINE_SECONDS:-2}
legit_cps=${LEGIT_CPS:-2000}
mix=${FLOOD_MIX:-all}
io_seconds=${IO_SECONDS:-3}

case "$mix" in
  all|unknown|invite|malformed|spoofed|floor|forward|forward_nic) ;;
  *) echo "flood.sh: FLOOD_MIX: expected all, unknown, invite, malformed, spoofed, floor, forward or forward_nic, got $mix" >&2; exit 2 ;;
esac
need_root flood.sh
build_bench tests/bench/flood_bench tests/bench/io_bench

logs=$(mktemp -d /tmp/sbc-flood-bench.XXXXXX)
trap 'rm -rf "$logs"' EXIT
extra=()
if [ -n "${FLOOD_TOML:-}" ]; then
  printf '%s\n' "$FLOOD_TOML" > "$logs/extra.toml"
  extra=(--config-extra "$logs/extra.toml")
fi
lcores="0@${main_cpu},1@${worker_cpu}"

# io (reference): the forwarding cost per packet of 64 circulating, always cached frames.
"$build/tests/bench/io_bench" --seconds "$io_seconds" --warmup 1 -- --lcores "$lcores" --no-huge -m 1024 \
  --no-pci --vdev=net_ring0 --vdev=net_ring1 --file-prefix="sbc-flood-io-$$" --log-level=lib.eal:error \
  >"$logs/io.log" 2>&1 || { tail -20 "$logs/io.log" >&2; exit 1; }
io_ns=$(sed -n 's/^sbcd_cpu: .*ns_per_pkt=\([0-9.]*\).*/\1/p' "$logs/io.log")
io_mpps=$(sed -n 's/^sbcd_mpps=//p' "$logs/io.log")
sed -n 's/^sbcd_cpu: /io: /p' "$logs/io.log"

# The forward yardstick runs right before and right after the mix: its cost is compared with
# the mix's, and the two tell whether this shared machine changed speed meanwhile.
runs=(floor unknown invite malformed spoofed forward_nic forward all forward.after)
[ "$mix" != all ] && runs=("$mix")
ok=0
failed=0
mix_last=""
for m in "${runs[@]}"; do
  s=$kind_seconds
  { [ "$m" = all ] || [ ${#runs[@]} -eq 1 ]; } && s=$seconds
  log="$logs/flood.$m.log"
  "$build/tests/bench/flood_bench" --mix "${m%.after}" --seconds "$s" --baseline "$baseline" --legit-cps "$legit_cps" \
    "${extra[@]}" -- --lcores "$lcores" --no-huge -m 2048 --no-pci --file-prefix="sbc-flood-$$-$m" \
    --log-level=lib.eal:error --log-level=user1:warning >"$log" 2>&1 || { tail -20 "$log" >&2; exit 1; }
  sed "s/^/[$m] /" "$log"
  last=$(tail -1 "$log")
  { [ "$m" = all ] || [ ${#runs[@]} -eq 1 ]; } && mix_last=$last
  ok=$((ok + $(sed -n 's/.*legit_ok=\([0-9]*\).*/\1/p' <<<"$last")))
  failed=$((failed + $(sed -n 's/.*legit_failed=\([0-9]*\).*/\1/p' <<<"$last")))
  echo "kind $m: ${last#flood: }"
done

# The owned runs (flood_bench --port null): the worker's own buffers, frames in its cache. The
# same kinds, steady state (the untrusted source denied from the start), no legitimate calls.
owned_runs=()
[ "$mix" = all ] && [ "${OWNED:-1}" = 1 ] && owned_runs=(floor unknown invite malformed all forward)
for m in "${owned_runs[@]}"; do
  log="$logs/owned.$m.log"
  "$build/tests/bench/flood_bench" --port null --mix "$m" --seconds "$kind_seconds" --baseline 0.2 "${extra[@]}" -- \
    --lcores "$lcores" --no-huge -m 2048 --no-pci --file-prefix="sbc-flood-$$-owned-$m" \
    --log-level=lib.eal:error --log-level=user1:warning >"$log" 2>&1 || { tail -20 "$log" >&2; exit 1; }
  sed "s/^/[owned $m] /" "$log"
  echo "owned $m: $(tail -1 "$log" | sed -n 's/.*\(flood_mpps=.*\)/\1/p')"
done
owned_ns() { [ -f "$logs/owned.$1.log" ] && tail -1 "$logs/owned.$1.log" | sed -n 's/.*drop_ns_per_pkt=\([0-9.]*\).*/\1/p'; }
owned_drop=$(owned_ns all)
owned_fwd=$(owned_ns forward)
owned_floor=$(owned_ns floor)

floor_ns=""
[ -f "$logs/flood.floor.log" ] && floor_ns=$(tail -1 "$logs/flood.floor.log" | sed -n 's/.*drop_ns_per_pkt=\([0-9.]*\).*/\1/p')
fwd_ns=""
[ -f "$logs/flood.forward.log" ] && fwd_ns=$(sed -n 's/^forward: fresh_ns_per_pkt=\([0-9.]*\).*/\1/p' "$logs/flood.forward.log")
fwd_nic=""
[ -f "$logs/flood.forward_nic.log" ] && fwd_nic=$(sed -n 's/^forward_nic: fresh_ns_per_pkt=\([0-9.]*\).*/\1/p' "$logs/flood.forward_nic.log")
fwd_after=""
[ -f "$logs/flood.forward.after.log" ] &&
  fwd_after=$(sed -n 's/^forward: fresh_ns_per_pkt=\([0-9.]*\).*/\1/p' "$logs/flood.forward.after.log")
last=$mix_last
mpps=$(sed -n 's/.*flood_mpps=\([0-9.]*\).*/\1/p' <<<"$last")
drop_ns=$(sed -n 's/.*drop_ns_per_pkt=\([0-9.]*\).*/\1/p' <<<"$last")
printf 'io: ns_per_pkt=%s sbcd_mpps=%s (forwarding 64 circulating, cached frames, one worker, %s s)\n' \
  "$io_ns" "$io_mpps" "$io_seconds"
if [ -n "$fwd_ns" ]; then
  printf 'forward: fresh_ns_per_pkt=%s before the mix, %s after (forwarding fresh frames from the generator, same loop and stage)\n' \
    "$fwd_ns" "${fwd_after:--}"
  # Two yardsticks 25% apart: the machine's speed changed during the run; the ratio is unsound.
  [ -n "$fwd_after" ] && awk -v a="$fwd_ns" -v b="$fwd_after" 'BEGIN {exit !(a > 0 && b > 0 && (a / b > 1.25 || b / a > 1.25))}' &&
    echo "forward: UNSTABLE: the machine's speed changed during the run (another load on the host); rerun for the ratio"
fi
if [ -n "$fwd_nic" ]; then
  awk -v d="$drop_ns" -v f="$fwd_nic" 'BEGIN {printf "compare: drop_ns_per_pkt=%s forward_nic_ns_per_pkt=%s ratio=%.2f (target <= 1: forwarding as a NIC has the worker do it, the free of what it sent and the production poll included; fresh frames)\n", d, f, (f > 0 ? d / f : 0)}'
fi
if [ -n "$owned_drop" ] && [ -n "$owned_fwd" ]; then
  awk -v d="$owned_drop" -v f="$owned_fwd" -v fl="$owned_floor" 'BEGIN {printf "compare: owned drop_ns_per_pkt=%s forward_ns_per_pkt=%s ratio=%.2f floor_ns_per_pkt=%s (target <= 1: the worker'"'"'s own buffers, taken and freed on it as with a NIC; frames in its cache, as io'"'"'s)\n", d, f, (f > 0 ? d / f : 0), fl}'
fi
if [ -n "$fwd_ns" ]; then
  awk -v d="$drop_ns" -v f="$fwd_ns" 'BEGIN {printf "compare: drop_ns_per_pkt=%s forward_fresh_ns_per_pkt=%s ratio=%.2f (reference: the generator frees what is forwarded; a drop frees its own, back to the generator'"'"'s pool)\n", d, f, (f > 0 ? d / f : 0)}'
fi
awk -v d="$drop_ns" -v f="$io_ns" 'BEGIN {printf "compare: drop_ns_per_pkt=%s io_ns_per_pkt=%s ratio=%.2f (reference: io circulates 64 cached frames)\n", d, f, (f > 0 ? d / f : 0)}'
if [ -n "$floor_ns" ]; then
  awk -v d="$drop_ns" -v f="$floor_ns" 'BEGIN {printf "compare: drop_ns_per_pkt=%s floor_ns_per_pkt=%s ratio=%.2f (a fresh frame from another core, dropped by the first stage)\n", d, f, (f > 0 ? d / f : 0)}'
fi
echo "flood: legit_ok=$ok legit_failed=$failed flood_mpps=$mpps drop_ns_per_pkt=$drop_ns"
