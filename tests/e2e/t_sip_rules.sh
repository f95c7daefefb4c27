#!/usr/bin/env bash
# Header and number rules: the trunk "carrier" normalises national numbers to +E.164 on the
# way in (Request-URI with ;user=phone, and To), adds X-Peer with the chosen peer's name on the
# way out, and region1 removes the caller's Subject toward its peers. Two calls from SIPp's
# caller to 02071234567 complete; the callee sees INVITE sip:+442071234567@...;user=phone,
# To <sip:+442071234567@...>, X-Peer naming it, and no Subject. The rules are counted in
# `sbcctl stats` and /metrics, and sbc-sipcheck --config --trunk shows the same rewrite of a
# captured INVITE offline (and refuses an unknown trunk); a reload with a bad pattern is refused
# with file, line and key.
source "$(dirname "$0")/sip_common.sh"
SIP_TRUNK_EXTRA=$(cat <<'RULES'
[[trunk.rule]]
name = "national"
direction = "in"
kind = "number"
field = "ruri"
match = '^0([1-9][0-9]+)$'
replace = '+44$1'
user_phone = true

[[trunk.rule]]
name = "national-to"
direction = "in"
kind = "number"
field = "to"
match = '^0([1-9][0-9]+)$'
replace = '+44$1'

[[trunk.rule]]
name = "tag-peer"
direction = "out"
kind = "header_add"
header = "X-Peer"
value = "${peer} via ${trunk_fqdn}"
RULES
)
SIP_REGIONS=$(cat <<'REG'
[[region]]
name = "region1"
peers = [ { address = "198.18.1.11:5060", priority = 10, name = "callee-a" },
          { address = "198.18.1.12:5060", priority = 20 } ]
probe = "none"

[[region.rule]]
direction = "out"
kind = "header_remove"
header = "Subject"

[[region]]
name = "region2"
peers = [ { address = "198.18.2.21:5060", priority = 10 },
          { address = "198.18.2.22:5060", priority = 20 } ]
probe = "none"
REG
)
sip_up

PEER=198.18.1.11; peer $PEER uas.xml
call rules 2 uac.xml -s 02071234567
[ "$CALL_OK" -eq 2 ] && [ "$CALL_FAILED" -eq 0 ] || fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected 2, 0)"

p=$(msgs "$DIR/peer-$PEER")
c=$(msgs "$DIR/rules")
grep -q '^Subject: sbc test call' <<<"$c" || fail "the caller's INVITE has no Subject to remove (scenario changed?)"
[ "$(received "$DIR/peer-$PEER" '^INVITE sip:\+442071234567@198\.18\.1\.11:5060;user=phone SIP/2\.0')" -eq 2 ] ||
  { echo "$p" | head -n 40 >&2; fail "the callee did not get 2 INVITEs to sip:+442071234567@...;user=phone"; }
grep -q '^To: <sip:+442071234567@198.18.0.1:5060>' <<<"$p" || { echo "$p" | head -n 40 >&2; fail "the callee's To is not +442071234567"; }
grep -q '^X-Peer: callee-a via 198.18.0.1' <<<"$p" || { echo "$p" | head -n 40 >&2; fail "the callee's INVITE has no X-Peer: callee-a via 198.18.0.1"; }
if grep -q '^Subject:' <<<"$p"; then echo "$p" | head -n 40 >&2; fail "region1's rule did not remove Subject"; fi
grep -q '02071234567' <<<"$p" && { echo "$p" | head -n 40 >&2; fail "the national number reached the callee"; }

# Counted per rule: sbcctl stats (JSON and text) and /metrics.
[ "$(sip_stat rules_rewritten)" -ge 4 ] || fail "rules_rewritten is $(sip_stat rules_rewritten), expected >= 4 (2 calls, in and out)"
stats=$(ctl stats)
expect_contains "$stats" "rule trunk:carrier:in:national (number) hits" "sbcctl stats"
wait_metric '^sbc_rule_hits_total\{owner="trunk:carrier",direction="in",rule="national"\} 2$' ||
  { curl -s "http://$HTTP/metrics" | grep rule_ >&2; fail "/metrics has no sbc_rule_hits_total 2 for trunk:carrier:in:national"; }
wait_metric '^sbc_rule_hits_total\{owner="region:region1",direction="out",rule="1"\} 2$' ||
  fail "/metrics has no sbc_rule_hits_total 2 for region:region1:out:1"

# The same rule set offline, on a captured INVITE.
cat >"$DIR/captured.sip" <<'SIP'
INVITE sip:02071234567@198.18.0.1:5060 SIP/2.0
Via: SIP/2.0/UDP 198.18.0.2:5060;branch=z9hG4bK-cap
From: <sip:caller@198.18.0.2>;tag=c1
To: <sip:02071234567@198.18.0.1:5060>
Call-ID: captured-1
CSeq: 1 INVITE
Subject: offline
Max-Forwards: 70
Content-Length: 0

SIP
sed -i 's/$/\r/' "$DIR/captured.sip"
out=$("$BUILD/sbc-sipcheck" --config "$CFG" --trunk carrier "$DIR/captured.sip") || fail "sbc-sipcheck --config exited $?"
expect_contains "$out" "hit     trunk:carrier:in:national (number ruri)" "sbc-sipcheck"
expect_contains "$out" "INVITE sip:+442071234567@198.18.0.1:5060;user=phone SIP/2.0" "sbc-sipcheck"
expect_contains "$out" "outbound to peer callee-a (region region1, trunk carrier)" "sbc-sipcheck"
expect_contains "$out" "X-Peer: callee-a via" "sbc-sipcheck"
rc=0; err=$("$BUILD/sbc-sipcheck" --config "$CFG" --trunk nosuch "$DIR/captured.sip" 2>&1 >/dev/null) || rc=$?
[ "$rc" -eq 2 ] || fail "sbc-sipcheck with an unknown trunk exited $rc, expected 2"
expect_contains "$err" 'has no trunk named "nosuch" (known: carrier)' "sbc-sipcheck unknown trunk"

# A rule set with a bad pattern is refused at reload with file, line and key; the old rules stay.
line=$(grep -n "^match = '^0(\[1-9\]\[0-9\]+)\$'" "$CFG" | head -n 1 | cut -d: -f1)
sed -i "${line}s/.*/match = '^0([1-9]'/" "$CFG"
rc=0; out=$(ctl reload 2>&1) || rc=$?
[ "$rc" -ne 0 ] || fail "a reload with a bad pattern was accepted: $out"
expect_contains "$out" "$CFG:$line: trunk[0].rule[0].match: expected a PCRE2 expression" "the refused reload"
echo "ok: numbers normalised and headers added and removed at the callee, counted, shown offline, bad rules refused"
