#!/usr/bin/env bash
# Call detail records ([cdr]): two SIPp calls with G.711 media through sbcd, each failing over
# (region1's first peer answers every INVITE 503, the second answers and echoes the media):
# "talk" hangs up 1 s after its answer (BYE from the caller); "silent" stops its media and is ended
# by sbcd after inactivity_timeout_s = 2. The CDR file then holds exactly one JSON line per
# call, with the right end reason, final code and sender, both peers tried (503, then answered),
# setup times, and media figures both ways with a MOS; `sbcctl cdr tail` (and --follow, started
# between the calls) shows both calls and /metrics counts two records written. Then logrotate's
# way: the file moved away and SIGHUP, and a third call still up when sbcd stops: its record
# ("end":"drain") lands in a new file at the path, and sbcd reports what it wrote.
source "$(dirname "$0")/media_common.sh"
CDR_DIR=$(mktemp -d /tmp/sbc-cdr.XXXXXX)
trap 'rm -rf "$CDR_DIR"; topo_cleanup' EXIT INT TERM
CDR=$CDR_DIR/cdr.jsonl
MEDIA_TIMEOUT_S=2
SIP_EXTRA_CONFIG="[cdr]
path = \"$CDR\"
ring = 1024"
media_up
FIRST=198.18.1.11
SECOND=198.18.1.12
peer "$FIRST" uas_503.xml
media_callee "$SECOND"

media_call talk uac_media.xml 1000
[ "$CALL_OK" -eq 1 ] || fail "talk: $CALL_OK completed, $CALL_FAILED failed (expected 1, 0)"
# sbcctl cdr tail --follow, started between the calls: it shows the first call, then the second
# as it ends.
timeout -s INT 60 "$BUILD/sbcctl" --socket "$SOCK" cdr tail -n 1 --follow >"$DIR/follow.out" 2>&1 &
FOLLOW_PID=$!
topo_track "$FOLLOW_PID"
media_call silent uac_media_silence.xml 0
[ "$CALL_OK" -eq 1 ] || fail "silent: $CALL_OK completed, $CALL_FAILED failed: no BYE from sbcd ended it"
wait_idle 3

# The records reach the file within a control-loop iteration of the call's end.
for _ in $(seq 1 30); do [ "$(wc -l <"$CDR" 2>/dev/null || echo 0)" -ge 2 ] && break; sleep 0.1; done
callid() { msgs "$DIR/$1" | tr -d '\r' | awk '/^Call-ID:/ { print $2; exit }'; }
TALK_ID=$(callid talk)
SILENT_ID=$(callid silent)
[ -n "$TALK_ID" ] && [ -n "$SILENT_ID" ] || fail "no Call-ID in the callers' message logs"
note "calls: $TALK_ID $SILENT_ID"

python3 - "$CDR" "$TALK_ID" "$SILENT_ID" "$FIRST" "$SECOND" <<'PY' || { cat "$CDR" >&2; fail "the CDR file is not what the calls did"; }
import json, sys
path, talk, silent, first, second = sys.argv[1:6]
recs = [json.loads(l) for l in open(path) if l.strip()]
bad = []
def check(cond, what):
    if not cond: bad.append(what)
check(len(recs) == 2, "%d records, expected exactly 2 (one per call)" % len(recs))
by_id = {}
for r in recs: by_id.setdefault(r["call_id"], []).append(r)
for cid, end in ((talk, "bye_caller"), (silent, "media_timeout")):
    rs = by_id.get(cid, [])
    check(len(rs) == 1, "%s: %d records, expected 1" % (cid, len(rs)))
    if not rs: continue
    r = rs[0]
    name = cid
    check(r["end"] == end, "%s: end %s, expected %s" % (name, r["end"], end))
    check(r["final_code"] == 200 and r["final_by"] == "peer", "%s: final %s by %s, expected 200 by peer" % (name, r["final_code"], r["final_by"]))
    check(r["trunk"] == "carrier" and r["route"] == "default", "%s: trunk %s route %s" % (name, r["trunk"], r["route"]))
    p = r["peers"]
    check(len(p) == 2 and r["attempts"] == 2, "%s: %d peers tried (attempts %s), expected 2" % (name, len(p), r["attempts"]))
    if len(p) == 2:
        check(p[0]["address"] == first + ":5060" and p[0]["outcome"] == "code" and p[0]["code"] == 503,
              "%s: first attempt %s, expected %s code 503" % (name, p[0], first))
        check(p[1]["address"] == second + ":5060" and p[1]["outcome"] == "answered" and p[1]["code"] == 200,
              "%s: second attempt %s, expected %s answered 200" % (name, p[1], second))
        check(p[0]["ended_ms"] <= p[1]["at_ms"], "%s: the second attempt began before the first ended" % name)
    pm, am = r["provisional_ms"], r["answer_ms"]
    check(pm is not None and am is not None and 0 < pm <= am < 2000,
          "%s: provisional_ms %s answer_ms %s, expected 0 < 180 <= 200 < 2 s" % (name, pm, am))
    check(r["start"].endswith("Z") and "T" in r["start"], "%s: start %s is not ISO 8601 UTC" % (name, r["start"]))
    m = r["media"]
    check(m is not None, "%s: no media figures" % name)
    if m:
        for side in ("a", "b"):
            d = m[side]
            check(d["packets"] > 0 and d["bytes"] > d["packets"] * 12, "%s: media %s: %s packets, %s bytes" % (name, side, d["packets"], d["bytes"]))
            check(d["codec"] == "PCMU", "%s: media %s codec %s, expected PCMU" % (name, side, d["codec"]))
            check(d["mos"] is not None and 3.5 <= d["mos"] <= 4.5, "%s: media %s MOS %s, expected a clean call's (3.5..4.5)" % (name, side, d["mos"]))
            check(d["loss_pct"] < 5, "%s: media %s loss %s%% on a veth" % (name, side, d["loss_pct"]))
    if end == "media_timeout":
        # 1 s of audio, 2 s of silence, then sbcd's BYE (checked once a second or so).
        check(2.0 <= r["duration_s"] <= 8.0, "%s: duration %s s, expected about 3 s" % (name, r["duration_s"]))
    else:
        # The caller hangs up 1 s after its ACK (-d 1000).
        check(0.9 <= r["duration_s"] <= 3.0, "%s: duration %s s, expected about 1 s (the caller's hold)" % (name, r["duration_s"]))
if bad:
    print("\n".join(bad), file=sys.stderr); sys.exit(1)
PY

# sbcctl cdr tail: both calls, with their ends and the peers tried.
out=$(ctl cdr tail -n 5)
note "sbcctl cdr tail:"; echo "$out" >&2
expect_contains "$out" "CALL-ID" "cdr tail header"
expect_contains "$out" "${TALK_ID:0:20}" "cdr tail: the talk call"
expect_contains "$out" "${SILENT_ID:0:20}" "cdr tail: the silent call"
expect_contains "$out" "media_timeout" "cdr tail: the silent call's end"
expect_contains "$out" "bye_caller" "cdr tail: the talk call's end"
expect_contains "$out" "$FIRST:5060:code/503" "cdr tail: the first peer's 503"
expect_contains "$out" "$SECOND:5060:answered/200" "cdr tail: the second peer's answer"
sleep 1  # two --follow polls
kill -INT "$FOLLOW_PID" 2>/dev/null || true
wait "$FOLLOW_PID" 2>/dev/null || true
follow=$(cat "$DIR/follow.out")
note "sbcctl cdr tail -n 1 --follow:"; echo "$follow" >&2
expect_contains "$follow" "${TALK_ID:0:20}" "cdr tail --follow: the call before it started"
expect_contains "$follow" "${SILENT_ID:0:20}" "cdr tail --follow: the call that ended while it ran"
[ "$(grep -c '^TIME' <<<"$follow")" -eq 1 ] || fail "cdr tail --follow printed the header more than once"
n=$(ctl cdr tail --json | wc -l)
[ "$n" -eq 2 ] || fail "sbcctl cdr tail --json printed $n records, expected 2"

metrics=$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen("http://" + sys.argv[1] + "/metrics").read().decode())' "$HTTP")
expect_contains "$metrics" "sbc_cdr_records_written_total 2" "/metrics: records written"
expect_contains "$metrics" "sbc_cdr_write_errors_total 0" "/metrics: no write errors"
expect_contains "$metrics" 'sbc_cdr_dropped_total{worker="0"} 0' "/metrics: nothing lost on the ring"

# logrotate: the file moved away, SIGHUP; the next record goes to a new file at the path.
mv "$CDR" "$CDR.1"
kill -HUP "$SBCD_PID"
sleep 0.5
# A call still up when sbcd stops: its record says "drain", written after the workers stopped.
# (30 s of audio: media inactivity does not end it first.)
media_file "$DIR/long" 30
sipp_uac_start "$DIR/long" 1 1 40 uac_media.xml -s 1000 -d 20000 -mi "$SIPP_CALLER" -mp "$MEDIA_EP_PORT"
for _ in $(seq 1 50); do [ "$(sip_stat dialogs_active)" = 1 ] && break; sleep 0.1; done
[ "$(sip_stat dialogs_active)" = 1 ] || fail "the long call did not come up"
sbcd_stop || fail "sbcd did not stop cleanly on SIGTERM"
[ "$(wc -l <"$CDR.1")" -eq 2 ] || fail "the rotated file has $(wc -l <"$CDR.1") records, expected the 2 from before the HUP"
[ -s "$CDR" ] || { tail -n 20 "$DIR/sbcd.log" >&2; fail "no new CDR file after SIGHUP and a call"; }
[ "$(wc -l <"$CDR")" -eq 1 ] || { cat "$CDR" >&2; fail "the new file has $(wc -l <"$CDR") records, expected 1 (the call cut by the stop)"; }
python3 -c 'import json, sys; r = json.loads(open(sys.argv[1]).readline()); sys.exit(0 if r["end"] == "drain" and r["answer_ms"] else 1)' "$CDR" ||
  { cat "$CDR" >&2; fail "the call up at the stop is not recorded as answered and ended by the drain"; }
grep -q 'call detail records: 3 written, 0 lost on full rings, 0 lost to write errors' "$DIR/sbcd.log" ||
  { tail -n 5 "$DIR/sbcd.log" >&2; fail "sbcd did not report the records it wrote when it stopped"; }
echo "PASS: one CDR per call with its peers, end, setup times and media; sbcctl cdr tail shows them; SIGHUP reopens; a stop records the calls up"
