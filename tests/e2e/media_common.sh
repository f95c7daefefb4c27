# Shared by the media e2e tests t_media_*.sh (source it instead of sip_common.sh, which it
# sources): sbcd with a [media] section anchoring media on 198.18.0.1, ports MEDIA_PORT_MIN..
# MEDIA_PORT_MAX; SIPp callers that stream G.711 (scripts/sipp/uac_media*.xml) from
# 198.18.0.2:6000 and callees that echo it (uas.xml with -rtp_echo) from ADDR:6000; RTP counted
# on the wire by tcpdump in the hosts namespace (every packet between an endpoint and sbcd
# crosses the veth), compared with what sbcd says it relayed.
#
# Knobs (set before media_up): MEDIA_TIMEOUT_S (inactivity_timeout_s, default 60),
# MEDIA_SECONDS (length of the caller's audio, default 1).
source "$(dirname "${BASH_SOURCE[0]}")/sip_common.sh"

MEDIA_ADDR=198.18.0.1
MEDIA_PORT_MIN=30000
MEDIA_PORT_MAX=30999
MEDIA_EP_PORT=6000   # every endpoint's own RTP port (-mp)
TCPDUMP_PID=

# media_up: sbcd with [media], then a capture of all non-SIP UDP on the hosts' veth.
media_up() {
  SIP_EXTRA_CONFIG="${SIP_EXTRA_CONFIG:-}
[media]
address = \"$MEDIA_ADDR\"
port_min = $MEDIA_PORT_MIN
port_max = $MEDIA_PORT_MAX
inactivity_timeout_s = ${MEDIA_TIMEOUT_S:-60}"
  sip_up
  # Headers only (-s 128), delivered at once (--immediate-mode) into a 32 MiB ring (-B): on two
  # cores that sbcd's pollers keep busy, tcpdump's default ring (a few 2 MiB blocks retired on a
  # timer) can fill while tcpdump waits for a core, and a lost packet reads as sbcd's.
  ip netns exec "$SIPP_NS_HOSTS" timeout -s INT 120 tcpdump -i "$HOSTS_IF" --immediate-mode -B 32768 -s 128 \
    -U -n -w "$DIR/media.pcap" "udp and not port 5060 and not port 5071" >"$DIR/tcpdump.out" 2>&1 &
  TCPDUMP_PID=$!
  topo_track "$TCPDUMP_PID"
  local i
  for i in $(seq 1 50); do grep -q 'listening on' "$DIR/tcpdump.out" 2>/dev/null && return 0; sleep 0.1; done
  cat "$DIR/tcpdump.out" >&2
  fail "tcpdump did not start in the hosts namespace"
}

# media_capture_stop: ends the capture (SIGINT flushes the file). Fails if the kernel dropped
# packets before tcpdump read them: the wire counts would then be short, and not by sbcd's doing.
media_capture_stop() {
  [ -n "$TCPDUMP_PID" ] || return 0
  # tcpdump leaves on SIGINT without reading what is still in its ring: give the last packets
  # of the last call time to be read (in default mode they waited for a 1 s block timer).
  sleep 0.3
  kill -INT "$TCPDUMP_PID" 2>/dev/null || true
  wait "$TCPDUMP_PID" 2>/dev/null || true
  TCPDUMP_PID=
  local lost
  lost=$(sed -n 's/^\([0-9][0-9]*\) packets dropped by kernel$/\1/p' "$DIR/tcpdump.out")
  [ "${lost:-0}" -eq 0 ] || fail "the capture lost $lost packets (tcpdump: dropped by kernel); the wire counts are short"
}

# media_file DIR [SECONDS]: the raw PCMU file the media callers stream (DIR/media.pcmu), a
# 400 Hz-ish square tone so that no codec sees pure silence; 8000 bytes per second.
media_file() {
  mkdir -p "$1"
  python3 -c 'import sys; open(sys.argv[1], "wb").write((b"\x80" * 10 + b"\x00" * 10) * 400 * int(sys.argv[2]))' \
    "$1/media.pcmu" "${2:-${MEDIA_SECONDS:-1}}"
}

# media_callee ADDR [SCENARIO]: SIPp callee on ADDR that echoes RTP (-rtp_echo) from ADDR:6000.
media_callee() {
  SIPP_UAS_TRACE=1 sipp_uas_start "$1" "${2:-uas.xml}" "$DIR/peer-$1" 60 -rtp_echo -mi "$1" -mp "$MEDIA_EP_PORT"
}

# media_call NAME SCENARIO HOLD_MS: one call from the caller streaming media.pcmu; sets
# CALL_OK, CALL_FAILED, CALL_RC and CALL_SECS (wall time of the SIPp run).
media_call() {
  local name=$1 scen=$2 hold=$3 t0
  media_file "$DIR/$name"
  t0=$(date +%s.%N)
  call "$name" 1 "$scen" -d "$hold" -mi "$SIPP_CALLER" -mp "$MEDIA_EP_PORT"
  CALL_SECS=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
}

# pkts FILTER: packets in the capture matching the tcpdump FILTER.
pkts() { tcpdump -n -r "$DIR/media.pcap" "$1" 2>/dev/null | wc -l; }

# sdp_origin DIR PATTERN: the o= line's address of the first message SIPp in DIR received
# whose first line matches PATTERN.
sdp_origin() {
  msgs "$1" | tr -d '\r' | awk -v pat="$2" '
    /message received/ { want = 1; inmsg = 0; next }
    want && NF { want = 0; inmsg = ($0 ~ pat); next }
    inmsg && /^o=/ { print $NF; exit }
    /^-----/ { inmsg = 0 }'
}

# sdp_endpoint DIR FIRST-LINE-REGEX: "ADDR PORT" of the c= and m=audio lines of the first
# message received by SIPp in DIR whose first line matches the regex.
sdp_endpoint() {
  msgs "$1" | tr -d '\r' | awk -v pat="$2" '
    /message received/ { want = 1; inmsg = 0; next }
    want && NF { want = 0; inmsg = ($0 ~ pat); next }
    inmsg && /^c=IN IP4 / { c = $3 }
    inmsg && /^m=audio / { print c, $2; exit }
    /^-----/ { inmsg = 0 }'
}
