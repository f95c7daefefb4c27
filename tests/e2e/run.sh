#!/usr/bin/env bash
# e2e tier: runs every tests/e2e/t_*.sh in its own process with a time limit. Each test builds
# its own namespaces and sbcd and removes them on exit, also on failure. Needs root and a build.
# Then the tests of TWO_WORKERS again with sbcd on two workers (SIP_WORKERS=2, a queue pair each
# on net_af_packet: qpairs=2), named NAME@2w: the same user-visible checks with RSS spreading
# flows across the workers (t_sip_two_workers, t_media_two_workers and t_sip_topology_hiding
# run on two workers always, and also assert that messages and media crossed between them).
# Arguments: names to run (NAME or NAME@2w); none: all. Last line: "e2e: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
export SBC_BUILD=${SBC_BUILD:-$(pwd)/build}
# t_drain, t_options_health and t_dns_srv spread their calls over both workers there and
# assert that calls crossed (workers_crossed in sip_common.sh).
TWO_WORKERS=(t_sip_basic t_sip_retry_503 t_sip_region_failover t_media_relay t_drain t_options_health t_dns_srv t_tls_call)
pass=0 fail=0
only=("$@")

# run_one NAME FILE [VAR=VALUE...]: one test, its environment extended by the assignments.
run_one() {
  local name=$1 t=$2 start out rc secs
  shift 2
  if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " =~ " $name " ]]; then return 0; fi
  start=$(date +%s.%N)
  out=$(env "$@" timeout -k 10 180 bash "$t" 2>&1)
  rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  if [ $rc -eq 0 ]; then
    pass=$((pass + 1)); echo "PASS $name (${secs}s)"
  else
    fail=$((fail + 1)); echo "FAIL $name (${secs}s, exit $rc)"
    sed 's/^/    /' <<<"$out" | tail -n 40
  fi
}

for t in tests/e2e/t_*.sh; do
  run_one "$(basename "$t" .sh)" "$t"
done
for name in "${TWO_WORKERS[@]}"; do
  run_one "$name@2w" "tests/e2e/$name.sh" SIP_WORKERS=2 SIP_DEVICE_EXTRA=,qpairs=2
done
echo "e2e: $pass passed, $fail failed"
[ $fail -eq 0 ]
