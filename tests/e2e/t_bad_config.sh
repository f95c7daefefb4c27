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

# What the dataplane's tables cannot hold is refused, not dropped: a fifth VLAN on one device
# (only four fit a port), and an IPv6 address where the IPv4 one goes (pointed to address6).
{
  for v in 1 2 3 4 5; do
    printf '[[interface]]\nname = "v%s"\ndevice = "net_null0"\naddress = "198.18.%s.1/24"\nvlan = %s\n' "$v" "$v" "$v"
  done
  printf '[[interface]]\nname = "six"\ndevice = "net_null1"\naddress = "2001:db8::1/64"\n'
} >"$DIR/limits.toml"
set +e
out=$("$BUILD/sbcd" --check --config "$DIR/limits.toml" 2>&1); rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "$out" >&2; fail "limits: exit code $rc, expected 2"; }
expect_contains "$out" "$DIR/limits.toml:23: interface[4].device: expected at most 4 interfaces (VLANs) on one device" \
  "fifth VLAN refused with file, line and key"
expect_contains "$out" "$DIR/limits.toml:29: interface[5].address: expected an IPv4 address; an IPv6 one goes in address6 (address6 = \"2001:db8::1/64\")" \
  "IPv6 in address refused, pointed to address6"
