# Shared by the e2e tests (source it): one site "core" with a host at 198.18.0.2 that also
# answers as the gateway 198.18.0.254, and sbcd on the root end at 198.18.0.1.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/topology.sh"
BUILD=${SBC_BUILD:-$(pwd)/build}
trap topo_cleanup EXIT INT TERM

fail() { echo "FAIL: $*" >&2; exit 1; }
expect_contains() { # HAYSTACK NEEDLE WHAT
  grep -qF -- "$2" <<<"$1" || { echo "$1" | head -n 60 >&2; fail "$3: expected to find '$2'"; }
}

# e2e_up [WORKERS]: the topology and a running sbcd. Sets CORE_IF, NS, DIR, CFG, SOCK, HTTP.
e2e_up() {
  local workers=${1:-1}
  topo_site core 198.18.0.2/24 198.18.0.254/24 >/dev/null
  CORE_IF=$TOPO_SITE_IF
  NS=$(topo_ns core)
  DIR=$(topo_dir)
  SOCK=$DIR/sbcd.sock
  HTTP=127.0.0.1:$(topo_free_port)
  CFG=$DIR/sbc.toml
  cat >"$CFG" <<CONF
$(sbc_conf_head "e2e-${TOPO_ID}" "$workers" "$SOCK" "$HTTP")

[[interface]]
name = "core"
device = "net_af_packet${TOPO_ID},iface=${CORE_IF}"
address = "198.18.0.1/24"
gateway = "198.18.0.254"
CONF
  sbcd_start "$BUILD" "$CFG" "$DIR/sbcd.log"
}

ctl() { "$BUILD/sbcctl" --socket "$SOCK" "$@"; }
