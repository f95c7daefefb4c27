#!/usr/bin/env bash
# SIP proxy, full call table -> 503 and recovery: [limits] transactions_per_worker = 1024 (the
# minimum), no-response timer 8 s. A burst of 1300 calls (500/s) to numbers starting with 9
# goes to a region whose only peer (198.18.3.31) never answers: the table fills, the calls
# beyond it get 503 with Retry-After at once (table_full counted), the rest 503 after the
# timer. Every call of the burst ends with a 503, sbcd keeps running, the active counts go
# back to 0, and then normal calls complete.
SIP_EXTRA_ADDRS=198.18.3.31
SIP_WARM_ADDRS=198.18.3.31
SIP_TRANSACTIONS=1024
SIP_NO_RESPONSE_MS=8000
SIP_EXTRA_CONFIG='[[region]]
name = "blackhole"
peers = [ { address = "198.18.3.31:5060" } ]
probe = "none"

[[peer_group]]
name = "blackhole"
regions = ["blackhole"]

[[route]]
name = "burst"
match = { field = "ruri_user", pattern = "^9" }
peer_group = "blackhole"'
source "$(dirname "$0")/sip_common.sh"
sip_up
peer 198.18.3.31 uas_silent.xml
peer 198.18.1.11 uas.xml
rc=0
sipp_uac_run "$DIR/burst" 500 1300 40 uac.xml -s 9000 -d 200 -l 2000 -recv_timeout 20000 -trace_msg || rc=$?
[ "$rc" -le 1 ] || { tail -n 30 "$DIR/burst/sipp.out" >&2; fail "burst SIPp exited $rc"; }
read -r ok failed < <(sipp_counts "$DIR/burst")
m503=$(received "$DIR/burst" '^SIP/2.0 503')
ra=$(msgs "$DIR/burst" | grep -c '^Retry-After:' || true)
full=$(need_stat table_full)
note "burst: completed=$ok failed=$failed 503s=$m503 with_retry_after=$ra table_full=$full"
kill -0 "$SBCD_PID" 2>/dev/null || fail "sbcd died during the burst"
[ "$full" -ge 1 ] || fail "table_full=$full after 1300 calls held against a 1024-transaction table"
[ "$failed" -eq 1300 ] || fail "burst: $ok completed, $failed failed, expected all 1300 to fail (silent peer)"
[ "$m503" -ge 1300 ] || fail "burst: only $m503 of 1300 calls got a 503"
[ "$ra" -ge "$full" ] || fail "burst: $ra 503s carry Retry-After, fewer than the $full refused for a full table"
wait_idle 20
call recovery 3
[ "$CALL_OK" -eq 3 ] || fail "after the burst: $CALL_OK completed, $CALL_FAILED failed (expected 3, 0)"
wait_idle 20
echo "ok: full table -> 503, recovered"
