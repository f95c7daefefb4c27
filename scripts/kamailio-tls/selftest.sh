#!/usr/bin/env bash
# selftest.sh: the TLS test pieces on their own, before sbcd speaks TLS.
#
#   ns uac  198.18.10.2        SIPp UAC (uac.xml, UDP)
#     | veth 198.18.10.0/24
#   ns kc   198.18.10.1        Kamailio client.cfg: UDP in on .10.1:5060, TLS out from .20.1
#           198.18.20.1
#     | veth 198.18.20.0/24    TLS (port 5061)
#   ns kp   198.18.20.2        Kamailio peer.cfg: TLS on .20.2:5061, UDP to the UAS
#           198.18.20.3        SIPp UAS (uas.xml, UDP)
#
# Cases (test PKI from scripts/lib/certs.sh; the peer's certificate names peer.test and
# 198.18.20.2; the client verifies the chain, sends SNI peer.test and expects peer.test):
#   1. TLS, server certificate only                     -> 20 of 20 calls succeed
#   2. mutual TLS required by the peer, client cert      -> 20 of 20 calls succeed
#      (on other ports: peer tls 5071 / udp 5070, the client's TLS socket 5063)
#   3. mutual TLS required, the client presents none     -> 5 of 5 calls fail
#   4. the peer presents a certificate for wrong.test    -> 20 of 20 calls fail
#      (also: openssl s_client -verify_hostname refuses it, accepts the right one)
#   5. the peer presents an expired certificate          -> 5 of 5 calls fail (handshake)
# Everything is bounded (SIPp -m and timeouts, a 55 s watchdog); the namespaces and every
# process started are removed on exit, also on failure. Last line: "selftest: N passed, M failed".
# Needs root, iproute2, openssl, sipp (sip-tester), kamailio + kamailio-tls-modules.
# KTLS_KEEP=DIR keeps the logs there; KTLS_DEBUG=1 starts Kamailio with WITH_DEBUG.

set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "selftest: needs root (network namespaces)" >&2; exit 2; }
for c in sipp openssl ip; do command -v "$c" >/dev/null || { echo "selftest: no $c" >&2; exit 2; }; done

# shellcheck source=../lib/sipp.sh
. "$ROOT/scripts/lib/sipp.sh"
# shellcheck source=../lib/certs.sh
. "$ROOT/scripts/lib/certs.sh"
# shellcheck source=../lib/kamailio_tls.sh
. "$ROOT/scripts/lib/kamailio_tls.sh"

T0=$(date +%s)
DIR=$(topo_dir)
WATCHDOG=
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "${KTLS_KEEP:-}" ]; then rm -rf "$KTLS_KEEP"; cp -r "$DIR" "$KTLS_KEEP" 2>/dev/null || true; fi
  [ -z "$WATCHDOG" ] || kill -TERM "$WATCHDOG" 2>/dev/null || true
  topo_cleanup
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# The watchdog: the whole run stays under a minute even if something hangs (TERM -> cleanup).
( sp=; trap '[ -z "$sp" ] || kill -TERM "$sp" 2>/dev/null; exit 0' TERM
  sleep 55 & sp=$!; wait "$sp" || exit 0
  echo "selftest: over 55 s, stopping" >&2; kill -TERM $$ ) &
WATCHDOG=$!

log() { printf 'selftest: %s\n' "$*" >&2; }

# --- topology --------------------------------------------------------------------------
ktls_topology
NS_UAC=$KTLS_NS_UAC; NS_KC=$KTLS_NS_KC; NS_KP=$KTLS_NS_KP
UAC_ADDR=$KTLS_UAC_ADDR; KC_UDP=$KTLS_KC_UDP; KC_TLS=$KTLS_KC_TLS; KP_ADDR=$KTLS_KP_ADDR; UAS_ADDR=$KTLS_UAS_ADDR

# --- certificates ----------------------------------------------------------------------
PKI=$DIR/pki
make_test_pki "$PKI" "DNS:peer.test,IP:$KP_ADDR"

PASSED=0; FAILED=0
ok() { PASSED=$((PASSED + 1)); log "PASS: $*"; }
bad() { FAILED=$((FAILED + 1)); log "FAIL: $*"; }

# calls NAME CALLS RATE: SIPp UAC -> client Kamailio; sets OK_CALLS and FAILED_CALLS.
calls() {
  local name=$1 n=$2 rate=$3 rc=0
  SIPP_NS_HOSTS=$NS_UAC SIPP_PROXY_ADDR=$KC_UDP SIPP_CALLER=$UAC_ADDR
  sipp_uac_start "$DIR/$name/uac" "$rate" "$n" 20 uac.xml -d 100 -s service || return 1
  sipp_uac_wait || rc=$?
  read -r OK_CALLS FAILED_CALLS < <(sipp_counts "$DIR/$name/uac")
  log "$name: SIPp exit $rc, $OK_CALLS succeeded, $FAILED_CALLS failed"
}

# run_case NAME CALLS RATE EXPECT_OK PEER_OPTS... -- CLIENT_OPTS...
run_case() {
  local name=$1 n=$2 rate=$3 expect=$4; shift 4
  local popts=() copts=()
  while [ "$1" != -- ]; do popts+=("$1"); shift; done; shift
  copts=("$@")
  if [ -n "${KTLS_DEBUG:-}" ]; then popts+=(debug=1); copts+=(debug=1); fi
  log "case $name"
  local kp kc uas
  # A UAS per case: one that outlives its case would retransmit the 200s of that case's
  # failed calls into the next one.
  SIPP_NS_HOSTS=$NS_KP
  sipp_uas_start "$UAS_ADDR" uas.xml "$DIR/$name/uas" 30 || { bad "$name: UAS did not start"; return 0; }
  uas=$SIPP_PID
  ktls_peer_start "$NS_KP" "$DIR/$name/peer" "$KP_ADDR" "sip:$UAS_ADDR:5060" "${popts[@]}" || { bad "$name: peer did not start"; sipp_stop "$uas"; return 0; }
  kp=$KTLS_PID
  ktls_client_start "$NS_KC" "$DIR/$name/client" "$KC_UDP" "$KC_TLS" "$KP_ADDR:${TARGET_PORT:-5061}" "${copts[@]}" ||
    { bad "$name: client did not start"; ktls_stop "$kp"; sipp_stop "$uas"; return 0; }
  kc=$KTLS_PID
  OK_CALLS=0; FAILED_CALLS=0
  calls "$name" "$n" "$rate" || true
  ktls_stop "$kc"; ktls_stop "$kp"; sipp_stop "$uas"
  if [ "$expect" = all ] && [ "$OK_CALLS" -eq "$n" ] && [ "$FAILED_CALLS" -eq 0 ]; then
    ok "$name: $OK_CALLS of $n calls succeeded"
  elif [ "$expect" = none ] && [ "$OK_CALLS" -eq 0 ] && [ "$FAILED_CALLS" -eq "$n" ]; then
    ok "$name: $FAILED_CALLS of $n calls failed, as they must"
  else
    bad "$name: $OK_CALLS succeeded, $FAILED_CALLS failed of $n (expected $expect to succeed)"
    log "$name: client log:"; tail -n 20 "$DIR/$name/client/kamailio.log" >&2 || true
    log "$name: peer log:"; tail -n 20 "$DIR/$name/peer/kamailio.log" >&2 || true
  fi
}

CLIENT_BASE=(ca="$PKI/ca.crt" verify=1 server_name=peer.test expect_name=peer.test)

run_case tls 20 20 all cert="$PKI/server.crt" key="$PKI/server.key" -- \
  "${CLIENT_BASE[@]}" listen_cert="$PKI/client.crt" listen_key="$PKI/client.key"

# (also other ports: the peer on tls 5071 / udp 5070, the client's own TLS socket on 5063)
TARGET_PORT=5071
run_case mtls 20 20 all cert="$PKI/server.crt" key="$PKI/server.key" ca="$PKI/ca.crt" mtls=1 tls_port=5071 udp_port=5070 -- \
  "${CLIENT_BASE[@]}" cert="$PKI/client.crt" key="$PKI/client.key" tls_port=5063
TARGET_PORT=5061

run_case mtls_nocert 5 10 none cert="$PKI/server.crt" key="$PKI/server.key" ca="$PKI/ca.crt" mtls=1 -- \
  "${CLIENT_BASE[@]}" listen_cert="$PKI/client.crt" listen_key="$PKI/client.key"
if grep -q 'peer did not return a certificate' "$DIR/mtls_nocert/peer/kamailio.log"; then
  ok "mtls_nocert: the peer refused the handshake without a client certificate"
  grep -m 1 'peer did not return a certificate' "$DIR/mtls_nocert/peer/kamailio.log" >&2
else
  bad "mtls_nocert: no 'peer did not return a certificate' line in the peer's log"
fi

run_case wrongname 20 20 none cert="$PKI/wrongname.crt" key="$PKI/wrongname.key" -- \
  "${CLIENT_BASE[@]}" listen_cert="$PKI/client.crt" listen_key="$PKI/client.key"
if grep -q 'dropped a' "$DIR/wrongname/client/kamailio.log"; then
  ok "wrongname: the client dropped replies from the wrongly named server ($(grep -c 'dropped a' "$DIR/wrongname/client/kamailio.log") lines)"
  grep -m 1 'dropped a' "$DIR/wrongname/client/kamailio.log" >&2
else
  bad "wrongname: no 'dropped' line in the client's log"
fi

run_case expired 5 10 none cert="$PKI/expired.crt" key="$PKI/expired.key" -- \
  "${CLIENT_BASE[@]}" listen_cert="$PKI/client.crt" listen_key="$PKI/client.key"
if grep -q 'certificate verify failed' "$DIR/expired/client/kamailio.log"; then
  ok "expired: the client's handshake failed on the chain check"
  grep -m 1 'certificate verify failed' "$DIR/expired/client/kamailio.log" >&2
else
  bad "expired: no 'certificate verify failed' line in the client's log"
fi

# openssl s_client as the handshake-level name check (what sbcd's client side must do).
log "case s_client: verify_hostname against a right and a wrong certificate"
ktls_peer_start "$NS_KP" "$DIR/probe-right/peer" "$KP_ADDR" "sip:$UAS_ADDR:5060" cert="$PKI/server.crt" key="$PKI/server.key"
kp=$KTLS_PID
if tls_probe "$NS_KC" "$KP_ADDR:5061" "$PKI/ca.crt" peer.test && tls_probe "$NS_KC" "$KP_ADDR:5061" "$PKI/ca.crt" "$KP_ADDR"; then
  ok "s_client: accepts the right certificate (peer.test, $KP_ADDR)"
else bad "s_client: refused the right certificate"; fi
if tls_probe "$NS_KC" "$KP_ADDR:5061" "$PKI/ca2.crt" peer.test 2>/dev/null; then
  bad "s_client: accepted a chain from an untrusted CA"
else ok "s_client: refuses the certificate against an unrelated CA"; fi
ktls_stop "$kp"
ktls_peer_start "$NS_KP" "$DIR/probe-wrong/peer" "$KP_ADDR" "sip:$UAS_ADDR:5060" cert="$PKI/wrongname.crt" key="$PKI/wrongname.key"
kp=$KTLS_PID
if tls_probe "$NS_KC" "$KP_ADDR:5061" "$PKI/ca.crt" peer.test 2>"$DIR/probe-wrong/s_client.err"; then
  bad "s_client: accepted wrong.test for peer.test"
else
  ok "s_client: refuses wrong.test for peer.test ($(grep -m 1 -iE 'verif|error' "$DIR/probe-wrong/s_client.err" || true))"
fi
ktls_stop "$kp"

log "took $(( $(date +%s) - T0 )) s"
echo "selftest: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
