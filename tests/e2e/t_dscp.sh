#!/usr/bin/env bash
# DSCP on what sbcd sends ([[interface]] dscp_sip, dscp_rtp; docs/config.md): a call with RTP
# both ways (uac_media.xml, callee echoing), seen by tcpdump on the hosts' end of the veth.
# Checked:
# - every SIP datagram from sbcd (to the caller and to the callee) has TOS 0x60 (CS3), the
#   default dscp_sip, and every RTP packet from sbcd has TOS 0xb8 (EF), the default dscp_rtp,
#   although the endpoints send theirs unmarked (SIPp leaves TOS 0);
# - tcpdump verifies the IPv4 header checksum of each of them (-vv prints "bad cksum" else);
# - SIP over TCP: sbcd's segments of a connection the caller opens (SYN-ACK, the answer to an
#   OPTIONS) carry 0x60 too (IP_TOS on the stream thread's sockets);
# - a reload with dscp_sip = "AF41" marks SIP from then on 0x88, over UDP and over TCP (an
#   OPTIONS answer each);
# - a reload with dscp_rtp = "CS5" during a call re-marks that call's RTP from then on (0xa0),
#   each direction switching once, never back;
# - a reload that changes [media] is refused (its flow table is set up at start).
source "$(dirname "$0")/media_common.sh"
SIP_TRUNK_EXTRA='transports = ["udp", "tcp"]'
media_up
CALLEE=198.18.1.11
media_callee "$CALLEE"

# SIP from sbcd, bounded in count and time; RTP is in media_up's capture ($DIR/media.pcap).
sip_capture() {  # FILE [FILTER]: starts tcpdump of SIP from sbcd into FILE; sets SIP_TCPDUMP
  ip netns exec "$SIPP_NS_HOSTS" timeout -s INT 60 tcpdump -i "$HOSTS_IF" --immediate-mode -U -n -c 200 -w "$1" \
    "${2:-udp} and src host $MEDIA_ADDR and port 5060" >"$1.out" 2>&1 &
  SIP_TCPDUMP=$!
  topo_track "$SIP_TCPDUMP"
  for _ in $(seq 1 50); do grep -q 'listening on' "$1.out" 2>/dev/null && return 0; sleep 0.1; done
  fail "tcpdump for SIP did not start"
}
sip_capture_stop() { sleep 0.3; kill -INT "$SIP_TCPDUMP" 2>/dev/null || true; wait "$SIP_TCPDUMP" 2>/dev/null || true; }
# count FILE FILTER: packets of FILE matching FILTER.
count() { tcpdump -n -r "$1" "$2" 2>/dev/null | wc -l; }
# tcp_options N: OPTIONS to sbcd over a new TCP connection from the caller; prints the
# answer's status line, or nothing.
tcp_options() {
  ip netns exec "$SIPP_NS_HOSTS" timeout 10 python3 - "$SIPP_CALLER" "$MEDIA_ADDR" "$1" <<'PY'
import socket, sys
src, dst, n = sys.argv[1], sys.argv[2], sys.argv[3]
m = ("OPTIONS sip:%s:5060;transport=tcp SIP/2.0\r\nVia: SIP/2.0/TCP %s:5090;branch=z9hG4bK-tcp-%s\r\n"
     "Max-Forwards: 70\r\nFrom: <sip:lb@%s>;tag=t%s\r\nTo: <sip:%s:5060>\r\n"
     "Call-ID: tcp-options-%s\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n") % (dst, src, n, src, n, dst, n)
s = socket.create_connection((dst, 5060), timeout=3, source_address=(src, 0))
s.sendall(m.encode())
try:
    print(s.recv(65535).decode('latin-1').split('\r\n', 1)[0])
except socket.timeout:
    pass
s.close()
PY
}
# bad_checksums FILE: packets tcpdump -vv finds an IPv4 header checksum wrong in.
bad_checksums() { tcpdump -vv -n -r "$1" 2>/dev/null | grep -c 'bad cksum' || true; }

sip_capture "$DIR/sip.pcap"
media_call dscp uac_media.xml 2000
[ "$CALL_OK" -eq 1 ] && [ "$CALL_FAILED" -eq 0 ] || fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected 1, 0)"
wait_idle 3
sip_capture_stop
media_capture_stop

sip_all=$(count "$DIR/sip.pcap" "")
sip_cs3=$(count "$DIR/sip.pcap" "ip[1] = 0x60")
to_caller=$(count "$DIR/sip.pcap" "dst host $SIPP_CALLER and ip[1] = 0x60")
to_callee=$(count "$DIR/sip.pcap" "dst host $CALLEE and ip[1] = 0x60")
rtp_all=$(count "$DIR/media.pcap" "src host $MEDIA_ADDR")
rtp_ef=$(count "$DIR/media.pcap" "src host $MEDIA_ADDR and ip[1] = 0xb8")
rtp_in_marked=$(count "$DIR/media.pcap" "dst host $MEDIA_ADDR and ip[1] != 0")
note "SIP from sbcd: $sip_all ($sip_cs3 CS3; $to_caller to the caller, $to_callee to the callee); RTP from sbcd: $rtp_all ($rtp_ef EF); RTP to sbcd marked: $rtp_in_marked"
# INVITE, ACK, BYE to the callee; 100, 180, 200, 200 (BYE) to the caller at least.
[ "$to_caller" -ge 4 ] || fail "$to_caller SIP messages with TOS 0x60 to the caller (expected 100, 180, 200 and the BYE's 200)"
[ "$to_callee" -ge 3 ] || fail "$to_callee SIP messages with TOS 0x60 to the callee (expected INVITE, ACK, BYE)"
[ "$sip_cs3" -eq "$sip_all" ] ||
  { tcpdump -v -n -r "$DIR/sip.pcap" 'ip[1] != 0x60' 2>/dev/null | head -5 >&2; fail "$((sip_all - sip_cs3)) SIP datagrams from sbcd without TOS 0x60 (CS3)"; }
[ "$rtp_all" -ge 40 ] || fail "only $rtp_all RTP packets from sbcd (1 s of audio each way is about 100)"
[ "$rtp_ef" -eq "$rtp_all" ] ||
  { tcpdump -v -n -r "$DIR/media.pcap" "src host $MEDIA_ADDR and ip[1] != 0xb8" 2>/dev/null | head -5 >&2; fail "$((rtp_all - rtp_ef)) RTP packets from sbcd without TOS 0xb8 (EF)"; }
[ "$rtp_in_marked" -eq 0 ] || note "the endpoints marked $rtp_in_marked of their packets themselves"
for f in "$DIR/sip.pcap" "$DIR/media.pcap"; do
  b=$(bad_checksums "$f")
  [ "$b" -eq 0 ] || fail "tcpdump finds $b packets with a bad IPv4 header checksum in $(basename "$f")"
done

# SIP over TCP: the kernel's segments of sbcd's listener and connection.
sip_capture "$DIR/tcp-cs3.pcap" tcp
tcp_status=$(tcp_options 1)
sip_capture_stop
tcp_all=$(count "$DIR/tcp-cs3.pcap" "")
tcp_cs3=$(count "$DIR/tcp-cs3.pcap" "ip[1] = 0x60")
note "SIP over TCP: answer '${tcp_status}'; $tcp_all segments from sbcd, $tcp_cs3 with CS3"
[ "$tcp_all" -ge 2 ] || fail "only $tcp_all TCP segments from sbcd's SIP port (no SYN-ACK and answer?)"
[ "$tcp_cs3" -eq "$tcp_all" ] || fail "$((tcp_all - tcp_cs3)) of $tcp_all TCP segments from sbcd without TOS 0x60"
[ -n "$tcp_status" ] || note "no answer to OPTIONS over TCP (the segments still count)"

# A configured value: dscp_sip changes on reload; an OPTIONS answer carries it.
sed -i 's/^address = "198.18.0.1\/16"$/&\ndscp_sip = "AF41"/' "$CFG"
grep -q '^dscp_sip = "AF41"' "$CFG" || fail "could not add dscp_sip to $CFG"
out=$(ctl reload 2>&1) || fail "reload with dscp_sip = \"AF41\" refused: $out"
sip_capture "$DIR/sip-af41.pcap"
status=$(ask_options 41)
sip_capture_stop
[ -n "$status" ] || fail "no answer to OPTIONS after the reload"
af41=$(count "$DIR/sip-af41.pcap" "dst host $SIPP_CALLER and ip[1] = 0x88")
other=$(count "$DIR/sip-af41.pcap" "ip[1] != 0x88")
note "after the reload: $af41 answers with TOS 0x88, $other otherwise"
[ "$af41" -ge 1 ] && [ "$other" -eq 0 ] || fail "SIP after the reload: $af41 with TOS 0x88 (AF41), $other with another"
[ "$(bad_checksums "$DIR/sip-af41.pcap")" -eq 0 ] || fail "a bad IPv4 header checksum with AF41"
sip_capture "$DIR/tcp-af41.pcap" tcp
tcp_options 2 >/dev/null
sip_capture_stop
tcp_all=$(count "$DIR/tcp-af41.pcap" "")
tcp_af41=$(count "$DIR/tcp-af41.pcap" "ip[1] = 0x88")
[ "$tcp_all" -ge 2 ] && [ "$tcp_af41" -eq "$tcp_all" ] ||
  fail "SIP over TCP after the reload: $tcp_af41 of $tcp_all segments with TOS 0x88 (the listener was re-marked?)"

# dscp_rtp changes on reload too, under a call in progress: a 3 s call whose media starts EF,
# and a reload to CS5 once its media flows. Each direction's RTP from sbcd turns from 0xb8 to 0xa0
# once and never back, and the call's later packets are all CS5.
rtp_capture() {  # FILE: RTP from sbcd into FILE (bounded: 2000 packets, 60 s); sets RTP_TCPDUMP
  ip netns exec "$SIPP_NS_HOSTS" timeout -s INT 60 tcpdump -i "$HOSTS_IF" --immediate-mode -B 32768 -s 128 -U -n \
    -c 2000 -w "$1" "udp and src host $MEDIA_ADDR and not port 5060" >"$1.out" 2>&1 &
  RTP_TCPDUMP=$!
  topo_track "$RTP_TCPDUMP"
  for _ in $(seq 1 50); do grep -q 'listening on' "$1.out" 2>/dev/null && return 0; sleep 0.1; done
  fail "tcpdump for RTP did not start"
}
sed -i 's/^dscp_sip = "AF41"$/&\ndscp_rtp = "CS5"/' "$CFG"
grep -q '^dscp_rtp = "CS5"' "$CFG" || fail "could not add dscp_rtp to $CFG"
rtp_capture "$DIR/rtp-cs5.pcap"
# The reload once the call's media flows (30 packets from sbcd on the wire, at most 10 s).
( for _ in $(seq 1 100); do [ "$(count "$DIR/rtp-cs5.pcap" "")" -ge 30 ] && break; sleep 0.1; done
  ctl reload >"$DIR/reload-rtp.out" 2>&1; echo $? >"$DIR/reload-rtp.rc" ) &
reload_pid=$!
MEDIA_SECONDS=3 media_call dscp-reload uac_media.xml 4000
wait "$reload_pid" 2>/dev/null || true
sleep 0.3; kill -INT "$RTP_TCPDUMP" 2>/dev/null || true; wait "$RTP_TCPDUMP" 2>/dev/null || true
[ "$(cat "$DIR/reload-rtp.rc" 2>/dev/null)" = 0 ] || fail "reload with dscp_rtp = \"CS5\" refused: $(cat "$DIR/reload-rtp.out")"
[ "$CALL_OK" -eq 1 ] && [ "$CALL_FAILED" -eq 0 ] || fail "the call across the reload: $CALL_OK completed, $CALL_FAILED failed"
ef_before=$(count "$DIR/rtp-cs5.pcap" "ip[1] = 0xb8")
cs5_after=$(count "$DIR/rtp-cs5.pcap" "ip[1] = 0xa0")
rtp_all=$(count "$DIR/rtp-cs5.pcap" "")
# Per destination (caller, callee): the TOS sequence, collapsed to its changes.
changes() { tcpdump -v -n -r "$DIR/rtp-cs5.pcap" "dst host $1" 2>/dev/null | sed -n 's/.*tos \(0x[0-9a-f]*\).*/\1/p' | uniq | tr '\n' ' '; }
to_caller=$(changes "$SIPP_CALLER")
to_callee=$(changes "$CALLEE")
note "RTP from sbcd across the reload: $rtp_all ($ef_before EF, $cs5_after CS5); TOS to the caller: $to_caller; to the callee: $to_callee"
[ "$ef_before" -ge 20 ] || fail "only $ef_before RTP packets with EF before the reload"
[ "$cs5_after" -ge 40 ] || fail "only $cs5_after RTP packets with CS5 (0xa0) after the reload: dscp_rtp not applied"
[ $((ef_before + cs5_after)) -eq "$rtp_all" ] || fail "$((rtp_all - ef_before - cs5_after)) RTP packets from sbcd with neither EF nor CS5"
for seq in "$to_caller" "$to_callee"; do
  [ "$seq" = "0xb8 0xa0 " ] || fail "TOS of one direction's RTP went '$seq' (expected EF, then CS5 for good)"
done
[ "$(bad_checksums "$DIR/rtp-cs5.pcap")" -eq 0 ] || fail "a bad IPv4 header checksum after re-marking RTP"
# [media] itself is set up once: a reload that changes it is refused, and says what.
sed -i "s/^port_max = $MEDIA_PORT_MAX\$/port_max = $((MEDIA_PORT_MAX - 2))/" "$CFG"
grep -q "^port_max = $((MEDIA_PORT_MAX - 2))" "$CFG" || fail "could not change [media] port_max in $CFG"
if out=$(ctl reload 2>&1); then fail "a reload changing [media] port_max was accepted"; fi
expect_contains "$out" "need a restart: media" "the refused reload"
echo "PASS: SIP from sbcd CS3 ($sip_all UDP, TCP too), RTP EF, dscp_sip AF41 after a reload (UDP and TCP), dscp_rtp CS5 applied by a reload to a call in progress ($cs5_after packets), checksums right"
