#!/usr/bin/env bash
# A TLS peer killed under load: region1 has two static TLS peers, Kamailio 5.6 at
# 198.18.1.31:5061 (priority 10, callee 198.18.1.11 behind it) and 198.18.1.32:5061
# (priority 20, callee 198.18.1.12), not probed (only their connections and calls judge
# them: OPTIONS timeouts on this loaded 2-core machine would add noise). SIPp
# places $CALLS calls at 10 calls/s, each held $HOLD_MS ms; after ~2 s the first Kamailio
# is killed (SIGKILL to its main process and every worker, by PID: a crash). Judged on the
# calls, not on the dialogs that were up on the dead peer (their BYE has no path left):
#  - every INVITE the caller sent got a 200 and none got an error (INVITEs in flight on
#    the lost connection were retried on the second peer at once), except at most 2 already
#    ringing through peer1 (sbcd does not retry after a 180); SIPp counts no failed call
#    other than those and the lost BYEs;
#  - no INVITE reached the first peer's callee after the kill; the second peer's callee got
#    the calls from then on (and 5 calls placed afterwards, all of them);
#  - `sbcctl peers` shows the first peer down with a connection reason; sbcctl conns shows
#    no connection to it and the one to the second peer.
source "$(dirname "$0")/sip_common.sh"
source "$SIP_ROOT/scripts/lib/certs.sh"
source "$SIP_ROOT/scripts/lib/kamailio_tls.sh"
K1=198.18.1.31
K2=198.18.1.32
P1="region1/$K1:5061"
P2="region1/$K2:5061"
CALLS=50
HOLD_MS=1000

PKI=$(topo_dir)
make_test_pki "$PKI" || fail "cannot make the test PKI"
make_leaf "$PKI" peer1 "DNS:peer1.test" server ca || fail "peer1 certificate"
make_leaf "$PKI" peer2 "DNS:peer2.test" server ca || fail "peer2 certificate"

SIP_EXTRA_ADDRS="$K1 $K2"
SIP_REGIONS=$(cat <<REG
[[region]]
name = "region1"
peers = [ { address = "$K1:5061", transport = "tls", server_name = "peer1.test", priority = 10 },
          { address = "$K2:5061", transport = "tls", server_name = "peer2.test", priority = 20 } ]
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
# their addresses): both are up from the first connection on.
start_peers() {
  peer 198.18.1.11 uas.xml
  peer 198.18.1.12 uas.xml
  ktls_peer_start "$SIPP_NS_HOSTS" "$DIR/kamailio1" "$K1" "sip:198.18.1.11:5060" cert="$PKI/peer1.crt" key="$PKI/peer1.key" ||
    fail "Kamailio peer1 did not start"
  KP1=$KTLS_PID
  ktls_peer_start "$SIPP_NS_HOSTS" "$DIR/kamailio2" "$K2" "sip:198.18.1.12:5060" cert="$PKI/peer2.crt" key="$PKI/peer2.key" ||
    fail "Kamailio peer2 did not start"
}
eval "orig_$(declare -f sip_write_config)"
sip_write_config() { orig_sip_write_config "$@"; start_peers; }
sip_up

est_count() { ctl conns --json | grep -Eo '"state": ?"established"' | wc -l; }
for _ in $(seq 50); do
  [ "$(est_count)" -eq 2 ] && [ "$(peer_field "$P1" state)" = up ] && [ "$(peer_field "$P2" state)" = up ] && break
  sleep 0.1
done
[ "$(est_count)" -eq 2 ] && [ "$(peer_field "$P1" state)" = up ] && [ "$(peer_field "$P2" state)" = up ] ||
  { ctl peers >&2; ctl conns >&2; fail "expected both TLS peers up, each with its connection"; }

# invite_times DIR: epoch seconds of every INVITE SIPp in DIR received (-trace_msg).
invite_times() {
  msgs "$1" | awk '
    /^-+ [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] / { ts = $2 " " $3 }
    /message received/ { want = 1; next }
    want && NF { if ($0 ~ /^INVITE /) print ts; want = 0 }' |
    while read -r d t; do date -d "$d $t" +%s.%N; done
}

# -max_non_invite_retrans 2: the BYE of a call that was up on the killed peer is given up
# after 3.5 s, not 11.5 s.
sipp_uac_start "$DIR/load" 10 "$CALLS" 40 uac.xml -s 1000 -d "$HOLD_MS" -trace_msg -max_non_invite_retrans 2
LOAD_WRAP=$SIPP_WRAP_PID
sleep 2
before=$(received "$DIR/peer-198.18.1.11" '^INVITE ')
[ "$before" -gt 0 ] || fail "no call reached peer1 (priority 10) in the 2 s before the kill"
# A crash: the main process and every worker it forked, at once.
kpids=("$KP1" $(pgrep -P "$KP1" || true))
kill -KILL "${kpids[@]}" 2>/dev/null || true
t_kill=$(date +%s.%N)
note "killed Kamailio peer1 (${#kpids[@]} processes) after $before calls reached it"
rc=0; wait "$LOAD_WRAP" || rc=$?
[ "$rc" -le 1 ] || { tail -n 20 "$DIR/load/sipp.out" >&2; fail "caller SIPp exited $rc (time bound or error)"; }
read -r ok failed < <(sipp_counts "$DIR/load")
lost_bye=$(sipp_bye_lost "$DIR/load")

# Every INVITE answered 200, none with an error: from the caller's own message trace.
verdict=$(msgs "$DIR/load" | awk '
  /message received/ { want = 1; inmsg = 0; next }
  /message sent/ { want = 0; inmsg = 0; next }
  want && NF { want = 0; inmsg = 1; status = $0; next }
  inmsg && /^Call-I[Dd]:/ { cid = $2 }
  inmsg && /^CSeq: *[0-9]+ INVITE/ {
    if (status ~ /^SIP\/2.0 200/) ok[cid] = 1
    else if (status ~ /^SIP\/2.0 18/) rang[cid] = 1
    else if (status ~ /^SIP\/2.0 [3-6]/) { bad++; print "error: " status > "/dev/stderr" }
    inmsg = 0 }
  END { n = 0; for (c in ok) n++; r = 0; for (c in rang) if (!(c in ok)) r++; print n, bad + 0, r }')
read -r answered errors ringing <<<"$verdict"
note "caller: $ok completed, $failed failed, $lost_bye BYEs lost with peer1; INVITEs answered 200: $answered, with an error: $errors, left ringing: $ringing"
# sbcd retries an INVITE only until a provisional other than 100 was relayed (setup_state
# ringing): a call whose 180 came through peer1 just before it died is not moved (and, a gap
# of sbcd, gets no final answer until the caller cancels). Every other call must complete.
[ "$errors" -eq 0 ] && [ $((answered + ringing)) -eq "$CALLS" ] && [ "$ringing" -le 2 ] ||
  fail "$answered of $CALLS INVITEs got a 200, $errors an error, $ringing were left ringing: a call was lost when peer1 died"
# A call up on peer1 when it died may end without its BYE answered (lost_bye, or a BYE that
# SIPp gave up on): those are the only failures allowed.
[ "$failed" -le $((before + ringing)) ] || fail "SIPp counts $failed failed calls, more than the $before that were ever on peer1"
[ $((ok + failed)) -eq "$CALLS" ] || fail "SIPp: $ok completed + $failed failed != $CALLS"

last11=$(invite_times "$DIR/peer-198.18.1.11" | sort -n | tail -n 1)
awk -v a="$last11" -v k="$t_kill" 'BEGIN { exit !(a < k + 0.05) }' ||
  fail "peer1's callee got an INVITE at $last11, after the kill at $t_kill"
after12=$(invite_times "$DIR/peer-198.18.1.12" | awk -v k="$t_kill" '$1 > k' | wc -l)
[ "$after12" -ge 20 ] || fail "peer2's callee got $after12 INVITEs after the kill, expected the ~30 calls placed from then on"
# The second Via of each INVITE at peer2's callee (under Kamailio's) is ours, over TLS.
v=$(msgs "$DIR/peer-198.18.1.12" | awk '/message received/{m=1;next} m&&NF{inv=($0 ~ /^INVITE /);m=0;next} inv&&/^Via:/{print;n++} inv&&/^Via:/&&n%2==0{inv=0}')
n12=$(received "$DIR/peer-198.18.1.12" '^INVITE ')
[ "$(grep -c '^Via: SIP/2.0/TLS 198.18.0.1:5060;branch=z9hG4bKsT' <<<"$v")" -eq "$n12" ] ||
  { echo "$v" >&2; fail "not every INVITE reached peer2's callee over TLS (a fallback to UDP?)"; }

# The peer table: peer1 down for its connection, peer2 up.
st=$(peer_field "$P1" state); why=$(peer_field "$P1" why)
note "peer1: $st, why: $why"
[ "$st" = down ] || fail "peer1 is $st after it was killed, expected down"
grep -q 'connection' <<<"$why" || { ctl peers >&2; fail "sbcctl peers WHY of peer1 is '$why', expected a connection reason"; }
[ "$(peer_field "$P2" state)" = up ] || fail "peer2 is $(peer_field "$P2" state), expected up"
conns=$(ctl conns --json)
CONNS=$conns python3 - "$P1" "$P2" <<'PY' || { echo "$conns" >&2; fail "sbcctl conns --json: expected no connection to peer1 (with its last error) and one to peer2"; }
import json, os, sys
p = {p["name"]: p for p in json.loads(os.environ["CONNS"])["peers"]}
assert p[sys.argv[1]]["established"] == 0 and p[sys.argv[1]]["last_error"], p
assert p[sys.argv[2]]["established"] == 1, p
PY

# Calls placed now: all on peer2.
before12=$n12
call after 5
[ "$CALL_OK" -eq 5 ] || fail "after the kill: $CALL_OK of 5 calls completed"
n=$(( $(received "$DIR/peer-198.18.1.12" '^INVITE ') - before12 ))
[ "$n" -eq 5 ] || fail "peer2's callee got $n of the 5 calls placed after the kill"
echo "ok: peer1 killed under load: $answered/$CALLS INVITEs answered 200 (0 errors, $ringing left ringing on peer1, $failed calls up on peer1 lost their BYE), later calls on peer2, peer1 down ($why)"
