#!/bin/bash
# Install the Debian 12 packages vmak needs to build, test and benchmark.
# Idempotent: only missing packages are installed; apt lists are refreshed
# once per run when something is missing.
set -euo pipefail

pkgs=(python3-yaml python3-jsonschema python3-sphinx make gcc libc6-dev pkg-config kmod dwarves iputils-ping ethtool cpio xz-utils zstd iproute2 sockperf iperf3
      libmnl-dev busybox-static qemu-system-x86 qemu-utils strace
      linux-source-6.1
      man-db	# make man-check: man(1), lexgrog and groff
      debootstrap)	# the Debian unstable build root (selftests/vm/buildroot)
case ${1:-} in
--bench) pkgs+=(gnuplot-nox libxdp-dev libbpf-dev sockperf linux-perf strace) ;;
--debug) pkgs+=(flex bison bc libelf-dev libssl-dev) ;;	# building the debug kernel
esac

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		grep -q '^install ok installed$' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
echo "deps: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
