#!/usr/bin/env bash
# The Grafana dashboard (docs/grafana/sbcd-dashboard.json) queries only metrics sbcd exports:
# sbcd with SIP peers and [media] runs one call, then docs/grafana/check.sh compares every
# sbc_* name of the dashboard's queries with this sbcd's /metrics page. It fails when a
# metric is renamed or removed without the dashboard following (and on a name the check is
# given that sbcd does not export: checked below, so that the check itself can fail).
source "$(dirname "$0")/media_common.sh"
media_up
CALLEE=198.18.1.11
media_callee "$CALLEE"
media_call dash uac_media.xml 500
[ "$CALL_OK" -eq 1 ] || fail "the call did not complete ($CALL_OK ok, $CALL_FAILED failed)"
wait_idle 3
curl -sf "http://$HTTP/metrics" >"$DIR/metrics.txt" || fail "no /metrics on $HTTP"
out=$("$SIP_ROOT/docs/grafana/check.sh" "$DIR/metrics.txt" 2>&1) || { echo "$out" >&2; fail "the dashboard queries metrics sbcd does not export"; }
note "$out"
# The media quality series the dashboard plots carry the ended call: its RTP packets (both
# directions, SIPp's uac_media.xml plays some each way) and one jitter observation per flow.
metric() { awk -v n="$1" '$1 == n { print $2 }' "$DIR/metrics.txt"; }
pk=$(metric sbc_media_ended_rtp_packets_total); jc=$(metric sbc_media_jitter_ms_count)
[ "${pk:-0}" -gt 0 ] || fail "sbc_media_ended_rtp_packets_total is '${pk}' after a call with media"
[ "${jc:-0}" -ge 1 ] || fail "sbc_media_jitter_ms_count is '${jc}' after a call with media"
[ -n "$(metric sbc_media_ended_rtp_lost_total)" ] || fail "no sbc_media_ended_rtp_lost_total on /metrics"
# The check can fail: a dashboard with one made-up name is refused.
sed 's/sbc_calls_active/sbc_calls_activ/' "$SIP_ROOT/docs/grafana/sbcd-dashboard.json" >"$DIR/broken.json"
if "$SIP_ROOT/docs/grafana/check.sh" "$DIR/metrics.txt" "$DIR/broken.json" >/dev/null 2>&1; then
  fail "docs/grafana/check.sh accepted a dashboard naming sbc_calls_activ"
fi
echo "PASS: every metric the dashboard queries is on sbcd's /metrics ($out)"
