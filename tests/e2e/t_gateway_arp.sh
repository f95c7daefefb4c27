# sbcd resolves its gateway by ARP at start, and sbcctl status shows the gateway's MAC.
source "$(dirname "$0")/common.sh"
e2e_up
want=$(ip netns exec "$NS" cat /sys/class/net/s${TOPO_ID}coreb/address)
for _ in $(seq 1 50); do
  st=$(ctl status)
  grep -qi "$want" <<<"$st" && exit 0
  sleep 0.1
done
echo "$st" >&2
fail "gateway 198.18.0.254 not resolved to $want"
