#!/usr/bin/env bash
# SIP over TCP without TLS, both ways. The trunk takes ["udp","tcp"] on 5060.
#   outbound: region2's only peer is a SIPp callee over TCP (198.18.2.21:5060, transport
#     "tcp"); calls whose Request-URI user starts with "tcp" go there (route "to-tcp"). A UDP
#     caller makes 5 calls: all complete, and the callee sees our Via SIP/2.0/TCP 198.18.0.1.
#   inbound: a SIPp caller over one TCP connection (-t t1) makes 5 calls to the UDP callee at
#     198.18.1.11: all complete, the callee sees our Via SIP/2.0/UDP, and every response went
#     back on the caller's connection (sbcctl conns: the one inbound connection from
#     198.18.0.2 carried them, no connection was opened toward the caller).
# sbcctl conns shows both connections at once (the TCP caller holds its calls for 5 s).
source "$(dirname "$0")/sip_common.sh"
TCP_PEER=198.18.2.21
UDP_PEER=198.18.1.11
SIP_REGIONS=$(cat <<REG
[[region]]
name = "region1"
peers = [ { address = "$UDP_PEER:5060", priority = 10 }, { address = "198.18.1.12:5060", priority = 20 } ]
probe = "none"

[[region]]
name = "region2"
peers = [ { address = "$TCP_PEER:5060", transport = "tcp" }, { address = "198.18.2.22:5060" } ]
probe = "none"
REG
)
SIP_EXTRA_CONFIG=$(cat <<CONF
[[peer_group]]
name = "tcp-only"
regions = ["region2"]

[[route]]
name = "to-tcp"
match = { field = "ruri_user", pattern = "^tcp" }
peer_group = "tcp-only"

[streams]
reconnect_min_ms = 100
reconnect_max_ms = 300
CONF
)
# sbcd connects to the TCP peer before its SIPp is up: a refused connection puts a probe = "none"
# peer down until its retest interval (a connection coming up does not lift it): keep that short.
SIP_HEALTH="retest_interval_ms = 1000"
# The carrier trunk of sip_common.sh with TCP added: UDP 5060 and TCP 5060.
eval "orig_$(declare -f sip_write_config)"
sip_write_config() {
  orig_sip_write_config "$@"
  sed -i '/^name = "carrier"$/a transports = ["udp", "tcp"]' "$1"
}
sip_up
note "sbcd up (${SECONDS} s)"

# tcp_uas ADDR DIR: a SIPp callee (uas.xml) over TCP on ADDR:5060, -trace_msg in DIR, 40 s bound.
tcp_uas() {
  local addr=$1 dir=$2
  mkdir -p "$dir"
  ( cd "$dir" && exec timeout -s TERM -k 5 40 ip netns exec "$SIPP_NS_HOSTS" "$SIPP_BIN" \
      -sf "$SIPP_SCENARIOS/uas.xml" -i "$addr" -p 5060 -t t1 -nostdin -trace_stat -fd 1 \
      -trace_err -trace_msg >"$dir/sipp.out" 2>&1 ) &
  topo_track $!
  sipp__child $! || { cat "$dir/sipp.out" >&2; return 1; }
  for _ in $(seq 1 100); do
    ip netns exec "$SIPP_NS_HOSTS" ss -Htnl "src $addr:5060" | grep -q . && return 0
    sleep 0.05
  done
  cat "$dir/sipp.out" >&2; return 1
}

# --- outbound: UDP caller -> sbcd -> TCP callee ---
tcp_uas "$TCP_PEER" "$DIR/peer-$TCP_PEER" || fail "the SIPp TCP callee did not start"
peer "$UDP_PEER" uas.xml
for _ in $(seq 1 50); do
  conns_lines | grep -q "^out tcp established .* $TCP_PEER:5060 " && break
  sleep 0.1
done
conns_lines | grep -q "^out tcp established .* $TCP_PEER:5060 " ||
  { ctl conns >&2; fail "sbcd has no established TCP connection to the peer $TCP_PEER:5060"; }
for _ in $(seq 1 30); do [ "$(peer_field "region2/$TCP_PEER:5060" state)" != down ] && break; sleep 0.1; done
[ "$(peer_field "region2/$TCP_PEER:5060" state)" != down ] || { ctl peers >&2; fail "the TCP peer stayed down after its connection came up"; }
call to-tcp 5 uac.xml -s tcp1000
[ "$CALL_OK" -eq 5 ] && [ "$CALL_FAILED" -eq 0 ] || fail "UDP caller -> TCP callee: $CALL_OK completed, $CALL_FAILED failed (expected 5, 0)"
v=$(top_vias "$DIR/peer-$TCP_PEER" '^INVITE ')
[ "$(grep -c '^Via: SIP/2.0/TCP 198.18.0.1:5060;' <<<"$v")" -eq 5 ] ||
  { echo "$v" >&2; fail "the TCP callee did not see our TCP Via on all 5 INVITEs"; }
[ "$(received "$DIR/peer-$TCP_PEER" '^BYE ')" -eq 5 ] || fail "the TCP callee received $(received "$DIR/peer-$TCP_PEER" '^BYE ') BYEs, expected 5"
[ "$(received "$DIR/peer-$UDP_PEER" '^INVITE ')" -eq 0 ] || fail "a tcp* call reached the UDP callee"
note "outbound TCP: 5 calls completed, callee saw Via SIP/2.0/TCP (${SECONDS} s)"

# --- inbound: TCP caller (one connection) -> sbcd -> UDP callee ---
sipp_uac_start "$DIR/from-tcp" 10 5 40 uac.xml -s 1000 -d 5000 -trace_msg -t t1
wrap=$SIPP_WRAP_PID
# While the calls are held (answered within ~1 s, BYE after 5 s): one snapshot of sbcctl conns
# that shows both connections, the caller's having carried every response so far (100, 180
# and 200 for each of the 5 INVITEs).
c=
for _ in $(seq 1 40); do
  c=$(conns_lines)
  inb=$(awk '$1 == "in" && $2 == "tcp" && $3 == "established" && $4 == "198.18.0.1:5060" && $5 ~ /^198[.]18[.]0[.]2:/ { print $7 }' <<<"$c")
  if [ "${inb:-0}" -ge 15 ] && grep -q "^out tcp established .* $TCP_PEER:5060 " <<<"$c"; then break; fi
  sleep 0.1
done
[ "${inb:-0}" -ge 15 ] && grep -q "^out tcp established .* $TCP_PEER:5060 " <<<"$c" ||
  { echo "$c" >&2; fail "sbcctl conns never showed both the caller's inbound connection (with >= 15 responses sent on it) and the outbound one to $TCP_PEER"; }
[ "$(grep -c ' 198[.]18[.]0[.]2:' <<<"$c")" -eq 1 ] || { echo "$c" >&2; fail "expected exactly one connection with the caller 198.18.0.2 (responses on its own connection)"; }
t=$(ctl conns)
grep -q "198.18.0.2:" <<<"$t" && grep -q "$TCP_PEER:5060" <<<"$t" || { echo "$t" >&2; fail "sbcctl conns (text) does not list both connections"; }
rc=0; wait "$wrap" || rc=$?
read -r ok failed < <(sipp_counts "$DIR/from-tcp")
[ "$rc" -eq 0 ] && [ "$ok" -eq 5 ] && [ "$failed" -eq 0 ] ||
  { tail -n 20 "$DIR/from-tcp/sipp.out" >&2; fail "TCP caller -> UDP callee: SIPp exited $rc, $ok completed, $failed failed (expected 0, 5, 0)"; }
[ "$(msgs "$DIR/from-tcp" | grep -c 'TCP message received')" -ge 20 ] ||
  fail "the TCP caller logged fewer than 20 messages received over TCP"
v=$(top_vias "$DIR/peer-$UDP_PEER" '^INVITE ')
[ "$(grep -c '^Via: SIP/2.0/UDP 198.18.0.1:5060;' <<<"$v")" -eq 5 ] ||
  { echo "$v" >&2; fail "the UDP callee did not see our UDP Via on all 5 INVITEs from the TCP caller"; }
[ "$(received "$DIR/peer-$UDP_PEER" '^BYE ')" -eq 5 ] || fail "the UDP callee received $(received "$DIR/peer-$UDP_PEER" '^BYE ') BYEs, expected 5"
echo "PASS: 5 calls TCP caller -> UDP callee on one connection, 5 calls UDP caller -> TCP callee, both connections in sbcctl conns"
