# A host in a namespace pings the SBC: every echo is answered, and sbcd counts them.
source "$(dirname "$0")/common.sh"
e2e_up
out=$(ip netns exec "$NS" ping -c 5 -i 0.2 -W 2 198.18.0.1) || { echo "$out"; fail "ping got no answer"; }
expect_contains "$out" "5 received" "ping"
stats=$(ctl stats --json)
icmp=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["total"]["stages"]["icmp"])' <<<"$stats")
[ "$icmp" -ge 5 ] || fail "icmp stage counted $icmp packets, expected at least 5"
