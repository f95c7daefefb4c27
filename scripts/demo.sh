#!/usr/bin/env bash
# The demo: installs what is missing, builds, creates a namespace "carrier" host at
# 198.18.0.2 (also answering as the gateway 198.18.0.254) joined by a veth to sbcd on
# 198.18.0.1, starts sbcd with scripts/demo/sbc.toml, pings it, and shows what the operator
# sees (sbcctl status and stats, /metrics). Removes everything on exit, also on failure or
# Ctrl-C. Needs root (namespaces, veth, raw sockets).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "demo.sh: run as root (it creates network namespaces)" >&2; exit 1; }
scripts/build.sh >/dev/null

TOPO_ID=demo
source scripts/lib/topology.sh
# A demo killed hard last time may have left its namespace and veth: remove them first.
ip netns del sbc-demo-core 2>/dev/null || true
ip link del sdemocorea 2>/dev/null || true
trap topo_cleanup EXIT INT TERM

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "topology: namespace sbc-demo-core (198.18.0.2, gateway .254) <-veth-> sbcd (198.18.0.1)"
topo_site core 198.18.0.2/24 198.18.0.254/24 >/dev/null
log=$(topo_dir)/sbcd.log
step "starting sbcd --config scripts/demo/sbc.toml"
sbcd_start build scripts/demo/sbc.toml "$log"
echo "sbcd running, pid $SBCD_PID"

step "ping 198.18.0.1 from the carrier namespace"
ip netns exec sbc-demo-core ping -c 5 -i 0.2 -W 2 198.18.0.1

step "sbcctl status"
build/sbcctl --socket /run/sbc/demo.sock status

step "sbcctl stats"
build/sbcctl --socket /run/sbc/demo.sock stats

step "curl http://127.0.0.1:19090/metrics (first lines)"
curl -sf http://127.0.0.1:19090/metrics | grep -v '^#' | head -n 12

step "stopping sbcd (SIGTERM)"
sbcd_stop && echo "sbcd exited 0"
