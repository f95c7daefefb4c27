#!/usr/bin/env bash
# Checks the systemd units: `meson install` into a scratch DESTDIR puts sbcd, sbcctl,
# sbc-sipcheck, sbcd.service, sbcd-hugepages.service, /etc/default/sbcd and the example
# config where the units expect them, the unit's ExecStart/ExecStop name the installed
# programs, the stop drains with `sbcctl drain --wait` and waits longer than the drain
# timeout; and `systemd-analyze verify` (when installed) accepts both units without a warning.
# Usage: scripts/systemd/check.sh [BUILD_DIR]. Last line "systemd: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
dest=$(mktemp -d /tmp/sbc-install.XXXXXX)
trap 'rm -rf "$dest"' EXIT
passed=0 failed=0
ok() { echo "systemd: ok: $*"; passed=$((passed + 1)); }
bad() { echo "systemd: FAIL: $*" >&2; failed=$((failed + 1)); }

if ! meson install -C "$build" --no-rebuild --destdir "$dest" >"$dest.log" 2>&1; then
  tail -20 "$dest.log" >&2; rm -f "$dest.log"; bad "meson install into a DESTDIR failed"
  echo "systemd: $passed passed, $failed failed"; exit 1
fi
rm -f "$dest.log"
prefix=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
unit="$dest$prefix/lib/systemd/system/sbcd.service"
hp="$dest$prefix/lib/systemd/system/sbcd-hugepages.service"
for f in "$dest$prefix/bin/sbcd" "$dest$prefix/bin/sbcctl" "$dest$prefix/bin/sbc-sipcheck" "$unit" "$hp"; do
  [ -e "$f" ] || bad "meson install did not install ${f#"$dest"}"
done
etc=$(find "$dest" -path '*/default/sbcd' | head -n 1)
example=$(find "$dest" -path '*/sbc/sbc.toml.example' | head -n 1)
[ -n "$etc" ] || bad "meson install did not install default/sbcd"
[ -n "$example" ] || bad "meson install did not install sbc/sbc.toml.example"
[ "$failed" -eq 0 ] && ok "meson install puts the programs, both units, default/sbcd and the example config in place (prefix $prefix)"

if [ -f "$unit" ]; then
  grep -q "^ExecStart=$prefix/bin/sbcd --config " "$unit" && ok "ExecStart runs $prefix/bin/sbcd" || bad "ExecStart does not run $prefix/bin/sbcd: $(grep ^ExecStart= "$unit")"
  grep -qE "^ExecStop=-?$prefix/bin/sbcctl .*drain --wait --timeout" "$unit" && ok "ExecStop drains with sbcctl drain --wait" ||
    bad "ExecStop is not sbcctl drain --wait: $(grep ^ExecStop= "$unit")"
  grep -q "^Restart=on-failure" "$unit" && ok "Restart=on-failure" || bad "no Restart=on-failure"
  stop=$(sed -n 's/^TimeoutStopSec=\([0-9]*\)$/\1/p' "$unit")
  drain=$(grep -oE 'SBC_DRAIN_TIMEOUT_S=[0-9]+' "$unit" | head -n 1 | cut -d= -f2)
  if [ -n "$stop" ] && [ -n "$drain" ] && [ "$stop" -gt "$drain" ]; then ok "TimeoutStopSec $stop is above the drain timeout $drain"
  else bad "TimeoutStopSec '${stop}' is not above the drain timeout '${drain}'"; fi
  grep -qE '^(Requires|After)=.*dev-hugepages\.mount' "$unit" && grep -q 'sbcd-hugepages.service' "$unit" &&
    ok "sbcd.service needs /dev/hugepages mounted and reserved" || bad "sbcd.service does not require the hugepages units"
  if grep -q '@[a-z]*@' "$unit"; then bad "unsubstituted @var@ left in sbcd.service"; fi
  # The example config sbcd would start with passes sbcd --check.
  if [ -n "$example" ] && out=$("$build/sbcd" --config "$example" --check 2>&1); then ok "the installed example config passes sbcd --check"
  else bad "the installed example config fails sbcd --check: $out"; fi
fi

if command -v systemd-analyze >/dev/null; then
  # Verified beside each other with the programs' paths pointing into the DESTDIR (verify
  # checks that they are executable; --root would need a whole system in the DESTDIR).
  mkdir -p "$dest/verify"
  sed "s#$prefix/bin/#$dest$prefix/bin/#g" "$unit" >"$dest/verify/sbcd.service"
  cp "$hp" "$dest/verify/"
  if out=$(systemd-analyze verify "$dest/verify/sbcd.service" "$dest/verify/sbcd-hugepages.service" 2>&1) &&
     ! grep -qiE 'unknown|invalid|failed|not executable|ignoring' <<<"$out"; then
    ok "systemd-analyze verify accepts both units"
  else
    echo "$out" >&2; bad "systemd-analyze verify"
  fi
else
  echo "systemd: systemd-analyze not installed: verify skipped"
fi
echo "systemd: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
