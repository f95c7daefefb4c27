# A bad config is refused before anything starts: exit code 2, the file, line and key named.
source "$(dirname "$0")/common.sh"
DIR=$(topo_dir)
cat >"$DIR/bad.toml" <<'CONF'
[node]
name = "bad"
workers = 1

[[interface]]
name = "core"
device = "net_null0"
address = "198.18.0.1/33"
CONF
set +e
out=$("$BUILD/sbcd" --config "$DIR/bad.toml" 2>&1); rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "$out" >&2; fail "exit code $rc, expected 2"; }
expect_contains "$out" "$DIR/bad.toml:8: interface[0].address" "file, line and key"
expect_contains "$out" "address" "key"
set +e
out=$("$BUILD/sbcd" --config "$DIR/missing.toml" 2>&1); rc=$?
set -e
[ "$rc" -eq 2 ] || fail "missing file: exit $rc, expected 2"
expect_contains "$out" "missing.toml" "missing file named"
