#!/usr/bin/env bash
# A TLS peer whose certificate names someone else: region1 has two static TLS peers,
# 198.18.1.31:5061 (priority 10, server_name "peer1.test") and 198.18.1.32:5061 (priority
# 20, server_name "peer2.test"), both Kamailio 5.6 with certificates from the CA sbcd
# trusts. The first presents a certificate for wrong.test only; the second one for
# peer2.test. sbcd's handshakes with the first fail on the name check, and that peer is
# down with the reason: `sbcctl peers` WHY names the name mismatch, `sbcctl conns` its
# last error, /metrics counts sbc_stream_handshakes_total{result="failed",
# reason="name_mismatch"}. $CALLS calls from SIPp all complete, every one through the
# second peer over TLS (its callee 198.18.1.12 gets them all, the first one's callee
# 198.18.1.11 none), and no connection to the first peer is ever established.
source "$(dirname "$0")/sip_common.sh"
source "$SIP_ROOT/tests/e2e/tls_common.sh"
P1="region1/$K1:5061"
P2="region1/$K2:5061"
CALLS=20

tls_pki peer2.test   # and wrongname.crt: DNS:wrong.test

SIP_EXTRA_ADDRS="$K1 $K2"
SIP_REGIONS=$(cat <<REG
[[region]]
name = "region1"
peers = [ { address = "$K1:5061", transport = "tls", server_name = "peer1.test", priority = 10 },
          { address = "$K2:5061", transport = "tls", server_name = "peer2.test", priority = 20 } ]
# Not probed: only connections and calls judge these peers, so the first peer's WHY is its
# connection's reason. (Probed, OPTIONS that find no connection can take it down first, as
# "probe timeout", and a later connection failure leaves that WHY as it is.)
probe = "none"

$(tls_hosts_region region2)
REG
)
SIP_EXTRA_CONFIG=$(tls_config)
# Both Kamailio peers listen before sbcd starts (sip_up writes the config after it added
# their addresses): sbcd's very first handshake with the first peer meets its certificate.
start_peers() {
  kamailio_peer 1 wrongname
  kamailio_peer 2 peer2.test
}
tls_peers_before_sbcd start_peers
sip_up

# The second peer comes up over its TLS connection; the first meets the name check.
for _ in $(seq 50); do [ "$(peer_field "$P2" state)" = up ] && [ "$(est_count)" -ge 1 ] && break; sleep 0.1; done
[ "$(peer_field "$P2" state)" = up ] || { ctl peers >&2; ctl conns >&2; fail "peer2 (good certificate) is $(peer_field "$P2" state), expected up"; }
wait_metric '^sbc_stream_handshakes_total\{result="failed",reason="name_mismatch"\} [1-9]' ||
  { curl -s "http://$HTTP/metrics" | grep sbc_stream_handshakes >&2; fail "/metrics: no failed handshake with reason name_mismatch"; }

call tls "$CALLS"
[ "$CALL_OK" -eq "$CALLS" ] && [ "$CALL_FAILED" -eq 0 ] || fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected $CALLS, 0)"
n1=$(received "$DIR/peer-198.18.1.11" '^INVITE ')
n2=$(received "$DIR/peer-198.18.1.12" '^INVITE ')
[ "$n1" -eq 0 ] && [ "$n2" -eq "$CALLS" ] ||
  fail "callee behind peer1 (wrong name) got $n1 INVITEs, behind peer2 $n2; expected 0 and $CALLS"
# The second Via of each INVITE at the callee (under Kamailio's) is ours, over TLS.
v=$(invite_vias "$DIR/peer-198.18.1.12")
[ "$(grep -c '^Via: SIP/2.0/TLS 198.18.0.1:5060;branch=z9hG4bKsT' <<<"$v")" -eq "$CALLS" ] ||
  { echo "$v" >&2; fail "not every INVITE reached the callee through peer2 over TLS (a fallback to UDP?)"; }

# The first peer: down, and the reason names the certificate's name.
st=$(peer_field "$P1" state); why=$(peer_field "$P1" why)
note "peer1: $st, why: $why"
[ "$st" = down ] || fail "peer1 is $st, expected down (its certificate names wrong.test)"
grep -qi 'name mismatch' <<<"$why" || { ctl peers >&2; fail "sbcctl peers WHY of peer1 is '$why', expected the certificate name mismatch"; }
text=$(ctl peers)
grep -E "^$P1 " <<<"$text" | grep -qi 'name mismatch' || { echo "$text" >&2; fail "sbcctl peers (text) does not show peer1's name mismatch"; }
conns=$(ctl conns --json)
CONNS=$conns python3 - "$K1" "$K2" <<'PY' || { echo "$conns" >&2; fail "sbcctl conns --json: expected no connection to peer1 (last error: name mismatch) and one to peer2"; }
import json, os, sys
d = json.loads(os.environ["CONNS"])
k1, k2 = sys.argv[1] + ":5061", sys.argv[2] + ":5061"
assert not [c for c in d["conns"] if c["remote"] == k1 and c["state"] == "established"], d["conns"]
assert len([c for c in d["conns"] if c["remote"] == k2 and c["state"] == "established"]) == 1, d["conns"]
p = {p["name"]: p for p in d["peers"]}
assert p["region1/" + k1]["established"] == 0, p
assert "name mismatch" in p["region1/" + k1]["last_error"], p
assert p["region1/" + k2]["established"] == 1, p
PY
nf=$(curl -sf "http://$HTTP/metrics" | sed -n 's/^sbc_stream_handshakes_total{result="failed",reason="name_mismatch"} //p')
echo "ok: peer1's certificate names wrong.test: down ($why), $nf failed handshakes (name_mismatch); $CALLS of $CALLS calls via peer2 over TLS"
