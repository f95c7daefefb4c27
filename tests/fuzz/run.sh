#!/usr/bin/env bash
# Fuzz tier: builds the libFuzzer targets (clang, ASan + UBSan) into build-fuzz/ and runs
# each from its committed seed corpus for a bounded time.
#
#   tests/fuzz/run.sh [SECONDS_TOTAL]     (default 60, split evenly between the targets)
#
# Fails on any crash, leak, timeout or sanitizer report; crashing inputs are kept in
# build-fuzz/artifacts/<target>/. The last line is `fuzz: N passed, M failed`.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
total="${1:-60}"
out="$root/build-fuzz"
targets=(sip_parse sip_edit sip_proxy)
cxx="${CXX_FUZZ:-}"
if [ -z "$cxx" ]; then
  for c in clang++-14 clang++; do
    if command -v "$c" >/dev/null 2>&1; then cxx="$c"; break; fi
  done
fi
if [ -z "$cxx" ]; then
  echo "fuzz: clang++ not found (install clang and libclang-rt-14-dev)" >&2
  echo "fuzz: 0 passed, ${#targets[@]} failed"
  exit 1
fi

mkdir -p "$out"
flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -I"$root")
engine=("$root"/sip-fastpath/sip_check.cc "$root"/sip-fastpath/sip_editor.cc
        "$root"/sip-fastpath/sip_error.cc "$root"/sip-fastpath/sip_header_checks.cc
        "$root"/sip-fastpath/sip_names.cc "$root"/sip-fastpath/sip_numbers.cc
        "$root"/sip-fastpath/sip_parser.cc "$root"/sip-fastpath/sip_response.cc
        "$root"/sip-fastpath/sip_uri.cc "$root"/sip-fastpath/sip_verdict.cc)

# The proxy target also needs the proxy and its tables: every other source of sip-fastpath/
# (the sbc-sipcheck tool's own files live in app/), so that a new proxy file cannot be
# forgotten here, and the address vocabulary of common/ it speaks; route and canary matching
# link Hyperscan, header and number rules PCRE2.
proxy_sources=("$root"/common/*.cc)
for f in "$root"/sip-fastpath/*.cc; do
  [[ " ${engine[*]} " == *" $f "* ]] || proxy_sources+=("$f")
done
proxy_sources+=(-isystem /usr/include/hs -lhs $(pkg-config --cflags --libs libpcre2-8))

per=$(( total / ${#targets[@]} ))
[ "$per" -lt 1 ] && per=1
passed=0
failed=0
for t in "${targets[@]}"; do
  bin="$out/${t}_fuzz"
  extra=()
  [ "$t" = sip_proxy ] && extra=("${proxy_sources[@]}")
  if ! "$cxx" "${flags[@]}" "$root/tests/fuzz/${t}_fuzz.cc" "${engine[@]}" "${extra[@]}" -o "$bin" 2>"$out/$t.build.log"; then
    echo "fuzz: $t: build failed (see $out/$t.build.log)" >&2
    tail -20 "$out/$t.build.log" >&2
    failed=$((failed + 1))
    continue
  fi
  # New inputs go to a scratch copy so that the committed seed corpus stays as it is.
  work="$out/corpus/$t"
  mkdir -p "$work" "$out/artifacts/$t"
  cp -n "$root/tests/fuzz/corpus/$t/"* "$work/" 2>/dev/null || true
  echo "fuzz: $t: ${per}s" >&2
  if "$bin" "$work" -max_total_time="$per" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
       -dict="$root/tests/fuzz/sip.dict" -print_final_stats=1 \
       -artifact_prefix="$out/artifacts/$t/" >"$out/$t.log" 2>&1; then
    passed=$((passed + 1))
    grep -E "^stat::number_of_executed_units|^Done" "$out/$t.log" | sed "s/^/fuzz: $t: /" >&2
  else
    failed=$((failed + 1))
    echo "fuzz: $t: FAILED (log $out/$t.log, inputs in $out/artifacts/$t/)" >&2
    grep -E "ERROR|runtime error|SUMMARY|Test unit written" "$out/$t.log" | head -20 >&2
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
