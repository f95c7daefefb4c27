#!/usr/bin/env bash
# Checks the Helm chart scripts/helm/sbcd. With `helm` installed: `helm lint` and `helm
# template`. Without (Debian has no Helm package): the templates rendered by render.py (the
# subset of Go templates the chart is kept to). Either way the rendered manifests are compared
# with scripts/k8s/sbcd-daemonset.yaml by compare.py (same pod, one per node, replicaCount,
# grace above the drain timeout, config from the ConfigMap), with the defaults and with
# values set, the refusals are checked (a grace period not above the drain timeout, no
# config), and the ConfigMap's sbc.toml passes `sbcd --check` when BUILD/sbcd is built.
# Usage: scripts/helm/check.sh [BUILD_DIR]. Last line "helm: N passed, M failed"; exit 1 on failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
chart=scripts/helm/sbcd
ds=scripts/k8s/sbcd-daemonset.yaml
tmp=$(mktemp -d /tmp/sbc-helm.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { echo "helm: ok: $*"; passed=$((passed + 1)); }
bad() { echo "helm: FAIL: $*" >&2; failed=$((failed + 1)); }

if command -v helm >/dev/null; then
  tool="helm template"
  render() { helm template sbcd "$chart" "$@"; }
  if helm lint "$chart" >"$tmp/lint" 2>&1; then ok "helm lint"; else cat "$tmp/lint" >&2; bad "helm lint"; fi
else
  tool="render.py (no helm here)"
  render() { python3 scripts/helm/render.py "$chart" --release sbcd "$@"; }
fi
python3 -c 'import yaml' 2>/dev/null || { bad "python3-yaml is missing (scripts/setup-deps.sh installs it)"; echo "helm: $passed passed, $failed failed"; exit 1; }

# compare_with NAME REPLICAS DRAIN [--set ...]: renders with the values set and compares.
compare_with() {
  local name=$1 replicas=$2 drain=$3; shift 3
  local args=()
  for s in "$@"; do args+=(--set "$s"); done
  if ! render "${args[@]}" >"$tmp/$name.yaml" 2>"$tmp/$name.err"; then
    cat "$tmp/$name.err" >&2; bad "$name: $tool failed"; return
  fi
  if python3 scripts/helm/compare.py "$tmp/$name.yaml" "$ds" "$replicas" "$drain"; then
    ok "$name: $tool renders the DaemonSet's pod, one per node, $replicas replicas, drain $drain s"
  else
    bad "$name: the rendered chart differs from $ds (above)"
  fi
}
replicas=$(sed -n 's/^replicaCount: *//p' "$chart/values.yaml")
drain=$(awk '/^drain:/ {d = 1; next} d && /timeoutSeconds:/ {print $2; exit}' "$chart/values.yaml")
compare_with defaults "$replicas" "$drain"
compare_with five-replicas 5 "$drain" replicaCount=5

# What must refuse to render.
if render --set terminationGracePeriodSeconds=600 >/dev/null 2>"$tmp/refuse.err"; then
  bad "a grace period equal to the drain timeout renders (must be refused)"
elif grep -q "terminationGracePeriodSeconds must be above" "$tmp/refuse.err"; then
  ok "a grace period not above the drain timeout is refused"
else
  cat "$tmp/refuse.err" >&2; bad "the refusal of a short grace period does not say why"
fi
if render --set drain.timeoutSeconds=300 --set terminationGracePeriodSeconds=360 >"$tmp/short.yaml" 2>&1 &&
   python3 scripts/helm/compare.py "$tmp/short.yaml" "$ds" "$replicas" 300 >/dev/null; then
  bad "a chart with a 300 s drain and a 360 s grace compares equal to the DaemonSet's 660 s (the compare cannot fail)"
elif grep -q '"300"' "$tmp/short.yaml"; then
  ok "drain.timeoutSeconds reaches the preStop, and a pod unlike the DaemonSet's is caught"
else
  bad "drain.timeoutSeconds=300 did not reach the preStop command"
fi
if render --set config= >/dev/null 2>"$tmp/noconf.err"; then bad "an empty config renders (must be refused)"
else ok "an empty config is refused"; fi

# The ConfigMap's config is one sbcd accepts.
if [ -x "$build/sbcd" ]; then
  python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "ConfigMap": sys.stdout.write(d["data"]["sbc.toml"])' "$tmp/defaults.yaml" >"$tmp/sbc.toml"
  if out=$("$build/sbcd" --config "$tmp/sbc.toml" --check 2>&1); then ok "the chart's default config passes sbcd --check"
  else echo "$out" >&2; bad "the chart's default config fails sbcd --check"; fi
else
  echo "helm: $build/sbcd not built: the config check is skipped"
fi

echo "helm: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
