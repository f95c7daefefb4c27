#!/usr/bin/env bash
# Packaging checks, run in the unit tier of scripts/test.sh (no root, no network): the
# reference pages match each program's --help (scripts/gen-man.sh --check), the Containerfile
# (scripts/container/check.sh: built where podman or docker can, else its COPY sources and
# runtime packages against ldd), the Helm chart against the Kubernetes manifest
# (scripts/helm/check.sh), the systemd units installed by meson into a scratch DESTDIR
# (scripts/systemd/check.sh). Each check's own "N passed, M failed" is added up; the last
# line is the total. Usage: tests/packaging/run.sh [BUILD_DIR] (default build).
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-${SBC_BUILD:-build}}
passed=0 failed=0
for check in "scripts/gen-man.sh --check" scripts/container/check.sh scripts/helm/check.sh scripts/systemd/check.sh; do
  echo "--- packaging: $check"
  out=$($check "$build" 2>&1); rc=$?
  echo "$out"
  line=$(grep -E '[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -n 1)
  p=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+'); f=$(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+')
  p=${p:-0}; f=${f:-1}
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  passed=$((passed + p)); failed=$((failed + f))
done
echo "packaging: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
