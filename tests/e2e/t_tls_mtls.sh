#!/usr/bin/env bash
# Mutual TLS toward peers: two Kamailio 5.6 TLS peers that require a client certificate
# verified against the test CA (mtls=1). region1's peer 198.18.1.31:5061 is reached without
# one (region1 has no tls table): its handshakes fail and it is down for its connection.
# region2's peer 198.18.1.32:5061 is reached with region2's tls = { certificate = client.crt,
# private_key = client.key }: its connection is established (Kamailio accepted and verified
# the certificate), and 5 calls fail over from region1 to region2 and complete over TLS
# (callee 198.18.1.12 behind it gets all, 198.18.1.11 behind the first none).
source "$(dirname "$0")/sip_common.sh"
source "$SIP_ROOT/tests/e2e/tls_common.sh"
P1="region1/$K1:5061"
P2="region2/$K2:5061"
CALLS=5

tls_pki peer1.test peer2.test   # and client.crt: DNS:client.test, clientAuth

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

# The SIPp hosts as peers of a region no route uses.
$(tls_hosts_region hosts)
REG
)
SIP_EXTRA_CONFIG=$(tls_config)
start_peers() {
  kamailio_peer 1 peer1.test ca="$PKI/ca.crt" mtls=1
  kamailio_peer 2 peer2.test ca="$PKI/ca.crt" mtls=1
}
tls_peers_before_sbcd start_peers
sip_up

# What sbcd's connection table must show: region2's peer connected (its handshake done, our
# client certificate taken), none to region1's, whose error is kept. Waited for as a whole:
# the connection to region2 is "connecting" until the server has spoken after the handshake.
mtls_conns_ok() {
  CONNS=$1 python3 - "$K1" "$K2" <<'PY'
import json, os, sys
d = json.loads(os.environ["CONNS"])
k1, k2 = sys.argv[1] + ":5061", sys.argv[2] + ":5061"
assert not [c for c in d["conns"] if c["remote"] == k1 and c["state"] == "established"], d["conns"]
c = [c for c in d["conns"] if c["remote"] == k2 and c["state"] == "established"]
assert len(c) == 1 and "peer2.test" in c[0]["peer_subject"], d["conns"]
p = {p["name"]: p for p in d["peers"]}
assert p["region1/" + k1]["established"] == 0 and p["region1/" + k1]["last_error"], p
PY
}
for _ in $(seq 100); do
  [ "$(peer_field "$P2" state)" = up ] && [ "$(peer_field "$P1" state)" = down ] &&
    mtls_conns_ok "$(ctl conns --json)" 2>/dev/null && break
  sleep 0.1
done
conns=$(ctl conns --json)
mtls_conns_ok "$conns" || { echo "$conns" >&2; ctl peers >&2; fail "expected region2's peer connected with our client certificate and none to region1's"; }
why=$(peer_field "$P1" why)
note "region1's peer (no client certificate): $(peer_field "$P1" state), why: $why"
[ "$(peer_field "$P1" state)" = down ] && grep -q '^connection' <<<"$why" ||
  fail "region1's peer is $(peer_field "$P1" state) ($why), expected down for its connection"
[ "$(peer_field "$P2" state)" = up ] || fail "region2's peer is $(peer_field "$P2" state), expected up"

call mtls "$CALLS"
[ "$CALL_OK" -eq "$CALLS" ] && [ "$CALL_FAILED" -eq 0 ] || fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected $CALLS, 0)"
n1=$(received "$DIR/peer-198.18.1.11" '^INVITE '); n2=$(received "$DIR/peer-198.18.1.12" '^INVITE ')
[ "$n1" -eq 0 ] && [ "$n2" -eq "$CALLS" ] || fail "callee behind region1's peer got $n1 INVITEs, behind region2's $n2; expected 0 and $CALLS"
v=$(invite_vias "$DIR/peer-198.18.1.12")
[ "$(grep -c '^Via: SIP/2.0/TLS 198.18.0.1:5060;branch=z9hG4bKsT' <<<"$v")" -eq "$CALLS" ] ||
  { echo "$v" >&2; fail "not every INVITE reached the callee through region2's peer over TLS"; }
echo "ok: mutual TLS: region2's peer took our client certificate ($CALLS calls over it), region1's without one is down ($why)"
