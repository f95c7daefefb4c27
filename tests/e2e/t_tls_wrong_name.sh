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
source "$SIP_ROOT/scripts/lib/certs.sh"
source "$SIP_ROOT/scripts/lib/kamailio_tls.sh"
K1=198.18.1.31
K2=198.18.1.32
P1="region1/$K1:5061"
P2="region1/$K2:5061"
CALLS=20

PKI=$(topo_dir)
make_test_pki "$PKI" || fail "cannot make the test PKI"   # wrongname.crt: DNS:wrong.test
make_leaf "$PKI" peer2 "DNS:peer2.test" server ca || fail "peer2 certificate"

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

# The SIPp hosts as UDP peers of the second region: sbcd takes their OPTIONS (sip_warm), and a
# call that fell back to them would reach a callee without our TLS Via (checked below).
[[region]]
name = "region2"
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
# Both Kamailio peers listen before sbcd starts (sip_up writes the config after it added
# their addresses): sbcd's very first handshake with the first peer meets its certificate.
start_peers() {
  peer 198.18.1.11 uas.xml
  peer 198.18.1.12 uas.xml
  ktls_peer_start "$SIPP_NS_HOSTS" "$DIR/kamailio1" "$K1" "sip:198.18.1.11:5060" cert="$PKI/wrongname.crt" key="$PKI/wrongname.key" ||
    fail "Kamailio peer1 did not start"
  ktls_peer_start "$SIPP_NS_HOSTS" "$DIR/kamailio2" "$K2" "sip:198.18.1.12:5060" cert="$PKI/peer2.crt" key="$PKI/peer2.key" ||
    fail "Kamailio peer2 did not start"
}
eval "orig_$(declare -f sip_write_config)"
sip_write_config() { orig_sip_write_config "$@"; start_peers; }
sip_up

# The second peer comes up over its TLS connection; the first meets the name check.
est_count() { ctl conns --json | grep -Eo '"state": ?"established"' | wc -l; }
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
v=$(msgs "$DIR/peer-198.18.1.12" | awk '/message received/{m=1;next} m&&NF{inv=($0 ~ /^INVITE /);m=0;next} inv&&/^Via:/{print;n++} inv&&/^Via:/&&n%2==0{inv=0}')
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
