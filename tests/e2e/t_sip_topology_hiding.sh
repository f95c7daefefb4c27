#!/usr/bin/env bash
# Topology hiding ([[trunk]] topology_hiding = true): SIPp's built-in uac scenario (`sipp -sn
# uac`, dumped with -sd: it ignores Record-Route and Contact and sends its ACK and BYE to the
# address it called, without Route) calls through sbcd, with two workers, to a SIPp callee
# (uas.xml) on region1's first peer. The calls complete: the callee gets the ACKs and BYEs
# (forwarded by the dialog to its Contact), the 200s to the BYEs reach the caller. Neither side
# sees the other: the callee's Via, Record-Route, Route and Contact lines carry none of the
# caller's addresses (only sbcd's, with the caller's masked in sbc-th), and the caller's none
# of the callee's. Nothing was refused or undecodable.
source "$(dirname "$0")/sip_common.sh"
SIP_WORKERS=${SIP_WORKERS:-2}
SIP_DEVICE_EXTRA=${SIP_DEVICE_EXTRA-,qpairs=$SIP_WORKERS}  # a queue pair per worker
SIP_TRUNK_EXTRA='topology_hiding = true'
sip_up

PEER=198.18.1.11; peer $PEER uas.xml
# (sipp -sd exits 99 after dumping: judge by what it wrote)
"$SIPP_BIN" -sd uac >"$DIR/builtin_uac.xml" 2>/dev/null || true
grep -q '<scenario name="Basic Sipstone UAC">' "$DIR/builtin_uac.xml" || fail "sipp -sd uac did not dump the built-in scenario"
calls=4
call uac $calls "$DIR/builtin_uac.xml"
[ "$CALL_OK" -eq $calls ] && [ "$CALL_FAILED" -eq 0 ] ||
  { msgs "$DIR/uac" | tail -n 60 >&2; fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected $calls, 0)"; }

c=$(msgs "$DIR/uac"); p=$(msgs "$DIR/peer-$PEER")
[ "$(received "$DIR/peer-$PEER" '^INVITE ')" -eq $calls ] || fail "callee received $(received "$DIR/peer-$PEER" '^INVITE ') INVITEs, expected $calls"
[ "$(received "$DIR/peer-$PEER" '^ACK sip:198.18.1.11')" -ge $calls ] ||
  { echo "$p" | tail -n 60 >&2; fail "the callee did not get the caller's ACKs at its Contact"; }
[ "$(received "$DIR/peer-$PEER" '^BYE sip:198.18.1.11')" -eq $calls ] ||
  { echo "$p" | tail -n 60 >&2; fail "the callee did not get the caller's $calls BYEs at its Contact"; }
# The header lines where topology shows (long and compact names).
topo_lines() { grep -iE '^(Via|v|Record-Route|Route|Contact|m)[[:space:]]*:' || true; }
leak=$(topo_lines <<<"$p" | grep -F '198.18.0.2' || true)
[ -z "$leak" ] || { echo "$leak" | head -n 20 >&2; fail "the callee saw the caller's address in Via/Record-Route/Route/Contact"; }
grep -q '^Via: SIP/2.0/UDP 198.18.0.1:5060;branch=z9hG4bKsT[0-9a-f]*;sbc-th=' <<<"$p" ||
  { echo "$p" | head -n 40 >&2; fail "the callee's INVITE has no hidden Via of sbcd's (sbc-th)"; }
grep -qE '^Contact: <sip:198\.18\.0\.1:5060;w=0[01];sbc-th=' <<<"$p" ||
  { echo "$p" | head -n 40 >&2; fail "the callee's INVITE has no Contact of sbcd's"; }
leak=$(topo_lines <<<"$c" | grep -F '198.18.1.1' || true)
[ -z "$leak" ] || { echo "$leak" | head -n 20 >&2; fail "the caller saw the callee's address in Via/Record-Route/Route/Contact"; }

[ "$(need_stat th_no_route)" -ge $((2 * calls)) ] || fail "th_no_route = $(sip_stat th_no_route), expected the $calls ACKs and $calls BYEs"
[ "$(need_stat th_undecodable)" -eq 0 ] || fail "th_undecodable = $(sip_stat th_undecodable)"
[ "$(need_stat in_dialog_refused)" -eq 0 ] || fail "in_dialog_refused = $(sip_stat in_dialog_refused)"
wait_metric 'th_no_route' || fail "/metrics has no th_no_route counter"
wait_idle 20
echo "ok: topology hiding: $calls calls from SIPp's built-in uac completed, neither side saw the other's addresses"
