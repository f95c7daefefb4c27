#!/usr/bin/env bash
# TCP source check in the fast path: the trunk takes ["udp","tcp"] on 5060 and allows only
# 198.18.0.2. A TCP connect to 198.18.0.1:5060 from 198.18.0.3 (in the hosts namespace, no
# trunk allows it, no peer has it) times out: its SYN is dropped before sbcd's kernel stack
# sees it (no RST, no SYN-ACK), and the drop counter tcp_not_allowed rises. The same connect
# from the allowed 198.18.0.2 succeeds, so the silence is the source check and not a dead
# TCP listener.
DENIED=198.18.0.3
SIP_EXTRA_ADDRS=$DENIED
source "$(dirname "$0")/sip_common.sh"
eval "orig_$(declare -f sip_write_config)"
sip_write_config() {
  orig_sip_write_config "$@"
  sed -i '/^name = "carrier"$/a transports = ["udp", "tcp"]' "$1"
}
sip_up
note "sbcd up (${SECONDS} s)"

# connect_from SRC WAIT_S: a TCP connect from SRC to sbcd's 5060 in the hosts namespace;
# prints "connected", "refused", "timeout" or the error.
connect_from() {
  timeout $(($2 + 15)) ip netns exec "$SIPP_NS_HOSTS" python3 - "$1" "$SIPP_PROXY_ADDR" "$2" <<'PY' || echo "python: exit $?"
import socket, sys
src, dst, wait = sys.argv[1], sys.argv[2], float(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.bind((src, 0)); s.settimeout(wait)
try:
    s.connect((dst, 5060)); print("connected")
except socket.timeout:
    print("timeout")
except ConnectionRefusedError:
    print("refused")
except OSError as e:
    print("error: %s" % e)
PY
}

# drops_not_allowed: total.drops.tcp_not_allowed of `sbcctl stats --json` (sip_stat would add the
# per-worker copy to the total).
drops_not_allowed() {
  ctl stats --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["total"]["drops"]["tcp_not_allowed"])' ||
    fail "sbcctl stats --json has no total.drops.tcp_not_allowed"
}

# The allowed caller first: the listener is up (sbcd's kernel side answers the SYN).
r=""
for _ in 1 2 3; do r=$(connect_from "$SIPP_CALLER" 3); [ "$r" = connected ] && break; sleep 0.5; done
[ "$r" = connected ] || fail "TCP connect from the allowed $SIPP_CALLER to 198.18.0.1:5060: $r (expected connected)"
note "$SIPP_CALLER connects (${SECONDS} s)"
before=$(drops_not_allowed)
r=$(connect_from "$DENIED" 3)
[ "$r" = timeout ] || fail "TCP connect from $DENIED (no trunk allows it) to 198.18.0.1:5060: $r (expected timeout: SYN dropped)"
note "$DENIED: connect timed out (${SECONDS} s)"
# Linux retransmits the SYN after 1 s and 3 s: at least one SYN dropped, usually 2-3.
after=$(drops_not_allowed)
[ "$after" -ge $((before + 1)) ] || fail "tcp_not_allowed went from $before to $after, expected at least +1"
# And the allowed source still can (the denied one did not poison anything).
r=$(connect_from "$SIPP_CALLER" 3)
[ "$r" = connected ] || fail "TCP connect from the allowed $SIPP_CALLER after the denied one: $r (expected connected)"
echo "ok: TCP SYN from $DENIED dropped in the fast path (tcp_not_allowed $before -> $after), $SIPP_CALLER connects"
