#!/usr/bin/env bash
# Mutual TLS toward peers: two Kamailio 5.6 TLS peers that require a client certificate
# verified against the test CA (mtls=1). region1's peer 198.18.1.31:5061 is reached without
# one (region1 has no tls table): its handshakes fail and it is down for its connection.
# region2's peer 198.18.1.32:5061 is reached with region2's tls = { certificate = client.crt,
# private_key = client.key }: its connection is established (Kamailio accepted and verified
# the certificate), and 5 calls fail over from region1 to region2 and complete over TLS
# (callee 198.18.1.12 behind it gets all, 198.18.1.11 behind the first none).
source "$(dirname "$0")/sip_common.sh"
source "$SIP_ROOT/scripts/lib/certs.sh"
source "$SIP_ROOT/scripts/lib/kamailio_tls.sh"
K1=198.18.1.31
K2=198.18.1.32
P1="region1/$K1:5061"
P2="region2/$K2:5061"
CALLS=5

PKI=$(topo_dir)
make_test_pki "$PKI" || fail "cannot make the test PKI"   # client.crt: DNS:client.test, clientAuth
make_leaf "$PKI" peer1 "DNS:peer1.test" server ca || fail "peer1 certificate"
make_leaf "$PKI" peer2 "DNS:peer2.test" server ca || fail "peer2 certificate"

SIP_EXTRA_ADDRS="$K1 $K2"
SIP_REGIONS=$(cat <<REG
[[region]]
name = "region1"
peers = [ { address = "$K1:5061", transport = "tls", server_name = "peer1.test" } ]
probe = "none"

[[region]]
name = "region2"
peers = [ { address = "$K2:5061", transport = "tls", server_name = "peer2.test" } ]
probe = "none"
tls = { certificate = "$PKI/client.crt", private_key = "$PKI/client.key" }

# The SIPp hosts as peers of a region no route uses: sbcd takes their OPTIONS (sip_warm).
[[region]]
name = "hosts"
peers = [ { address = "198.18.1.11:5060" }, { address = "198.18.1.12:5060" },
          { address = "198.18.2.21:5060" }, { address = "198.18.2.22:5060" } ]
probe = "none"
REG
)
SIP_EXTRA_CONFIG="[tls]
ca_file = \"$PKI/ca.crt\"

[streams]
reconnect_min_ms = 100
reconnect_max_ms = 500"
start_peers() {
  peer 198.18.1.11 uas.xml
  peer 198.18.1.12 uas.xml
  ktls_peer_start "$SIPP_NS_HOSTS" "$DIR/kamailio1" "$K1" "sip:198.18.1.11:5060" cert="$PKI/peer1.crt" key="$PKI/peer1.key" ca="$PKI/ca.crt" mtls=1 ||
    fail "Kamailio peer1 did not start"
  ktls_peer_start "$SIPP_NS_HOSTS" "$DIR/kamailio2" "$K2" "sip:198.18.1.12:5060" cert="$PKI/peer2.crt" key="$PKI/peer2.key" ca="$PKI/ca.crt" mtls=1 ||
    fail "Kamailio peer2 did not start"
}
eval "orig_$(declare -f sip_write_config)"
sip_write_config() { orig_sip_write_config "$@"; start_peers; }
sip_up

for _ in $(seq 50); do
  [ "$(peer_field "$P2" state)" = up ] && [ "$(peer_field "$P1" state)" = down ] &&
    ctl conns --json | grep -q "\"remote\": *\"$K2:5061\"" && break
  sleep 0.1
done
conns=$(ctl conns --json)
CONNS=$conns python3 - "$K1" "$K2" <<'PY' || { echo "$conns" >&2; ctl peers >&2; fail "expected region2's peer connected with our client certificate and none to region1's"; }
import json, os, sys
d = json.loads(os.environ["CONNS"])
k1, k2 = sys.argv[1] + ":5061", sys.argv[2] + ":5061"
assert not [c for c in d["conns"] if c["remote"] == k1 and c["state"] == "established"], d["conns"]
c = [c for c in d["conns"] if c["remote"] == k2 and c["state"] == "established"]
assert len(c) == 1 and "peer2.test" in c[0]["peer_subject"], d["conns"]
p = {p["name"]: p for p in d["peers"]}
assert p["region1/" + k1]["established"] == 0 and p["region1/" + k1]["last_error"], p
PY
why=$(peer_field "$P1" why)
note "region1's peer (no client certificate): $(peer_field "$P1" state), why: $why"
[ "$(peer_field "$P1" state)" = down ] && grep -q '^connection' <<<"$why" ||
  fail "region1's peer is $(peer_field "$P1" state) ($why), expected down for its connection"
[ "$(peer_field "$P2" state)" = up ] || fail "region2's peer is $(peer_field "$P2" state), expected up"

call mtls "$CALLS"
[ "$CALL_OK" -eq "$CALLS" ] && [ "$CALL_FAILED" -eq 0 ] || fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected $CALLS, 0)"
n1=$(received "$DIR/peer-198.18.1.11" '^INVITE '); n2=$(received "$DIR/peer-198.18.1.12" '^INVITE ')
[ "$n1" -eq 0 ] && [ "$n2" -eq "$CALLS" ] || fail "callee behind region1's peer got $n1 INVITEs, behind region2's $n2; expected 0 and $CALLS"
v=$(msgs "$DIR/peer-198.18.1.12" | awk '/message received/{m=1;next} m&&NF{inv=($0 ~ /^INVITE /);m=0;next} inv&&/^Via:/{print;n++} inv&&/^Via:/&&n%2==0{inv=0}')
[ "$(grep -c '^Via: SIP/2.0/TLS 198.18.0.1:5060;branch=z9hG4bKsT' <<<"$v")" -eq "$CALLS" ] ||
  { echo "$v" >&2; fail "not every INVITE reached the callee through region2's peer over TLS"; }
echo "ok: mutual TLS: region2's peer took our client certificate ($CALLS calls over it), region1's without one is down ($why)"
