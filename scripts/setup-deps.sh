#!/usr/bin/env bash
# Installs the Debian packages sbc needs to build, test, demo and benchmark, when missing.
# Idempotent: runs `apt-get update` once, only when something is missing. Needs root to install.
set -euo pipefail

packages=(
  # build
  build-essential pkg-config meson ninja-build clang libclang-rt-14-dev
  # dataplane
  dpdk dpdk-dev libdpdk-dev libhyperscan-dev liburcu-dev libssl-dev libpcap-dev
  # header and number rules (regular expressions with captures, JIT)
  libpcre2-dev
  # control plane
  libc-ares-dev libtomlplusplus-dev nlohmann-json3-dev libcpp-httplib-dev
  # tests
  libgtest-dev libgmock-dev
  # e2e, demo and load tests
  sip-tester dnsmasq-base iproute2 iputils-ping ethtool tcpdump curl procps
  # packaging checks (tests/packaging/run.sh): the Helm chart renderer reads YAML
  python3-yaml
  # SIP capture e2e: the pcap sbcd writes, read back (tshark) and opened as an operator would (sngrep)
  tshark sngrep
  # admission e2e: a real scanner against sbcd (svmap, svwar)
  sipvicious
  # side-by-side peers for the benchmarks
  libosip2-dev kamailio kamailio-tls-modules openssl python3-matplotlib linux-perf bc
  # rtp benchmark peer (userspace relay only; scripts/bench/rtp.sh)
  rtpengine-daemon
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "setup-deps: missing packages: ${missing[*]}" >&2
  echo "setup-deps: run as root (or install them) and try again" >&2
  exit 1
fi

echo "setup-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
