# sbcctl status/stats answer (text and JSON), and /metrics and /healthz answer over HTTP.
source "$(dirname "$0")/common.sh"
e2e_up
st=$(ctl status)
expect_contains "$st" "e2e-${TOPO_ID}" "status names the node"
expect_contains "$st" "198.18.0.1/24" "status shows the interface address"
ctl --json status | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["state"]=="running", d["state"]' \
  || fail "status --json is not a running report"
ip netns exec "$NS" ping -c 2 -i 0.2 -W 2 198.18.0.1 >/dev/null || fail "ping"
m=$(curl -sf "http://$HTTP/metrics") || fail "/metrics did not answer"
expect_contains "$m" "sbc_up 1" "metrics"
grep -qE '^sbc_rx_packets_total(\{[^}]*\})? [1-9]' <<<"$m" || { echo "$m" | head -n 40 >&2; fail "rx packets not counted in /metrics"; }
h=$(curl -s -o /dev/null -w '%{http_code}' "http://$HTTP/healthz")
[ "$h" = 200 ] || fail "/healthz answered $h"
stats=$(ctl stats)
expect_contains "$stats" "icmp" "stats shows stages"
