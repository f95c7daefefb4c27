#!/usr/bin/env bash
# A DNS SRV region whose DNS server is not up when sbcd starts: sbcd starts anyway (it does
# not refuse srv), logs that region1 has no peers until DNS answers, and its calls fail over to
# region2 (static peers). Once the DNS server comes up, region1's peer is learned within the
# retry interval, sbcd resolves its MAC itself, and new calls go to it.
source "$(dirname "$0")/sip_common.sh"

DNS_PORT=$(topo_free_port)
DNS_DIR=$(topo_dir)
SIP_REGIONS='[[region]]
name = "region1"
srv = "_sip._udp.region1.test"
probe = "none"

[[region]]
name = "region2"
peers = [ { address = "198.18.2.21:5060", priority = 10 },
          { address = "198.18.2.22:5060", priority = 20 } ]
probe = "none"'
SIP_EXTRA_CONFIG="[dns]
servers = [\"127.0.0.1:$DNS_PORT\"]
timeout_ms = 200
tries = 1
retry_ms = 500"
# sip_up, except that only the caller and region2 are warmed: region1's addresses are no
# peers before DNS answers, so sbcd does not answer them (and resolves .11 itself later).
sipp_topology sbcd
DIR=$(topo_dir); SOCK=$DIR/sbcd.sock; HTTP=127.0.0.1:$(topo_free_port); CFG=$DIR/sbc.toml
sip_write_config "$CFG"
sbcd_start "$BUILD" "$CFG" "$DIR/sbcd.log" || fail "sbcd did not start with an srv region and no DNS server"
sip_warm "$SIPP_CALLER" "${SIPP_REGION2[@]}" || fail "sbcd did not answer OPTIONS from the caller and region2"
dns_state() {
  ctl peers --json | python3 -c '
import json, sys
for n in json.load(sys.stdin).get("dns", {}).get("names", []):
    if n["region"] == "region1": print(n["state"], n["peers"], n["failures"])'
}

grep -q 'region region1: peers from _sip._udp.region1.test; none until it answers' "$DIR/sbcd.log" ||
  fail "sbcd did not log that region1 has no peers until DNS answers"
for a in 198.18.1.11 198.18.2.21; do peer "$a" uas.xml 60; done
sleep 1  # a few failed queries
read -r state npeers failures < <(dns_state)
[ "$state" = failed ] && [ "$npeers" = 0 ] && [ "$failures" -ge 1 ] ||
  fail "region1 with DNS down: state=$state peers=$npeers failures=$failures, expected failed 0 >=1"
call c1 3
[ "$CALL_OK" -eq 3 ] || fail "c1: $CALL_OK of 3 calls completed with region1 empty"
n=$(received "$DIR/peer-198.18.2.21" '^INVITE '); [ "$n" -eq 3 ] || fail "region2 got $n of the 3 calls while region1 had no peers"
r=$(sip_stat failover_region); [ "$r" = missing ] || [ "$r" -eq 0 ] || note "failover_region=$r"

unknown_before=$(need_stat neighbour_unknown)
dnsmasq --no-daemon --conf-file=/dev/null --no-resolv --no-hosts --port="$DNS_PORT" --listen-address=127.0.0.1 \
  --bind-interfaces --local-ttl=30 --srv-host=_sip._udp.region1.test,a.region1.test,5060,10,50 \
  --host-record=a.region1.test,198.18.1.11 2>"$DNS_DIR/dnsmasq.err" &
topo_track $!
t0=$(date +%s.%N)
for _ in $(seq 50); do read -r state npeers failures < <(dns_state); [ "$state" = ok ] && break; sleep 0.1; done
[ "$state" = ok ] && [ "$npeers" = 1 ] || fail "region1 after DNS came up: state=$state peers=$npeers, expected ok 1"
learn_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
note "DNS up -> region1's peer learned in ${learn_s} s (retry_ms = 500)"
[ "$(grep -c 'no answer yet' "$DIR/sbcd.log")" -eq 1 ] || fail "the failure streak before the first answer was not logged exactly once"
call c2 3
[ "$CALL_OK" -eq 3 ] || fail "c2: $CALL_OK of 3 calls completed"
n=$(received "$DIR/peer-198.18.1.11" '^INVITE '); [ "$n" -eq 3 ] || fail "region1's learned peer got $n of the 3 new calls"
unknown=$(( $(need_stat neighbour_unknown) - unknown_before ))
[ "$unknown" -eq 0 ] || fail "$unknown packets dropped for an unresolved next hop: .11 got calls before sbcd resolved its MAC"
echo "ok: sbcd started without DNS, region1's calls went to region2, its peer was learned ${learn_s} s after DNS came up"
