#!/usr/bin/env bash
# Installs what is missing, configures build/ (once) and compiles everything into it:
# build/sbcd, build/sbcctl, build/sbc-sipcheck, the test and benchmark executables.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
if [ ! -f build/build.ninja ]; then
  meson setup build --buildtype=debugoptimized >/dev/null
fi
ninja -C build
