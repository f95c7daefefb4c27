#!/usr/bin/env bash
# The SBC's own OPTIONS answer under load ([self]): with overload_calls = 1 and
# draining_code = "none", an idle SBC answers 200; while one call is up it is overloaded and
# leaves OPTIONS unanswered (a balancer that sees silence moves away), says so in sbcctl
# status and /metrics, and still takes the call; once the call ends it answers 200 again.
SIP_EXTRA_CONFIG='[self]
draining_code = "none"
overload_calls = 1'
source "$(dirname "$0")/sip_common.sh"
sip_up
peer 198.18.1.11 uas.xml
st=$(ask_options 1)
[[ "$st" == "SIP/2.0 200"* ]] || fail "OPTIONS to an idle SBC answered '$st', expected 200"

long_call 8000
ctl status | grep -q overloaded || { ctl status >&2; fail "sbcctl status does not say overloaded"; }
wait_metric '^sbc_info\{.*state="overloaded"' || fail "/metrics does not show the overloaded state"
st=$(ask_options 2)
[ -z "$st" ] || fail "OPTIONS to an overloaded SBC with draining_code = "none" answered '$st', expected silence"
[ "$(need_stat options_unanswered)" -ge 1 ] || fail "options_unanswered not counted"
grep -q "sbcd: overloaded" "$DIR/sbcd.log" || fail "the overload was not logged"

wait "$long_wrap" || true
read -r ok failed < <(sipp_counts "$DIR/long")
[ "$ok" -eq 1 ] || fail "the call up during the overload did not complete ($ok ok, $failed failed)"
st=$(ask_options 3)
[[ "$st" == "SIP/2.0 200"* ]] || fail "OPTIONS after the overload answered '$st', expected 200"
[ "$(grep -c 'sbcd: no longer overloaded' "$DIR/sbcd.log")" -eq 1 ] || fail "the end of the overload was not logged once"
echo "ok: OPTIONS to the SBC: 200, silence while overloaded (1 call up), 200 again"
