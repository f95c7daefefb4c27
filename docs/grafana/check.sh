#!/usr/bin/env bash
# Checks docs/grafana/sbcd-dashboard.json against what sbcd exports: every sbc_* name in a
# panel's query (and the templating query) must be a metric of METRICS, a /metrics page of a
# running sbcd (its "# TYPE" lines, and sample names). Fails on a name sbcd does not export
# (a renamed counter, a typo), on invalid JSON and on a panel without a query.
# Usage: docs/grafana/check.sh METRICS_FILE [DASHBOARD]. Last line "dashboard: N names, M missing".
set -uo pipefail
metrics=$1
dash=${2:-$(dirname "$0")/sbcd-dashboard.json}
python3 - "$metrics" "$dash" <<'PY'
import json, re, sys
page = open(sys.argv[1]).read()
exported = set(re.findall(r"^# TYPE (sbc_[a-zA-Z0-9_]+) ", page, re.M))
exported |= set(re.findall(r"^(sbc_[a-zA-Z0-9_]+)[{ ]", page, re.M))
try:
    d = json.load(open(sys.argv[2]))
except ValueError as e:
    print("dashboard: %s is not valid JSON: %s" % (sys.argv[2], e)); sys.exit(1)
used, bad = {}, 0
def walk(panels):
    global bad
    for p in panels:
        if p.get("type") == "row":
            walk(p.get("panels", [])); continue
        exprs = [t.get("expr", "") for t in p.get("targets", [])]
        if not any(exprs):
            print("dashboard: panel %r has no query" % p.get("title")); bad += 1
        for e in exprs:
            for n in re.findall(r"\bsbc_[a-zA-Z0-9_]+", e): used.setdefault(n, p.get("title"))
walk(d.get("panels", []))
for v in d.get("templating", {}).get("list", []):
    for n in re.findall(r"\bsbc_[a-zA-Z0-9_]+", str(v.get("query", ""))): used.setdefault(n, "variable " + v["name"])
if not exported:
    print("dashboard: %s has no sbc_ metrics (not a /metrics page?)" % sys.argv[1]); sys.exit(1)
missing = sorted(n for n in used if n not in exported)
for n in missing: print("dashboard: %s (panel %r) is not a metric sbcd exports" % (n, used[n]))
print("dashboard: %d names, %d missing" % (len(used), len(missing) + bad))
sys.exit(1 if missing or bad else 0)
PY
