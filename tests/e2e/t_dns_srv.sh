#!/usr/bin/env bash
# DNS SRV regions against a real DNS server (dnsmasq on 127.0.0.1, TTL 2 s):
#  1. sbcd learns region1 and region2 from _sip._udp.region{1,2}.test (targets with priority
#     10 and 20) and calls land on region1's priority-10 target 198.18.1.11 (on two workers,
#     t_dns_srv@2w, from both workers, crossing between them);
#  2. region1's A records change (dnsmasq re-reads its hosts file on SIGHUP, no outage):
#     a.region1.test .11 -> .13 and b.region1.test .12 -> .14. Calls placed all along
#     complete (those up on .11 when it left DNS too, BYE included); new calls move to .13
#     at the next refresh (3/4 of the 2 s TTL) and none go to .11 after that; .11 and .12
#     leave the peer table once their calls ended; sbcd resolves the MAC of both new peers
#     before it sends them calls (.14 gets no call, so only the control core's ARP for
#     DNS-learned peers can have learned it; no packet is dropped for an unresolved next
#     hop). Prints the time from the change to the first INVITE on .13;
#  3. DNS stopped: the last good answer is kept past its TTL, calls still complete on .13, and
#     the stale counter of /metrics moves.
source "$(dirname "$0")/sip_common.sh"

DNS_PORT=$(topo_free_port)
DNS_PID=
DNS_DIR=$(topo_dir)
# dns_hosts A B: the A records (dnsmasq --addn-hosts) with region1's targets a (priority 10)
# at A and b (priority 20) at B.
dns_hosts() {
  printf '%s a.region1.test\n%s b.region1.test\n198.18.2.21 a.region2.test\n198.18.2.22 b.region2.test\n' \
    "$1" "$2" >"$DNS_DIR/hosts"
}
# dns_start: dnsmasq serving both regions' SRV records and the hosts file.
dns_start() {
  dnsmasq --no-daemon --conf-file=/dev/null --no-resolv --no-hosts --port="$DNS_PORT" \
    --listen-address=127.0.0.1 --bind-interfaces --local-ttl=2 --log-queries --log-facility="$DNS_DIR/dnsmasq.log" \
    --srv-host=_sip._udp.region1.test,a.region1.test,5060,10,50 \
    --srv-host=_sip._udp.region1.test,b.region1.test,5060,20,50 \
    --srv-host=_sip._udp.region2.test,a.region2.test,5060,10,50 \
    --srv-host=_sip._udp.region2.test,b.region2.test,5060,20,50 \
    --addn-hosts="$DNS_DIR/hosts" 2>>"$DNS_DIR/dnsmasq.err" &
  DNS_PID=$!
  topo_track "$DNS_PID"
  local i
  for i in $(seq 50); do ss -Hunl "src 127.0.0.1:$DNS_PORT" | grep -q . && return 0; sleep 0.1; done
  fail "dnsmasq did not listen on 127.0.0.1:$DNS_PORT"
}
dns_stop() {
  kill -TERM "$DNS_PID" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$DNS_PID" 2>/dev/null || break; sleep 0.1; done
  wait "$DNS_PID" 2>/dev/null || true
}
# peers_json: "ADDRESS STATE SOURCE" of every peer, one a line.
peers_lines() {
  ctl peers --json | python3 -c '
import json, sys
for p in json.load(sys.stdin)["sip"]["peers"]:
    print(p["address"], p["state"], p.get("source", ""))'
}
# dns_field REGION KEY: a field of the region's line in the "dns" report.
dns_field() {
  ctl peers --json | python3 -c '
import json, sys
for n in json.load(sys.stdin).get("dns", {}).get("names", []):
    if n["region"] == sys.argv[1]: print(n[sys.argv[2]])' "$1" "$2"
}
# invite_times DIR: epoch seconds of every INVITE SIPp in DIR received (-trace_msg).
invite_times() {
  msgs "$1" | awk '
    /^-+ [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] / { ts = $2 " " $3 }
    /message received/ { want = 1; next }
    want && NF { if ($0 ~ /^INVITE /) print ts; want = 0 }' |
    while read -r d t; do date -d "$d $t" +%s.%N; done
}

dns_hosts 198.18.1.11 198.18.1.12
dns_start
SIP_EXTRA_ADDRS="198.18.1.13 198.18.1.14"
SIP_REGIONS='[[region]]
name = "region1"
srv = "_sip._udp.region1.test"
probe = "none"

[[region]]
name = "region2"
srv = "_sip._udp.region2.test"
probe = "none"'
SIP_EXTRA_CONFIG="[dns]
servers = [\"127.0.0.1:$DNS_PORT\"]
timeout_ms = 300
tries = 1
retry_ms = 500"
sip_up

# 1. Learned from SRV.
for _ in $(seq 50); do [ "$(peers_lines | grep -c '_sip._udp')" -eq 4 ] && break; sleep 0.1; done
lines=$(peers_lines)
note "peers: $(tr '\n' ';' <<<"$lines")"
expect_contains "$lines" "198.18.1.11:5060 up _sip._udp.region1.test a.region1.test" "peer learned from region1's SRV"
expect_contains "$lines" "198.18.2.22:5060 up _sip._udp.region2.test b.region2.test" "peer learned from region2's SRV"
text=$(ctl peers)
expect_contains "$text" "_sip._udp.region1.test" "sbcctl peers shows the SRV name"
[ "$(dns_field region1 ttl_s)" = 2 ] || fail "region1 TTL $(dns_field region1 ttl_s), expected 2 (dnsmasq --local-ttl=2)"
wait_metric '^sbc_dns_peers\{srv="_sip._udp.region1.test",region="region1"\} 2$' || fail "/metrics: no sbc_dns_peers 2 for region1"

for a in 198.18.1.11 198.18.1.12 198.18.1.13 198.18.2.21 198.18.2.22; do peer "$a" uas.xml 90; done
# On two workers, more calls, each from its own socket: both workers use the peers the
# control core learned, and calls crossed between them.
c1=4 spread=()
on_two_workers && { c1=$SPREAD_CALLS; spread=("${SPREAD_ARGS[@]}"); }
call c1 $c1 uac.xml "${spread[@]}"
[ "$CALL_OK" -eq $c1 ] || fail "c1: $CALL_OK of $c1 calls completed"
n=$(received "$DIR/peer-198.18.1.11" '^INVITE '); [ "$n" -eq $c1 ] || fail "198.18.1.11 (priority 10 by SRV) got $n INVITEs, expected $c1"
on_two_workers && workers_crossed

# 2. The record changes: calls at 10/s all along; new ones move to .13 after the TTL.
neigh_before=$(need_stat neighbours)
unknown_before=$(need_stat neighbour_unknown)
sipp_uac_start "$DIR/c2" 10 60 40 uac.xml -s 1000 -d 200 -trace_msg
C2_WRAP=$SIPP_WRAP_PID
sleep 1
dns_hosts 198.18.1.13 198.18.1.14
kill -HUP "$DNS_PID"
t_change=$(date +%s.%N)
rc=0; wait "$C2_WRAP" || rc=$?
read -r ok failed < <(sipp_counts "$DIR/c2")
[ "$ok" -eq 60 ] || fail "c2: $ok of 60 calls completed across the DNS change (sipp rc $rc)"
first13=$(invite_times "$DIR/peer-198.18.1.13" | sort -n | head -n 1)
[ -n "$first13" ] || fail "198.18.1.13 got no INVITE after its record replaced .11's"
last11=$(invite_times "$DIR/peer-198.18.1.11" | sort -n | tail -n 1)
switch_s=$(awk -v a="$t_change" -v b="$first13" 'BEGIN { printf "%.2f", b - a }')
note "DNS change -> first INVITE on the new peer: ${switch_s} s (TTL 2 s, refresh at 3/4 of it)"
awk -v s="$switch_s" 'BEGIN { exit !(s >= 0 && s < 3.0) }' ||
  fail "new peer used ${switch_s} s after the change, expected within 3 s (refresh every 1.5 s)"
# Calls up on .11 when it left DNS went on: every INVITE it got was followed by its BYE.
inv11=$(received "$DIR/peer-198.18.1.11" '^INVITE '); bye11=$(received "$DIR/peer-198.18.1.11" '^BYE ')
[ "$inv11" -eq "$bye11" ] || fail "198.18.1.11 got $inv11 INVITEs but $bye11 BYEs: a call up on it when it left DNS was cut"
awk -v a="$last11" -v b="$first13" 'BEGIN { exit !(a < b + 0.3) }' ||
  fail ".11 still got INVITEs after .13 was in use (last .11 at $last11, first .13 at $first13)"
lines=$(peers_lines)
expect_contains "$lines" "198.18.1.13:5060 up _sip._udp.region1.test a.region1.test" "the new address is a peer"
expect_contains "$lines" "198.18.1.14:5060 up _sip._udp.region1.test b.region1.test" "the new address is a peer"
for _ in $(seq 20); do grep -qE '^198.18.1.1[12]:5060' <<<"$lines" || break; sleep 0.1; lines=$(peers_lines); done
grep -qE '^198.18.1.1[12]:5060' <<<"$lines" && fail "198.18.1.11/.12 still peers after their last call ended: $lines"
n=$(received "$DIR/peer-198.18.1.14" '^INVITE '); [ "$n" -eq 0 ] || fail "198.18.1.14 (priority 20) got $n INVITEs, expected 0"
neigh_after=$(need_stat neighbours)
unknown=$(( $(need_stat neighbour_unknown) - unknown_before ))
note "packets dropped for an unresolved next hop across the change: $unknown"
[ "$unknown" -eq 0 ] || fail "$unknown packets dropped for an unresolved next hop: new peers were published before ARP resolved them"
[ "$neigh_after" -ge $((neigh_before + 2)) ] ||
  fail "sbcd knows $neigh_after neighbours, expected $neigh_before + 2 (.13 and .14, which never sent a packet)"

# 3. DNS stopped: keep the last good answer, calls still complete, the stale counter moves.
before13=$(received "$DIR/peer-198.18.1.13" '^INVITE ')
dns_stop
sleep 4  # twice the TTL: several failed refreshes
[ "$(dns_field region1 state)" = stale ] || fail "region1 state $(dns_field region1 state), expected stale with DNS down"
call c4 3
[ "$CALL_OK" -eq 3 ] || fail "c4: $CALL_OK of 3 calls completed with DNS down"
n=$(( $(received "$DIR/peer-198.18.1.13" '^INVITE ') - before13 ))
[ "$n" -eq 3 ] || fail "198.18.1.13 got $n of the 3 calls placed with DNS down"
stale=$(dns_field region1 stale_served)
[ "$stale" -ge 2 ] || fail "region1 stale_served=$stale, expected at least 2 after 4 s of failed refreshes"
wait_metric '^sbc_dns_stale_served_total\{srv="_sip._udp.region1.test",region="region1"\} [1-9]' ||
  fail "/metrics: sbc_dns_stale_served_total for region1 did not move"
grep -q 'keeping the last good answer' "$DIR/sbcd.log" || fail "sbcd did not log that it serves the last good answer"
n=$(grep -c '_sip._udp.region1.test: refresh failed' "$DIR/sbcd.log")
[ "$n" -le 2 ] || fail "the failure streak was logged $n times (once per streak expected)"
echo "ok: peers from SRV; record change picked up in ${switch_s} s; DNS down -> last good answer kept (stale_served=$stale)"
