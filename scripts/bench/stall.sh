#!/usr/bin/env bash
# stall benchmark: do the control core's snapshot publications and health flips slow the
# workers down?
#
# What runs
#   tests/bench/stall_bench: the production worker loop (dataplane/worker.h run_loop: rx burst,
#   stage, TX buffer + flush, RCU quiescent state, max loop gap) forwarding 64-byte frames
#   between two net_ring ports (one 32-packet burst injected per port, as in io.sh), with a
#   stage that picks a peer per burst with the production select_peer over the published
#   snapshot (so the worker reads the snapshot pointer and the health words) before swapping
#   MAC addresses. The main lcore plays the control core and alternates rounds:
#     idle: it wakes every millisecond (as sbcd's control loop polls) and does nothing;
#     busy: it publishes PUBLISH_PER_S snapshots per second (rcu_xchg_pointer, the old one
#           freed by call_rcu) and flips FLIPS_PER_S health words per second, paced per ms.
#   Main lcore on MAIN_CPU, worker on WORKER_CPU, so that the two do not share a CPU.
#
# What is reported
#   per round: forwarded Mpps (the worker's tx counter), the worker thread's share of the CPU
#   (/proc schedstat) and Mpps per second of that CPU time, drops, the longest gap between two
#   worker loop iterations, the publish and flip rates reached. Then the medians of the
#   per-CPU-second rates (`per_cpu_second: idle_mpps=.. busy_mpps=.. ratio=..`: what the control
#   core costs the worker, other processes' preemption set aside) and, last line:
#     stall: idle_mpps=X busy_mpps=Y ratio=Z max_loop_gap_us=W
#   X, Y: medians over ROUNDS rounds of each kind; Z: the median over the ROUNDS pairs of
#   (idle, busy) rounds, run back to back in alternating order, of busy / idle (pairs cancel
#   background load that drifts during the run); W: the longest gap in any busy round.
#   Target: ratio >= 0.98 and no drops. On a shared 2-CPU machine, other processes preempt the
#   worker now and then: the gap then shows the preemption, in idle rounds as much as in busy
#   ones (the idle figure is printed above the last line for comparison).
#
# On a machine shared with other work, give the benchmark's session the CPU first, or the
# worker spends part of each round preempted:
#   setsid bash -c 'echo -15 > /proc/self/autogroup; exec scripts/bench/stall.sh'
#
# Usage (root): scripts/bench/stall.sh   env: ROUNDS (20), ROUND_MS (500), BUILD_DIR (build),
#                                            MAIN_CPU (0), WORKER_CPU (1), PUBLISH_PER_S (1000),
#                                            FLIPS_PER_S (10000)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/bench/lib.sh
. scripts/bench/lib.sh

rounds=${ROUNDS:-20}
round_ms=${ROUND_MS:-500}

need_root stall.sh
scripts/setup-deps.sh
build_bench tests/bench/stall_bench

exec "$build/tests/bench/stall_bench" --rounds "$rounds" --round-ms "$round_ms" \
  --publish-per-s "${PUBLISH_PER_S:-1000}" --flips-per-s "${FLIPS_PER_S:-10000}" -- \
  --lcores "0@${main_cpu},1@${worker_cpu}" --no-huge -m 1024 --no-pci \
  --vdev=net_ring0 --vdev=net_ring1 --log-level=lib.eal:error --file-prefix="sbc-stall-$$"
