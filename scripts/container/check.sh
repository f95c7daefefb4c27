#!/usr/bin/env bash
# Checks scripts/container/Containerfile. When podman or docker can build here (a daemon or
# rootless podman, and the debian:bookworm base image present or pullable), builds the image
# under the name the Kubernetes manifest runs and runs `sbcd --version` in it. Always, so
# that a machine without a registry still catches a broken file:
#   1. every COPY source (not --from) exists in the repository
#   2. the image named in the header is the one scripts/k8s/sbcd-daemonset.yaml and the Helm
#      chart's values.yaml run
#   3. the runtime stage installs the Debian package of every shared library that
#      `ldd BUILD/sbcd` (and sbcctl, sbc-sipcheck) lists: each library mapped to its package
#      with `dpkg -S`; a name that differs only in its version suffix (libssl3 / libssl3t64,
#      librte-eal23 / librte-eal24 on a newer host) counts, with a note
# Usage: scripts/container/check.sh [BUILD_DIR]   (default build; env CONTAINERFILE to check
# another file). Last line: "container: N passed, M failed"; exit 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
file=${CONTAINERFILE:-scripts/container/Containerfile}
passed=0 failed=0
ok() { echo "container: ok: $*"; passed=$((passed + 1)); }
bad() { echo "container: FAIL: $*" >&2; failed=$((failed + 1)); }

[ -f "$file" ] || { echo "container: no $file" >&2; echo "container: 0 passed, 1 failed"; exit 1; }

# --- 1. COPY sources
missing=0
while read -r src; do
  if [ ! -e "$src" ]; then bad "COPY source $src does not exist"; missing=1; fi
done < <(awk 'toupper($1) == "COPY" && $2 !~ /^--from=/ { for (i = 2; i < NF; i++) if ($i !~ /^--/) print $i }' "$file")
[ "$missing" -eq 0 ] && ok "every COPY source exists"

# --- 2. the image name
image=$(grep -oE 'sbc/sbcd:[0-9]+\.[0-9]+\.[0-9]+' "$file" | head -n 1)
k8s=$(sed -n 's/^ *image: *\([^ #]*\).*/\1/p' scripts/k8s/sbcd-daemonset.yaml | head -n 1)
if [ -n "$image" ] && [ "$image" = "$k8s" ]; then ok "image $image is the one the DaemonSet runs"
else bad "Containerfile builds '${image}', the DaemonSet runs '${k8s}'"; fi
if [ -f scripts/helm/sbcd/values.yaml ]; then
  repo=$(sed -n 's/^  repository: *//p' scripts/helm/sbcd/values.yaml | head -n 1)
  tag=$(sed -n 's/^  tag: *"*\([^"]*\)"*/\1/p' scripts/helm/sbcd/values.yaml | head -n 1)
  if [ "$repo:$tag" = "$image" ]; then ok "the Helm chart runs $image too"
  else bad "the Helm chart runs '$repo:$tag', the Containerfile builds '$image'"; fi
fi

# --- 3. runtime packages against ldd
# The packages of the last stage's apt-get install (continuation lines joined).
runtime_pkgs=$(awk '/^FROM /{stage=$0; buf=""} stage ~ /AS runtime/ {buf = buf " " $0} END {print buf}' "$file" |
  sed 's/\\//g' | grep -oE 'apt-get install[^&]*' | tr ' ' '\n' | grep -E '^[a-z0-9][a-z0-9.+-]+$' |
  grep -vE '^(apt-get|install)$' | sort -u)
[ -n "$runtime_pkgs" ] || bad "no apt-get install found in the runtime stage"
# strip_version NAME: the name without its trailing version part (libssl3t64 -> libssl, librte-eal23 -> librte-eal).
strip_version() { sed -E 's/(t64)?$//; s/-?[0-9][0-9.]*$//' <<<"$1"; }
pkg_of() {  # the package owning library path $1 (merged /usr: try both spellings)
  local p cand
  for cand in "$1" "$(readlink -f "$1")" "/usr$1" "${1#/usr}"; do
    p=$(dpkg -S "$cand" 2>/dev/null | head -n 1 | cut -d: -f1)
    [ -n "$p" ] && { echo "$p"; return; }
  done
}
if ! command -v ldd >/dev/null || ! command -v dpkg >/dev/null; then
  bad "ldd and dpkg are needed for the library check"
else
  for prog in sbcd sbcctl sbc-sipcheck; do
    bin="$build/$prog"
    if [ ! -x "$bin" ]; then bad "$bin not built (build first: ninja -C $build)"; continue; fi
    libs=$(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | grep -v 'ld-linux' | sort -u)
    prog_bad=0
    for lib in $libs; do
      pkg=$(pkg_of "$lib")
      if [ -z "$pkg" ]; then bad "$prog: $lib belongs to no Debian package (built by hand?)"; prog_bad=1; continue; fi
      if grep -qx "$pkg" <<<"$runtime_pkgs"; then continue; fi
      base=$(strip_version "$pkg"); alt=""
      for r in $runtime_pkgs; do [ "$(strip_version "$r")" = "$base" ] && alt=$r; done
      if [ -n "$alt" ]; then
        echo "container: note: $prog needs $lib from $pkg here; the runtime stage installs $alt (another version of it)"
      else
        bad "$prog needs $lib (package $pkg), which the runtime stage does not install"; prog_bad=1
      fi
    done
    [ "$prog_bad" -eq 0 ] && ok "the runtime stage installs every library $prog links ($(wc -w <<<"$libs") libraries)"
  done
fi

# --- build, where a container engine can
engine=""
for e in podman docker; do
  command -v "$e" >/dev/null || continue
  if timeout 20 "$e" info >/dev/null 2>&1; then engine=$e; break; fi
  echo "container: $e is installed but cannot build here ($e info fails: no daemon or no rootless setup)"
done
if [ -z "$engine" ]; then
  echo "container: build skipped: no podman or docker that can build on this machine"
elif ! timeout 20 "$engine" image inspect debian:bookworm >/dev/null 2>&1 &&
     ! timeout 120 "$engine" pull debian:bookworm >/dev/null 2>&1; then
  echo "container: build skipped: the base image debian:bookworm is not here and no registry answers"
else
  if timeout 1800 "$engine" build -f "$file" -t "$image" . >/tmp/sbc-container-build.log 2>&1; then
    ok "$engine built $image"
    if v=$(timeout 30 "$engine" run --rm "$image" --version 2>&1); then ok "sbcd --version in the image: $v"
    else bad "the image's sbcd does not start: $v"; fi
  else
    tail -20 /tmp/sbc-container-build.log >&2
    bad "$engine build of $file failed (log: /tmp/sbc-container-build.log)"
  fi
fi

echo "container: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
