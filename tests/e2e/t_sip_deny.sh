#!/usr/bin/env bash
# Flood protection's deny list end to end ([flood], sbcctl deny): the caller 198.18.0.2 is
# allowed by an untrusted trunk. `deny add` of a peer (trusted) is refused; `deny add` of the
# caller silences it (its OPTIONS get no answer, counted flood_denied) until `deny remove`;
# a burst of OPTIONS far above [flood] untrusted_rate gets the caller denied with reason
# "rate" (logged, in `deny list` and in /metrics), and the denial expires after deny_s, after
# which the caller is answered again.
SIP_EXTRA_CONFIG=$'[flood]\nuntrusted_rate = 10\nuntrusted_burst = 20\ndeny_s = 3'
source "$(dirname "$0")/sip_common.sh"
sip_up
drops() { ctl stats --json | python3 -c "import json,sys; print(json.load(sys.stdin)['total']['drops'].get('$1', 0))"; }

out=$(ctl deny list)
[ "$out" = "no source denied" ] || fail "deny list at start: $out"
if err=$(ctl deny add 198.18.1.11 2>&1); then fail "deny add of a peer was accepted: $err"; fi
expect_contains "$err" "is trusted" "deny add of a peer"
[ "$(ask_options 1)" = "SIP/2.0 200 OK" ] || fail "the caller's OPTIONS was not answered before any denial"

out=$(ctl deny add 198.18.0.2 --seconds 60 --reason e2e-test) || fail "deny add: $out"
expect_contains "$out" "198.18.0.2" "deny list after add"
expect_contains "$out" "operator" "deny list after add"
expect_contains "$out" "e2e-test" "deny list after add"
before=$(drops flood_denied)
[ -z "$(ask_options 2)" ] || fail "a denied caller's OPTIONS was answered"
after=$(drops flood_denied)
[ "$after" -gt "$before" ] || fail "flood_denied went from $before to $after"
note "denied by the operator: no answer, flood_denied $before -> $after"
out=$(ctl deny remove 198.18.0.2) || fail "deny remove: $out"
[ "$out" = "no source denied" ] || fail "deny list after remove: $out"
[ "$(ask_options 3)" = "SIP/2.0 200 OK" ] || fail "the caller was not answered after deny remove"
if ctl deny remove 198.18.0.2 >/dev/null 2>&1; then fail "deny remove of an address not denied succeeded"; fi

# 200 OPTIONS at once from the caller: far above 10/s with a burst of 20.
ip netns exec "$SIPP_NS_HOSTS" python3 - "$SIPP_CALLER" "$SIPP_PROXY_ADDR" <<'PY'
import socket, sys
src, dst = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((src, 5071))
for n in range(200):
    m = ("OPTIONS sip:%s:5060 SIP/2.0\r\nVia: SIP/2.0/UDP %s:5071;branch=z9hG4bK-fl-%d\r\n"
         "Max-Forwards: 70\r\nFrom: <sip:fl@%s:5071>;tag=f%d\r\nTo: <sip:%s:5060>\r\n"
         "Call-ID: flood-%d\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n") % (dst, src, n, src, n, dst, n)
    s.sendto(m.encode(), (dst, 5060))
PY
for _ in $(seq 30); do ctl deny list | grep -q "198.18.0.2 .*rate" && break; sleep 0.1; done
out=$(ctl deny list)
expect_contains "$out" "rate" "deny list after a flood from the caller"
[ "$(drops flood_rate_untrusted)" -gt 0 ] || fail "no flood_rate_untrusted drop counted"
grep -q "deny: 198.18.0.2 denied for 3 s until .*: rate" "$DIR/sbcd.log" || fail "the denial was not logged"
wait_metric '^sbc_denials_total\{reason="rate"\} 1$' || fail "/metrics: sbc_denials_total{reason=\"rate\"} is not 1"
wait_metric '^sbc_denied_sources 1$' || fail "/metrics: sbc_denied_sources is not 1"
note "flooded: denied for rate ($(drops flood_rate_untrusted) dropped over the rate)"
for _ in $(seq 60); do [ "$(ctl deny list)" = "no source denied" ] && break; sleep 0.1; done
[ "$(ctl deny list)" = "no source denied" ] || fail "the denial did not expire after deny_s = 3"
grep -q "deny: 198.18.0.2 no longer denied: its rate denial expired" "$DIR/sbcd.log" || fail "the expiry was not logged"
[ "$(ask_options 4)" = "SIP/2.0 200 OK" ] || fail "the caller was not answered after its denial expired"
echo "ok: deny add/remove, trusted refused, rate denial logged, in /metrics, expired"
