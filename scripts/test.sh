#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs the named tiers (all when none
# is named): unit (GoogleTest, no EAL), eal (GoogleTest over net_ring ports, needs root),
# e2e (network namespaces, veth, net_af_packet, real tools; needs root), fuzz (libFuzzer
# targets for a bounded time). The last line is "N passed, N failed" (", N skipped" when a
# tier cannot run here, with the reason above it).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

tiers=("$@")
[ ${#tiers[@]} -eq 0 ] && tiers=(unit eal e2e fuzz)
for t in "${tiers[@]}"; do
  case "$t" in unit|eal|e2e|fuzz) ;; *) echo "test.sh: unknown tier '$t' (unit, eal, e2e, fuzz)" >&2; exit 2;; esac
done

passed=0 failed=0 skipped=0
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

if ! scripts/build.sh; then
  echo "test.sh: build failed"
  echo "0 passed, 1 failed"
  exit 1
fi

# Runs one GoogleTest executable; adds its test cases to the totals.
run_gtest() {
  local name=$1; shift
  local json="$results/$name.json"
  "$@" --gtest_output="json:$json" --gtest_brief=1
  local rc=$?
  if [ -f "$json" ]; then
    read -r p f < <(python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
t=d.get("tests",0); f=d.get("failures",0)+d.get("errors",0); s=d.get("disabled",0)
print(t-f-s, f)' "$json")
  else
    p=0; f=1  # crashed before writing results
  fi
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  echo "test.sh: $name: $p passed, $f failed"
  passed=$((passed + p)); failed=$((failed + f))
}

# Runs a script tier whose last line is "...: N passed, M failed".
run_script_tier() {
  local name=$1; shift
  local log="$results/$name.log"
  "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  local line
  line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
  local p f
  p=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+'); f=$(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+')
  [ -z "$line" ] && { p=0; f=1; }
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  passed=$((passed + p)); failed=$((failed + f))
}

is_root() { [ "$(id -u)" -eq 0 ]; }

for t in "${tiers[@]}"; do
  echo "=== tier: $t"
  case "$t" in
    unit)
      for exe in build/tests/unit/*_test; do
        [ -x "$exe" ] && [ -f "$exe" ] && run_gtest "$(basename "$exe")" "$exe"
      done
      # Reference pages, Containerfile, Helm chart, systemd units (tests/packaging/run.sh).
      run_script_tier packaging tests/packaging/run.sh build
      ;;
    eal)
      if is_root; then
        run_gtest eal_test build/tests/eal/eal_test
      else
        echo "test.sh: eal tier skipped: EAL needs root here"; skipped=$((skipped + 1))
      fi
      ;;
    e2e)
      if is_root; then
        run_script_tier e2e tests/e2e/run.sh
      else
        echo "test.sh: e2e tier skipped: network namespaces need root"; skipped=$((skipped + 1))
      fi
      ;;
    fuzz)
      run_script_tier fuzz tests/fuzz/run.sh
      ;;
  esac
done

if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
