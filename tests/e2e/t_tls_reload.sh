#!/usr/bin/env bash
# Certificates and trust stores replaced by `sbcctl reload` without dropping a connection:
# region1's only peer is a Kamailio TLS peer (peer1.test) that sbcd trusts through [tls]
# ca_file = the test CA. Then:
#  1. a reload whose ca_file is not a CA bundle is refused with file, line, key and OpenSSL's
#     reason, and the connection is untouched;
#  2. a reload to an unrelated CA (ca2) is taken: the established connection stays (same id,
#     not re-opened) and carries 5 more calls (its context is the one it was made with);
#  3. the peer restarts: the new connection is made with the new trust store, fails as
#     "certificate not trusted", and `sbcctl peers` says so.
source "$(dirname "$0")/sip_common.sh"
source "$SIP_ROOT/tests/e2e/tls_common.sh"
tls_pki peer1.test
SIP_EXTRA_ADDRS="$K1"
SIP_REGIONS=$(cat <<REG
[[region]]
name = "region1"
peers = [ { address = "$K1:5061", transport = "tls", server_name = "peer1.test" } ]
probe = "none"

$(tls_hosts_region region2)
REG
)
SIP_EXTRA_CONFIG=$(tls_config)
tls_peers_before_sbcd "kamailio_peer 1 peer1.test"
sip_up
P1="region1/$K1:5061"

conn_id() { ctl conns --json | python3 -c '
import json, sys
c = [c for c in json.load(sys.stdin)["conns"] if c["state"] == "established" and c["direction"] == "out"]
print(c[0]["id"] if len(c) == 1 else "none")'; }
for _ in $(seq 50); do [ "$(conn_id)" != none ] && break; sleep 0.1; done
id=$(conn_id)
[ "$id" != none ] || { ctl conns >&2; fail "no established TLS connection to the peer"; }

# 1. A CA file that is no CA bundle: refused, nothing changes.
cp "$CFG" "$DIR/good.toml"
echo "not a certificate" >"$DIR/junk.pem"
sed -i "s|^ca_file = .*|ca_file = \"$DIR/junk.pem\"|" "$CFG"
set +e
out=$(ctl reload 2>&1); rc=$?
set -e
[ "$rc" -ne 0 ] || fail "a reload with a junk CA file was accepted: $out"
expect_contains "$out" "$CFG:" "the refusal names the file"
expect_contains "$out" "tls.ca_file" "the refusal names the key"
expect_contains "$out" "junk.pem" "the refusal names the CA file"
[ "$(conn_id)" = "$id" ] || fail "the refused reload changed the connection ($id -> $(conn_id))"

# 2. An unrelated CA: taken; the connection made under the old trust store stays and works.
sed -i "s|^ca_file = .*|ca_file = \"$PKI/ca2.crt\"|" "$CFG"
out=$(ctl reload 2>&1) || fail "the reload to another CA was refused: $out"
sleep 0.5
[ "$(conn_id)" = "$id" ] || { ctl conns >&2; fail "the reload dropped the established connection ($id -> $(conn_id))"; }
call after 5
[ "$CALL_OK" -eq 5 ] && [ "$CALL_FAILED" -eq 0 ] || fail "after the reload: $CALL_OK completed, $CALL_FAILED failed (expected 5, 0)"
[ "$(invite_vias "$DIR/peer-198.18.1.11" | grep -c '^Via: SIP/2.0/TLS 198.18.0.1')" -eq 5 ] ||
  fail "the calls after the reload did not all go over the TLS connection"
[ "$(conn_id)" = "$id" ] || fail "the calls did not stay on the connection made before the reload"

# 3. The peer restarts: its new connection is checked against ca2 and refused.
ktls_stop "$KP1"
ktls_peer_start "$SIPP_NS_HOSTS" "$DIR/kamailio1b" "$K1" "sip:198.18.1.11:5060" cert="$PKI/peer1.test.crt" \
  key="$PKI/peer1.test.key" || fail "Kamailio peer did not restart"
why=""
for _ in $(seq 100); do
  why=$(peer_field "$P1" why)
  grep -q "not trusted" <<<"$why" && break
  sleep 0.1
done
grep -q "not trusted" <<<"$why" || { ctl peers >&2; ctl conns >&2; fail "after the peer restarted, WHY is '$why'; expected its new connection refused as not trusted"; }
[ "$(conn_id)" = none ] || fail "a connection to the peer is established under a CA that does not trust it"
echo "PASS: a bad CA file refused at reload; a new CA taken without dropping the established connection; new connections checked against it"
