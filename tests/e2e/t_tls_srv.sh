#!/usr/bin/env bash
# TLS peers from DNS SRV: region1 is srv = "_sip._tls.region1.test", served by dnsmasq on
# 127.0.0.1 with two targets, peer1.region1.test (198.18.1.31, priority 10) and
# peer2.region1.test (198.18.1.32, priority 20), both on port 5061. Each target is a
# Kamailio 5.6 TLS peer presenting a certificate for its own target name only (not for
# region1.test, not for its address), in front of a SIPp callee (peer1 -> 198.18.1.11,
# peer2 -> 198.18.1.12). sbcd learns both peers from SRV with the TLS transport, opens one
# persistent TLS connection to each (the target name checked and sent as SNI), and calls
# complete through the priority-10 peer: the callee behind peer1 gets every INVITE with our
# TLS Via, the one behind peer2 none. sbcctl peers shows both peers up with their SRV source;
# sbcctl conns shows both established connections with each certificate's subject.
source "$(dirname "$0")/sip_common.sh"
source "$SIP_ROOT/tests/e2e/tls_common.sh"
CALLS=6

tls_pki peer1.region1.test peer2.region1.test

DNS_PORT=$(topo_free_port)
DNS_DIR=$(topo_dir)
dnsmasq --no-daemon --conf-file=/dev/null --no-resolv --no-hosts --port="$DNS_PORT" \
  --listen-address=127.0.0.1 --bind-interfaces --local-ttl=30 --log-queries --log-facility="$DNS_DIR/dnsmasq.log" \
  --srv-host=_sip._tls.region1.test,peer1.region1.test,5061,10,100 \
  --srv-host=_sip._tls.region1.test,peer2.region1.test,5061,20,100 \
  --host-record=peer1.region1.test,$K1 \
  --host-record=peer2.region1.test,$K2 2>>"$DNS_DIR/dnsmasq.err" &
topo_track $!
for _ in $(seq 50); do ss -Hunl "src 127.0.0.1:$DNS_PORT" | grep -q . && break; sleep 0.1; done
ss -Hunl "src 127.0.0.1:$DNS_PORT" | grep -q . || { cat "$DNS_DIR/dnsmasq.err" >&2; fail "dnsmasq did not listen on 127.0.0.1:$DNS_PORT"; }

SIP_EXTRA_ADDRS="$K1 $K2"
SIP_REGIONS='[[region]]
name = "region1"
srv = "_sip._tls.region1.test"
# Not probed: the peers appear before their Kamailio does, so their first connections are
# refused and take them down; each comes back up as soon as its connection does.
probe = "none"

'"
$(tls_hosts_region region2)"
# The Kamailio peers start after sbcd: its first connections meet closed ports.
SIP_EXTRA_CONFIG="$(tls_config)

[dns]
servers = [\"127.0.0.1:$DNS_PORT\"]
timeout_ms = 300
tries = 1
retry_ms = 500"
sip_up

# sbcd learns both targets from SRV.
peers_lines() {
  ctl peers --json | python3 -c '
import json, sys
for p in json.load(sys.stdin)["sip"]["peers"]:
    print(p["name"], p["address"], p["state"], p.get("source", ""))'
}
for _ in $(seq 50); do [ "$(peers_lines | grep -c '_sip._tls.region1.test')" -eq 2 ] && break; sleep 0.1; done
lines=$(peers_lines)
note "peers: $(tr '\n' ';' <<<"$lines")"
expect_contains "$lines" "$K1:5061 " "peer1 learned from SRV with the SRV port"
expect_contains "$lines" "_sip._tls.region1.test peer1.region1.test" "peer1's SRV source"
expect_contains "$lines" "_sip._tls.region1.test peer2.region1.test" "peer2's SRV source"

kamailio_peer 1 peer1.region1.test
kamailio_peer 2 peer2.region1.test
for _ in $(seq 100); do [ "$(est_count)" -ge 2 ] && break; sleep 0.1; done
conns=$(ctl conns --json)
[ "$(est_count)" -eq 2 ] || { echo "$conns" >&2; ctl peers >&2; fail "sbcd has $(est_count) established TLS connections, expected 2 (one per SRV target)"; }
CONNS=$conns python3 - "$K1" "$K2" <<'PY' || { echo "$conns" >&2; fail "sbcctl conns --json does not show both peers' TLS connections as expected"; }
import json, os, sys
d = json.loads(os.environ["CONNS"])
for addr, name in ((sys.argv[1], "peer1.region1.test"), (sys.argv[2], "peer2.region1.test")):
    c = [c for c in d["conns"] if c["remote"] == addr + ":5061"]
    assert len(c) == 1, "%s: %d connections" % (addr, len(c))
    c = c[0]
    assert c["direction"] == "out" and c["transport"] == "tls" and c["state"] == "established", c
    assert c["tls_version"] == "TLSv1.3", c
    assert name in c["peer_subject"], c
    assert c["owner"] == "peer region1/%s:5061" % addr, c
ests = {p["name"]: p["established"] for p in d["peers"]}
for addr in sys.argv[1:]:
    assert ests.get("region1/%s:5061" % addr) == 1, ests
PY
for _ in $(seq 50); do
  [ "$(peer_field "region1/$K1:5061" state)" = up ] && [ "$(peer_field "region1/$K2:5061" state)" = up ] && break
  sleep 0.1
done
[ "$(peer_field "region1/$K1:5061" state)" = up ] && [ "$(peer_field "region1/$K2:5061" state)" = up ] ||
  { ctl peers >&2; fail "the SRV peers did not come up within 5 s of their TLS connections"; }
text=$(ctl conns)
expect_contains "$text" "peer1.region1.test" "sbcctl conns shows peer1's certificate subject"
expect_contains "$text" "peer2.region1.test" "sbcctl conns shows peer2's certificate subject"

call tls "$CALLS"
[ "$CALL_OK" -eq "$CALLS" ] && [ "$CALL_FAILED" -eq 0 ] ||
  { tail -n 20 "$DIR/kamailio1/kamailio.log" >&2; fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected $CALLS, 0)"; }
n1=$(received "$DIR/peer-198.18.1.11" '^INVITE ')
n2=$(received "$DIR/peer-198.18.1.12" '^INVITE ')
[ "$n1" -eq "$CALLS" ] && [ "$n2" -eq 0 ] ||
  fail "callee behind peer1 (priority 10) got $n1 INVITEs, behind peer2 (priority 20) $n2; expected $CALLS and 0"
# The second Via of each INVITE at the callee (under Kamailio's) is ours, over TLS.
v=$(invite_vias "$DIR/peer-198.18.1.11")
[ "$(grep -c '^Via: SIP/2.0/TLS 198.18.0.1:5060;branch=z9hG4bKsT' <<<"$v")" -eq "$CALLS" ] ||
  { echo "$v" >&2; fail "not every INVITE reached the callee with our Via over TLS (a fallback to UDP?)"; }
[ "$(received "$DIR/peer-198.18.1.11" '^BYE ')" -eq "$CALLS" ] || fail "callee got $(received "$DIR/peer-198.18.1.11" '^BYE ') BYEs through the TLS leg, expected $CALLS"

# Both peers up, both still on their one persistent connection.
[ "$(peer_field "region1/$K1:5061" state)" = up ] || fail "peer1 is $(peer_field "region1/$K1:5061" state), expected up"
[ "$(peer_field "region1/$K2:5061" state)" = up ] || fail "peer2 is $(peer_field "region1/$K2:5061" state), expected up"
[ "$(est_count)" -eq 2 ] || fail "$(est_count) established connections after the calls, expected the 2 persistent ones"
text=$(ctl peers)
expect_contains "$text" "_sip._tls.region1.test" "sbcctl peers shows the SRV name"
echo "ok: peers from _sip._tls SRV, one TLS connection to each target (name checked), $CALLS calls via the priority-10 peer"
