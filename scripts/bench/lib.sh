# Shared by scripts/bench/{io,stall,cps,rtp}.sh: source it after `cd` to the repository root.
# Sets build (BUILD_DIR, default build), main_cpu (MAIN_CPU, 0) and worker_cpu (WORKER_CPU, 1),
# the main lcore's and the worker's CPUs.
# shellcheck shell=bash disable=SC2034  # the variables are the sourcing script's

build=${BUILD_DIR:-build}
main_cpu=${MAIN_CPU:-0}
worker_cpu=${WORKER_CPU:-1}

# need_root NAME: DPDK's EAL needs root; exits with a message naming NAME otherwise.
need_root() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "$1: needs root (DPDK EAL)" >&2
    exit 1
  fi
}

# build_bench TARGET...: configures $build when it has no build.ninja yet and builds TARGETs.
build_bench() {
  [ -f "$build/build.ninja" ] || meson setup "$build" >/dev/null
  ninja -C "$build" "$@" >/dev/null
}

# median: the median of the numbers on stdin, one a line (0 when there are none).
median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print 0; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
