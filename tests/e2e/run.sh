#!/usr/bin/env bash
# e2e tier: runs every tests/e2e/t_*.sh in its own process with a time limit. Each test builds
# its own namespaces and sbcd and removes them on exit, also on failure. Needs root and a build.
# Last line: "e2e: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
export SBC_BUILD=${SBC_BUILD:-$(pwd)/build}
pass=0 fail=0
only=("$@")
for t in tests/e2e/t_*.sh; do
  name=$(basename "$t" .sh)
  if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " =~ " $name " ]]; then continue; fi
  start=$(date +%s.%N)
  out=$(timeout -k 10 180 bash "$t" 2>&1)
  rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  if [ $rc -eq 0 ]; then
    pass=$((pass + 1)); echo "PASS $name (${secs}s)"
  else
    fail=$((fail + 1)); echo "FAIL $name (${secs}s, exit $rc)"
    sed 's/^/    /' <<<"$out" | tail -n 40
  fi
done
echo "e2e: $pass passed, $fail failed"
[ $fail -eq 0 ]
