#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The host preload probes (selftests/preload/, see Documentation/
# testing.rst) again, with the module loaded: each probe's sockets are
# bound to an address of a veth device the module hooks (PT_ADDR), so
# they have rings, an eventfd, epoll registrations of the library's own
# fds, and everything a fork, a close or a signal must get right around
# them. Each probe must still print what it prints on kernel sockets.
# Left to the host run: the two budgets of the fallback (syscall-budget,
# rlimit-sockets; with the module, offloading costs what it costs) and
# efault (the library reads the arrays and lengths a call on an offloaded
# socket names, and copies from its rings: a bad pointer faults, as
# Documentation/library.rst says under "Differences from kernel sockets").
# fork-churn forks 300 times, not 3,000, and signal-sendto asks for 100
# sends from the loop and from the handler each, not 1,000: under TCG
# forking is slow and a 10 kHz handler takes most of the CPU.
#
#   netns pp: vp0 10.6.0.1/24 --veth-- vp1 (netns pq)
cd "$(dirname "$0")/.." && . selftests/lib.sh

vmak_load
# the repository is read-only in the VM: the runner's outputs go here
PRELOAD_OUT=$(mktemp -d)
export PRELOAD_OUT
chmod 755 "$PRELOAD_OUT"
trap 'ip netns del pp 2>/dev/null; ip netns del pq 2>/dev/null; rm -rf "$PRELOAD_OUT"' EXIT
veth_pair pp vp0 10.6.0.1 pq vp1 10.6.0.2

if ! ls build/preload/* >/dev/null 2>&1; then
	tap_skip "preload probes" "not built (make preload-bins)"
	tap_done
fi
probes=()
for p in build/preload/*; do
	n=$(basename "$p")
	[ -x "$p" ] || continue
	case $n in
	syscall-budget|rlimit-sockets|efault) continue ;;
	fork-churn) n=fork-churn:300 ;;
	signal-sendto) n=signal-sendto:100 ;;
	esac
	probes+=("$n")
done
# the runner's own TAP, one line per probe and mode
ip netns exec pp env PT_ADDR=10.6.0.1 selftests/preload/run "${probes[@]}"
