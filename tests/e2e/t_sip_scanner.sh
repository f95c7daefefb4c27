#!/usr/bin/env bash
# Admission, flood and scanner protection against a real scanner (Debian's sipvicious) while
# SIPp carries calls from the trusted trunk:
#   - 198.18.0.2, the caller, allowed by the trusted trunk "carrier" (5060);
#   - 198.18.0.4, allowed by the untrusted trunk "public" (5062);
#   - 198.18.0.3, allowed by no trunk and no peer.
# svmap (OPTIONS, User-Agent friendly-scanner) and svwar (REGISTER, extensions 100-119) run
# from .3 and .4 against both trunks while 100 calls go through. Asserted: the scanners find
# nothing (no answer leaks to either source), the untrusted scanner .4 is on the deny list
# with the reason "scanner" and its next message, an ordinary OPTIONS, is dropped as
# flood_denied; the trusted caller is never denied and every one of its calls completes.
SIP_EXTRA_ADDRS="198.18.0.3 198.18.0.4"
SIP_TRUNK_EXTRA='trusted = true'
SIP_EXTRA_CONFIG='[[trunk]]
name = "public"
interface = "hosts"
port = 5062
allow = ["198.18.0.4/32"]'
source "$(dirname "$0")/sip_common.sh"
command -v svmap >/dev/null && command -v svwar >/dev/null || fail "sipvicious (svmap, svwar) is not installed: scripts/setup-deps.sh installs it"
sip_up

peer 198.18.1.11 uas.xml 90
sipp_uac_start "$DIR/calls" 10 100 60 uac.xml -s 1000 -d 200
calls_pid=$SIPP_WRAP_PID

# scan SRC TOOL ARGS...: the tool from SRC in the hosts namespace; its output in $DIR/scan-SRC-TOOL.
scan() {
  local src=$1 tool=$2; shift 2
  timeout -k 5 60 ip netns exec "$SIPP_NS_HOSTS" "$tool" -b "$src" "$@" >"$DIR/scan-$src-$tool" 2>&1 || true
}
for src in 198.18.0.3 198.18.0.4; do
  scan "$src" svmap -p 5060,5062 -t 0.3 198.18.0.1
  scan "$src" svwar -p 5060 -e 100-119 -t 0.3 198.18.0.1
  scan "$src" svwar -p 5062 -e 100-119 -t 0.3 198.18.0.1
done

sipp_uac_wait || true
read -r ok failed < <(sipp_counts "$DIR/calls")
[ "$ok" -eq 100 ] && [ "$failed" -eq 0 ] ||
  { tail -n 30 "$DIR/calls/sipp.out" >&2; fail "the trusted caller completed $ok calls and $failed failed while scanned (expected 100, 0)"; }

for f in "$DIR"/scan-*; do
  # svmap prints a row per device that answered; svwar a row per extension it found.
  if ! grep -q "found nothing" "$f" || grep -qE '198\.18\.0\.1:50|^\| *1[0-9][0-9] ' "$f"; then
    cat "$f" >&2; fail "$(basename "$f"): the scanner learned something (expected 'found nothing')"
  fi
done

deny=$(ctl deny list --json)
python3 - "$deny" <<'PY' || { echo "$deny" >&2; fail "198.18.0.4 (untrusted, scanning) is not denied for 'scanner', or a trusted source is"; }
import json, sys
d = json.loads(sys.argv[1])
entries = d.get("entries", d.get("denied", d if isinstance(d, list) else []))
by = {e["address"]: e for e in entries}
assert "198.18.0.4" in by and by["198.18.0.4"]["reason"] == "scanner", by
assert "198.18.0.2" not in by, by
PY
ctl deny list | grep -q '198.18.0.4' || fail "sbcctl deny list does not show 198.18.0.4"

before=$(need_stat flood_denied)
cat >"$DIR/opt.sip" <<SIP
OPTIONS sip:198.18.0.1:5062 SIP/2.0
Via: SIP/2.0/UDP 198.18.0.4:5070;branch=z9hG4bK-after-deny
From: <sip:ops@198.18.0.4:5070>;tag=a1
To: <sip:198.18.0.1:5062>
Call-ID: after-deny@198.18.0.4
CSeq: 1 OPTIONS
Max-Forwards: 70
Content-Length: 0

SIP
out=$(ip netns exec "$SIPP_NS_HOSTS" python3 - "$DIR/opt.sip" <<'PY'
import socket, sys
data = open(sys.argv[1], 'rb').read().replace(b'\n', b'\r\n')
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("198.18.0.4", 5070)); s.settimeout(1.5)
s.sendto(data, ("198.18.0.1", 5062))
try: print(s.recvfrom(65535)[0].decode('latin-1').split('\r\n')[0])
except socket.timeout: pass
PY
)
[ -z "$out" ] || fail "the denied 198.18.0.4 got an answer to an ordinary OPTIONS: $out"
after=$(need_stat flood_denied)
[ "$after" -gt "$before" ] || fail "the denied source's OPTIONS was not counted as flood_denied ($before -> $after)"
curl -sf "http://$HTTP/metrics" >"$DIR/metrics" || fail "/metrics did not answer"
grep -qE '^sbc_sip_scanner_dropped_total [1-9]' "$DIR/metrics" || { grep scanner "$DIR/metrics" >&2; fail "/metrics does not count the scanner's dropped messages"; }
echo "ok: scanners found nothing, 198.18.0.4 denied for 'scanner', 100 of 100 trusted calls completed"
