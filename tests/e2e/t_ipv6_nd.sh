# IPv6 on the wire with Linux as the neighbour: a host in a namespace (2001:2:0:1::2, also
# sbcd's IPv6 gateway) finds sbcd's IPv6 addresses by Neighbor Discovery and pings both, the
# global one (also with an echo too big for one frame, in fragments both ways) and the
# link-local one sbcd derives from its MAC; sbcd resolves its IPv6 gateway by
# solicitation at start, and sbcctl status and /metrics show it resolved.
source "$(dirname "$0")/common.sh"
topo_site core 198.18.0.2/24 198.18.0.254/24 >/dev/null
CORE_IF=$TOPO_SITE_IF
NS=$(topo_ns core)
HOST_IF=s${TOPO_ID}coreb
# topo_site turns IPv6 off in its namespaces; this host runs it.
ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=0
ip netns exec "$NS" sysctl -qw "net.ipv6.conf.$HOST_IF.disable_ipv6=0"
ip -n "$NS" addr add 2001:2:0:1::2/64 dev "$HOST_IF" nodad
DIR=$(topo_dir)
SOCK=$DIR/sbcd.sock
HTTP=127.0.0.1:$(topo_free_port)
CFG=$DIR/sbc.toml
cat >"$CFG" <<CONF
$(sbc_conf_head "e2e-${TOPO_ID}" 1 "$SOCK" "$HTTP")

[[interface]]
name = "core"
device = "net_af_packet${TOPO_ID},iface=${CORE_IF}"
address = "198.18.0.1/24"
gateway = "198.18.0.254"
address6 = "2001:2:0:1::1/64"
gateway6 = "2001:2:0:1::2"
CONF
sbcd_start "$BUILD" "$CFG" "$DIR/sbcd.log"

host_mac=$(ip netns exec "$NS" cat "/sys/class/net/$HOST_IF/address")
our_mac=$(cat "/sys/class/net/$CORE_IF/address")

# The gateway, solicited at start: shown resolved to the host's MAC.
resolved=
for _ in $(seq 1 50); do
  st=$(ctl status)
  if grep -qi "2001:2:0:1::2 at $host_mac" <<<"$st"; then resolved=1; break; fi
  sleep 0.1
done
[ -n "$resolved" ] || { echo "$st" >&2; fail "IPv6 gateway 2001:2:0:1::2 not resolved to $host_mac"; }
expect_contains "$st" "2001:2:0:1::1/64" "status shows the IPv6 address"
# /metrics is refreshed about once a second.
for _ in $(seq 1 30); do
  metrics=$(curl -s "http://$HTTP/metrics")
  grep -qF 'sbc_interface_gateway6_resolved{interface="core"} 1' <<<"$metrics" && break
  sleep 0.1
done
expect_contains "$metrics" 'sbc_interface_gateway6_resolved{interface="core"} 1' "metrics"

# The host resolves sbcd's global address through the solicited-node group and pings it.
out=$(ip netns exec "$NS" ping -6 -c 5 -i 0.2 -W 2 2001:2:0:1::1) || { echo "$out"; cat "$DIR/sbcd.log" >&2; fail "ping -6 got no answer"; }
expect_contains "$out" "5 received" "ping -6 to the global address"
neigh=$(ip -n "$NS" -6 neigh show 2001:2:0:1::1)
grep -qi "lladdr $our_mac" <<<"$neigh" || fail "the host learned '$neigh', expected lladdr $our_mac"

# An echo of 3,000 bytes leaves the host in fragments: sbcd reassembles it and answers in
# fragments of its own (routers never fragment IPv6), which the host puts back together.
out=$(ip netns exec "$NS" ping -6 -c 3 -i 0.2 -W 2 -s 3000 2001:2:0:1::1) || { echo "$out"; fail "ping -6 -s 3000 got no answer"; }
expect_contains "$out" "3 received" "ping -6 -s 3000 (fragments both ways)"
expect_contains "$out" "3008 bytes from 2001:2:0:1::1" "the whole echo came back"

# And the link-local address sbcd derived from its MAC (modified EUI-64).
ll=$(ctl status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["interfaces"][0]["link_local6"])')
[[ "$ll" == fe80::* ]] || fail "status names no link-local address: '$ll'"
out=$(ip netns exec "$NS" ping -6 -c 3 -i 0.2 -W 2 "$ll%$HOST_IF") || { echo "$out"; fail "ping -6 to $ll got no answer"; }
expect_contains "$out" "3 received" "ping -6 to the link-local address"

stats=$(ctl stats --json)
read -r icmp6 invalid <<<"$(python3 -c 'import json,sys; t=json.load(sys.stdin)["total"]; print(t["stages"]["icmp6"], t["drops"]["nd_invalid"])' <<<"$stats")"
[ "$icmp6" -ge 11 ] || fail "icmp6 stage counted $icmp6 packets, expected at least 11 (11 echoes and ND)"
[ "$invalid" -eq 0 ] || fail "$invalid Neighbor Discovery messages from Linux were refused as invalid"
