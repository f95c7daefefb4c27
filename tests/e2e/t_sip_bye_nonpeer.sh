#!/usr/bin/env bash
# SIP proxy, a BYE routed toward a non-peer gets 481/403 and reaches nobody: the allowed
# caller sends BYEs with sbcd's Record-Route as Route (<sip:198.18.0.1:5060;lr;w=00>) whose
# Request-URI names 198.18.3.50, a host in the hosts namespace that is no peer and no party of
# any call (a UDP socket listens there). Without a dialog for the Call-ID the caller gets 481
# (twice: the resend would find the host's MAC learnt); with a call up under that Call-ID,
# 403. The host receives nothing, in_dialog_refused counts each, and the call still ends
# normally.
SIP_EXTRA_ADDRS=198.18.3.50
source "$(dirname "$0")/sip_common.sh"
sip_up
RR='<sip:198.18.0.1:5060;lr;w=00>'
HOST=198.18.3.50
peer 198.18.1.11 uas.xml

# The host that must hear nothing: every datagram it gets on 5060 goes to a file (30 s bound).
ip netns exec "$SIPP_NS_HOSTS" timeout 30 python3 - "$HOST" "$DIR/nonpeer.log" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 5060))
while True:
    d, src = s.recvfrom(65535)
    with open(sys.argv[2], 'ab') as f:
        f.write(b'from %s:%d\n' % (src[0].encode(), src[1]) + d + b'\n----\n')
PY
topo_track $!
: >"$DIR/nonpeer.log"

bye() { # CALL_ID CSEQ
  cat <<SIP
BYE sip:bob@$HOST:5060 SIP/2.0
Via: SIP/2.0/UDP 198.18.0.2:5070;branch=z9hG4bK-nonpeer-$2
Route: $RR
Max-Forwards: 70
From: <sip:caller@198.18.0.2:5070>;tag=c$2
To: <sip:1000@198.18.0.1:5060>;tag=t$2
Call-ID: $1
CSeq: $2 BYE
Content-Length: 0

SIP
}
expect_answer() { # FILE CODE WHAT
  local out
  out=$(udp_exchange 198.18.0.2 "$1" 2)
  grep -q "^SIP/2.0 $2" <<<"$out" || { echo "sent:" >&2; cat "$1" >&2; echo "got:" >&2; echo "${out:-(nothing)}" >&2; fail "$3: no $2"; }
  note "$3: $(grep '^SIP/2.0' <<<"$out" | head -n 1)"
}

# No dialog for the Call-ID: 481, for the BYE and for its resend.
bye nonpeer-none@198.18.0.2 2 >"$DIR/bye1.sip"
expect_answer "$DIR/bye1.sip" 481 "BYE toward a non-peer, no dialog"
expect_answer "$DIR/bye1.sip" 481 "the same BYE resent"

# A call up under a Call-ID we choose: a BYE for it toward the non-peer gets 403.
sipp_uac_start "$DIR/long" 1 1 40 uac.xml -s 1000 -d 6000 -trace_msg -cid_str 'nonpeer-long-%u@198.18.0.2'
long_wrap=$SIPP_WRAP_PID
for _ in $(seq 1 50); do [ "$(sip_stat dialogs_active)" = 1 ] && break; sleep 0.1; done
[ "$(sip_stat dialogs_active)" = 1 ] || fail "the call did not come up"
bye nonpeer-long-1@198.18.0.2 3 >"$DIR/bye2.sip"
expect_answer "$DIR/bye2.sip" 403 "BYE toward a non-peer in a held dialog"

rc=0; wait "$long_wrap" || rc=$?
[ "$rc" -eq 0 ] || { tail -n 30 "$DIR/long/sipp.out" >&2; fail "the call did not end normally after the refused BYE (SIPp exit $rc)"; }
[ "$(received "$DIR/peer-198.18.1.11" '^BYE ')" -eq 1 ] || fail "the callee did not get exactly the call's own BYE"
[ ! -s "$DIR/nonpeer.log" ] || { cat "$DIR/nonpeer.log" >&2; fail "the non-peer host $HOST received something"; }
n=$(need_stat in_dialog_refused); note "in_dialog_refused=$n"
[ "$n" -eq 3 ] || fail "in_dialog_refused=$n, expected 3"
wait_idle 20
echo "ok: BYEs routed toward a non-peer answered 481/403, nothing reached it"
